"""Lint reports: text, json and GitHub workflow commands (SARIF is in :mod:`.sarif`)."""

from __future__ import annotations

import json

from clm_policy.base.termsafe import terminal_safe
from clm_policy.lint.problem import Problem
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
        f"clm-policy lint: {report.errors} error(s), {report.warnings} warning(s) in {files} {noun}"
    )


def as_json(report: LintReport) -> str:
    def one(p: Problem) -> dict[str, object]:
        return {
            "file": p.file,
            "line": p.line,
            "col": p.col,
            "level": p.level,
            "check": p.check,
            "message": p.message,
        }

    body = {
        "files": report.files,
        "problems": [one(p) for p in report.problems],
        "summary": {
            "errors": report.errors,
            "warnings": report.warnings,
            "files": len(report.files),
        },
    }
    return json.dumps(body, indent=2) + "\n"


def escape_data(value: str) -> str:
    """``value`` as a workflow command's data (GitHub's own escapes, as @actions/core's
    ``escapeData``: ``%``, CR and LF, so no value starts a command line of its own), and
    terminal-safe: the runner prints the line in the job's log."""
    escaped = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return terminal_safe(escaped, lines=False)


def escape_property(value: str) -> str:
    """``value`` as a workflow command's property (``escapeProperty``: ``:`` and ``,`` too)."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github(report: LintReport) -> str:
    """GitHub Actions workflow commands: an annotation on the line of each problem."""
    lines = []
    for p in report.problems:
        command = "error" if p.level == "error" else "warning"
        props = (
            f"file={escape_property(p.file)},line={p.line},col={p.col},"
            f"title={escape_property(f'clm-policy {p.check}')}"
        )
        lines.append(f"::{command} {props}::{escape_data(f'[{p.check}] {p.message}')}\n")
    return "".join(lines)
