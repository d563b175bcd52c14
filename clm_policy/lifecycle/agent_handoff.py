"""A handoff the agent writes itself (the MCP ``handoff`` tool): its fields over the facts
the transcript gives.

What the agent wrote on purpose is the most trusted source of a handoff (DESIGN §9a): its
goal, what it did and checked, what it did not check, its blockers and its next step replace
what clm-policy can only guess from a transcript. The exact lists — files changed, commands
and their results — stay the transcript's: an agent's memory of them is the weaker source.

:func:`handoff_from_fields` is the one seam between the fields and the manifest: the Stop
hook's handoff text, once parsed into the same fields, can feed it too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from clm_policy.models.state import SessionState

DONE_PREFIX = "done: "
"""A ``done`` item in the manifest's ``verified`` list (the manifest has no field of its own
for work done; the prefix keeps the agent's claims apart from its checks)."""


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


@dataclass(frozen=True)
class HandoffInputs:
    """What :func:`~clm_policy.lifecycle.pipelines.run_handoff` takes: the state and the next
    safe action as the agent wrote it (None: derived from the state)."""

    state: SessionState
    next_action: str | None


def _items(items: Sequence[str]) -> list[str]:
    return [item.strip() for item in items if item.strip()]


def handoff_from_fields(state: SessionState, fields: AgentHandoff) -> HandoffInputs:
    """``state`` (read from the session's transcript) with the agent's fields in place of
    the guesses: goal (the transcript's when the agent gave none), ``verified`` (``done``
    items first, as ``done: …``), ``not_verified``, ``blockers``, the next safe action;
    ``notes`` joins the assumptions and risks. Files changed and commands run are left as
    the transcript has them."""
    notes = fields.notes.strip()
    update = {
        "goal": fields.goal.strip() or state.goal,
        "verified": [DONE_PREFIX + d for d in _items(fields.done)] + _items(fields.verified),
        "not_verified": _items(fields.not_verified),
        "blockers": _items(fields.blockers),
        "assumptions_risks": [*state.assumptions_risks, *([notes] if notes else [])],
    }
    return HandoffInputs(state.model_copy(update=update), fields.next_safe_action.strip() or None)
