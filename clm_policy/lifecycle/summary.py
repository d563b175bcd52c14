"""The deterministic structured summary of a session, in Markdown.

The sections cover what other agents' summary prompts ask a model to keep (Codex, Goose,
Gemini CLI), filled from the facts a SessionState carries. The original sections are always
present, ``(none)`` when empty, so summaries diff and grep alike; those a real session adds
(requests, done, remaining, moved, deleted, open failures) appear when they hold something.
The same state gives byte-identical text: nothing here reads a clock, a random source or an
unordered collection.
"""

from __future__ import annotations

from clm_policy.base.errors import clipped_line
from clm_policy.models.enums import MessageRole, TaskStatus

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from clm_policy.models.state import Message, SessionState

RECENT_MESSAGES = 5
MESSAGE_WIDTH = 240
ACTION_WIDTH = 400
NONE = "(none)"
UNKNOWN_NEXT_STEP = "Unknown: the session states no next step"
"""How a next step nobody stated begins (never a boilerplate step)."""
COMPLETED_NEXT_ACTION = (
    "The task is complete: report what was done and wait for the user's next request"
)


def bullets(items: Sequence[str]) -> list[str]:
    """Markdown list lines; a multi-line item continues indented under its bullet."""
    if not items:
        return [NONE]
    lines: list[str] = []
    for item in items:
        first, *rest = item.strip().splitlines() or [""]
        lines.append(f"- {first}".rstrip())
        lines.extend(f"  {line}".rstrip() for line in rest)
    return lines


def code_list(keys: Sequence[str]) -> list[str]:
    return bullets([f"`{key}`" for key in keys])


def section(title: str, body: Iterable[str]) -> list[str]:
    return [f"## {title}", "", *body, ""]


def next_safe_action(
    state: SessionState, last_activity: str | None = None, *, after_derived: bool = True
) -> str:
    """What the agent should do first after a compaction or handoff: the step the agent itself
    stated (``next_action``: its handoff, its compact summary, the question its last words end
    with), else the first of what the state lists, else that it is unknown (with
    ``last_activity`` when known). The last assistant message is never the next step: it may
    say what was just done, or answer a background task's notice."""
    if state.next_action.strip():
        return clipped_line(state.next_action, ACTION_WIDTH)
    if state.status is TaskStatus.COMPLETED and not state.blockers and not state.remaining:
        return COMPLETED_NEXT_ACTION
    last = (
        f". Last being done: {clipped_line(last_activity, ACTION_WIDTH)}"
        if last_activity and after_derived
        else ""
    )
    for prefix, items, what in (
        ("Resolve the blocker: ", state.blockers, "blocker"),
        ("Continue with: ", state.remaining, "task"),
        ("Fix the failing check: ", state.open_failures, "failing check"),
        ("Verify: ", state.not_verified, "unverified item"),
    ):
        if items:
            more = len(items) - 1
            then = f" (then {more} more {what}{'s' if more > 1 else ''})" if more else ""
            return prefix + clipped_line(items[0], ACTION_WIDTH).rstrip(".") + then + last
    return unknown_next_step(last_activity)


def unknown_next_step(last_activity: str | None) -> str:
    text = UNKNOWN_NEXT_STEP
    if last_activity:
        return f"{text}. Last being done: {clipped_line(last_activity, ACTION_WIDTH)}"
    return f"{text}; ask the user before acting"


def recent_messages(messages: Sequence[Message], count: int) -> list[Message]:
    if count <= 0:
        return []
    conversation = [m for m in messages if m.role is not MessageRole.SYSTEM]
    return conversation[-count:]


def last_reply(state: SessionState) -> str | None:
    """The text of the last assistant message that says something, as written (None: none)."""
    said = (m.content for m in reversed(state.messages) if m.role is MessageRole.ASSISTANT)
    return next((text for text in said if text.strip()), None)


def build_summary(
    state: SessionState, *, recent: int = RECENT_MESSAGES, width: int = MESSAGE_WIDTH
) -> str:
    """The summary of ``state``; its last ``recent`` conversation messages close it, each on
    one line cut to ``width``."""
    facts = [f"Status: {state.status.value}", f"earlier compactions: {state.compact_count}"]
    if state.parent_session:
        facts.append(f"handed off from session {state.parent_session}")
    shown = recent_messages(state.messages, recent)
    total = sum(1 for m in state.messages if m.role is not MessageRole.SYSTEM)
    recent_body = (
        [f"The last {len(shown)} of {total} conversation messages:", ""] if shown else [NONE]
    )
    for m in shown:
        who = m.role.value if m.name is None else f"{m.role.value} ({m.name})"
        recent_body.append(f"- **{who}**: {clipped_line(m.content, width)}".rstrip())
    lines = [
        f"# Session {state.session_id}: summary at step {state.step_index}",
        "",
        "; ".join(facts) + ".",
        "",
        *section("Goal", [line.rstrip() for line in state.goal.strip().splitlines()] or [NONE]),
        *(section("Requests", bullets(state.requests)) if state.requests else []),
        *section("Constraints", bullets(state.constraints)),
        *section("Source of truth", bullets(state.source_of_truth)),
        *section("Decisions", bullets(state.decisions)),
        *(section("Done", bullets(state.done)) if state.done else []),
        *(section("Remaining", bullets(state.remaining)) if state.remaining else []),
        *section("Changed artifacts", bullets(state.changed_artifacts)),
        *(section("Moved", bullets(state.moved_artifacts)) if state.moved_artifacts else []),
        *(section("Deleted", bullets(state.deleted_artifacts)) if state.deleted_artifacts else []),
        *section("Commands and results", bullets(state.commands_and_results)),
        *(section("Open failures", bullets(state.open_failures)) if state.open_failures else []),
        *section("Verified", bullets(state.verified)),
        *section("Not verified", bullets(state.not_verified)),
        *section("Assumptions and risks", bullets(state.assumptions_risks)),
        *section("Blockers", bullets(state.blockers)),
        *section("Next safe action", [next_safe_action(state)]),
        *section("Memory keys", code_list(state.memory_keys)),
        *section("Recent messages", recent_body),
    ]
    return "\n".join(lines).rstrip("\n") + "\n"
