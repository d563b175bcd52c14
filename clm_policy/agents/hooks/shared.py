"""What every agent's hooks share: the call (its input, the project's configuration, the
policy, the memory repository), the reply, the seed and essentials a session starts with, and
the rule that a hook never breaks the agent (:func:`run_hook`).

The agent-specific answers live in :mod:`.claude_code` (Claude Code) and :mod:`.codex`
(Codex CLI); the events whose protocol the two agents share are answered here once
(:func:`prompt_advice`, :func:`pre_compact`, :func:`stop_for_handoff`), with what differs
between them — the words, and the shape of an answer that asks or blocks — in their
:class:`Wording`.

Three rules hold for every event:

- **Exactly once.** A session hands off once: a handoff committed at PreCompact or Stop ends
  the asking (the prompt hook stops asking for one; a later automatic compaction goes ahead),
  and a snapshot at a transcript position already committed is not committed again.
- **The agent's figures.** The window is the one the agent knows (a Codex rollout names it;
  for Claude Code, :mod:`.windows`); with none known, shares of it decide nothing. The
  transcript is written asynchronously (Claude Code flushes it every 100 ms): Stop waits for
  the reply it is told of, PreCompact and PostCompact for the file to settle, a moment at most.
- **Said once.** What the person must know and the agent shows nowhere (a handoff committed
  at a blocked automatic compaction; an unknown window) is said once, by the next hook whose
  ``systemMessage`` the agent shows; what was said is kept among the session's facts
  (:mod:`clm_policy.agents.sessionfacts`).
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
        return policy.outcome(figures, self.profile)

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

        reading = read_context(self.transcript)
        self.window_of(reading)
        return reading, self.outcome(reading.to_figures())

    def full_state(self) -> tuple[Any, Any | None]:
        """The whole transcript as a SessionState (for a snapshot or a handoff) and the
        policy's outcome on it (None: the window is unknown)."""
        from clm_policy.transcripts.reading import read_transcript

        reading = read_transcript(self.transcript)
        self.window_of(reading)
        state = reading.to_state(self.session_id(reading))
        if self.profile:
            state = state.model_copy(update={"profile": self.profile})
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


def agent_trailers(hook: Hook, trigger: str, state: Any) -> dict[str, str]:
    """The trailers saying the agent compacts, why (its trigger) and at what context."""
    return {"Clm-Agent-Trigger": trigger, "Clm-Agent-Tokens": str(state.tokens.context_tokens)}


def commit_snapshot(
    hook: Hook, repo: Any, state: Any, outcome: Any | None, trigger: str, compacts: str
) -> Any | None:
    """The compaction snapshot committed before the agent compacts (PreCompact): its rule is
    ``<agent>:<trigger>``, its rationale ``<compacts> (<trigger>)`` ("Claude Code compacts").
    None, and nothing committed, when a snapshot of this session at the same transcript
    position (step and context) is committed already (a compaction the agent tries again)."""
    from dataclasses import replace  # a compaction's commit: rare, and git costs more

    from clm_policy.lifecycle.pipelines import committed_snapshot, run_compaction

    if committed_snapshot(repo, state) is not None:
        return None
    state = with_agents(repo, state)
    why = replace(
        hook.provenance(outcome, **agent_trailers(hook, trigger, state)),
        rule=f"{hook.agent}:{trigger}",
        rationale=f"{compacts} ({trigger})",
    )
    retain = hook.policy().profile(hook.profile or state.profile).retain_recent_messages
    context = (
        f"Context: {state.tokens.context_tokens} tokens when {compacts.lower()}; after the "
        "compaction: unknown until its next response"
    )
    return run_compaction(repo, state, retain=retain, why=why, context_line=context)


def commit_handoff(
    hook: Hook, state: Any, outcome: Any | None, repo: Any | None = None, **trailers: str
) -> Any:
    """Commit the handoff of ``state`` (the model's last reply, when the hook was told it,
    kept as the session's last message) and note it among the session's facts."""
    from clm_policy.lifecycle.pipelines import run_handoff

    if repo is None:
        with hook.repo() as opened:
            return commit_handoff(hook, state, outcome, opened, **trailers)

    last = hook.event.get("last_assistant_message")
    if isinstance(last, str) and last.strip():
        from clm_policy.models.enums import MessageRole
        from clm_policy.models.state import Message

        state = state.model_copy(
            update={"messages": [Message(role=MessageRole.ASSISTANT, content=last)]}
        )
    state = with_agents(repo, state)
    done = run_handoff(
        repo,
        state,
        why=hook.provenance(outcome, **trailers),
        push=hook.remote,
        agent_id=MAIN_AGENT,
    )
    hook.note(handoff=done.manifest_path, told=None, asked=None)
    return done


MAIN_AGENT = "main"
"""The manifest's ``agent_id`` of a session's own agent (its subagents have their ids)."""


def with_agents(repo: Any, state: Any) -> Any:
    """``state`` with the memory keys of the agents its session started (recorded at their
    SubagentStop) among its ``memory_keys``: the next session reads their records first."""
    from clm_policy.lifecycle.subagents import agent_keys

    keys = agent_keys(repo, state.session_id)
    if not keys:
        return state
    merged = list(dict.fromkeys([*state.memory_keys, *keys]))
    return state.model_copy(update={"memory_keys": merged})


# -- seeds and essentials -------------------------------------------------------------------


def take_handoff(hook: Hook) -> str:
    """The newest handoff no session has picked up yet, as a seed; marked taken in git."""
    from clm_policy.lifecycle.handoff import seed_messages
    from clm_policy.lifecycle.pipelines import Provenance, memory_hits, record_session_start
    from clm_policy.memory.audit import read_log
    from clm_policy.models.manifest import validate_manifest
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
                manifest = validate_manifest(json.loads(text))
            except (ValueError, ClmError):
                continue  # a manifest that does not validate is no seed
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
            state = load_session(repo, sid).state
        except InputError:
            return ""
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


def handed_off(hook: Hook, repo: Any | None = None) -> str | None:
    """The manifest of this session's handoff when it has committed one (on any branch),
    else None."""
    from clm_policy.memory.audit import read_log

    if repo is None:
        with hook.repo() as opened:
            return handed_off(hook, opened)
    for entry in read_log(repo, session=hook.session_id(), event="handoff", rev="--all"):
        return entry.trailers.get("Clm-Manifest") or entry.commit
    return None


class Wording(Record):
    """What differs between the agents' answers.

    The words: ``agent_name`` ("Claude", "Codex"); ``compact_command``, the focus -> what the
    person runs; ``compact_note``, the focus -> what the model is told; ``after_handoff``,
    what the person does once the handoff is written (in a sentence), ``next_session`` (a
    sentence of its own); ``compacts`` ("Claude Code compacts"); ``stopped``, what a blocked
    automatic compaction is ("blocked", "stopped").

    The answers' shapes, each given the text: ``ask_at_stop`` keeps the agent going with a
    request to the model; ``block_compaction`` stops an automatic compaction;
    ``compaction_goes_ahead`` lets one proceed in a session that handed off already.
    ``block_is_seen``: whether the person sees the blocking answer's text (else the next
    hook that can show a message tells them)."""

    FIELDS = (
        "agent_name",
        "compact_command",
        "compact_note",
        "after_handoff",
        "next_session",
        "compacts",
        "stopped",
        "ask_at_stop",
        "block_compaction",
        "compaction_goes_ahead",
        "block_is_seen",
    )
    __slots__ = FIELDS

    def __init__(
        self,
        agent_name: str,
        compact_command: Callable[[str], str],
        compact_note: Callable[[str], str],
        after_handoff: str,
        next_session: str,
        compacts: str,
        stopped: str,
        ask_at_stop: Callable[[str], HookReply],
        block_compaction: Callable[[str], HookReply],
        compaction_goes_ahead: Callable[[str], HookReply],
        block_is_seen: bool,
    ) -> None:
        self.agent_name = agent_name
        self.compact_command = compact_command
        self.compact_note = compact_note
        self.after_handoff = after_handoff
        self.next_session = next_session
        self.compacts = compacts
        self.stopped = stopped
        self.ask_at_stop = ask_at_stop
        self.block_compaction = block_compaction
        self.compaction_goes_ahead = compaction_goes_ahead
        self.block_is_seen = block_is_seen


def told_of_handoff(hook: Hook, wording: Wording, facts: Mapping[str, Any]) -> HookReply | None:
    """The message for a handoff this session committed where the person saw nothing (an
    automatic compaction blocked at the hard limit: Claude Code shows no hook output there),
    once; None when there is none to tell."""
    manifest = facts.get("handoff")
    if not isinstance(manifest, str) or facts.get("told") == manifest:
        return None
    hook.note(told=manifest)
    return reply_json(
        {
            "systemMessage": (
                f"clm-policy: this session has handed off: the handoff is committed "
                f"({manifest}). {wording.next_session}"
            )
        }
    )


def stop_for_handoff(hook: Hook, wording: Wording) -> HookReply:
    """A Stop hook's answer. When the policy says hand off and the session has no handoff
    yet: ask the model once for a short handoff (``wording.ask_at_stop``: Claude Code's
    ``additionalContext``, which keeps the turn going without an error; Codex's
    ``decision: block``); at the stop after that — or at this turn's stop when the prompt hook
    asked already — commit the handoff from the transcript and the model's last reply.

    The reply the hook is told of (``last_assistant_message``) may not be in the transcript
    yet: it is waited for, a moment at most; a transcript with no usage figure yet (an
    estimate) decides no handoff — the next prompt's hook has the figure. A handoff committed
    where the person saw nothing is told here, once."""
    facts = hook.facts()
    told = told_of_handoff(hook, wording, facts)
    if told is not None:
        return told
    if facts.get("handoff"):
        return NOTHING  # handed off and told: nothing more to ask
    asked = bool(hook.turn) and facts.get("asked") == hook.turn
    active = hook.event.get("stop_hook_active") is True
    size = _size(hook.transcript)
    reading, outcome = hook.decide_from_tail()
    if not (asked or active) and far_from_handoff(hook, reading, outcome):
        return NOTHING  # the reply not written yet cannot reach the handoff point
    wait_for_reply(hook)
    if _size(hook.transcript) != size:  # written since: the figure of the reply itself
        reading, outcome = hook.decide_from_tail()
    if outcome is None or (outcome.action.value != "handoff" and not asked):
        return NOTHING
    if reading.context_estimated and not asked:
        return NOTHING
    if handed_off(hook) is not None:
        return NOTHING
    if asked or active:
        # the reply that was asked for holds the handoff: commit it now
        state, full = hook.full_state()
        done = commit_handoff(hook, state, full if full is not None else outcome)
        hook.note(told=done.manifest_path)
        return reply_json(
            {
                "systemMessage": (
                    f"clm-policy: handoff committed ({done.manifest_path}). {wording.next_session}"
                )
            }
        )
    if hook.turn:
        hook.note(asked=hook.turn)
    return wording.ask_at_stop(
        f"clm-policy: the context is {share(outcome)} full and the policy hands off "
        f"({outcome.rationale}). Before you stop, end your reply with a short handoff for the "
        "next session: the goal; what is done and verified; what is not verified; blockers; "
        "the next safe action. Then stop."
    )


def pre_compact(hook: Hook, wording: Wording) -> HookReply:
    """A PreCompact answer (manual or automatic): commit a compaction snapshot built from
    the transcript before the agent summarises it away. When the compaction is automatic and
    the policy hands off: commit the handoff instead and stop the compaction
    (``wording.block_compaction``) — once per session: a later automatic compaction of a
    session that has handed off goes ahead, with a snapshot. A snapshot at a transcript
    position already committed is not committed again (the agent tries a blocked compaction
    again before every request)."""
    trigger = str(hook.event.get("trigger") or "manual")
    settle(hook.transcript)
    state, outcome = hook.full_state()
    hands_off = outcome is not None and outcome.action.value == "handoff" and trigger == "auto"
    with hook.repo() as repo:
        already = handed_off(hook, repo) if hands_off else None
        if hands_off and already is None and outcome is not None:
            native = agent_trailers(hook, trigger, state)
            done = commit_handoff(hook, state, outcome, repo, **native)
            if wording.block_is_seen:
                hook.note(told=done.manifest_path)
            return wording.block_compaction(
                f"clm-policy: the policy hands off here ({outcome.rationale}), so the "
                f"automatic compaction is {wording.stopped}. The handoff is committed "
                f"({done.manifest_path}). {wording.next_session}"
            )
        snapshot = commit_snapshot(hook, repo, state, outcome, trigger, wording.compacts)
    if already is None:
        return NOTHING
    kept = f" (snapshot {snapshot.path})" if snapshot is not None else ""
    return wording.compaction_goes_ahead(
        f"clm-policy: this session has handed off already; {wording.compacts} it as "
        f"asked{kept}. {wording.next_session}"
    )


HANDOFF_REQUEST = (
    "Finish the step you are on, do not start new work, and end your reply with a handoff: "
    "the goal; what is done and verified; what is not verified; blockers; the next safe action."
)


def prompt_advice(hook: Hook, wording: Wording) -> HookReply:
    """A UserPromptSubmit answer: nothing while the policy says continue; the person told
    to compact (with a focus) or that a handoff follows, and the model why. A session that
    has handed off is not asked again (the person is told once, when no hook could show it
    before); a window nobody knows is said once, with how to tell it."""
    reading, outcome = hook.decide_from_tail()
    if outcome is None:
        return window_notice(hook, reading)
    action = outcome.action.value
    if action == "continue":
        return NOTHING
    facts = hook.facts()
    told = told_of_handoff(hook, wording, facts)
    if told is not None:
        return told
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
        if facts.get("handoff") or handed_off(hook) is not None:
            return NOTHING  # the handoff is committed: the person knows what follows
        person = (
            f"clm-policy: context {full}, the policy hands off ({outcome.rationale}). "
            f"{wording.agent_name} will finish its step and write a handoff; then "
            f"{wording.after_handoff}"
        )
        model = (
            f"[clm-policy] The context window is {full} full and the policy says hand off "
            f"({outcome.rationale}). {HANDOFF_REQUEST}"
        )
        if hook.turn:
            hook.note(asked=hook.turn)  # this turn's Stop commits the reply as the handoff
    return reply_json(
        {
            "systemMessage": person,
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": cut(model),
            },
        }
    )


def window_notice(hook: Hook, reading: Any) -> HookReply:
    """Once per session: the window is unknown, so the policy's thresholds (shares of it)
    decide nothing; how to tell it. Not before the first response (no model named yet, and
    nothing in the window to speak of)."""
    if not reading.model or hook.facts().get("window_told"):
        return NOTHING
    hook.note(window_told=True)
    model = reading.model
    return reply_json(
        {
            "systemMessage": (
                f"clm-policy: the context window of {model} is unknown, so the policy's "
                "thresholds (shares of the window) decide nothing in this session: no "
                "compaction or handoff is advised. Tell it the window: run Claude Code with "
                "clm-policy's status line (clm-policy hook claude-code --install), set "
                "CLAUDE_CODE_AUTO_COMPACT_WINDOW, or add the model to the policy's models: "
                f"table ({model}: <tokens>)."
                if hook.agent == "claude-code"
                else f"clm-policy: the context window of {model} is unknown, so the policy's "
                "thresholds (shares of the window) decide nothing in this session. Add the "
                f"model to the policy's models: table ({model}: <tokens>)."
            )
        }
    )


# -- the transcript as the agent writes it -----------------------------------------------------

REPLY_WAIT = 0.5
"""Seconds a Stop hook waits at most for the reply it is told of to reach the transcript."""
SETTLE_QUIET = 0.15
SETTLE_LIMIT = 0.6
"""A compaction hook reads the transcript once its size has not changed for SETTLE_QUIET
seconds (Claude Code flushes it every 100 ms), or after SETTLE_LIMIT seconds."""
_POLL = 0.005
_REPLY_SCAN = 256 * 1024


def wait_for_reply(hook: Hook, path: str | None = None) -> None:
    """Wait (at most :data:`REPLY_WAIT` seconds) until the end of the transcript (``path``,
    else the hook's) holds the reply the hook is told of (``last_assistant_message``): when
    Stop fires, Claude Code has often not written it yet, and the figures would be the
    response's before."""
    last = hook.event.get("last_assistant_message")
    if not isinstance(last, str) or not last.strip():
        return
    where = path or hook.transcript
    needle = json.dumps(last.strip()[:120], ensure_ascii=False)[1:-1].encode("utf-8")
    deadline = None
    import time

    while True:
        if _tail_holds(where, needle):
            return
        now = time.monotonic()
        deadline = deadline or now + REPLY_WAIT
        if now >= deadline:
            return
        time.sleep(_POLL)


def far_from_handoff(hook: Hook, reading: Any, outcome: Any | None) -> bool:
    """Whether a reply Claude Code has not written yet cannot bring the session to the
    policy's handoff point: the last figure, counting every byte read after it as a token
    (an over-count), is under half the hard limit (the rest is more than one response adds:
    Claude Code caps a tool's output). Then Stop need not wait for the reply (Claude Code
    writes the transcript every 100 ms: the wait is most of a Stop hook's time)."""
    if outcome is None:
        return True  # nothing decides a handoff (the window is unknown)
    if reading.context_estimated or outcome.action.value == "handoff":
        return False
    profile = hook.policy().profile(outcome.profile)
    hard = profile.hard_handoff.resolve(outcome.context_window)
    if hard is None:
        return False
    return bool(reading.context_tokens + reading.bytes_read < hard // 2)


def _tail_holds(path: str, needle: bytes) -> bool:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - _REPLY_SCAN))
            return needle in fh.read()
    except OSError:
        return False


def settle(path: str) -> None:
    """Wait until the file at ``path`` stops growing (see :data:`SETTLE_QUIET`)."""
    import time

    start = last_change = time.monotonic()
    size = _size(path)
    while True:
        time.sleep(_POLL)
        now = time.monotonic()
        current = _size(path)
        if current != size:
            size, last_change = current, now
        if now - last_change >= SETTLE_QUIET or now - start >= SETTLE_LIMIT:
            return


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return -1


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
    except NoTranscriptYet:
        return NOTHING  # a new session's first hooks: nothing to read yet, nothing wrong
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
