"""What a policy decides, and the trace that explains it, declared once.

The generated classes' ``as_dict()`` is the JSON a decision is printed and logged as.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from clm_policy.models.enums import Action

_MODEL = ConfigDict(extra="forbid", defer_build=True)


class GuardFinding(BaseModel):
    """A guard whose condition held: why an action was blocked or let through with a warning."""

    model_config = _MODEL

    guard: str
    severity: str
    message: str


class Decision(BaseModel):
    """What to do now, and why.

    ``proposed`` is what the rules chose; ``action`` is what remains after guards: a blocking
    guard turns the proposal into ``continue``. ``forced`` is true when ``force`` bypassed at
    least one overridable blocking guard (listed in ``overridden``).
    """

    model_config = _MODEL

    action: Action
    trigger: str | None = Field(description="id of the deciding rule; null when none fired")
    rationale: str
    proposed: Action
    blocked_by: list[GuardFinding] = Field(default_factory=list)
    warnings: list[GuardFinding] = Field(default_factory=list)
    overridden: list[GuardFinding] = Field(default_factory=list)
    forced: bool = False
    policy: str
    profile: str
    context_tokens: int
    context_window: int | None = None
    window_source: str | None = Field(
        default=None, description="where context_window came from: state | profile | null"
    )


class RuleTrace(BaseModel):
    """One rule as evaluated: its expression, the value of every name it reads, its result."""

    model_config = _MODEL

    id: str
    action: Action
    expression: str
    location: str
    names: dict[str, bool | int | float | str | None]
    result: bool | None = Field(description="null when evaluation failed (see error)")
    error: str | None = None
    decided: bool = Field(description="true for the first rule that held: it decided")


class GuardTrace(BaseModel):
    """One guard as evaluated, and what it did to the proposed action."""

    model_config = _MODEL

    id: str
    guards: Action = Field(description="the action this guard is attached to")
    severity: str
    overridable: bool
    expression: str
    location: str
    names: dict[str, bool | int | float | str | None]
    result: bool | None = Field(description="null when evaluation failed (see error)")
    error: str | None = None
    outcome: str = Field(
        description="blocked | warned | overridden | passed | not-applicable (other action)"
    )
    message: str | None = None


class Explanation(BaseModel):
    """The decision with every rule and guard that was considered."""

    model_config = _MODEL

    decision: Decision
    rules: list[RuleTrace]
    otherwise: Action
    guards: list[GuardTrace]
