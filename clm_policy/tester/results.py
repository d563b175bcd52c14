"""What a test run produces: one result per case (PASS, FAIL, ERROR, SKIP), as plain data.

The formatters in :mod:`clm_policy.report` render a :class:`RunReport`; nothing here prints.
A case that could not be run — an unknown rule, guard, profile or signal, a state that does
not validate, a policy that does not load, an expression that fails — is an ERROR, never a
FAIL and never a PASS. A test file that cannot be read at all is one ERROR with no case name.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from clm_policy.base.errors import Location

if TYPE_CHECKING:
    from clm_policy.models.decision import Explanation
    from clm_policy.tester.coverage import Coverage


class Verdict(StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    ERROR = "ERROR"
    SKIP = "SKIP"


@dataclass(frozen=True, slots=True)
class CaseResult:
    """The outcome of one case (or, with ``case`` None, of a test file that cannot be used).

    ``line`` is where the case starts. ``where`` is where an ERROR's cause is written (the
    node at fault, in the test file). ``expected``/``actual`` hold the asserted fields only,
    in the order of ``expect``'s schema; ``trace`` explains a FAIL rule by rule.
    """

    file: str
    line: int
    case: str | None
    outcome: Verdict
    policy: str | None = None
    message: str = ""
    where: Location | None = None
    expected: dict[str, Any] | None = None
    actual: dict[str, Any] | None = None
    trace: Explanation | None = None


@dataclass
class RunReport:
    """Every result of a run, in file order then case order, with the coverage it reached."""

    files: list[str]
    results: list[CaseResult]
    coverage: Coverage
    keyword: str | None = None
    deselected: int = 0

    @property
    def counts(self) -> dict[Verdict, int]:
        return {v: sum(r.outcome is v for r in self.results) for v in Verdict}

    @property
    def failed(self) -> bool:
        """Whether any case failed or could not be run (coverage aside)."""
        return bool(self.counts[Verdict.FAIL] or self.counts[Verdict.ERROR])
