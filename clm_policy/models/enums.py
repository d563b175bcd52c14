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


def count(value: object) -> int | None:
    """``value`` if it is a token count (an int from 0 to :data:`MAX_COUNT`, not a bool)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT:
        return value
    return None


CHARS_PER_TOKEN = 4
"""Characters per token of an estimate (transcripts.reading, lifecycle.estimate)."""


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


class ManifestStatus(StrEnum):
    """Where the handed-off task stands."""

    IN_PROGRESS = "in_progress"
    BLOCKED = "blocked"
    PARTIAL_COMPLETE = "partial_complete"
    COMPLETED = "completed"


class WordsSource(StrEnum):
    """Where the agent's own words of a handoff come from."""

    REPLY = "reply"
    """its reply to the handoff request (the Stop hook; ``clm-policy handoff --reply``)"""
    TOOL = "tool"
    """its MCP ``handoff`` call, its fields rendered under the request's headings"""
    SUMMARY = "summary"
    """the latest summary it wrote of its own context when it compacted"""
    MODEL = "model"
    """a handoff the configured model wrote from the transcript when the agent wrote none"""
