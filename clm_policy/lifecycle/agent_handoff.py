"""A handoff the agent writes through the MCP ``handoff`` tool: its fields, named as the
request's headings and rendered as a reply under them
(:func:`~clm_policy.lifecycle.compose.words_of_fields`): one road, one seed."""

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
