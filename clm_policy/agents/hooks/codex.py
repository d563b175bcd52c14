"""Codex CLI's hooks, answered by the project's policy and committed to its memory.

Codex runs ``clm-policy hook codex`` (configured in a ``hooks.json`` or the ``[hooks]`` tables
of a ``config.toml``, see :func:`settings_snippet`) with the hook's JSON on standard input (as
Claude Code's, with ``model``; ``transcript_path`` is the rollout, or null) and reads the
answer from standard output at exit 0. Protocol facts (openai/codex, ``codex-rs/hooks``,
docs/codex.md lists the sources):

- Codex's compaction hooks get no summary and no custom instructions (PR #19905); PreCompact
  cannot be blocked with ``decision: "block"`` or exit 2, but ``{"continue": false}`` stops
  the turn before the compaction runs (``continue_false_stops_before_compaction``).
- A Stop hook keeps Codex going with ``{"decision": "block", "reason": …}``: the reason is
  the next prompt, and that stop's hook call has ``stop_hook_active``.
- ``additionalContext`` of UserPromptSubmit and SessionStart becomes a developer message;
  ``systemMessage`` is shown to the person as a warning. No hook output runs ``/compact``.

This module holds what differs from Claude Code (:data:`WORDING`) and PostCompact: Codex's own
summary is committed when the rollout has one (a local compaction writes it in the
``compacted`` line; a remote one keeps it encrypted). Other events say nothing about the
context: no hook."""

from __future__ import annotations

import json
from functools import partial

from clm_policy.agents.hooks.events import (
    Wording,
    pre_compact,
    prompt_advice,
    record_subagent,
    session_start,
    stop_for_handoff,
)
from clm_policy.agents.hooks.reply import NOTHING, HookOutput, Reply, tell
from clm_policy.agents.hooks.settling import settle
from clm_policy.agents.hooks.shared import HookEvent, hook_settings, run_hook

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from clm_policy.agents.hooks.hook import Hook

AGENT = "codex"


def run_codex_hook(raw: bytes, **options: str | None) -> HookOutput:
    """Answer one Codex hook call; never raises."""
    return run_hook(raw, AGENT, EVENTS, **options)


def settings_snippet(executable: str) -> dict[str, Any]:
    """The ``hooks.json`` that runs ``executable hook codex`` on every event handled here."""
    import shlex

    return {"hooks": hook_settings(f"{shlex.quote(executable)} hook codex", EVENTS)}


# -- the events -----------------------------------------------------------------------------


class _CodexWording(Wording):
    agent_name = "Codex"
    compact_command = staticmethod(lambda _focus: "Run /compact.")
    # Codex's /compact takes no focus: the model writes the summary, so it is told
    compact_note = staticmethod(
        lambda focus: (
            f"When you summarise the conversation: {focus} Until then, finish the current step "
            "without reading large files or long outputs."
        )
    )
    after_handoff = "start a new session (/new): it starts from the handoff."
    next_session = "Start a new session (/new): it starts from the handoff."
    compacts = "Codex compacts"
    stopped = "stopped"
    # the reason is Codex's next prompt, and that stop's hook call has stop_hook_active
    ask_at_stop = staticmethod(lambda text: Reply(fields={"decision": "block", "reason": text}))
    # exit 2 and decision:block do not stop a Codex compaction; continue:false does, by
    # ending the turn before the compaction starts (and Codex shows the stopReason)
    block_compaction = staticmethod(
        lambda text: Reply(fields={"continue": False, "stopReason": text})
    )
    compaction_goes_ahead = staticmethod(tell)
    block_is_seen = True


WORDING = _CodexWording()


def _post_compact(hook: Hook) -> Reply:
    from clm_policy.agents.hooks.commits import commit_summary
    from clm_policy.memory.audit import read_log
    from clm_policy.transcripts.reading import read_transcript

    transcript = hook.call.transcript()
    settle(transcript)
    reading = read_transcript(transcript)
    summary = last_compaction_text(transcript)
    if not summary.strip() or not reading.compact_count:
        return NOTHING  # a remote compaction: Codex keeps its summary encrypted
    sid = hook.session_id(reading)
    ordinal = str(reading.compact_count)
    with hook.repo() as repo:
        recorded = read_log(repo, session=sid, event="summary", rev="--all")
        if any(e.trailers.get("Clm-Agent-Compaction") == ordinal for e in recorded):
            return NOTHING  # the rollout is behind: its last compaction is recorded already
        # Codex recounts the context after a compaction (a token_count line): its figure
        # when the rollout has it, else unknown until the next response
        after = None if reading.context_estimated else reading.context_tokens
        context = (reading.compacted_at_tokens, after)
        ordinal_trailer = {"Clm-Agent-Compaction": ordinal}
        commit_summary(hook, repo, sid, reading.step_index, summary, context, **ordinal_trailer)
    return NOTHING


def last_compaction_text(path: str) -> str:
    """The ``message`` of the rollout's last complete ``compacted`` line: Codex's summary after
    a local compaction, empty after a remote one or none."""

    from clm_policy.transcripts.reading import MAX_TAIL_SCAN, Source

    with Source.open(path) as src:
        for raw, terminated in src.backward(MAX_TAIL_SCAN):
            if not terminated or b'"compacted"' not in raw:
                continue  # a line still being written, or not a compaction
            try:
                obj = json.loads(raw)
            except (ValueError, RecursionError):
                continue
            if isinstance(obj, dict) and obj.get("type") == "compacted":
                payload = obj.get("payload")
                message = payload.get("message") if isinstance(payload, dict) else None
                return message if isinstance(message, str) else ""
    return ""


EVENTS = {
    # the one table of Codex's events: the handler, and the timeout in seconds its hooks.json
    # gives the hook (settings_snippet writes it; 60 where a snapshot, a handoff or an agent's
    # record may be committed)
    "UserPromptSubmit": HookEvent(partial(prompt_advice, wording=WORDING), 30),
    "PreCompact": HookEvent(partial(pre_compact, wording=WORDING), 60),
    "PostCompact": HookEvent(_post_compact, 30),
    "SessionStart": HookEvent(session_start, 30),
    "Stop": HookEvent(partial(stop_for_handoff, wording=WORDING), 60),
    "SubagentStop": HookEvent(record_subagent, 60),
}
