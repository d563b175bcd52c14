"""``clm-policy test`` for people: failures with expected vs actual and the explain trace.
The last line is always ``N passed, N failed, N skipped`` (CI parses it)."""

from __future__ import annotations

import json

from clm_policy.base.termsafe import one_line
from clm_policy.report.explain import render_explanation
from clm_policy.tester.coverage import Coverage
from clm_policy.tester.results import CaseResult, RunReport, Verdict


def _table(result: CaseResult) -> list[str]:
    """The asserted fields, expected vs actual; rows that differ are marked with ``x``."""
    expected, actual = result.expected or {}, result.actual or {}
    rows = [("field", "expected", "actual", " ")]
    rows += [
        (k, json.dumps(v), json.dumps(actual.get(k)), "x" if v != actual.get(k) else " ")
        for k, v in expected.items()
    ]
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    return [f"  {mark} {a:<{w0}}  {b:<{w1}}  {c}".rstrip() for a, b, c, mark in rows]


def case_lines(result: CaseResult, verbose: bool) -> list[str]:
    """What the report says about one result (nothing for a PASS or SKIP unless verbose).
    Names and messages come from the test files: each is shown on one line."""
    head = f"{one_line(result.file)}:{result.line}: {one_line(result.case)}"
    if result.outcome is Verdict.ERROR:
        where = one_line(result.where or result.file)
        name = f"{one_line(result.case)}: " if result.case is not None else ""
        return [f"ERROR {where}: {name}{one_line(result.message)}"]
    if result.outcome is Verdict.FAIL:
        lines = [f"FAIL {head}", *_table(result)]
        if result.trace is not None:
            lines.append("  trace:")
            lines += [
                f"    {line}".rstrip() for line in render_explanation(result.trace).split("\n")
            ]
        return [*lines, ""]
    if not verbose:
        return []
    if result.outcome is Verdict.SKIP:
        return [f"SKIP {head} ({one_line(result.message)})"]
    return [f"PASS {head}"]


def coverage_lines(coverage: Coverage, fail_under: float | None) -> list[str]:
    counted = (
        f"{coverage.hits} of {coverage.total} rules and guards exercised"
        if coverage.policies
        else "no policy was loaded: no case ran"
    )
    lines = [f"coverage: {coverage.percent:.1f}% ({counted})"]
    for p in coverage.policies:
        where = f"{one_line(p.name)}  {one_line(p.file)}"
        lines.append(f"  {p.percent:5.1f}%  {p.hits}/{p.total}  {where}")
        lines += [
            f"      not exercised: {one_line(item.key)}  {one_line(item.location)}"
            for item in p.missed
        ]
    if fail_under is not None and coverage.below(fail_under):
        lines.append(f"coverage {coverage.percent:.1f}% is below --fail-under {fail_under:g}%")
    return lines


def summary_lines(report: RunReport) -> list[str]:
    counts = report.counts
    lines = []
    if report.keyword is not None:
        lines.append(f"{report.deselected} deselected by -k {one_line(repr(report.keyword))}")
    errors = counts[Verdict.ERROR]
    lines.append(f"{errors} error" + ("" if errors == 1 else "s"))
    lines.append(
        f"{counts[Verdict.PASS]} passed, {counts[Verdict.FAIL]} failed, "
        f"{counts[Verdict.SKIP]} skipped"
    )
    return lines


def render(
    report: RunReport,
    *,
    verbose: bool = False,
    coverage: bool = False,
    fail_under: float | None = None,
) -> str:
    lines: list[str] = []
    for result in report.results:
        lines += case_lines(result, verbose)
    if lines and lines[-1]:
        lines.append("")
    if coverage:
        lines += [*coverage_lines(report.coverage, fail_under), ""]
    lines += summary_lines(report)
    return "\n".join(lines) + "\n"
