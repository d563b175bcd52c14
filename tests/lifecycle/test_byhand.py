"""clm_policy.lifecycle.byhand, loop.status and loop.signals called directly: a compaction or a
handoff asked for by hand, the sessions' overview, and a signal to a persisted session."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from clm_policy.base.errors import InputError, StateError, UsageError
from clm_policy.lifecycle import byhand
from clm_policy.lifecycle.sources import Request
from clm_policy.loop.runs import execute, plan_run
from clm_policy.loop.signals import signal_session
from clm_policy.loop.status import session_status
from clm_policy.memory.git.write import MemoryRepo
from clm_policy.memory.init import init_memory
from clm_policy.memory.sessions import load_session
from clm_policy.models.enums import TaskStatus

from conftest import git, invoke, state_file


@pytest.fixture
def played(tmp_path: Path) -> Path:
    """A memory repository with session scenario-b stopped after 2 steps."""
    memory = tmp_path / "mem"
    plan = plan_run(
        str(memory),
        scenario="compaction",
        policy_ref=None,
        profile=None,
        resume=None,
        soft_compact=None,
        hard_handoff=None,
        continue_after_handoff=False,
        max_steps=2,
    )
    execute(plan, str(memory))
    return memory


# -- by hand --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "got"),
    [
        (Request(), ""),
        (Request(state="s.json", session="s1"), "; got --state and --session"),
        (Request(tokens=5), "; got --tokens"),  # figures are no session to compact
    ],
    ids=["none", "two", "figures"],
)
def test_one_source_of_state(tmp_path: Path, source: Request, got: str) -> None:
    with pytest.raises(UsageError) as info:
        byhand.prepare("compact", "default", str(tmp_path), source, None)
    assert info.value.message == (
        f"give exactly one of --state FILE|-, --session ID or --transcript PATH{got}"
    )


def test_provenance_says_whether_the_policy_agrees(tmp_path: Path) -> None:
    source = Request(state=str(state_file(tmp_path)))  # 400,000 tokens: over hard_handoff
    handing = byhand.prepare("handoff", "default", str(tmp_path), source, None)
    assert (handing.why.rule, handing.state.session_id) == ("hard_handoff", "s1")
    assert handing.why.policy is not None
    assert handing.why.policy.endswith(f"@{handing.policy.digest}")
    compacting = byhand.prepare("compact", "default", str(tmp_path), source, None)
    assert compacting.why.rule == "manual"
    assert compacting.why.rationale is not None
    assert compacting.why.rationale.startswith(
        "compact requested by hand; the policy says handoff ("
    )
    assert compacting.profile.name == "coding"


def test_a_state_error_is_located_in_its_file(tmp_path: Path) -> None:
    path = state_file(tmp_path, signals={"degradation": "yes"})
    with pytest.raises(StateError) as info:
        byhand.prepare("compact", "default", str(tmp_path), Request(state=str(path)), None)
    assert info.value.location is not None
    assert info.value.location.file == str(path)
    assert (info.value.location.line, info.value.location.col) == (1, 108)  # at the value


def test_compact_and_handoff_a_persisted_session(played: Path) -> None:
    source = Request(session="scenario-b")
    hand, compacted = byhand.compact("default", str(played), source)
    assert (hand.why.rule, compacted.path) == (
        "manual",
        "sessions/scenario-b/compactions/000002.md",
    )
    assert git(played, "log", "-1", "--format=%H").strip() == compacted.commit
    _, handed = byhand.handoff("default", str(played), source, branch=True)
    assert handed.ref == "refs/heads/clm/handoff/scenario-b-1"
    assert handed.handoff_path == "sessions/scenario-b/handoffs/001.md"


# -- status ---------------------------------------------------------------------------------


def test_status_skips_a_session_it_cannot_read_unless_asked_for_it(played: Path) -> None:
    broken = played / "sessions" / "broken"
    broken.mkdir()
    (broken / "state.json").write_text("{}")
    git(played, "add", "-A")
    git(played, "commit", "-qm", "a broken session")
    found = session_status(str(played))
    assert [(r["session"], r["step"], r["stopped"]) for r in found.rows] == [
        ("scenario-b", 2, "max_steps")
    ]
    assert [sid for sid, _ in found.skipped] == ["broken"]
    assert str(found.skipped[0][1]) == (
        f"{played}/sessions/broken/state.json:1:1: not a valid session state: missing required "
        "key 'session_id' in the top level"
    )
    with pytest.raises(InputError):
        session_status(str(played), "broken")
    (one,) = session_status(str(played), "scenario-b").rows
    assert (one["compactions"], one["handoffs"], one["goal"]) == (
        0,
        0,
        "Port the report generator to the new template engine",
    )


# -- signals --------------------------------------------------------------------------------


def test_a_signal_is_checked_against_the_session_policy(played: Path) -> None:
    head = git(played, "rev-parse", "HEAD")
    for signals, message in [
        ({}, "nothing to signal: a phase done, or NAME=VALUE signals"),
        (
            {"degradaton": True},
            "signal 'degradaton' is not declared by policy default; did you mean "
            "'degradation'? (declared: degradation)",
        ),
        ({"degradation": 3}, "signal 'degradation' must be a bool, got 3"),
    ]:
        with pytest.raises(InputError) as info:
            signal_session(str(played), "scenario-b", signals)
        assert info.value.message == message
    assert git(played, "rev-parse", "HEAD") == head  # nothing committed


def test_a_signal_is_committed(played: Path) -> None:
    done = signal_session(
        str(played),
        "scenario-b",
        {"degradation": True},
        phase_done=True,
        as_written=["degradation=true"],
    )
    assert done.what == "phase-done, degradation=true"
    assert git(played, "log", "-1", "--format=%H").strip() == done.commit
    with MemoryRepo(played) as repo:
        state = load_session(repo, "scenario-b").state
    assert (state.signals, state.status) == ({"degradation": True}, TaskStatus.PHASE_BOUNDARY)


def test_a_session_handed_off_on_its_own_branch_is_found_there(
    played: Path, tmp_path: Path
) -> None:
    """Its state is on clm/handoff/<id>-1 alone: status of it names that branch (it said "no
    persisted session" while log and export found the session)."""
    state = state_file(tmp_path, session_id="side")
    handed = invoke("handoff", "--memory", str(played), "--state", str(state), "--branch")
    assert handed.exit_code == 0, handed.stderr
    one = invoke("status", "--memory", str(played), "--session", "side")
    assert (one.exit_code, one.stdout) == (2, "")
    assert one.stderr == (
        f"clm-policy: {played}: session 'side' is persisted only on branch clm/handoff/side-1 (a "
        "handoff made with --branch): merge it to see it here; clm-policy show --memory "
        f"{played} clm/handoff/side-1 shows its handoff\n"
    )
    shown = invoke("show", "--memory", str(played), "clm/handoff/side-1")
    assert shown.exit_code == 0, shown.stderr


def test_a_handoff_again_at_the_same_step_commits_nothing(tmp_path: Path) -> None:
    """`handoff` run twice on the same state committed a second handoff (002.md, a new
    manifest, the same content); `--session` after it did too. Now, as `compact` does: nothing
    committed, said, exit 0; a later step hands off again."""
    init_memory(tmp_path / "mem")
    state = tmp_path / "state.json"
    data = {"session_id": "s1", "goal": "ship it", "step_index": 3}
    state.write_text(json.dumps({**data, "tokens": {"context_tokens": 5000}}))

    def handoff(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "clm_policy", "handoff", "-m", "mem", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    first = handoff("--state", "state.json")
    assert first.returncode == 0, first.stderr
    head = git(tmp_path / "mem", "rev-parse", "HEAD").strip()
    said = (
        f"session s1 at step 3 (5000 tokens) is handed off already: commit {head[:12]} "
        "(sessions/s1/handoffs/001.md); nothing new to commit\n"
    )
    for source in (["--state", "state.json"], ["--session", "s1"]):
        again = handoff(*source)
        assert (again.returncode, again.stdout, again.stderr) == (0, said, "")
    as_json = json.loads(handoff("--state", "state.json", "--format", "json").stdout)
    assert as_json == {
        "event": "handoff",
        "commit": head,
        "committed": False,
        "session": "s1",
        "step": 3,
        "context_tokens": 5000,
        "handoff_path": "sessions/s1/handoffs/001.md",
    }
    assert git(tmp_path / "mem", "rev-parse", "HEAD").strip() == head
    state.write_text(json.dumps({**data, "step_index": 4}))
    later = handoff("--state", "state.json")
    assert later.returncode == 0, later.stderr
    assert "sessions/s1/handoffs/002.md" in later.stdout


def test_a_handoff_on_its_own_branch_again_at_the_same_step_commits_nothing(
    tmp_path: Path,
) -> None:
    """`handoff --branch` twice on the same state made clm/handoff/s1-1 and s1-2 with the same
    content (two pull requests for one handoff): the second is checked against the session's
    newest handoff branch, as a handoff on the checked-out branch is against HEAD."""
    init_memory(tmp_path / "mem")
    state = tmp_path / "state.json"
    data = {"session_id": "s1", "goal": "ship it", "step_index": 3}
    state.write_text(json.dumps({**data, "tokens": {"context_tokens": 5000}}))

    def handoff() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "clm_policy",
                "handoff",
                "-m",
                "mem",
                "-s",
                "state.json",
                "--branch",
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def branches() -> list[str]:
        listed = git(tmp_path / "mem", "for-each-ref", "--format=%(refname:short)", "refs/heads/")
        return sorted(listed.split())

    first = handoff()
    assert first.returncode == 0, first.stderr
    made = branches()
    assert "clm/handoff/s1-1" in made
    tip = git(tmp_path / "mem", "rev-parse", "clm/handoff/s1-1").strip()
    again = handoff()
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith(
        f"session s1 at step 3 (5000 tokens) is handed off already: commit {tip[:12]}"
    ), again.stdout
    assert branches() == made  # no clm/handoff/s1-2
    state.write_text(json.dumps({**data, "step_index": 4}))
    later = handoff()
    assert later.returncode == 0, later.stderr
    assert "clm/handoff/s1-2" in branches()
