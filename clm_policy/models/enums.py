"""Enumerations and plain value types every other module shares.

Free of pydantic, so the fast ``decide`` path can use them without importing it.
"""

from __future__ import annotations

from enum import StrEnum

SignalValue = bool | int | float | str


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
