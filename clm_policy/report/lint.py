"""Lint reports: text, json and GitHub workflow commands (SARIF is in :mod:`.sarif`)."""

from __future__ import annotations

import json

from clm_policy.base.errors import plural
from clm_policy.base.termsafe import workflow_command
from clm_policy.lint.runner import LintReport


def text(report: LintReport) -> str:
    """``file:line:col: level [check] message``, one per line, sorted."""
    return "".join(f"{p}\n" for p in report.problems)


def summary(report: LintReport) -> str:
    files = len(report.files)
    noun = "file" if files == 1 else "files"
    if not report.problems:
        return f"clm-policy lint: {files} {noun}, no problems"
    return (
        f"clm-policy lint: {plural(report.errors, 'error')}, "
        f"{plural(report.warnings, 'warning')} in {files} {noun}"
    )


def as_json(report: LintReport) -> str:
    fields = ("file", "line", "col", "level", "check", "message")
    body = {
        "files": report.files,
        "problems": [{name: getattr(p, name) for name in fields} for p in report.problems],
        "summary": {
            "errors": report.errors,
            "warnings": report.warnings,
            "files": len(report.files),
        },
    }
    return json.dumps(body, indent=2) + "\n"


def github(report: LintReport) -> str:
    """GitHub Actions workflow commands: an annotation on the line of each problem."""
    return "".join(
        workflow_command(
            "error" if p.level == "error" else "warning",
            f"[{p.check}] {p.message}",
            file=p.file,
            line=p.line,
            col=p.col,
            title=f"clm-policy {p.check}",
        )
        for p in report.problems
    )
