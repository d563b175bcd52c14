"""What a newcomer runs into: every event can be listed, --memory means the same everywhere,
status shows what waits for a person, show reads from branches and says what it refuses, and
--format json keeps its promise when something goes wrong."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from clm_policy.cli.options import EVENTS

from conftest import REPO, invoke

CONFIRMING = "version: 1\nextends: default\nconfirm: [handoff]\n"


@pytest.fixture
def played(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo, played into ./clm-memory (the default every command uses)."""
    monkeypatch.chdir(tmp_path)
    result = invoke("run", "--max-steps", "30")
    assert result.exit_code == 0, result.stderr
    return tmp_path / "clm-memory"


def test_every_command_finds_the_default_memory(played: Path) -> None:
    for args in (
        ["log"],
        ["status"],
        ["status", "--session", "demo"],
        ["decide", "--session", "demo"],
        ["compact", "--session", "demo"],
        ["signal", "--session", "demo", "--phase-done"],
        ["run", "--resume", "demo", "--max-steps", "1"],
        ["handoff", "--session", "demo"],
        ["show", "sessions/demo/handoffs/001.md"],
    ):
        result = invoke(*args)
        assert result.exit_code == 0, (args, result.stderr)


def test_memory_from_the_environment(played: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    os.chdir(played.parent.parent)
    monkeypatch.setenv("CLM_POLICY_MEMORY", str(played))
    assert invoke("status").exit_code == 0
    assert "env var: CLM_POLICY_MEMORY" in " ".join(invoke("log", "--help").stdout.split())


def test_log_lists_every_event(played: Path) -> None:
    assert invoke("signal", "--session", "demo", "degradation=true").exit_code == 0
    signals = json.loads(invoke("log", "--event", "signal", "--format", "json").stdout)
    assert [e["subject"] for e in signals] == ["clm(signal): demo step 30, degradation=true"]
    seen = {e["event"] for e in json.loads(invoke("log", "--format", "json").stdout)}
    assert seen <= set(EVENTS)
    assert seen == {"init", "start", "compact", "signal", "session"}
    documented = (REPO / "docs" / "memory.md").read_text()
    for event in EVENTS:
        assert f"`{event}`" in documented, event


def test_status_shows_a_pending_confirmation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "careful.yaml").write_text(CONFIRMING)
    assert invoke("run", "--policy", "careful.yaml").exit_code == 4
    table = invoke("status").stdout
    assert (
        "pending: session demo awaits confirmation of handoff (phase_boundary); "
        "confirm with: clm-policy run --memory clm-memory --resume demo --yes"
    ) in table
    detail = invoke("status", "--session", "demo").stdout
    assert "pending   handoff: phase finished" in detail


def test_show_reads_branches_and_refuses_by_name(played: Path) -> None:
    handed = invoke("handoff", "--session", "demo", "--branch", "--format", "json")
    assert handed.exit_code == 0, handed.stderr
    path = json.loads(handed.stdout)["handoff_path"]
    shown = invoke("show", path)
    assert shown.exit_code == 0, shown.stderr
    assert shown.stdout.startswith(f"# {path} @ ")
    assert "(not on the checked-out branch)" in shown.stdout
    assert "# Handoff: session demo" in shown.stdout
    by_branch = invoke("show", "clm/handoff/demo-1")
    assert by_branch.exit_code == 0
    refused = invoke("show", "sessions/../../etc/passwd")
    assert refused.exit_code == 2
    assert "refusing to read 'sessions/../../etc/passwd'" in refused.stderr
    assert "write" not in refused.stderr


def test_errors_are_json_with_format_json(played: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"session_id": "s", "step_index": "x"}')
    cases = [
        (["decide", "--state", str(bad), "--format", "json"], 2, str(bad)),
        (["status", "--session", "nosuch", "--format", "json"], 2, None),
        (["log", "--memory", "nowhere", "--format=json"], 2, None),
        (["run", "--profile", "nosuch", "--format", "json"], 2, None),
        (["compact", "--format", "json"], 2, None),  # a usage error
    ]
    for args, code, file in cases:
        result = invoke(*args)
        assert result.exit_code == code, args
        assert result.stderr == "", args
        error = json.loads(result.stdout)["error"]
        assert error["code"] == code
        assert error["message"]
        if file is not None:
            assert (error["file"], error["line"]) == (file, 1)
    plain = invoke("status", "--session", "nosuch")
    assert plain.stdout == ""
    assert plain.stderr.startswith("clm-policy: ")
