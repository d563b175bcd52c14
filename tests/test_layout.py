"""How the package is laid out: formatters never reach into the CLI, and nothing in it is
named like a test (``pytest .`` would collect it)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

PACKAGE = REPO / "clm_policy"


def _imported(path: Path) -> list[str]:
    """Every module ``path`` imports, relative imports resolved, function-level ones included."""
    package = ".".join(path.relative_to(REPO).with_suffix("").parts[:-1])
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            found += [base, *(f"{base}.{alias.name}" for alias in node.names)]
    return found


@pytest.mark.parametrize("path", sorted((PACKAGE / "report").glob("*.py")), ids=lambda p: p.name)
def test_formatters_never_import_the_cli(path: Path) -> None:
    cli = [m for m in _imported(path) if m == "clm_policy.cli" or m.startswith("clm_policy.cli.")]
    assert cli == [], f"{path.name} imports {cli}"


def test_the_import_scan_sees_every_form() -> None:
    sample = PACKAGE / "report" / "explain.py"
    assert "clm_policy.models.decision.Explanation" in _imported(sample)
    assert _imported(PACKAGE / "cli" / "render.py") == [
        "clm_policy.report.explain",
        "clm_policy.report.explain.render_decision",
        "clm_policy.report.explain.render_explanation",
    ]


def test_no_product_module_is_named_like_a_test() -> None:
    named = [
        str(p.relative_to(REPO))
        for p in PACKAGE.rglob("*.py")
        if p.name.startswith("test_") or p.name.endswith("_test.py")
    ]
    assert named == []


def test_pytest_collects_nothing_from_the_package() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "clm_policy",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 5, proc.stdout + proc.stderr  # 5: no tests collected
    assert "no tests collected" in proc.stdout
