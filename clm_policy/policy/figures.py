"""A state made of figures only: what `decide --tokens`, a transcript's tail and a hook know.

Most one-shot decisions know the context and little else (the window, the model, a step
count); building a pydantic SessionState for them costs more than the decision. A
:class:`FigureState` has the attributes the engine reads (:class:`~clm_policy.policy.engine.
StateLike`), every value already checked by whoever made it, and no pydantic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from clm_policy.models.enums import SignalValue, TaskStatus


@dataclass(frozen=True, slots=True)
class FigureTokens:
    context_tokens: int
    context_window: int | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    model: str | None = None
    estimated: bool = False


@dataclass(frozen=True, slots=True)
class FigureState:
    """A state of figures: enough for the engine, nothing more."""

    tokens: FigureTokens
    status: TaskStatus = TaskStatus.RUNNING
    step_index: int = 0
    last_compact_step: int | None = None
    signals: dict[str, SignalValue] = field(default_factory=dict)
    compact_count: int = 0
    messages: tuple[()] = ()
    blockers: tuple[()] = ()
    human_interventions: int = 0
    profile: str | None = None
