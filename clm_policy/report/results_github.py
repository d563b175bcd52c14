"""``clm-policy test --format github``: the text report, preceded by a GitHub Actions
annotation for each FAIL and ERROR (on the case's line of its test file) and for coverage
under ``--fail-under``."""

from __future__ import annotations

from clm_policy.base.errors import Location
from clm_policy.base.termsafe import workflow_command
from clm_policy.report import results_text
from clm_policy.tester.results import RunReport, Verdict

TITLE = "clm-policy test"


def _annotation(file: str, line: int, col: int | None, message: str) -> str:
    column = {"col": col} if col else {}  # a column of 0 or none: the line alone
    return workflow_command("error", message, file=file, line=line, **column, title=TITLE)


def render(report: RunReport, *, verbose: bool, coverage: bool, fail_under: float | None) -> str:
    lines = []
    for r in report.results:
        if r.outcome is Verdict.FAIL:
            lines.append(_annotation(r.file, r.line, None, f"FAIL {r.case}: {r.message}"))
        elif r.outcome is Verdict.ERROR:
            name = f"{r.case}: " if r.case is not None else ""
            where = r.where
            if where is None or not where.file:
                where = Location(r.file, r.line)  # no column
            lines.append(
                _annotation(where.file, where.line or 1, where.col, f"ERROR {name}{r.message}")
            )
    if fail_under is not None and report.coverage.below(fail_under):
        line = results_text.coverage_lines(report.coverage, fail_under)[-1]
        lines.append(workflow_command("error", line, title=TITLE))
    text = results_text.render(report, verbose=verbose, coverage=coverage, fail_under=fail_under)
    return "".join(lines) + text
