"""The decision and its explain trace — GENERATED from clm_policy/models/shapes/decision.py by
clm_policy/models/generate.py (which says what is here): do not edit, run
``python -m clm_policy.models.generate --write`` after changing the declaration.
"""

from __future__ import annotations

from clm_policy.base.record import Record, field
from clm_policy.models.enums import Action

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class GuardFinding(Record, kw_only=True):
    """A guard whose condition held: why an action was blocked or let through with a warning."""

    guard: str
    severity: str
    message: str
    HASHABLE = False

    def as_dict(self) -> dict[str, Any]:
        return {'guard': self.guard, 'severity': self.severity, 'message': self.message}


class Decision(Record, kw_only=True):
    """What to do now, and why.

    ``proposed`` is what the rules chose; ``action`` is what remains after guards: a blocking
    guard turns the proposal into ``continue``. ``forced`` is true when ``force`` bypassed at
    least one overridable blocking guard (listed in ``overridden``)."""

    action: Action
    trigger: str | None
    rationale: str
    proposed: Action
    blocked_by: list[GuardFinding] = field(default_factory=list)
    warnings: list[GuardFinding] = field(default_factory=list)
    overridden: list[GuardFinding] = field(default_factory=list)
    forced: bool = False
    policy: str
    profile: str
    context_tokens: int
    context_window: int | None = None
    window_source: str | None = None
    HASHABLE = False

    def as_dict(self) -> dict[str, Any]:
        return {
            'action': self.action.value,
            'trigger': self.trigger,
            'rationale': self.rationale,
            'proposed': self.proposed.value,
            'blocked_by': [item.as_dict() for item in self.blocked_by],
            'warnings': [item.as_dict() for item in self.warnings],
            'overridden': [item.as_dict() for item in self.overridden],
            'forced': self.forced,
            'policy': self.policy,
            'profile': self.profile,
            'context_tokens': self.context_tokens,
            'context_window': self.context_window,
            'window_source': self.window_source,
        }


class RuleTrace(Record, kw_only=True):
    """One rule as evaluated: its expression, the value of every name it reads, its result."""

    id: str
    action: Action
    expression: str
    location: str
    names: dict[str, bool | int | float | str | None]
    result: bool | None
    error: str | None = None
    decided: bool
    HASHABLE = False

    def as_dict(self) -> dict[str, Any]:
        return {
            'id': self.id,
            'action': self.action.value,
            'expression': self.expression,
            'location': self.location,
            'names': dict(self.names),
            'result': self.result,
            'error': self.error,
            'decided': self.decided,
        }


class GuardTrace(Record, kw_only=True):
    """One guard as evaluated, and what it did to the proposed action."""

    id: str
    guards: Action
    severity: str
    overridable: bool
    expression: str
    location: str
    names: dict[str, bool | int | float | str | None]
    result: bool | None
    error: str | None = None
    outcome: str
    message: str | None = None
    HASHABLE = False

    def as_dict(self) -> dict[str, Any]:
        return {
            'id': self.id,
            'guards': self.guards.value,
            'severity': self.severity,
            'overridable': self.overridable,
            'expression': self.expression,
            'location': self.location,
            'names': dict(self.names),
            'result': self.result,
            'error': self.error,
            'outcome': self.outcome,
            'message': self.message,
        }


class Explanation(Record, kw_only=True):
    """The decision with every rule and guard that was considered."""

    decision: Decision
    rules: list[RuleTrace]
    otherwise: Action
    guards: list[GuardTrace]
    HASHABLE = False

    def as_dict(self) -> dict[str, Any]:
        return {
            'decision': self.decision.as_dict(),
            'rules': [item.as_dict() for item in self.rules],
            'otherwise': self.otherwise.value,
            'guards': [item.as_dict() for item in self.guards],
        }
