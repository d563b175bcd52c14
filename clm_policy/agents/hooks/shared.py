"""What every agent's hooks share: the call (its input, the project's configuration, the
policy, the memory repository), the reply, the seed and essentials a session starts with, and
the rule that a hook never breaks the agent (:func:`run_hook`).

The agent-specific answers live in :mod:`.claude_hooks` (Claude Code) and :mod:`.codex_hooks`
(Codex CLI).
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

    Handlers = Mapping[str, Callable[["Hook"], "HookReply"]]

CONTEXT_LIMIT = 9_500
"""Characters of context handed to a model at most (Claude Code replaces more than 10,000 by a
file path)."""
MAX_INPUT = 16 * 1024 * 1024
LOG_LIMIT = 1024 * 1024
LOG_NAME = "hook.log"


class HookReply(Record):
    """What the hook answers: an exit code, and what it prints on stdout and stderr."""

    FIELDS = ("exit_code", "stdout", "stderr")
    __slots__ = FIELDS

    def __init__(self, exit_code: int = 0, stdout: str = "", stderr: str = "") -> None:
        self.exit_code = exit_code
        self.stdout = stdout
        self.stderr = stderr


NOTHING = HookReply()


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
        self.policy_ref: str = setting("policy", policy_ref, self.config) or "default"
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
        return os.path.expanduser(path)

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

    def decide_from_tail(self) -> tuple[Any, Any]:
        """The transcript's figures (read from its end) and the policy's outcome on them."""
        from clm_policy.transcripts.reading import read_context

        reading = read_context(self.transcript)
        return reading, self.policy().outcome(reading.to_figures(), self.profile)

    def full_state(self) -> tuple[Any, Any]:
        """The whole transcript as a SessionState (for a snapshot or a handoff) and the
        policy's outcome on it."""
        from clm_policy.transcripts.reading import read_transcript

        reading = read_transcript(self.transcript)
        state = reading.to_state(self.session_id(reading))
        if self.profile:
            state = state.model_copy(update={"profile": self.profile})
        return state, self.policy().outcome(state, self.profile)

    def repo(self) -> Any:
        """The project's memory repository, created on first use."""
        from clm_policy.memory.git.write import MemoryRepo
        from clm_policy.memory.init import init_memory, is_memory_repo

        memory = self.memory
        if not is_memory_repo(memory):
            init_memory(memory)
        return MemoryRepo(memory)

    def provenance(self, outcome: Any, **extra: str) -> Any:
        from clm_policy.lifecycle.pipelines import Provenance

        policy = self.policy()
        return Provenance(
            outcome.trigger,
            outcome.rationale,
            f"{policy.path}@{policy.digest}",
            {"Clm-Agent": self.agent, **extra},
        )


def agent_trailers(hook: Hook, trigger: str, state: Any) -> dict[str, str]:
    """The trailers saying the agent compacts, why (its trigger) and at what context."""
    return {"Clm-Agent-Trigger": trigger, "Clm-Agent-Tokens": str(state.tokens.context_tokens)}


def commit_snapshot(
    hook: Hook, repo: Any, state: Any, outcome: Any, trigger: str, compacts: str
) -> Any:
    """The compaction snapshot committed before the agent compacts (PreCompact): its rule is
    ``<agent>:<trigger>``, its rationale ``<compacts> (<trigger>)`` ("Claude Code compacts")."""
    from dataclasses import replace  # a compaction's commit: rare, and git costs more

    from clm_policy.lifecycle.pipelines import run_compaction

    why = replace(
        hook.provenance(outcome, **agent_trailers(hook, trigger, state)),
        rule=f"{hook.agent}:{trigger}",
        rationale=f"{compacts} ({trigger})",
    )
    retain = hook.policy().profile(hook.profile or state.profile).retain_recent_messages
    return run_compaction(repo, state, retain=retain, why=why)


def commit_handoff(hook: Hook, *, after: str) -> HookReply:
    from clm_policy.lifecycle.pipelines import run_handoff

    state, outcome = hook.full_state()
    last = hook.event.get("last_assistant_message")
    if isinstance(last, str) and last.strip():
        from clm_policy.models.enums import MessageRole
        from clm_policy.models.state import Message

        state = state.model_copy(
            update={"messages": [Message(role=MessageRole.ASSISTANT, content=last)]}
        )
    with hook.repo() as repo:
        done = run_handoff(repo, state, why=hook.provenance(outcome), push=hook.remote)
    return reply_json(
        {"systemMessage": f"clm-policy: handoff committed ({done.manifest_path}). {after}"}
    )


# -- seeds and essentials -------------------------------------------------------------------


def take_handoff(hook: Hook) -> str:
    """The newest handoff no session has picked up yet, as a seed; marked taken in git."""
    from clm_policy.lifecycle.handoff import seed_messages
    from clm_policy.lifecycle.pipelines import Provenance, memory_hits, record_session_start
    from clm_policy.memory.audit import read_log
    from clm_policy.models.manifest import read_manifest
    from clm_policy.models.state import SessionState

    sid = hook.session_id()
    with hook.repo() as repo:
        taken = {
            e.trailers["Clm-Seed"]
            for e in read_log(repo, event="start", rev="--all")
            if "Clm-Seed" in e.trailers
        }
        for entry in read_log(repo, event="handoff", rev="--all"):
            path = entry.trailers.get("Clm-Manifest")
            if not path or path in taken or entry.session == sid:
                continue
            text = repo.show_file(path, entry.commit)
            if text is None:
                continue
            try:
                manifest, read = read_manifest(json.loads(text), source=path)
            except (ValueError, ClmError):
                continue  # a manifest that does not validate is no seed
            if read.upgraded:
                log(read.note(path))
            constraints, decisions = _carried(repo, entry.session, entry.commit)
            seed = seed_messages(
                manifest,
                memory_hits(repo, manifest),
                constraints=constraints,
                decisions=decisions,
            )
            state = SessionState(
                session_id=sid, goal=manifest.goal, parent_session=entry.session or None
            )
            record_session_start(
                repo,
                state,
                record={"agent": hook.agent, "seeded_from": path},
                why=Provenance(
                    "seeded", extra_trailers={"Clm-Agent": hook.agent, "Clm-Seed": path}
                ),
            )
            return "\n\n".join(m.content for m in seed)
    return ""


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


def handed_off(hook: Hook) -> bool:
    """Whether this session has committed a handoff already (on any branch)."""
    from clm_policy.memory.audit import read_log

    with hook.repo() as repo:
        return bool(read_log(repo, session=hook.session_id(), event="handoff", rev="--all"))


def stop_for_handoff(hook: Hook, *, after: str) -> HookReply:
    """A Stop hook's answer: when the policy says hand off and the session has no handoff yet,
    block once with what to write; on the stop after that (``stop_hook_active``), commit the
    handoff from the transcript and the model's last reply (``after`` tells the person what
    follows). Below the policy's handoff point nothing happens, ``stop_hook_active`` or not
    (another tool's Stop hook may have kept the agent going)."""
    if handed_off(hook):
        return NOTHING
    _, outcome = hook.decide_from_tail()
    if outcome.action.value != "handoff":
        return NOTHING
    if hook.event.get("stop_hook_active") is True:
        # the stop after the one we blocked: the reply holds the handoff; commit it now
        return commit_handoff(hook, after=after)
    return reply_json(
        {
            "decision": "block",
            "reason": (
                f"clm-policy: the context is {share(outcome)} full and the policy hands off "
                f"({outcome.rationale}). Before you stop, end your reply with a short handoff "
                "for the next session: the goal; what is done and verified; what is not "
                "verified; blockers; the next safe action. Then stop."
            ),
        }
    )


HANDOFF_REQUEST = (
    "Finish the step you are on, do not start new work, and end your reply with a handoff: "
    "the goal; what is done and verified; what is not verified; blockers; the next safe action."
)


class Wording(Record):
    """What an agent's person and model are told at a prompt (the commands differ):
    ``agent_name`` ("Claude", "Codex"); ``compact_command``, the focus -> what to run;
    ``compact_note``, the focus -> what the model is told; ``after_handoff``, what the person
    runs once the handoff is written."""

    FIELDS = ("agent_name", "compact_command", "compact_note", "after_handoff")
    __slots__ = FIELDS

    def __init__(
        self,
        agent_name: str,
        compact_command: Callable[[str], str],
        compact_note: Callable[[str], str],
        after_handoff: str,
    ) -> None:
        self.agent_name = agent_name
        self.compact_command = compact_command
        self.compact_note = compact_note
        self.after_handoff = after_handoff


def prompt_advice(hook: Hook, wording: Wording) -> HookReply:
    """A UserPromptSubmit answer: nothing while the policy says continue; the person told
    to compact (with a focus) or that a handoff follows, and the model why."""
    _, outcome = hook.decide_from_tail()
    action = outcome.action.value
    if action == "continue":
        return NOTHING
    full = share(outcome)
    if action == "compact":
        state, _ = hook.full_state()
        focus = compact_focus(state)
        person = (
            f"clm-policy: context {full} ({outcome.rationale}). {wording.compact_command(focus)}"
        )
        model = (
            f"[clm-policy] The context window is {full} full ({outcome.rationale}); the user "
            f"was advised to compact it. {wording.compact_note(focus)}"
        )
    else:
        person = (
            f"clm-policy: context {full}, the policy hands off ({outcome.rationale}). "
            f"{wording.agent_name} will finish its step and write a handoff; then "
            f"{wording.after_handoff}"
        )
        model = (
            f"[clm-policy] The context window is {full} full and the policy says hand off "
            f"({outcome.rationale}). {HANDOFF_REQUEST}"
        )
    return reply_json(
        {
            "systemMessage": person,
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": cut(model),
            },
        }
    )


def compact_focus(state: Any) -> str:
    """The focus hint for ``/compact``: the goal, the next step, the files being changed."""
    from clm_policy.lifecycle.summary import next_safe_action, one_line

    parts = []
    if state.goal:
        parts.append(f"keep the goal ({one_line(state.goal, 80)})")
    parts.append(f"the next step ({one_line(next_safe_action(state), 100)})")
    if state.changed_artifacts:
        parts.append("the files " + ", ".join(state.changed_artifacts[-3:]))
    return one_line("; ".join(parts), 300)


def last_step(hook: Hook) -> int:
    """The agent's turns so far (a full read: PostCompact is rare; the tail has no count)."""
    try:
        from clm_policy.transcripts.reading import read_transcript

        return int(read_transcript(hook.transcript).step_index)
    except ClmError:
        return 0


def share(outcome: Any) -> str:
    window = outcome.context_window
    if window:
        return f"{outcome.context_tokens / window:.0%} ({outcome.context_tokens:,} of {window:,})"
    return f"{outcome.context_tokens:,} tokens"


def cut(text: str) -> str:
    return text if len(text) <= CONTEXT_LIMIT else text[: CONTEXT_LIMIT - 1] + "…"


def reply_json(payload: Mapping[str, Any]) -> HookReply:
    return HookReply(0, json.dumps(payload))


# -- never break the agent ------------------------------------------------------------------


def run_hook(raw: bytes, agent: str, handlers: Handlers, **options: str | None) -> HookReply:
    """Answer the hook input ``raw`` with ``handlers`` (by ``hook_event_name``); any failure
    is logged and answered with nothing (exit 0), so a hook never stands in the agent's way."""
    try:
        if len(raw) > MAX_INPUT:
            raise InputError(f"hook input larger than {MAX_INPUT // 1024 // 1024} MiB")
        event = json.loads(raw.decode("utf-8"))
        if not isinstance(event, dict):
            raise InputError("hook input is not a JSON object")
        hook = Hook(event, agent, **options)
        handler = handlers.get(hook.name)
        return with_trust_notice(hook, handler(hook) if handler is not None else NOTHING)
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        log(f"{type(exc).__name__}: {exc}", exc if not isinstance(exc, ClmError) else None)
        from clm_policy.config.trust import take_ignored

        take_ignored()  # a hook speaks on stdout, in its reply, or not at all
        return NOTHING


NOTICES_NAME = "trust-notices.json"
NOTICES_KEPT = 500


def with_trust_notice(hook: Hook, reply: HookReply) -> HookReply:
    """``reply``, telling the person (``systemMessage``) what the project's configuration may
    not choose until they trust it — once per session and content of the file, not on every
    prompt. Cheap when the file names no memory or remote: nothing is read."""
    from clm_policy.config.project import NEEDS_TRUST
    from clm_policy.config.trust import take_ignored

    config = hook.config
    if config.path is None or not any(key in config.values for key in NEEDS_TRUST):
        return reply
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
    """Append ``line`` (and a traceback for an unexpected error) to the hook log."""
    from clm_policy.agents.logfile import append

    text = line
    if exc is not None:
        import traceback

        text += "\n" + "".join(traceback.format_exception(exc))
    append(LOG_NAME, text, LOG_LIMIT)
