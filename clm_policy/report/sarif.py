"""SARIF 2.1.0 for lint problems: what GitHub code scanning (and other viewers) import."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clm_policy.lint.checks import CHECKS, summary
from clm_policy.lint.runner import LintReport

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _uri(file: str) -> str:
    """A path relative to the working directory when it lies inside it (as code scanning
    expects for files of the checked-out repository), with forward slashes."""
    path = Path(file)
    if path.is_absolute():
        try:
            path = path.relative_to(Path.cwd())
        except ValueError:
            return path.as_uri()
    return path.as_posix()


def sarif(report: LintReport, version: str) -> str:
    index = {module.ID: i for i, module in enumerate(CHECKS)}
    rules = [
        {
            "id": module.ID,
            "name": "".join(part.title() for part in module.ID.split("-")),
            "shortDescription": {"text": summary(module)},
            "fullDescription": {"text": " ".join((module.__doc__ or "").split())},
            "defaultConfiguration": {"level": module.LEVEL},
            "help": {"text": (module.__doc__ or "").strip()},
        }
        for module in CHECKS
    ]
    results: list[dict[str, Any]] = []
    for p in report.problems:
        result: dict[str, Any] = {
            "ruleId": p.check,
            "level": p.level,
            "message": {"text": p.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(p.file)},
                        "region": {"startLine": max(p.line, 1), "startColumn": max(p.col, 1)},
                    }
                }
            ],
        }
        if p.check in index:
            result["ruleIndex"] = index[p.check]
        results.append(result)
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "clm-policy",
                        "version": version,
                        "semanticVersion": version,
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"
