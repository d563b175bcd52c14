"""What a CI log reads: no text from a policy, a policy test or a file name starts a workflow
command of its own (GitHub Actions' ``::name::`` at a line's start, ``##[name]`` anywhere).

A pull request's files are the input: a test case named ``"case\\n::warning::X\\n
::stop-commands::tok"``, a rule whose ``because:`` holds such lines, ``extends:`` naming
``"./nothere\\n::warning title=spoof::All policies OK"``, and a policy file whose name holds
them. ``lint`` and ``test`` run as processes in every format a log shows; the only commands in
their output are the annotations ``--format github`` means to print, one per finding; every
text is on one line; JSON reads back exactly. The printer is clm_policy/base/termsafe.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import runner_commands

CASE = "case\n::warning::X\n::stop-commands::tok"
BECAUSE = "line one\n::warning::because spoof\n##[warning]v1 spoof"
EXTENDS = "./nothere\n::warning title=spoof::All policies OK"
FILE = "odd\n::error::file.yaml"


def clm(cwd: Path, *args: str) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "clm_policy", *args],
        capture_output=True,
        cwd=cwd,
        timeout=120,
        check=False,
        env={**os.environ, "GITHUB_ACTIONS": "true"},
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


@pytest.fixture
def pr(tmp_path: Path) -> Path:
    """A pull request's policies: one that fails its hostile case, one whose parent is a
    hostile path, one whose file name holds a command."""
    (tmp_path / "p.yaml").write_text(
        "version: 1\nname: p\ndefault_profile: coding\n"
        "profiles:\n  coding: {soft_compact: 100, hard_handoff: 200}\n"
        "rules:\n  - id: big\n    when: tokens.context >= profile.hard_handoff\n"
        f"    action: handoff\n    because: {json.dumps(BECAUSE)}\n"
        "otherwise: continue\n"
    )
    (tmp_path / "p.test.yaml").write_text(
        f"version: 1\npolicy: p.yaml\ncases:\n  - name: {json.dumps(CASE)}\n"
        "    given: {tokens: {context_tokens: 300}}\n    expect: {action: continue}\n"
    )
    (tmp_path / "q.yaml").write_text(
        f"version: 1\nname: q\nextends: {json.dumps(EXTENDS)}\nrules: []\n"
    )
    (tmp_path / FILE).write_text("version: 1\nprofiles: {coding: {soft_compact: x}}\n")
    return tmp_path


@pytest.mark.parametrize("fmt", ["text", "github", "json"])
def test_lint_prints_no_command_but_its_annotations(pr: Path, fmt: str) -> None:
    code, out, err = clm(pr, "lint", "--format", fmt, "q.yaml", FILE)
    assert code == 1
    expected = ["error", "error"] if fmt == "github" else []
    assert runner_commands(out + err) == expected, out + err
    if fmt == "json":
        messages = [p["message"] for p in json.loads(out)["problems"]]
        assert messages[1] == "extends target not found: " + EXTENDS
        return
    assert out.count("\n") == 2  # one line a problem
    if fmt == "text":
        assert out.splitlines()[1] == (
            "q.yaml:3:10: error [extends] extends target not found: "
            "./nothere\\n::warning title=spoof::All policies OK"
        )


@pytest.mark.parametrize("fmt", ["text", "github", "json"])
def test_test_prints_no_command_but_its_annotations(pr: Path, fmt: str) -> None:
    code, out, err = clm(pr, "test", "--format", fmt, "-v", "p.test.yaml")
    assert code == 1
    assert runner_commands(out + err) == (["error"] if fmt == "github" else []), out + err
    if fmt == "json":
        (case,) = json.loads(out)["results"]
        assert case["case"] == CASE
        return
    lines = out.splitlines()
    assert "FAIL p.test.yaml:4: case\\n::warning::X\\n::stop-commands::tok" in lines
    assert "    rationale: line one\\n::warning::because spoof\\n\\u0023#[warning]v1 spoof" in (
        lines
    )
