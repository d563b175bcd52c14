"""The decisions behind clm-policy's Claude Code plugin engine module: what it does after a
turn and when the conversation compacts.

Claude Code (2.1.332) runs a plugin's *hooks module* inside itself, with events and calls
command hooks do not have (``turn.complete`` with the turn's usage, ``$.session.compact``, a
``session.compact`` handler that may answer the messages replacing the conversation,
``$.prompt.submit``, ``$.ui.status``, ``$.ui.toast``). The module
(``integrations/claude-code/hooks/engine.ts``) decides nothing itself: it runs ``clm-policy
hook claude-code --engine`` with a JSON object on standard input and does what the answer
says:

- ``engine.start``: the status line's text.
- ``engine.turn``: ``compact`` with the policy's focus; ``ask`` for the handoff, once (the
  engine submits :data:`~.claude_code.ENGINE_PROMPT`, whose UserPromptSubmit hook adds the
  request unseen and whose Stop hook commits the reply); ``apply`` a handoff not yet applied.
- ``engine.compact``: the seed of a committed handoff that waits to be applied, recorded as
  taken; otherwise nothing (PreCompact commits the snapshot).

Every answer holds ``status``, the status line's text. A call that fails answers ``idle`` (why,
in a few words) and writes one line to the hook log: the session goes on untouched.
"""

from __future__ import annotations

from clm_policy.agents.hooks.call import NoTranscriptYet, read_call
from clm_policy.agents.hooks.claude_code import AGENT, ENGINE_MODES, ENGINE_PROMPT
from clm_policy.agents.hooks.commits import handed_off
from clm_policy.agents.hooks.focus import session_focus, share
from clm_policy.agents.hooks.hook import Hook
from clm_policy.agents.hooks.shared import log

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from clm_policy.models.decision import Decision

    Answer = dict[str, Any]

APPLY = "clm-policy: the conversation continues from the committed handoff"
"""The instructions of the engine's compaction that applies a handoff (it knows it by them)."""
IDLE_LIMIT = 120


def run_engine(raw: bytes) -> Answer:
    """The answer to one call of the plugin engine module; never raises."""
    name = ""
    try:
        call = read_call(raw)
        name = call.name
        handler = EVENTS.get(name)
        if handler is None:
            from clm_policy.base.errors import InputError

            raise InputError(f"unknown engine event {name!r} (known: {', '.join(EVENTS)})")
        return handler(Hook(call, AGENT))
    except Exception as exc:
        from clm_policy.base.errors import ClmError, shorten

        why = str(exc) if isinstance(exc, ClmError) else f"{type(exc).__name__}: {exc}"
        where = f"{AGENT} engine: {name}: " if name else f"{AGENT} engine: "
        log(f"{where}{why}")
        short = " ".join(why.split())
        if len(short) > IDLE_LIMIT:
            short = shorten(short, IDLE_LIMIT - 1)
        return {"act": "none", "idle": short, "status": f"idle: {short} (see the hook log)"}


def engine_main() -> str:
    """``clm-policy hook claude-code --engine``: the answer's JSON, one line."""
    import json

    from clm_policy.agents.hooks.call import MAX_INPUT
    from clm_policy.agents.hooks.reply import cleaned, cleaner
    from clm_policy.base.stdin import read_stdin

    # every text as a hook's reply says it: redacted, terminal-safe, held to the limit
    answer = cleaned(run_engine(read_stdin(MAX_INPUT)), cleaner())
    return json.dumps(answer, ensure_ascii=False)


# -- the events -----------------------------------------------------------------------------


def _start(hook: Hook) -> Answer:
    return {"act": "none", "status": status_text(hook)}


def _turn(hook: Hook) -> Answer:
    mode = handoff_mode(hook.call.event)
    status = status_text(hook)
    facts = hook.facts()
    if not facts.get("applied") and (facts.get("handoff") or handed_off(hook) is not None):
        if mode == "clear":
            return {"act": "none", "status": status}
        return {"act": "apply", "instructions": APPLY, "status": status}
    outcome = _outcome(hook)
    if outcome is None or outcome.action.value == "continue":
        return {"act": "none", "status": status}
    full = share(outcome, AGENT)
    if outcome.action.value == "handoff" and not facts.get("applied"):
        if facts.get("engine_asked"):
            return {"act": "none", "status": status}  # asked: its Stop commits the reply
        hook.note(engine_asked=True)
        return {
            "act": "ask",
            "prompt": ENGINE_PROMPT,
            "toast": f"context {full}: the policy hands off; Claude writes its handoff",
            "status": status,
        }
    # compact (and a session that continued from its handoff compacts from then on)
    focus = session_focus(hook)
    return {
        "act": "compact",
        "instructions": focus,
        "toast": f"compacting: context {full}",
        "status": status,
    }


def _compact(hook: Hook) -> Answer:
    from clm_policy.agents.hooks.seeds import seed_from
    from clm_policy.memory.audit import read_log

    mode = handoff_mode(hook.call.event)
    facts = hook.facts()
    if hook.call.event.get("agent_id") or mode == "clear" or facts.get("applied"):
        return {"act": "none"}
    sid = hook.session_id()
    with hook.repo() as repo:
        entries = read_log(repo, session=sid, event="handoff", rev="--all")
        if not entries:
            return {"act": "none"}
        seeded = seed_from(hook, repo, entries[0], in_place=True)
    if seeded is None:
        return {"act": "none"}
    seed, _goal = seeded
    manifest = entries[0].trailers.get("Clm-Manifest") or entries[0].commit
    hook.note(applied=manifest, handoff=manifest, told=manifest, fresh_start=True)
    policy = hook.policy()
    names = f"{policy.name}/{policy.profile(hook.profile).name}"
    return {
        "act": mode,
        "seed": seed,
        "toast": f"handed off ({manifest}): the conversation continues from it",
        # no figure until the next response (the transcript's is from before the handoff)
        "status": f"ctx n/a (just compacted) · continues from its handoff · {names}",
    }


EVENTS: Mapping[str, Callable[[Hook], Answer]] = {
    "engine.start": _start,
    "engine.turn": _turn,
    "engine.compact": _compact,
}


# -- helpers --------------------------------------------------------------------------------


def handoff_mode(event: Mapping[str, Any]) -> str:
    mode = event.get("handoff")
    return mode if isinstance(mode, str) and mode in ENGINE_MODES else "replace"


def context_of(event: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """Claude Code's own figures (``$.session.usage().context``): tokens and window."""
    context = event.get("context")
    found = [
        context.get(key) if isinstance(context, dict) else None for key in ("tokens", "window")
    ]
    tokens, window = (value if type(value) is int and value > 0 else None for value in found)
    return tokens, window


def _outcome(hook: Hook) -> Decision | None:
    """The policy's outcome with Claude Code's own context and window in place of the
    transcript's (None: no context given, no transcript yet, or the window is unknown)."""
    from clm_policy.agents.hooks.context import fill_window, outcome_of
    from clm_policy.transcripts.reading import read_context

    tokens, window = context_of(hook.call.event)
    if tokens is None:
        return None
    try:
        reading = read_context(hook.call.transcript())
    except NoTranscriptYet:
        return None
    reading.context_tokens = tokens
    reading.context_estimated = False
    if window:
        reading.context_window = window
    fill_window(hook, reading)
    return outcome_of(hook, reading.to_figures())


def status_text(hook: Hook) -> str:
    """The status line's text for this session and these figures."""

    import json

    from clm_policy.agents.statusline import status_line

    event = hook.call.event
    tokens, window = context_of(event)
    payload = {
        "session_id": event.get("session_id"),
        "transcript_path": event.get("transcript_path"),
        "workspace": {"current_dir": hook.call.text("cwd") or ""},
        "model": {"id": hook.call.text("model")},  # (the status line reads "" as none)
        "context_window": {
            "context_window_size": window,
            "current_usage": None if tokens is None else {"input_tokens": tokens},
        },
    }
    return status_line(json.dumps(payload).encode())
