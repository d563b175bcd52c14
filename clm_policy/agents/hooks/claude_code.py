"""Claude Code's hooks, answered by the project's policy and committed to its memory.

Claude Code runs ``clm-policy hook claude-code`` with the hook's JSON on standard input
(``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name`` and the event's fields) and
reads the answer from standard output (exit 0) or standard error (exit 2, where blocking is the
point). A hook cannot run ``/compact`` or ``/clear`` itself: clm-policy decides, keeps the
memory, and tells the model (``additionalContext``) and the person (``systemMessage``) what to
do.

- **UserPromptSubmit**: decide from the transcript's tail. Continue: no output. Compact: the
  person is told to run ``/compact <focus>``, the model that the context is nearly full.
  Handoff: the model is told to finish its step and write a handoff (this turn's Stop
  commits it); the person what follows. A session that has handed off is not asked again.
- **PreCompact** (manual or auto): commit a compaction snapshot built from the transcript
  before Claude Code summarises it away (not twice at one position). When the policy says
  hand off and the compaction is automatic: commit the handoff instead and block the
  compaction (exit 2) — once; a later automatic compaction goes ahead. Claude Code shows
  the person nothing of a blocked compaction, so the next Stop (or prompt) tells them.
  Nothing is printed on standard output: Claude Code adds it to the compaction's
  instructions.
- **PostCompact**: commit Claude Code's own ``compact_summary``, with its figures before and
  after (``compactMetadata`` of the transcript's ``compact_boundary``).
- **SessionStart**: ``startup``/``clear``: the latest handoff of this project that no session
  has picked up yet, as context (taken, in git); ``compact``: what must survive (goal,
  blockers, next safe action, the memory index) from the snapshot taken at PreCompact;
  ``resume``: nothing. A ``model`` it names is kept for the window (:mod:`.windows`).
- **Stop**: when the policy says hand off and the session has no handoff yet, ask once
  (``additionalContext``: the turn goes on, no error is shown) for a handoff; at the stop
  after that, commit it from the transcript and ``last_assistant_message``.
- **SubagentStop**: record what the agent did (its own transcript, ``agent_transcript_path``)
  in the session's memory, under its ``agent_id`` (:mod:`.subagents`).

The window is the one Claude Code knows (:mod:`.windows`), never an assumed 200,000. A hook
never breaks the agent: :func:`run_hook` turns bad input, an unreadable transcript or an
internal error into exit 0 with no output and a line in the log; a transcript that does not
exist yet (a new session's first prompt) is answered with nothing, and is no problem.
"""

from __future__ import annotations

from clm_policy.agents.hooks.events import (
    Wording,
    pre_compact,
    prompt_advice,
    session_start,
    stop_for_handoff,
)
from clm_policy.agents.hooks.settling import settle
from clm_policy.agents.hooks.shared import (
    NOTHING,
    Hook,
    HookEvent,
    HookReply,
    cut,
    reply_json,
    run_hook,
)
from clm_policy.agents.hooks.subagents import record_subagent

AGENT = "claude-code"


def run_claude_hook(raw: bytes, **options: str | None) -> HookReply:
    """Answer one Claude Code hook call (its JSON in ``raw``); never raises."""
    return run_hook(raw, AGENT, EVENTS, **options)


# -- the events -----------------------------------------------------------------------------


def _ask_at_stop(text: str) -> HookReply:
    # Since 2.1.163 a Stop hook's additionalContext keeps the turn going and reaches the
    # model, with no error shown (decision "block" shows "Stop hook blocking error")
    return reply_json(
        {"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": cut(text)}}
    )


WORDING = Wording(
    agent_name="Claude",
    compact_command=lambda focus: f"Run: /compact {focus}",
    compact_note=lambda _focus: (
        "Finish the current step without reading large files or long outputs."
    ),
    after_handoff="run /clear — the next session starts from it.",
    next_session="Run /clear: the next session starts from it.",
    compacts="Claude Code compacts",
    stopped="blocked",
    ask_at_stop=_ask_at_stop,
    # exit 2 blocks a compaction; what it says reaches no one (Claude Code 2.1.328 shows it
    # neither in -p nor in the TUI), so the next Stop or prompt tells the person
    block_compaction=lambda text: HookReply(2, stderr=text),
    # PreCompact's standard output becomes the compaction's custom instructions: say nothing
    compaction_goes_ahead=lambda _text: NOTHING,
    block_is_seen=False,
)


def _user_prompt_submit(hook: Hook) -> HookReply:
    return prompt_advice(hook, WORDING)


def _pre_compact(hook: Hook) -> HookReply:
    return pre_compact(hook, WORDING)


def _post_compact(hook: Hook) -> HookReply:
    from clm_policy.lifecycle.pipelines import Provenance, record_agent_summary
    from clm_policy.models.state import SessionState
    from clm_policy.transcripts.reading import read_transcript

    summary = hook.event.get("compact_summary")
    if not isinstance(summary, str) or not summary.strip():
        return NOTHING
    trigger = str(hook.event.get("trigger") or "manual")
    settle(hook.transcript)  # the compact_boundary line may not be written yet
    reading = read_transcript(hook.transcript)
    state = SessionState(session_id=hook.session_id(), step_index=reading.step_index)
    why = Provenance(
        f"{AGENT}:{trigger}", extra_trailers={"Clm-Agent": AGENT, "Clm-Agent-Trigger": trigger}
    )
    with hook.repo() as repo:
        record_agent_summary(
            repo,
            state,
            summary,
            why=why,
            context=(reading.compacted_at_tokens, reading.compacted_to_tokens),
        )
    return NOTHING


def _stop(hook: Hook) -> HookReply:
    return stop_for_handoff(hook, WORDING)


EVENTS = {
    # the one table of Claude Code's events: the handler, and the timeout in seconds its
    # settings.json gives the hook (clm_policy.agents.hooks.claude_settings writes it from
    # here). UserPromptSubmit and SessionStart read the transcript's end and decide;
    # PreCompact and Stop may commit a compaction or a handoff (git); PostCompact records the
    # summary; SubagentStop commits the record of an agent the session started (git).
    "UserPromptSubmit": HookEvent(_user_prompt_submit, 30),
    "PreCompact": HookEvent(_pre_compact, 60),
    "PostCompact": HookEvent(_post_compact, 30),
    "SessionStart": HookEvent(session_start, 30),
    "Stop": HookEvent(_stop, 60),
    "SubagentStop": HookEvent(record_subagent, 60),
}
