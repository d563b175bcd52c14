"""What a new user reads when something is wrong: impossible figures refused, long values
quoted short, one truncation mark, counts said in words, paths as the user typed them."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_process


def test_tokens_over_the_window_are_refused(tmp_path: Path) -> None:
    """A context cannot be larger than its window: --tokens over --window is a usage error
    (exit 2) naming both values, and nothing is decided."""
    done = run_process("decide", "--tokens", "500", "--window", "100", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        "clm-policy decide: --tokens 500 is more than --window 100: a context cannot be larger "
        "than its window; give the window the model has (try 'clm-policy decide --help')\n"
    )
    full = run_process("decide", "--tokens", "100", "--window", "100", cwd=tmp_path)
    assert full.returncode == 0, full.stderr
    assert "context:   100 tokens of 100 (100%, window from --window)\n" in full.stdout


def test_a_state_over_its_window_is_decided_and_said(tmp_path: Path) -> None:
    """A state file's figures may be real (read from a transcript, its window guessed): it is
    decided, and the context line says the figures do not fit."""
    state = tmp_path / "over.json"
    state.write_text(
        json.dumps({"session_id": "s", "tokens": {"context_tokens": 500, "context_window": 100}})
    )
    done = run_process("decide", "--state", "over.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (
        "context:   500 tokens of 100 (500%, window from the state file); more than its "
        "window: check the window the state gives\n"
    ) in done.stdout


def test_migrate_says_plainly_when_there_is_nothing(tmp_path: Path) -> None:
    """A new memory repository holds no document: migrate says there was nothing, not "all 0
    document(s) are current"."""
    assert run_process("init", "mem", cwd=tmp_path).returncode == 0
    done = run_process("migrate", "--memory", "mem", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "mem: no documents yet; nothing to migrate\n"


def test_counts_are_said_in_words(tmp_path: Path) -> None:
    """One error is "1 error", none are "0 warnings": no "(s)"."""
    (tmp_path / "p.yaml").write_text("version: 1\nprofiles: [a\n")
    done = run_process("lint", "p.yaml", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == "clm-policy lint: 1 error, 0 warnings in 1 file\n"
