"""Enumerations and plain value types every other module shares.

Free of pydantic, so the fast ``decide`` path can use them without importing it.
"""

from __future__ import annotations

from enum import StrEnum

SignalValue = bool | int | float | str

FIGURES = "figures"
"""The ``session_id`` of a state made of figures alone (``decide --tokens``, a transcript's
tail, the status line): an input to a decision, never written anywhere."""

MAX_COUNT = 2**63 - 1
"""The largest token count, step or window a state, scenario or policy may give (a signed
64-bit integer): a context of more tokens than that is a mistake, and a ratio of such counts
would overflow a float."""


class Action(StrEnum):
    """What a policy can decide."""

    CONTINUE = "continue"
    COMPACT = "compact"
    HANDOFF = "handoff"


class TaskStatus(StrEnum):
    """Where the task stands after the last step."""

    RUNNING = "running"
    WAITING = "waiting"
    PHASE_BOUNDARY = "phase_boundary"
    COMPLETED = "completed"
    FAILED = "failed"
    BLOCKED = "blocked"


class MessageRole(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
