"""A handoff the agent writes itself (the MCP ``handoff`` tool), as the notes every handoff of
the agent's own is read into.

What the agent wrote on purpose is the most trusted source of a handoff (DESIGN §9a). The
Stop hook's handoff reply is parsed into :class:`~clm_policy.transcripts.notes.AgentNotes`;
the tool's fields become the same notes here (:func:`notes_of`), so both take one road into
the manifest (:func:`~clm_policy.transcripts.takeover.handoff_states`): the agent's done,
verified, not-verified, blockers and next step over what the transcript gives, and the exact
lists — files, commands and their results — the transcript's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from clm_policy.transcripts.notes import AgentNotes, notes_from_fields


@dataclass(frozen=True)
class AgentHandoff:
    """The handoff fields an agent writes (each list in the agent's order)."""

    goal: str
    done: Sequence[str] = ()
    verified: Sequence[str] = ()
    not_verified: Sequence[str] = ()
    blockers: Sequence[str] = ()
    next_safe_action: str = ""
    notes: str = ""


def notes_of(fields: AgentHandoff) -> AgentNotes:
    """``fields`` as the notes a handoff reply is read into (``notes`` joins the risks). A list
    left empty says nothing; ``blockers`` given empty says there are none."""
    given: dict[str, object] = {
        "goal": fields.goal,
        "done": list(fields.done),
        "verified": list(fields.verified),
        "not_verified": list(fields.not_verified),
        "blockers": list(fields.blockers),
        "next_safe_action": fields.next_safe_action,
    }
    if fields.notes.strip():
        given["risks"] = [fields.notes]
    return notes_from_fields(given)


def summary_text(fields: AgentHandoff) -> str:
    """The fields as the agent's own summary, for recall (``Clm-Recall-Agent``)."""
    parts = [f"Goal: {fields.goal}"] if fields.goal.strip() else []
    for title, items in (
        ("Done", fields.done),
        ("Verified", fields.verified),
        ("Not verified", fields.not_verified),
        ("Blockers", fields.blockers),
    ):
        parts += [f"{title}:", *(f"- {item}" for item in items)] if items else []
    if fields.next_safe_action.strip():
        parts.append(f"Next safe action: {fields.next_safe_action}")
    if fields.notes.strip():
        parts.append(fields.notes)
    return "\n".join(parts)
