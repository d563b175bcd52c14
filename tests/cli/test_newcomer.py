"""What a newcomer runs into: every event can be listed, --memory means the same everywhere,
status shows what waits for a person, show reads from branches and says what it refuses, and
--format json keeps its promise when something goes wrong."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from clm_policy.memory.layout import EVENTS

from conftest import REPO, invoke, run_process

CONFIRMING = "version: 1\nextends: default\nconfirm: [handoff]\n"


@pytest.fixture
def played(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo, played into ./clm-memory (the default every command uses)."""
    monkeypatch.chdir(tmp_path)
    result = invoke("run", "--max-steps", "30")
    assert result.exit_code == 0, result.stderr
    return tmp_path / "clm-memory"


def test_the_demo_shows_every_feature(tmp_path: Path) -> None:
    """`clm-policy run`, then `report` and `calibrate`, as the README tells a newcomer: the
    task completes, the report opens with it, and calibrate has enough history to propose."""
    ran = run_process("run", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "stopped: completed after 96 steps; 5 compactions, 1 handoff" in ran.stdout
    shown = run_process("report", "--memory", "clm-memory", "-o", "report.html", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    page = (tmp_path / "report.html").read_text()
    first = page.index("<tr><td>", page.index("Metrics"))
    assert page[first:].startswith(
        "<tr><td>task completion rate</td><td>100.0% (1 of 1 task; 0 failed, 0 open)</td>"
    )
    calibrated = run_process("calibrate", "--memory", "clm-memory", cwd=tmp_path)
    assert calibrated.returncode == 0, calibrated.stderr
    assert calibrated.stdout == (
        "calibrate profile coding of policy default (<bundled>/default.yaml)\n"
        "  from 2 sessions: 5 trouble points (5 degradation reports)\n"
        "  current:   soft_compact 250000, hard_handoff 350000\n"
        "  lower decile of the trouble points: 235,135 tokens; margin 5%\n"
        "  proposed:  soft_compact 159000, hard_handoff 223000\n"
        "  (--write POLICY writes them into the policy file)\n"
    )
    # the README says what the demo does
    readme = " ".join((REPO / "README.md").read_text().split())
    assert (
        "two compactions and a handoff at the end of a phase (the agent's own, kept word for word "
        "beside clm-policy's record), then the next phase in a session seeded from the handoff, "
        "where the agent reports its answers degrading three times and "
        "the policy compacts, until the task completes" in readme
    )


def test_every_command_finds_the_default_memory(played: Path) -> None:
    for args in (
        ["log"],
        ["status"],
        ["status", "--session", "demo"],
        ["decide", "--session", "demo"],
        ["compact", "--session", "demo"],
        ["signal", "--session", "demo", "--phase-done"],  # 30 steps: it goes on
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


def test_show_search_finds_the_topics_the_agent_s_memory_search_finds(tmp_path: Path) -> None:
    """A person had only log and show: the memory topics the agent searches (the MCP tool
    memory_search) could not be searched from the command line. `show --search` runs the
    same function (memory/store.py search_topics) and prints what it found, terminal-safe."""
    from clm_policy.memory.git.write import MemoryRepo
    from clm_policy.memory.init import init_memory
    from clm_policy.memory.store import GitMemoryStore, search_topics

    from conftest import run_process

    init_memory(tmp_path / "mem")
    with MemoryRepo(tmp_path / "mem") as repo:
        store = GitMemoryStore(repo)
        store.write("decisions/db", "We use SQLite now.\nSQLite\x1b[31m later too.", tags=["db"])
        store.write("notes/misc", "sqlite once", tags=[])
        store.write("notes/other", "nothing of the kind")
        agent_finds = search_topics(repo, "sqlite")
    done = run_process("show", "--memory", "mem", "--search", "SQLite", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    stamps = [hit["updated_at"] for hit in agent_finds]
    assert done.stdout == (
        f"topics/decisions/db.md  [db]  {stamps[0]}\n"
        "  We use SQLite now. SQLite\\x1b[31m later too.\n\n"
        f"topics/notes/misc.md  {stamps[1]}\n  sqlite once\n"
    )
    none = run_process("show", "--memory", "mem", "--search", "postgres", cwd=tmp_path)
    assert (none.returncode, none.stdout, none.stderr) == (
        0,
        "",
        "no memory topic holds 'postgres'\n",
    )
    for args in (["--search", " "], [], ["topics/notes/misc.md", "--search", "x"]):
        bad = run_process("show", "--memory", "mem", *args, cwd=tmp_path)
        assert bad.returncode == 2, (args, bad.stderr)
