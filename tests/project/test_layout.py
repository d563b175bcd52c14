"""How the package is laid out: the layers and what each may import (one table, the same as
docs/architecture.md's), no module loose at the top, tests that mirror the package, and
nothing in the package named like a test (``pytest .`` would collect it)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from conftest import REPO

PACKAGE = REPO / "clm_policy"


def _imported(path: Path, package: str | None = None) -> list[str]:
    """Every module ``path`` imports, relative imports resolved, function-level ones included."""
    if package is None:
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


# The layers, from the ground up: each package and what it may import besides itself. A new
# package gets a row here (and in docs/architecture.md) before it can be imported.
LAYERS: dict[str, frozenset[str]] = {
    "base": frozenset(),
    "formats": frozenset({"base"}),
    "models": frozenset({"base", "formats"}),
    "config": frozenset({"base", "formats"}),
    "policy": frozenset({"base", "formats", "models"}),
    "lint": frozenset({"base", "formats", "models", "policy"}),
    "tester": frozenset({"base", "formats", "models", "policy"}),
    "memory": frozenset({"base", "formats", "models"}),
    "transcripts": frozenset({"base", "formats", "models", "memory"}),
    "lifecycle": frozenset({"base", "formats", "models", "policy", "memory", "transcripts"}),
    "agents": frozenset(
        {"base", "formats", "models", "config", "policy", "memory", "transcripts", "lifecycle"}
    ),
    "loop": frozenset(
        {"base", "formats", "models", "config", "policy", "memory", "transcripts", "lifecycle"}
    ),
    "report": frozenset({"base", "formats", "models", "policy", "lint", "tester", "memory"}),
    "replay": frozenset(
        {"base", "formats", "models", "policy", "memory", "transcripts", "lifecycle", "loop"}
    ),
    "experiment": frozenset(
        {
            "base",
            "formats",
            "models",
            "policy",
            "memory",
            "transcripts",
            "lifecycle",
            "loop",
            "report",
        }
    ),
    "cli": frozenset(
        {
            "base",
            "formats",
            "models",
            "config",
            "policy",
            "lint",
            "tester",
            "memory",
            "transcripts",
            "lifecycle",
            "agents",
            "loop",
            "report",
            "replay",
            "experiment",
        }
    ),
}
TOP_LEVEL = {"__init__.py", "__main__.py", "py.typed"}
"""What may stand loose at the top of the package: everything else lives in its layer."""


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "clm_policy" else None


def _package_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "_bundled" not in p.parts)


def test_every_package_is_a_layer_of_the_table() -> None:
    found = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert found == set(LAYERS)


def test_nothing_is_loose_at_the_top_of_the_package() -> None:
    loose = {
        p.name
        for p in PACKAGE.iterdir()
        if p.is_file() and p.name not in TOP_LEVEL and not p.name.startswith(".")
    }
    assert loose == set()


def test_the_table_has_no_cycle() -> None:
    done: set[str] = set()
    order: list[str] = []
    while len(done) < len(LAYERS):
        ready = sorted(k for k, v in LAYERS.items() if k not in done and v <= done)
        assert ready, f"a cycle among {sorted(set(LAYERS) - done)}"
        done.update(ready)
        order += ready
    assert order[0] == "base"
    assert order[-1] == "cli"


def test_every_import_follows_the_table() -> None:
    """Each module imports only its own layer and the layers the table allows it, function-
    level imports included (they run at a later moment, in the same layer)."""
    wrong = []
    for path in _package_modules():
        layer = _layer(".".join(path.relative_to(REPO).with_suffix("").parts))
        if layer not in LAYERS:  # clm_policy/__init__.py, __main__.py: the package's face
            continue
        for module in _imported(path):
            target = _layer(module)
            if target is None or target == layer or target in LAYERS[layer]:
                continue
            if target not in LAYERS:  # a name taken from the package itself (__version__)
                continue
            wrong.append(f"{path.relative_to(REPO)} imports {module} ({layer} -> {target})")
    assert wrong == []


def test_the_layer_check_catches_an_upward_import(tmp_path: Path) -> None:
    """The scan sees what the table forbids: the formatters may not reach the CLI."""
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    from clm_policy.cli.main import run\n", encoding="utf-8")
    assert "clm_policy.cli.main" in _imported(sample, package="clm_policy.report")
    assert "cli" not in LAYERS["report"]


def test_tests_mirror_the_package() -> None:
    """A test file lives in the folder of the layer it tests (tests/<layer>/), or in
    tests/project/ when it holds the repository itself to account (docs, CI files, layout)."""
    tests = REPO / "tests"
    loose = sorted(p.name for p in tests.glob("test_*.py"))
    assert loose == []
    folders = {p.name for p in tests.iterdir() if p.is_dir() and any(p.glob("test_*.py"))}
    assert folders <= {*LAYERS, "project", "agents_e2e"}


def test_the_import_scan_sees_every_form() -> None:
    sample = PACKAGE / "report" / "explain.py"
    assert "clm_policy.models.decision.Explanation" in _imported(sample)
    seen = set(_imported(PACKAGE / "cli" / "render.py"))
    assert {
        "clm_policy.report.explain.render_decision",  # at the top
        "clm_policy.transcripts.reading.TranscriptReading",  # under TYPE_CHECKING
        "json",  # in a function
    } <= seen


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
