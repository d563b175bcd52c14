"""The experiment command as a person and a program use it: the table with intervals, JSON
that parses, an HTML page that loads nothing and escapes what the file names, and a page
that renders in headless Chromium (skipped, saying why, without it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_experiment import FILE_ARM, experiment

from conftest import MEM0_MISSING, REPO, invoke, message_of

CHROMIUM = Path("/usr/bin/chromium")


def test_the_text_report_has_every_metric_with_its_interval(tmp_path: Path) -> None:
    path = experiment(tmp_path, FILE_ARM + "  - {name: default, policy: default}\n")
    result = invoke("experiment", str(path))
    assert result.exit_code == 0, message_of(result.stderr)
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "experiment small: 2 arms x 2 workloads (seed 3; 200 paired resamples of the "
        "workloads; 95% intervals)"
    )
    assert "task completion (completed tasks / tasks; higher is better)" in lines
    at = lines.index(
        "needed facts found (facts a later step needed that its context held / facts needed; higher is better)"
    )
    assert lines[at + 1 : at + 4] == [
        "  arm                       value interval                        vs file interval",
        "  file (baseline)            0.0% [0.0%, 0.0%]",
        "  default                    0.0% [0.0%, 0.0%]                    +0.0 pp [+0.0 pp, +0.0 pp]",
    ]
    assert "  default                       -  (no workload counts)" in lines  # no prices
    assert (
        "  planted  file: completed 28,158 i1 c1/h1 m1/1  |  default: completed 28,770 i1 c0/h1 m1/1"
        in lines
    )
    assert lines[-1] == "memory repositories: not kept (--workdir DIR keeps them)"
    assert message_of(result.stderr) == ""  # no progress line: standard error is no terminal here


def test_json_and_html(tmp_path: Path) -> None:
    path = experiment(tmp_path, FILE_ARM + "  - {name: default, policy: default}\n")
    path.write_text(
        path.read_text().replace(
            "name: small\n", "name: small\ndescription: '<script>alert(1)</script>'\n"
        )
    )
    page = tmp_path / "page.html"
    result = invoke(
        "experiment",
        str(path),
        "--format",
        "json",
        "--html",
        str(page),
        "--workdir",
        str(tmp_path / "w"),
    )
    assert result.exit_code == 0, message_of(result.stderr)
    data = json.loads(result.stdout)
    assert data["baseline"] == "file"
    assert [a["name"] for a in data["arms"]] == ["file", "default"]
    assert data["arms"][0]["memory_repository"] == str(tmp_path / "w" / "arms" / "file" / "memory")
    assert set(data["metrics"]["completion"]["arms"]["default"]) == {
        "value",
        "interval",
        "diff",
        "diff_interval",
        "workloads_counted",
    }
    assert len(data["outcomes"]) == 4
    html = page.read_text()
    assert "default-src 'none'" in html
    assert "<script" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert html.count('<section class="metric"') == 8


def test_a_bad_file_exits_2_with_its_position(tmp_path: Path) -> None:
    path = experiment(tmp_path, FILE_ARM, "baseline: nosuch\n")
    result = invoke("experiment", str(path))
    assert result.exit_code == 2
    assert message_of(result.stderr) == f"{path}:6:11: baseline 'nosuch' is no arm (arms: file)\n"


def test_the_bundled_example_is_valid() -> None:
    from clm_policy.experiment.load import load_experiment
    from clm_policy.memory.mem0store import available

    if not available():
        pytest.skip(f"{MEM0_MISSING}; the example's Mem0 arms cannot be loaded without it")
    exp = load_experiment(REPO / "examples" / "experiments" / "memory.yaml")
    assert [a.name for a in exp.arms] == ["file", "mem0", "hybrid", "file-early", "hybrid-early"]
    assert len(exp.workloads) == 10


@pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="Debian's chromium is not installed (/usr/bin/chromium; apt-get install chromium)",
)
def test_the_page_renders_in_chromium(tmp_path: Path) -> None:
    import importlib.util

    where = REPO / "tests" / "report" / "test_report_chromium.py"
    spec = importlib.util.spec_from_file_location("report_chromium", where)
    assert spec is not None
    assert spec.loader is not None
    shared = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shared)
    chromium, near, pixels, series = shared.chromium, shared.near, shared.pixels, shared.SERIES

    path = experiment(tmp_path, FILE_ARM + "  - {name: default, policy: default}\n")
    page = tmp_path / "page.html"
    assert invoke("experiment", str(path), "--html", str(page)).exit_code == 0
    dom = chromium(tmp_path, page, "--dump-dom")
    # a bar per arm and metric: default has no prices, and the arms' deterministic summaries
    # measure no recall
    assert dom.count('<rect class="bar') == 13
    shot = tmp_path / "shot.png"
    chromium(tmp_path, page, f"--screenshot={shot}")
    width, height, found = pixels(shot.read_bytes())
    assert (width, height) == (1200, 1400)
    assert near(found, series) > 2000  # the first chart's bars are drawn


def test_help_lists_the_command() -> None:
    """The installed script (the one beside this interpreter, whether or not its folder is
    on PATH) lists the command."""
    script = Path(sys.executable).with_name("clm-policy")
    done = subprocess.run(
        [str(script), "--help"], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert "experiment" in done.stdout


@pytest.mark.slow  # the memory experiment, played whole
def test_the_result_in_the_docs_is_what_the_example_gives() -> None:
    """docs/experiments.md quotes a run of examples/experiments/memory.yaml: the quoted
    blocks are what the example prints today (the figures do not depend on time or jobs)."""
    from clm_policy.memory.mem0store import available

    if not available():
        pytest.skip(f"{MEM0_MISSING}; the example's Mem0 arms cannot run without it")
    import re

    text = (REPO / "docs" / "experiments.md").read_text()
    (quoted,) = [b for b in re.findall(r"```text\n(.*?)```", text, flags=re.S) if "vs file" in b]
    result = invoke("experiment", str(REPO / "examples" / "experiments" / "memory.yaml"))
    assert result.exit_code == 0, message_of(result.stderr)
    out = result.stdout
    for block in quoted.strip().split("\n\n"):
        assert block in out, block


def test_progress_shows_on_a_terminal_only(tmp_path: Path) -> None:
    import sys

    from conftest import run_on_terminal

    path = experiment(tmp_path, FILE_ARM + "  - {name: default, policy: default}\n")
    clm = [sys.executable, "-m", "clm_policy", "experiment", str(path)]
    done, seen = run_on_terminal(clm)
    assert done.returncode == 0
    assert b"experiment: " in seen  # the line, e.g. "experiment: 1/4 (25%)"
    assert seen.endswith(b"\r")  # ... erased at the end
    done, seen = run_on_terminal([*clm, "--format", "json"])
    assert done.returncode == 0
    assert seen == b""


def test_a_bad_scenario_file_is_named_with_its_own_position(tmp_path: Path) -> None:
    """The error was placed at the workload alone: the file it read, and where in it the
    problem is, went unsaid."""
    (tmp_path / "team.yaml").write_text("version: 1\nextends: default\n")
    path = tmp_path / "e.yaml"
    path.write_text(
        "version: 1\nname: e\narms:\n  - {name: a, policy: default}\n"
        "workloads:\n  - scenario: team.yaml\n"
    )
    done = invoke("experiment", str(path))
    assert (done.exit_code, message_of(done.stderr)) == (
        2,
        f"{path}:6:5: workloads[0]: {tmp_path / 'team.yaml'}:1:1: missing required key "
        "'goal' in the top level\n",
    )


def test_an_html_path_that_is_a_folder_names_html(tmp_path: Path) -> None:
    """Refused before anything runs, in the words of the option the person gave."""
    path = experiment(tmp_path, FILE_ARM)
    result = invoke("experiment", str(path), "--html", str(tmp_path))
    assert (result.exit_code, result.stdout) == (2, "")
    assert message_of(result.stderr) == f"{tmp_path}: is a folder: --html takes a file's path\n"


@pytest.mark.parametrize(
    ("where", "reason"), [("exp.yaml", "it is a file"), ("exp.yaml/sub", "Not a directory")]
)
def test_a_workdir_that_cannot_be_a_folder_is_bad_input_not_a_crash(
    tmp_path: Path, where: str, reason: str
) -> None:
    """A file given to --workdir (or a path through one) was an internal error, exit 3."""
    path = experiment(tmp_path, FILE_ARM)
    workdir = tmp_path / where
    result = invoke("experiment", str(path), "--workdir", str(workdir))
    assert (result.exit_code, result.stdout) == (2, "")
    assert message_of(result.stderr) == (
        f"clm-policy: {workdir}: cannot be the experiment's folder: {reason} (--workdir takes "
        "a folder, new or empty)\n"
    )
    assert path.read_text().startswith("version: 1\n")  # the file given is left as it was
