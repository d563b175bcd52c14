"""The decision and its explain trace — GENERATED from clm_policy/models/shapes/decision.py.

Do not edit: run ``python -m clm_policy.models.generate --write`` after changing the
declaration (a test fails until then). clm_policy/models/generate.py says what is here.
"""

from __future__ import annotations

from clm_policy.base.record import Record
from clm_policy.models.enums import Action

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar


class GuardFinding(Record):
    """A guard whose condition held: why an action was blocked or let through with a warning."""

    FIELDS: ClassVar[tuple[str, ...]] = ('guard', 'severity', 'message')
    REQUIRED: ClassVar[tuple[str, ...]] = ('guard', 'severity', 'message')
    __slots__ = FIELDS
    HASHABLE = False

    def __init__(self, *, guard: str, severity: str, message: str) -> None:
        self.guard = guard
        self.severity = severity
        self.message = message

    def as_dict(self) -> dict[str, Any]:
        return {'guard': self.guard, 'severity': self.severity, 'message': self.message}


class Decision(Record):
    """What to do now, and why.

    ``proposed`` is what the rules chose; ``action`` is what remains after guards: a blocking
    guard turns the proposal into ``continue``. ``forced`` is true when ``force`` bypassed at
    least one overridable blocking guard (listed in ``overridden``)."""

    FIELDS: ClassVar[tuple[str, ...]] = (
        'action', 'trigger', 'rationale', 'proposed', 'blocked_by', 'warnings', 'overridden',
        'forced', 'policy', 'profile', 'context_tokens', 'context_window', 'window_source',
    )
    REQUIRED: ClassVar[tuple[str, ...]] = (
        'action', 'trigger', 'rationale', 'proposed', 'policy', 'profile', 'context_tokens',
    )
    __slots__ = FIELDS
    HASHABLE = False

    def __init__(
        self,
        *,
        action: Action,
        trigger: str | None,
        rationale: str,
        proposed: Action,
        blocked_by: list[GuardFinding] | None = None,
        warnings: list[GuardFinding] | None = None,
        overridden: list[GuardFinding] | None = None,
        forced: bool = False,
        policy: str,
        profile: str,
        context_tokens: int,
        context_window: int | None = None,
        window_source: str | None = None,
    ) -> None:
        self.action = action
        self.trigger = trigger
        self.rationale = rationale
        self.proposed = proposed
        self.blocked_by = [] if blocked_by is None else blocked_by
        self.warnings = [] if warnings is None else warnings
        self.overridden = [] if overridden is None else overridden
        self.forced = forced
        self.policy = policy
        self.profile = profile
        self.context_tokens = context_tokens
        self.context_window = context_window
        self.window_source = window_source

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


class RuleTrace(Record):
    """One rule as evaluated: its expression, the value of every name it reads, its result."""

    FIELDS: ClassVar[tuple[str, ...]] = (
        'id', 'action', 'expression', 'location', 'names', 'result', 'error', 'decided',
    )
    REQUIRED: ClassVar[tuple[str, ...]] = (
        'id', 'action', 'expression', 'location', 'names', 'result', 'decided',
    )
    __slots__ = FIELDS
    HASHABLE = False

    def __init__(
        self,
        *,
        id: str,
        action: Action,
        expression: str,
        location: str,
        names: dict[str, bool | int | float | str | None],
        result: bool | None,
        error: str | None = None,
        decided: bool,
    ) -> None:
        self.id = id
        self.action = action
        self.expression = expression
        self.location = location
        self.names = names
        self.result = result
        self.error = error
        self.decided = decided

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


class GuardTrace(Record):
    """One guard as evaluated, and what it did to the proposed action."""

    FIELDS: ClassVar[tuple[str, ...]] = (
        'id', 'guards', 'severity', 'overridable', 'expression', 'location', 'names', 'result',
        'error', 'outcome', 'message',
    )
    REQUIRED: ClassVar[tuple[str, ...]] = (
        'id', 'guards', 'severity', 'overridable', 'expression', 'location', 'names', 'result',
        'outcome',
    )
    __slots__ = FIELDS
    HASHABLE = False

    def __init__(
        self,
        *,
        id: str,
        guards: Action,
        severity: str,
        overridable: bool,
        expression: str,
        location: str,
        names: dict[str, bool | int | float | str | None],
        result: bool | None,
        error: str | None = None,
        outcome: str,
        message: str | None = None,
    ) -> None:
        self.id = id
        self.guards = guards
        self.severity = severity
        self.overridable = overridable
        self.expression = expression
        self.location = location
        self.names = names
        self.result = result
        self.error = error
        self.outcome = outcome
        self.message = message

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


class Explanation(Record):
    """The decision with every rule and guard that was considered."""

    FIELDS: ClassVar[tuple[str, ...]] = ('decision', 'rules', 'otherwise', 'guards')
    REQUIRED: ClassVar[tuple[str, ...]] = ('decision', 'rules', 'otherwise', 'guards')
    __slots__ = FIELDS
    HASHABLE = False

    def __init__(
        self,
        *,
        decision: Decision,
        rules: list[RuleTrace],
        otherwise: Action,
        guards: list[GuardTrace],
    ) -> None:
        self.decision = decision
        self.rules = rules
        self.otherwise = otherwise
        self.guards = guards

    def as_dict(self) -> dict[str, Any]:
        return {
            'decision': self.decision.as_dict(),
            'rules': [item.as_dict() for item in self.rules],
            'otherwise': self.otherwise.value,
            'guards': [item.as_dict() for item in self.guards],
        }
