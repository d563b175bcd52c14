"""``clm-policy test --format json``: one object ``{results, summary, coverage}``; every case
is a result, PASS included; ``coverage`` is null unless asked for."""

from __future__ import annotations

import json
from typing import Any

from clm_policy.tester.coverage import Coverage
from clm_policy.tester.results import CaseResult, RunReport, Verdict


def result_dict(r: CaseResult) -> dict[str, Any]:
    return {
        "file": r.file,
        "line": r.line,
        "case": r.case,
        "outcome": r.outcome.value,
        "policy": r.policy,
        "message": r.message or None,
        "location": str(r.where) if r.where is not None else None,
        "expected": r.expected,
        "actual": r.actual,
        "trace": r.trace.as_dict() if r.trace is not None else None,
    }


def coverage_dict(coverage: Coverage, fail_under: float | None) -> dict[str, Any]:
    return {
        "percent": coverage.percent,
        "covered": coverage.hits,
        "total": coverage.total,
        "fail_under": fail_under,
        "met": None if fail_under is None else not coverage.below(fail_under),
        "policies": [
            {
                "policy": p.name,
                "file": p.file,
                "percent": p.percent,
                "covered": p.hits,
                "total": p.total,
                "items": [
                    {
                        "kind": item.kind,
                        "id": item.id,
                        "action": item.action,
                        "location": str(item.location),
                        "covered": item.key in p.covered,
                    }
                    for item in p.items
                ],
            }
            for p in coverage.policies
        ],
    }


def render(report: RunReport, *, coverage: bool = False, fail_under: float | None = None) -> str:
    counts = report.counts
    body = {
        "results": [result_dict(r) for r in report.results],
        "summary": {
            "passed": counts[Verdict.PASS],
            "failed": counts[Verdict.FAIL],
            "errors": counts[Verdict.ERROR],
            "skipped": counts[Verdict.SKIP],
            "deselected": report.deselected,
            "files": len(report.files),
        },
        "coverage": coverage_dict(report.coverage, fail_under) if coverage else None,
    }
    return json.dumps(body, indent=2) + "\n"
