"""What the hooks say about the context: its share of the window and the focus a compaction
keeps."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from clm_policy.agents.hooks.hook import Hook
    from clm_policy.models.decision import Decision
    from clm_policy.models.state import SessionState


def redacted_for_advice(state: SessionState) -> SessionState:
    """``state`` with what :func:`compact_focus` reads redacted before anything cuts it: the
    person types the focus back into the agent, and a key cut in half would no longer be
    recognised. (Only these fields: redacting every message would cost every prompt.)"""
    from clm_policy.memory.redact import Redactor
    from clm_policy.models.enums import MessageRole

    clean = Redactor().text
    said = (m for m in reversed(state.messages) if m.role is MessageRole.ASSISTANT)
    last = next((m for m in said if m.content.strip()), None)
    return state.replace(
        goal=clean(state.goal),
        blockers=[clean(b) for b in state.blockers],
        not_verified=[clean(x) for x in state.not_verified],
        changed_artifacts=[clean(a) for a in state.changed_artifacts],
        messages=[] if last is None else [last.replace(content=clean(last.content))],
    )


def session_focus(hook: Hook) -> str:
    """The ``/compact`` focus of this hook's session (its transcript read whole, redacted)."""
    from clm_policy.memory.redact import Redactor
    from clm_policy.transcripts.reading import read_transcript
    from clm_policy.transcripts.takeover import state_of

    reading = read_transcript(hook.call.transcript())
    state = state_of(reading, hook.session_id(reading))
    last = reading.work.last_activity if reading.work is not None else None
    return compact_focus(redacted_for_advice(state), Redactor().text(last) if last else None)


def compact_focus(state: SessionState, last_activity: str | None = None) -> str:
    """The focus for ``/compact``: what the summary must keep, and the next step (the one the
    session states, or what was last being done). Never a goal guessed from the user's last
    words: the summary has the conversation."""
    from clm_policy.base.errors import clipped_line
    from clm_policy.lifecycle.request import compact_focus as focus
    from clm_policy.lifecycle.summary import UNKNOWN_NEXT_STEP, next_safe_action

    step = next_safe_action(state, last_activity)
    if not step.startswith(UNKNOWN_NEXT_STEP):
        said = f"Next step: {clipped_line(step, 200).rstrip('.')}."
    elif last_activity:
        said = f"The next step is unknown; last being done: {clipped_line(last_activity, 200)}."
    else:
        said = "The next step is unknown."
    return focus(said)


def share(outcome: Decision, agent: str = "") -> str:
    """The context as a share of the window; for Claude Code, of what it counts of it
    (160,000 of 200,000 is "89% (160,000 of 180,000)")."""

    window = outcome.context_window
    if window and agent == "claude-code":
        from clm_policy.agents.statusline import counted_window

        window = counted_window(window)
    if window:
        return f"{outcome.context_tokens / window:.0%} ({outcome.context_tokens:,} of {window:,})"
    return f"{outcome.context_tokens:,} tokens"
