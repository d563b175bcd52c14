"""A state made of figures only: what `decide --tokens`, a transcript's tail and a hook know.

Most one-shot decisions know the context and little else (the window, the model, a step
count); building a pydantic SessionState for them costs more than the decision. A
:class:`FigureState` has the attributes the engine reads (:class:`~clm_policy.policy.engine.
StateLike`), every value already checked by whoever made it, and no pydantic.
"""

from __future__ import annotations

from clm_policy.models.enums import TaskStatus
from clm_policy.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from clm_policy.models.enums import SignalValue


class FigureTokens(Record):
    FIELDS = (
        "context_tokens",
        "context_window",
        "input_tokens",
        "output_tokens",
        "total_tokens",
        "model",
        "estimated",
    )
    __slots__ = FIELDS

    def __init__(
        self,
        context_tokens: int,
        context_window: int | None = None,
        input_tokens: int = 0,
        output_tokens: int = 0,
        total_tokens: int = 0,
        model: str | None = None,
        estimated: bool = False,
    ) -> None:
        self.context_tokens = context_tokens
        self.context_window = context_window
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.total_tokens = total_tokens
        self.model = model
        self.estimated = estimated


class FigureState(Record):
    """A state of figures: enough for the engine, nothing more."""

    FIELDS = (
        "tokens",
        "status",
        "step_index",
        "last_compact_step",
        "signals",
        "compact_count",
        "messages",
        "blockers",
        "human_interventions",
        "profile",
    )
    __slots__ = FIELDS
    HASHABLE = False

    def __init__(
        self,
        tokens: FigureTokens,
        status: TaskStatus = TaskStatus.RUNNING,
        step_index: int = 0,
        last_compact_step: int | None = None,
        signals: dict[str, SignalValue] | None = None,
        compact_count: int = 0,
        messages: tuple[()] = (),
        blockers: tuple[()] = (),
        human_interventions: int = 0,
        profile: str | None = None,
    ) -> None:
        self.tokens = tokens
        self.status = status
        self.step_index = step_index
        self.last_compact_step = last_compact_step
        self.signals: dict[str, SignalValue] = {} if signals is None else signals
        self.compact_count = compact_count
        self.messages = messages
        self.blockers = blockers
        self.human_interventions = human_interventions
        self.profile = profile
