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


def _documented_layers() -> dict[str, frozenset[str]]:
    """docs/architecture.md's layer table: each row's layers (``base/``; a row may name two)
    and what they may import (names, "nothing", or "every other layer")."""
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text.split("| layer | what lives there | may import |\n| --- | --- | --- |\n")[1]
    found: dict[str, frozenset[str]] = {}
    for row in table.split("\n\n")[0].splitlines():
        cells = [cell.strip() for cell in row.strip("|").split(" | ")]
        layers = [name.strip("`/ ") for name in cells[0].split(",")]
        allowed = cells[-1]
        for layer in layers:
            if allowed == "nothing":
                found[layer] = frozenset()
            elif allowed == "every other layer":
                found[layer] = frozenset(LAYERS) - {layer}
            else:
                found[layer] = frozenset(name.strip() for name in allowed.split(","))
    return found


def test_the_documented_table_is_the_tested_one() -> None:
    assert _documented_layers() == LAYERS


def test_the_documented_table_is_read_row_by_row() -> None:
    documented = _documented_layers()
    assert documented["base"] == frozenset()
    assert documented["lint"] == documented["tester"] == {"base", "formats", "models", "policy"}
    assert "experiment" in documented["cli"]
    assert "cli" not in documented["cli"]


# Two modules that import each other (type-only imports included) are one module in two files.


def _module_name(path: Path, root: Path = REPO) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _circles(paths: list[Path], root: Path = REPO) -> set[tuple[str, str]]:
    """The pairs of modules among ``paths`` that import each other, anywhere in the file."""
    names = {_module_name(p, root): p for p in paths}
    imports = {
        name: set(_imported(path, _module_name(path.parent, root))) & set(names) - {name}
        for name, path in names.items()
    }
    return {(a, b) for a, targets in imports.items() for b in targets if a < b and a in imports[b]}


def test_no_two_modules_import_each_other() -> None:
    assert _circles(_package_modules()) == set()


def test_the_circle_check_sees_a_circle(tmp_path: Path) -> None:
    """One module imports the other at the top, the other imports it back under
    TYPE_CHECKING, through a relative import: a circle all the same."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.b import f\n")
    (package / "b.py").write_text(
        "TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from .a import g\n"
    )
    (package / "c.py").write_text("from pkg import a\n")
    paths = sorted(package.glob("*.py"))
    assert _circles(paths, tmp_path) == {("pkg.a", "pkg.b")}


LONGEST = 80
"""Lines a function may take (docstring included); a longer one does more than one thing."""
GENERATED = {  # (python -m clm_policy.models.generate --write)
    "clm_policy/models/state.py",
    "clm_policy/models/decision.py",
    "clm_policy/models/manifest.py",
}


def _long_functions(path: Path, root: Path = REPO) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        f"{path.relative_to(root).as_posix()} {node.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (node.end_lineno or node.lineno) - node.lineno + 1 > LONGEST
    }


def test_no_function_is_longer_than_80_lines() -> None:
    found: set[str] = set()
    for path in _package_modules():
        if path.relative_to(REPO).as_posix() not in GENERATED:
            found |= _long_functions(path)
    assert found == set()


def test_the_length_check_counts_every_line(tmp_path: Path) -> None:
    """80 lines pass (the ``def`` line and 79 more), 81 do not; methods count too."""
    sample = tmp_path / "m.py"
    short = "\n".join(f"    x{i} = {i}" for i in range(LONGEST - 1))
    long = "\n".join(f"        x{i} = {i}" for i in range(LONGEST))
    sample.write_text(f"def short():\n{short}\n\n\nclass C:\n    def long(self):\n{long}\n")
    assert _long_functions(sample, tmp_path) == {"m.py long"}


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
