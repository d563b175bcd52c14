"""Rule and guard coverage: which parts of each policy the executed cases exercised.

The items of a policy are its rules, after ``extends`` (inherited ones included), and its
guards, per action. A rule is covered when some executed case's decision had it as
``trigger``; a guard when it blocked, warned or was overridden in some executed case. Only
cases that ran (PASS or FAIL) count: an ERROR or a SKIP exercised nothing. Percentages are
rounded down to a tenth, so a report never claims more than was reached: 100% means all.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from clm_policy.base.errors import Location
from clm_policy.models.decision import Decision
from clm_policy.policy.engine import Policy


@dataclass(frozen=True, slots=True)
class Item:
    """A rule or a guard of a policy; ``action`` is the rule's, or the action guarded."""

    kind: str  # "rule" | "guard"
    id: str
    action: str
    location: Location

    @property
    def key(self) -> str:
        return f"rule {self.id}" if self.kind == "rule" else f"guard {self.action}/{self.id}"


def _tenths(covered: int, total: int) -> int:
    return 1000 if total == 0 else covered * 1000 // total


@dataclass
class PolicyCoverage:
    """One policy's items and the keys of those exercised."""

    name: str
    file: str
    items: list[Item]
    covered: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, policy: Policy) -> PolicyCoverage:
        items = [Item("rule", r.id, r.action.value, r.when.location) for r in policy.rules]
        for action, guards in policy.guards.items():
            items += [Item("guard", g.id, action.value, g.when.location) for g in guards]
        return cls(policy.name, policy.path, items)

    @property
    def total(self) -> int:
        return len(self.items)

    @property
    def hits(self) -> int:
        return sum(item.key in self.covered for item in self.items)

    @property
    def missed(self) -> list[Item]:
        return [item for item in self.items if item.key not in self.covered]

    @property
    def percent(self) -> float:
        return _tenths(self.hits, self.total) / 10


def exercised(outcome: Decision) -> Iterator[str]:
    """The keys of the items ``outcome`` exercised (its guards ran for the proposed action)."""
    if outcome.trigger is not None:
        yield f"rule {outcome.trigger}"
    action = outcome.proposed.value
    for found in (outcome.blocked_by, outcome.warnings, outcome.overridden):
        for f in found:
            yield f"guard {action}/{f.guard}"


@dataclass
class Coverage:
    """Coverage of every policy tested, in the order they were first used."""

    policies: list[PolicyCoverage] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(p.total for p in self.policies)

    @property
    def hits(self) -> int:
        return sum(p.hits for p in self.policies)

    @property
    def percent(self) -> float:
        """Over all items of all policies, rounded down to a tenth; 0 when no policy was
        loaded (no case ran: nothing was exercised, and --fail-under must not pass)."""
        return _tenths(self.hits, self.total) / 10 if self.policies else 0.0

    def below(self, threshold: float) -> bool:
        """Whether the exact coverage is under ``threshold`` (a percentage, 0-100)."""
        if not self.policies:
            return threshold > 0
        return self.hits * 100 < threshold * self.total
