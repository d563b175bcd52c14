"""One hook call resolved against its project: flags, then the environment, then
``.clm-policy.yaml`` in the call's ``cwd`` or above, worked out once and held as values.
"""

from __future__ import annotations

from clm_policy.base.errors import InputError

TYPE_CHECKING = False
if TYPE_CHECKING:  # a hook runs on every prompt: no typing at run time
    from typing import Any

    from clm_policy.agents.hooks.call import HookCall
    from clm_policy.lifecycle.pipelines import Provenance
    from clm_policy.memory.git.write import MemoryRepo
    from clm_policy.models.decision import Decision
    from clm_policy.policy.engine import Policy
    from clm_policy.transcripts.reading import TranscriptReading


class Hook:
    """One ``call`` of ``agent``'s hook resolved against its project: ``config``,
    ``policy_ref``, ``profile``, the ``memory`` repository, the ``remote`` handoffs are pushed
    to, and the settings of an untrusted file that were ``ignored``. The arguments are the
    command's flags (they come first)."""

    __slots__ = (
        "_policy",
        "agent",
        "call",
        "config",
        "ignored",
        "memory",
        "policy_ref",
        "profile",
        "remote",
    )

    def __init__(
        self,
        call: HookCall,
        agent: str = "claude-code",
        policy_ref: str | None = None,
        profile: str | None = None,
        memory: str | None = None,
    ) -> None:
        from clm_policy.config.project import load_config, memory_path, setting
        from clm_policy.config.trust import take_ignored

        self.call = call
        self.agent = agent
        try:
            self.config = load_config(call.folder())
            self.policy_ref = setting("policy", policy_ref, self.config) or default_policy(agent)
            self.profile = setting("profile", profile, self.config)
            self.memory = memory_path(memory, self.config, outside=True)
            self.remote = setting("remote", None, self.config)
        finally:
            self.ignored = take_ignored()
        self._policy: Policy | None = None

    def facts(self) -> dict[str, Any]:
        """What the hooks noted about this session between calls (``{}``: nothing)."""
        from clm_policy.agents.sessionfacts import read_facts

        return read_facts(self.call.session, "hook") if self.call.session else {}

    def note(self, **changes: Any) -> None:
        """Note ``changes`` among this session's facts (None removes the fact)."""
        from clm_policy.agents.sessionfacts import update_facts

        if self.call.session:
            update_facts(self.call.session, "hook", **changes)

    def policy(self) -> Policy:
        """The policy, loaded on first use through the compiled-policy cache."""
        if self._policy is None:
            from clm_policy.policy.cache import load_policy_cached

            self._policy = load_policy_cached(self.policy_ref)
        return self._policy

    def session_id(self, reading: TranscriptReading | None = None) -> str:
        """The agent's id of this session when valid and no secret, else one derived from the
        transcript's ``reading``."""
        from clm_policy.memory.layout import check_session

        sid = self.call.session
        try:
            return check_session(sid)  # valid, and no secret (it is committed as written)
        except InputError:
            pass
        if reading is not None:
            return str(reading.state_session_id())
        raise InputError(f"{self.call.name}: no usable session_id in the hook's input")

    def repo(self) -> MemoryRepo:
        """The project's memory repository, created on first use (only a writer opens it)."""
        from clm_policy.memory.git.write import MemoryRepo
        from clm_policy.memory.init import init_memory
        from clm_policy.memory.layout import is_memory_repo

        if not is_memory_repo(self.memory):
            init_memory(self.memory)
        return MemoryRepo(self.memory)

    def provenance(self, outcome: Decision | None, **extra: str) -> Provenance:
        from clm_policy.lifecycle.pipelines import Provenance

        policy = self.policy()
        return Provenance(
            outcome.trigger if outcome is not None else None,
            outcome.rationale if outcome is not None else None,
            policy.provenance,
            {"Clm-Agent": self.agent, **extra},
        )


def default_policy(agent: str) -> str:
    """The policy when nothing names one: ``claude-code`` for Claude Code, else ``default``."""
    if agent == "claude-code":
        from clm_policy.agents.statusline import DEFAULT_POLICY

        return DEFAULT_POLICY
    return "default"


def check_policy(folder: str, agent: str = "default") -> None:
    """Load the policy a hook in ``folder`` would use (the project's configuration, the policy
    it names and its profile), compiled into the cache: what is wrong with any of them is the
    :class:`~clm_policy.base.errors.ClmError` it is, at its place."""
    import os

    from clm_policy.base.errors import StateError
    from clm_policy.config.project import ENV, load_config, setting
    from clm_policy.policy.cache import load_policy_cached

    config = load_config(folder)
    policy = load_policy_cached(setting("policy", None, config) or default_policy(agent))
    try:
        policy.profile(setting("profile", None, config))
    except StateError as exc:  # the file's profile: its place (the variable's has none)
        where = None if os.environ.get(ENV["profile"]) else config.where.get("profile")
        raise InputError(exc.message, where) from None


def warm_policy(folder: str, agent: str = "default") -> None:
    """Compile the policy a hook in ``folder`` would use into the cache, so that a session's
    first hook finds it there. Best effort: a policy that cannot be loaded is left for the
    hook to report."""

    import contextlib

    from clm_policy.base.errors import ClmError

    with contextlib.suppress(ClmError):
        check_policy(folder, agent)
