"""A handoff the agent writes through a tool (the MCP ``handoff`` tool): its fields, named as
the handoff request's headings (:mod:`clm_policy.lifecycle.request`).

The fields are rendered as the text of a reply under those headings
(:func:`~clm_policy.lifecycle.compose.words_of_fields`), so a tool call and a reply with the
same words take one road and give one seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class AgentHandoff:
    """The handoff fields an agent gives (each list in the agent's order)."""

    goal: str = ""
    tasks: Sequence[str] = ()
    decisions: Sequence[str] = ()
    verification: Sequence[str] = ()
    blockers: Sequence[str] = ()
    environment: Sequence[str] = ()
    next_step: str = ""
    plan: Sequence[str] = ()
    notes: str = ""
