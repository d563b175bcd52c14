"""What every agent's hooks share: the call (its input, the project's configuration, the
policy, the memory repository), the reply, the handlers of the events whose protocol the agents
share, the seed and essentials a session starts with, and the rule that a hook never breaks the
agent (:func:`run_hook`).

Each agent has one table of the events it answers (:class:`HookEvent`: the handler and the
timeout its settings give it): :data:`clm_policy.agents.hooks.claude_code.EVENTS` (Claude Code)
and :data:`clm_policy.agents.hooks.codex.EVENTS` (Codex CLI). The settings each agent reads
are generated from it (:func:`hook_settings`). An event the agents' protocols agree on has one
handler, in :mod:`.events`, which both tables name; what differs in their words and shapes is
their :class:`~.events.Wording`; subagents are in :mod:`.subagents`.
"""

from __future__ import annotations

import json
import os

from clm_policy.base.errors import ClmError, InputError
from clm_policy.base.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:  # a hook runs on every prompt: no typing, pathlib or dataclasses at run time
    from collections.abc import Callable, Mapping
    from pathlib import Path
    from typing import Any

    Handler = Callable[["Hook"], "HookReply"]

CONTEXT_LIMIT = 9_500
"""Characters of context handed to a model at most (Claude Code replaces more than 10,000 by a
file path)."""
MAX_INPUT = 16 * 1024 * 1024
LOG_LIMIT = 1024 * 1024
LOG_NAME = "hook.log"


class NoTranscriptYet(InputError):
    """The transcript the hook names does not exist yet: a new session's first hooks come
    before Claude Code writes it. Not a problem: answered with nothing, and not logged."""


class HookReply(Record):
    """What the hook answers: an exit code, and what it prints on stdout and stderr."""

    FIELDS = ("exit_code", "stdout", "stderr")
    __slots__ = FIELDS

    def __init__(self, exit_code: int = 0, stdout: str = "", stderr: str = "") -> None:
        self.exit_code = exit_code
        self.stdout = stdout
        self.stderr = stderr


NOTHING = HookReply()


class HookEvent(Record):
    """One event an agent's hook answers: its ``handler`` and the ``timeout`` (seconds) the
    agent's settings give the hook command, after which the agent stops it."""

    FIELDS = ("handler", "timeout")
    __slots__ = FIELDS

    def __init__(self, handler: Handler, timeout: int) -> None:
        self.handler = handler
        self.timeout = timeout


def hook_settings(command: str, events: Mapping[str, HookEvent]) -> dict[str, Any]:
    """The ``hooks`` settings that run ``command`` (quoted for the shell) on every event of
    ``events``, each in a group without a ``matcher`` (every trigger, every source) — the
    shape Claude Code's settings.json and Codex's hooks.json share."""
    return {
        event: [{"hooks": [{"type": "command", "command": command, "timeout": spec.timeout}]}]
        for event, spec in events.items()
    }


def default_policy(agent: str) -> str:
    """The policy when nothing names one: for Claude Code, the bundled ``claude-code`` policy
    (shares of the window; the status line speaks for it too), for other agents ``default``."""
    if agent == "claude-code":
        from clm_policy.agents.statusline import DEFAULT_POLICY

        return DEFAULT_POLICY
    return "default"


def warm_policy(folder: str, agent: str = "default") -> None:
    """Compile the policy a hook in ``folder`` would use (its project's ``.clm-policy.yaml``,
    else the default) into the compiled-policy cache, so that the first hook and status line
    of a session find it there (``hook claude-code --install``, ``hook codex
    --print-settings``, ``init``). Best effort: a policy that cannot be loaded is left for the
    hook to report, in its log."""
    import contextlib

    from clm_policy.base.errors import ClmError
    from clm_policy.config.project import load_config, setting
    from clm_policy.policy.cache import load_policy_cached

    with contextlib.suppress(ClmError):
        load_policy_cached(setting("policy", None, load_config(folder)) or default_policy(agent))


class Hook:
    """One hook call: its input, the project's configuration (flags, then the environment,
    then ``.clm-policy.yaml`` in the hook's ``cwd`` or above), the policy."""

    def __init__(
        self,
        event: Mapping[str, Any],
        agent: str = "claude-code",
        policy_ref: str | None = None,
        profile: str | None = None,
        memory: str | None = None,
    ) -> None:
        from clm_policy.config.project import load_config, setting

        self.event = event
        self.agent = agent
        cwd = event.get("cwd")
        self.config = load_config(cwd if isinstance(cwd, str) and cwd else None)
        self.policy_ref: str = setting("policy", policy_ref, self.config) or default_policy(agent)
        self.profile = setting("profile", profile, self.config)
        self._memory = memory
        self._memory_path: str | None = None
        self.name = str(event.get("hook_event_name") or "")

    @property
    def memory(self) -> str:
        """The memory repository (worked out when a handler needs it: most prompts don't)."""
        if self._memory_path is None:
            from clm_policy.config.project import memory_path

            self._memory_path = memory_path(self._memory, self.config)
        return self._memory_path

    @property
    def remote(self) -> str | None:
        """Where handoffs are pushed: $CLM_POLICY_REMOTE, else a trusted file's ``remote``."""
        from clm_policy.config.project import setting

        return setting("remote", None, self.config)

    # -- what the transcript says -------------------------------------------------------------

    @property
    def transcript(self) -> str:
        path = self.event.get("transcript_path")
        if not isinstance(path, str) or not path:
            raise InputError(f"{self.name}: no transcript_path in the hook's input")
        path = os.path.expanduser(path)
        if not os.path.lexists(path):
            raise NoTranscriptYet(f"{self.name}: the transcript {path} does not exist yet")
        return path

    @property
    def turn(self) -> str:
        """The turn this call belongs to: Claude Code's ``prompt_id``, Codex's ``turn_id``
        (the prompt hook and the Stop hooks of one turn share it); "" when absent."""
        for key in ("prompt_id", "turn_id"):
            value = self.event.get(key)
            if isinstance(value, str) and value:
                return value
        return ""

    def facts(self) -> dict[str, Any]:
        """What the hooks recorded about this session (:mod:`..sessionfacts`)."""
        from clm_policy.agents.sessionfacts import read_facts

        sid = self.event.get("session_id")
        return read_facts(sid, "hook") if isinstance(sid, str) else {}

    def note(self, **changes: Any) -> None:
        """Record ``changes`` among this session's facts (best effort)."""
        from clm_policy.agents.sessionfacts import update_facts

        sid = self.event.get("session_id")
        if isinstance(sid, str):
            update_facts(sid, "hook", **changes)

    def window_of(self, reading: Any) -> None:
        """Fill in ``reading``'s window and model from what the agent knows when the
        transcript does not say (a Codex rollout names its window; Claude Code's never do:
        :mod:`.windows`)."""
        if reading.context_window is not None or self.agent != "claude-code":
            return
        from clm_policy.agents.hooks.windows import claude_code_window

        cwd = self.event.get("cwd")
        found = claude_code_window(
            str(self.event.get("session_id") or ""),
            reading.model,
            cwd if isinstance(cwd, str) else reading.cwd,
        )
        reading.context_window = found.window
        reading.model = reading.model or found.model

    def outcome(self, figures: Any) -> Any | None:
        """The policy's outcome for ``figures``; None when its thresholds are shares of a
        window nobody knows (then they decide nothing: :func:`window_unknown`)."""
        policy = self.policy()
        if window_unknown(policy, figures, self.profile):
            return None
        return policy.decide(figures, self.profile)

    def session_id(self, reading: Any | None = None) -> str:
        """The memory repository's id of this session: the agent's own, when valid."""
        from clm_policy.memory.layout import is_session

        sid = self.event.get("session_id")
        if isinstance(sid, str) and is_session(sid):
            return sid
        if reading is not None:
            return str(reading.state_session_id())
        raise InputError(f"{self.name}: no usable session_id in the hook's input")

    def policy(self) -> Any:
        from clm_policy.policy.cache import load_policy_cached

        return load_policy_cached(self.policy_ref)

    def decide_from_tail(self) -> tuple[Any, Any | None]:
        """The transcript's figures (read from its end) and the policy's outcome on them
        (None: the window is unknown)."""
        from clm_policy.transcripts.reading import read_context

        try:
            reading = read_context(self.transcript)
        except InputError as exc:
            raise self._not_yet(exc) from None
        self.window_of(reading)
        return reading, self.outcome(reading.to_figures())

    def _not_yet(self, exc: InputError) -> InputError:
        """``exc``, or :class:`NoTranscriptYet` when the transcript holds no line of the
        conversation yet: a new session's small file whose lines are all records of the agent
        (Claude Code's first is ``{"type": "mode", ...}``: no reader can tell its format from
        it), none of them a user's or an assistant's — not garbage."""
        try:
            if os.path.getsize(self.transcript) > 65536:
                return exc
            with open(self.transcript, "rb") as handle:
                lines = [line for line in handle.read().splitlines() if line.strip()]
            records = [json.loads(line.decode("utf-8")) for line in lines]
        except (OSError, ValueError):
            return exc
        typed = [r.get("type") if isinstance(r, dict) else None for r in records]
        if all(isinstance(t, str) and t not in ("user", "assistant") for t in typed):
            return NoTranscriptYet(f"{self.name}: the transcript has no conversation line yet")
        return exc

    def full_state(self) -> tuple[Any, Any | None]:
        """The whole transcript as a SessionState (for a snapshot or a handoff) and the
        policy's outcome on it (None: the window is unknown)."""
        from clm_policy.transcripts.reading import read_transcript

        reading = read_transcript(self.transcript)
        self.window_of(reading)
        state = reading.to_state(self.session_id(reading))
        if self.profile:
            state = state.replace(profile=self.profile)
        return state, self.outcome(state)

    def repo(self) -> Any:
        """The project's memory repository, created on first use."""
        from clm_policy.memory.git.write import MemoryRepo
        from clm_policy.memory.init import init_memory, is_memory_repo

        memory = self.memory
        if not is_memory_repo(memory):
            init_memory(memory)
        return MemoryRepo(memory)

    def provenance(self, outcome: Any | None, **extra: str) -> Any:
        from clm_policy.lifecycle.pipelines import Provenance

        policy = self.policy()
        return Provenance(
            outcome.trigger if outcome is not None else None,
            outcome.rationale if outcome is not None else None,
            f"{policy.path}@{policy.digest}",
            {"Clm-Agent": self.agent, **extra},
        )


def window_unknown(policy: Any, figures: Any, profile: str | None) -> bool:
    """Whether the profile's thresholds are shares of a window that neither the state nor
    the policy (its models table, the profile) knows: then they cannot decide anything."""
    prof = policy.profile(profile or figures.profile)
    if prof.soft_compact.percent is None and prof.hard_handoff.percent is None:
        return False
    return policy.window_for(figures, prof)[0] is None


# -- seeds and essentials -------------------------------------------------------------------


def take_handoff(hook: Hook) -> str:
    """The newest handoff no session has picked up yet, as a seed; marked taken in git.

    Nothing to hand is the common case (every start, ``/clear``): it is found with git alone —
    no memory repository, or no handoff without a session that took it — before the modules
    that make a seed (pydantic among them) are imported."""
    from clm_policy.memory.audit import read_log
    from clm_policy.memory.init import is_memory_repo

    if not is_memory_repo(hook.memory):
        return ""  # no memory: nothing was ever handed off here (and none is made for it)
    sid = hook.session_id()
    with hook.repo() as repo:
        taken = {
            e.trailers["Clm-Seed"]
            for e in read_log(repo, event="start", rev="--all")
            if "Clm-Seed" in e.trailers
        }
        waiting = [
            entry
            for entry in read_log(repo, event="handoff", rev="--all")
            if entry.trailers.get("Clm-Manifest")
            and entry.trailers["Clm-Manifest"] not in taken
            and entry.session != sid
        ]
        for entry in waiting:
            seeded = seed_from(hook, repo, entry)
            if seeded is not None:
                text, goal = seeded
                hook.note(seeded=entry.trailers["Clm-Manifest"], seeded_goal=goal)  # said at the
                return text  # first prompt
    return ""


def seed_from(
    hook: Hook, repo: Any, entry: Any, *, in_place: bool = False
) -> tuple[str, str] | None:
    """The seed of the handoff ``entry`` (an audit-log entry of a handoff commit) and its goal,
    recorded in git as taken by this hook's session (``Clm-Seed``: no later session starts
    from it again); None when its manifest is missing or does not validate. ``in_place``: the
    session that handed off continues from it (clm-policy's plugin engine replaced its
    conversation), so its start record keeps no parent of its own."""
    from clm_policy.lifecycle.pipelines import (
        Provenance,
        memory_hits,
        read_more,
        record_session_start,
    )
    from clm_policy.lifecycle.seed import seed_text
    from clm_policy.models.shapes.manifest import read_manifest
    from clm_policy.models.state import SessionState

    path = entry.trailers.get("Clm-Manifest")
    text = repo.show_file(path, entry.commit) if path else None
    if text is None:
        return None
    try:
        manifest, read = read_manifest(json.loads(text), source=path)
    except (ValueError, ClmError):
        return None  # a manifest that does not validate is no seed
    if read.upgraded:
        log(read.note(path))
    constraints, decisions = _carried(repo, entry.session, entry.commit)
    profile = hook.policy().profile(hook.profile)
    handoff_file = entry.trailers.get("Clm-Handoff") or path
    seed = seed_text(
        manifest,
        memory=memory_hits(repo, manifest),
        budget=min(profile.seed_tokens * 4, SEED_CHARS),
        read_more=read_more(handoff_file, home_short(hook.memory)),
        constraints=constraints,
        decisions=decisions,
    )
    parent = None if in_place else entry.session or None
    state = SessionState(session_id=hook.session_id(), goal=manifest.goal, parent_session=parent)
    record: dict[str, object] = {"agent": hook.agent, "seeded_from": path}
    if in_place:
        record["in_place"] = True
    record_session_start(
        repo,
        state,
        record=record,
        why=Provenance("seeded", extra_trailers={"Clm-Agent": hook.agent, "Clm-Seed": path}),
    )
    return seed, manifest.goal


SEED_CHARS = 9_400
"""The most a seed given at SessionStart may take (Claude Code reads 10,000 characters of a
hook's additional context; the hook's own notices need room)."""


def home_short(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if home != "~" and path.startswith(home + os.sep) else path


def _carried(repo: Any, session: str | None, commit: str) -> tuple[list[str], list[str]]:
    """The constraints and decisions the handed-off session's state held (the manifest has no
    field for them): from its state.json in the handoff's commit; none when unreadable."""
    from clm_policy.memory.layout import is_session

    if not session or not is_session(session):
        return [], []
    text = repo.show_file(f"sessions/{session}/state.json", commit)
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return [], []

    def strings(key: str) -> list[str]:
        items = data.get(key) if isinstance(data, dict) else None
        ok = isinstance(items, list) and all(isinstance(i, str) for i in items)
        return list(items) if ok and items is not None else []

    return strings("constraints"), strings("decisions")


def essentials(hook: Hook) -> str:
    """After the agent compacted: what must survive, from the PreCompact snapshot."""
    from clm_policy.lifecycle.summary import next_safe_action
    from clm_policy.memory.sessions import load_session

    sid = hook.session_id()
    with hook.repo() as repo:
        try:
            persisted = load_session(repo, sid)
        except InputError:
            return ""
        state = persisted.state
        if persisted.note:
            log(persisted.note)
        index = repo.read_file("MEMORY.md") or ""
    lines = [
        "[clm-policy] Kept from before the compaction (the memory repository has the full "
        "snapshot):",
        f"Goal: {' '.join(state.goal.split()) or '(none)'}",
        f"Next safe action: {next_safe_action(state)}",
    ]
    lines += [f"Blocker: {b}" for b in state.blockers]
    lines += [f"Open failure: {x}" for x in state.open_failures if x not in state.blockers]
    lines += [f"Remaining: {x}" for x in state.remaining[:10]]
    lines += [f"Not verified: {x}" for x in state.not_verified]
    if state.changed_artifacts:
        lines.append("Changed files: " + ", ".join(state.changed_artifacts[-20:]))
    topics = [line for line in index.splitlines() if line.startswith("- [")]
    if topics:
        lines += ["Memory topics:", *topics[:30]]
    return "\n".join(lines)


def context_at_start(hook: Hook) -> str:
    """What a session starts with, by the SessionStart ``source``: the newest handoff no
    session has taken at ``startup`` and ``clear``, what must survive at ``compact``, nothing
    at ``resume`` (the conversation is still there)."""
    source = str(hook.event.get("source") or "")
    if source in ("startup", "clear"):
        return take_handoff(hook)
    if source == "compact":
        return essentials(hook)
    return ""


def cut(text: str) -> str:
    return text if len(text) <= CONTEXT_LIMIT else text[: CONTEXT_LIMIT - 1] + "…"


def reply_json(payload: Mapping[str, Any]) -> HookReply:
    return HookReply(0, json.dumps(payload))


def said(reply: HookReply) -> HookReply:
    """``reply`` as it may be said: every text in it — the person's ``systemMessage``, the
    model's ``additionalContext`` and ``reason``, standard error — through the redactor
    commits pass (it is built from the transcript: a key in the goal must not be repeated
    back, nor typed into the agent again) and made :func:`terminal_safe` (Claude Code and
    Codex show it on a terminal), then held to :data:`CONTEXT_LIMIT` again (escapes and
    markers are longer than what they replace). Imported only here: a prompt that continues
    says nothing."""
    from clm_policy.base.termsafe import terminal_safe
    from clm_policy.memory.redact import Redactor

    redactor = Redactor()

    def clean(value: Any) -> Any:
        if isinstance(value, str):
            return cut(terminal_safe(redactor.text(value)))
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    out = reply.stdout
    stdout = json.dumps(clean(json.loads(out))) if out.startswith("{") else clean(out)
    return HookReply(reply.exit_code, stdout, clean(reply.stderr))


# -- never break the agent ------------------------------------------------------------------


def run_hook(
    raw: bytes, agent: str, events: Mapping[str, HookEvent], **options: str | None
) -> HookReply:
    """Answer the hook input ``raw`` with the handler of its ``hook_event_name`` in
    ``events``; any failure is logged and answered with nothing (exit 0), so a hook never
    stands in the agent's way."""
    where = f"{agent}: "
    try:
        event = _event(raw)
        hook = Hook(event, agent, **options)
        where += f"{hook.name}: " if hook.name else ""
        spec = events.get(hook.name)
        reply = with_trust_notice(hook, spec.handler(hook) if spec is not None else NOTHING)
        return said(reply) if reply.stdout or reply.stderr else reply
    except KeyboardInterrupt:
        raise
    except NoTranscriptYet:
        return NOTHING  # a new session's first hooks: nothing to read yet, nothing wrong
    except Exception as exc:
        # one line per failure; the traceback of an unexpected one only when debugging
        debug = bool(os.environ.get("CLM_POLICY_DEBUG")) and not isinstance(exc, ClmError)
        log(f"{where}{type(exc).__name__}: {exc}", exc if debug else None)
        from clm_policy.config.trust import take_ignored

        take_ignored()  # a hook speaks on stdout, in its reply, or not at all
        return NOTHING


def hook_input(raw: bytes) -> dict[str, Any]:
    """The hook's input: a JSON object in UTF-8, or an :class:`InputError` saying why not."""
    return _event(raw)


def _event(raw: bytes) -> dict[str, Any]:
    """The hook's input: a JSON object in UTF-8, or an :class:`InputError` saying why not."""
    if len(raw) > MAX_INPUT:
        raise InputError(f"hook input larger than {MAX_INPUT // 1024 // 1024} MiB")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"hook input is not UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start}"
        ) from None
    if "\\u" in text:  # "\ud800": valid JSON, no Unicode text; refused before it is read
        from clm_policy.base.surrogates import lone_surrogate

        found = lone_surrogate(text)
        if found is not None:
            raise InputError(
                f"hook input holds a lone surrogate ({found[1]}) at offset {found[0]}: "
                "not Unicode text"
            )
    try:
        event = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"hook input is not JSON: {exc}") from None
    if not isinstance(event, dict):
        raise InputError("hook input is not a JSON object")
    return event


NOTICES_NAME = "trust-notices.json"
NOTICES_KEPT = 500


def with_trust_notice(hook: Hook, reply: HookReply) -> HookReply:
    """``reply``, telling the person (``systemMessage``) what the project's configuration may
    not choose until they trust it — once per session and content of the file, not on every
    prompt. Cheap when the file names no memory or remote: nothing is read."""
    from clm_policy.config.project import NEEDS_TRUST

    config = hook.config
    if config.path is None or not any(key in config.values for key in NEEDS_TRUST):
        return reply
    from clm_policy.config.trust import take_ignored

    try:
        _ = hook.memory, hook.remote  # each notes what it ignored
        ignored = take_ignored()
        if not ignored or reply.exit_code != 0:  # exit 2: Claude Code reads stderr only
            return reply
        sid = hook.event.get("session_id")
        fresh = _not_said(sid if isinstance(sid, str) else "", ignored)
    except Exception as exc:  # the answer matters more than the notice
        log(f"trust notice: {type(exc).__name__}: {exc}")
        return reply
    if not fresh:
        return reply
    text = "\n".join(f"clm-policy: {found.notice}" for found in fresh)
    payload = json.loads(reply.stdout) if reply.stdout.startswith("{") else {}
    said = payload.get("systemMessage")
    payload["systemMessage"] = f"{text}\n{said}" if isinstance(said, str) and said else text

    return HookReply(reply.exit_code, json.dumps(payload), reply.stderr)


def _not_said(session: str, ignored: list[Any]) -> list[Any]:
    """Those of ``ignored`` this session has not been told of (for the file's content now),
    marked as told. Kept in a private file of the user's state; without it, said again."""
    from clm_policy.agents.logfile import log_path as path_of
    from clm_policy.base.digest import sha256_hex
    from clm_policy.base.privatefiles import read_private, write_private

    where = path_of(NOTICES_NAME)
    try:
        said = json.loads(read_private(where, 64 * 1024) or b"[]")
    except ValueError:
        said = []
    said = [k for k in said if isinstance(k, str)] if isinstance(said, list) else []
    fresh = []
    for found in ignored:
        key = sha256_hex(
            "\0".join((session, found.path, found.digest, *found.keys)).encode("utf-8")
        )[:32]
        if key not in said:
            fresh.append(found)
            said.append(key)
    if fresh:
        write_private(os.path.dirname(where), NOTICES_NAME, json.dumps(said[-NOTICES_KEPT:]))
    return fresh


def log_path() -> Path:
    from pathlib import Path

    from clm_policy.agents.logfile import log_path as path_of

    return Path(path_of(LOG_NAME))


def log(line: str, exc: BaseException | None = None) -> None:
    """Append ``line`` to the hook log as one line (and the traceback of ``exc``, when
    given, after it)."""
    from clm_policy.agents.logfile import append

    line = " ".join(line.split())  # a message of several lines is still one line of the log
    detail = ""
    if exc is not None:
        import traceback

        detail = "".join(traceback.format_exception(exc))
    append(LOG_NAME, line, LOG_LIMIT, detail)
