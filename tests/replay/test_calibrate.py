"""clm-policy calibrate: trouble points from transcripts and the memory repository, the proposal,
too little history, and --write changing the two values and no other byte."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_replay_transcripts import sessions

from clm_policy.loop.monitor import seen_state
from clm_policy.memory.git.write import MemoryRepo
from clm_policy.memory.trailers import CommitMessage
from clm_policy.models.state import SessionState, TokenSnapshot
from clm_policy.replay.calibrate import recall_of

from conftest import POLICIES, invoke, message_of, run_process


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run where no ./clm-memory is: the memory repository read is only the one a test names."""
    monkeypatch.chdir(tmp_path)


def transcripts(tmp_path: Path, count: int = 6) -> str:
    """A glob over ``count`` sessions that compacted on their own at 161,000, 162,000, ..."""
    return str(sessions(tmp_path, count) / "*.jsonl")


def copy(tmp_path: Path, name: str) -> Path:
    return Path(shutil.copy(POLICIES / name, tmp_path / name))


def test_a_proposal_from_the_agent_s_own_compactions(tmp_path: Path) -> None:
    result = invoke(
        "calibrate", "--memory", str(tmp_path / "none"), "--transcripts", transcripts(tmp_path),
        "--policy", "claude-code", "--profile", "coding",
    )  # fmt: skip
    assert result.exit_code == 2  # a memory repository named but missing is an error
    result = invoke(
        "calibrate", "--transcripts", transcripts(tmp_path / "t"), "--policy", "claude-code",
    )  # fmt: skip
    assert (result.exit_code, message_of(result.stderr)) == (0, "")
    assert result.stdout == (
        "calibrate profile coding of policy claude-code (<bundled>/claude-code.yaml)\n"
        "  from 6 sessions: 6 trouble points (6 automatic compactions by the agent)\n"
        "  current:   soft_compact 60%, hard_handoff 75%\n"
        "  lower decile of the trouble points: 80.5%; margin 5%\n"
        "  proposed:  soft_compact 60%, hard_handoff 76%\n"
        "  (--write POLICY writes them into the policy file)\n"
    )


def test_write_changes_the_two_values_and_no_other_byte(tmp_path: Path) -> None:
    policy = copy(tmp_path, "default.yaml")
    before = policy.read_bytes()
    result = invoke("calibrate", "--transcripts", transcripts(tmp_path), "--write", str(policy))
    assert result.exit_code == 0, message_of(result.stderr)
    assert result.stdout.splitlines()[-4:] == [
        "  lower decile of the trouble points: 161,000 tokens; margin 5%",
        "  proposed:  soft_compact 108000, hard_handoff 152000",
        f"wrote {policy}:24:31: soft_compact 250000 -> 108000",
        f"wrote {policy}:24:53: hard_handoff 350000 -> 152000",
    ]
    old = b"  coding:      {soft_compact: 250000, hard_handoff: 350000}\n"
    new = b"  coding:      {soft_compact: 108000, hard_handoff: 152000}\n"
    assert before.count(old) == 1
    assert policy.read_bytes() == before.replace(old, new)
    again = invoke(
        "calibrate", "--transcripts", transcripts(tmp_path / "b"), "--write", str(policy)
    )
    assert (
        again.stdout.splitlines()[-1] == f"{policy} already has these thresholds: nothing written"
    )
    assert policy.read_bytes() == before.replace(old, new)


def test_write_through_a_symbolic_link_edits_the_policy_it_points_to(tmp_path: Path) -> None:
    """A policy shared by a link (a team's file linked into a project): the file it points
    to gets the thresholds and the link stays (the link was replaced by an edited copy, the
    shared policy left as it was)."""
    shared = copy(tmp_path, "default.yaml")
    link = tmp_path / "project.yaml"
    link.symlink_to(shared.name)
    result = invoke("calibrate", "--transcripts", transcripts(tmp_path), "--write", str(link))
    assert result.exit_code == 0, message_of(result.stderr)
    assert link.is_symlink()
    assert b"  coding:      {soft_compact: 108000, hard_handoff: 152000}\n" in shared.read_bytes()


def test_write_keeps_quotes_comments_and_block_style(tmp_path: Path) -> None:
    policy = tmp_path / "team.yaml"
    text = (
        "# the team's policy\n"
        "version: 1\n"
        "name: team   # kept\n"
        "extends: default\n"
        "defaults:\n"
        "  context_window: 200000\n"
        "profiles:\n"
        "  coding:\n"
        "    soft_compact: '60%'    # compact early\n"
        '    hard_handoff: "75%"\n'
        "  research: {soft_compact: 65%, hard_handoff: 78%}\n"
    )
    policy.write_text(text)
    policy.chmod(0o640)
    result = invoke(
        "calibrate", "--transcripts", transcripts(tmp_path), "--write", str(policy),
        "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 0, message_of(result.stderr)
    data = json.loads(result.stdout)
    assert data["written"] == [
        {"key": "hard_handoff", "location": f"{policy}:10:19", "old": '"75%"', "new": '"76%"'}
    ]
    assert policy.read_text() == text.replace('"75%"', '"76%"')
    assert policy.stat().st_mode & 0o777 == 0o640


def test_too_little_history_proposes_and_writes_nothing(tmp_path: Path) -> None:
    mem = tmp_path / "mem"
    # the demo's first session: two of the demo's five degradation reports
    assert invoke("run", "--memory", str(mem), "--stop-at-handoff").exit_code == 0
    policy = copy(tmp_path, "default.yaml")
    before = policy.read_bytes()
    result = invoke(
        "calibrate", "--memory", str(mem), "--transcripts", transcripts(tmp_path, 2),
        "--write", str(policy), "--profile", "coding",
    )  # fmt: skip
    assert (result.exit_code, message_of(result.stderr)) == (0, "")
    assert result.stdout == (
        f"calibrate profile coding of policy default ({policy})\n"
        "  from 3 sessions: 4 trouble points (2 automatic compactions by the agent, 2 "
        "degradation reports)\n"
        "  current:   soft_compact 250000, hard_handoff 350000\n"
        "  too little history: 4 trouble points, at least 5 needed: nothing proposed, "
        "nothing written\n"
    )
    assert policy.read_bytes() == before
    proc = run_process("calibrate", "--memory", str(mem), "--format", "json")
    assert proc.returncode == 0, message_of(proc.stderr)
    data = json.loads(proc.stdout)
    assert (data["proposed"], data["points"], data["written"]) == (
        None,
        {"native": 0, "degradation": 2, "recall": 0},
        None,
    )


def decision(sid: str, step: int, context: int, profile: str, degraded: bool) -> dict[str, object]:
    state = SessionState(
        session_id=sid,
        step_index=step,
        tokens=TokenSnapshot(context_tokens=context),
        signals={"degradation": degraded},
    )
    return {"session": sid, "step": step, "action": "continue", "trigger": None,
            "profile": profile, "context_tokens": context, **seen_state(state)}  # fmt: skip


def test_trouble_points_from_the_memory_repository(memory: Path) -> None:
    with MemoryRepo(memory) as repo:
        lines = [
            decision("run-1", 1, 100000, "coding", False),
            decision("run-1", 2, 150000, "coding", True),  # degradation begins: a point
            decision("run-1", 3, 160000, "coding", True),  # still degraded: no new point
            decision("run-1", 4, 40000, "coding", False),
            decision("run-1", 5, 170000, "coding", True),  # begins again
            decision("other", 1, 90000, "research", True),  # another profile: left out
        ]
        by_session: dict[str, str] = {}
        for line in lines:
            path = f"sessions/{line['session']}/decisions.jsonl"
            by_session[path] = by_session.get(path, "") + json.dumps(line) + "\n"
        repo.commit(CommitMessage("decisions", trailers={"Clm-Event": "session"}), by_session)
        for i, (trigger, tokens) in enumerate(
            [("auto", 167000), ("auto", 168000), ("manual", 90000)]
        ):
            trailers = {
                "Clm-Event": "compact",
                "Clm-Session": f"hook-{i}",
                "Clm-Agent-Trigger": trigger,
                "Clm-Agent-Tokens": str(tokens),
            }
            repo.commit(CommitMessage(f"hook {i}", trailers=trailers), {f"x/{i}.md": "x\n"})
        for i, recall in enumerate(["0.75 (6/8 facts)", "95%"]):
            trailers = {
                "Clm-Event": "compact",
                "Clm-Session": f"verified-{i}",
                "Clm-Context-Tokens": "155000",
                "Clm-Recall": recall,
            }
            repo.commit(CommitMessage(f"verified {i}", trailers=trailers), {f"y/{i}.md": "y\n"})
        # a handoff's or an agent summary's recall is about a seed or a summary, not the context
        for event in ("handoff", "summary"):
            trailers = {
                "Clm-Event": event,
                "Clm-Session": f"{event}-1",
                "Clm-Context-Tokens": "120000",
                "Clm-Recall": "0.40 (2/5)",
            }
            repo.commit(CommitMessage(event, trailers=trailers), {f"z/{event}.md": "z\n"})
        # the snapshot of an agent's own compaction, verified too: one point, the agent's
        trailers = {
            "Clm-Event": "compact",
            "Clm-Session": "hook-9",
            "Clm-Agent-Trigger": "auto",
            "Clm-Agent-Tokens": "169000",
            "Clm-Context-Tokens": "169000",
            "Clm-Recall": "0.50 (2/4)",
        }
        repo.commit(CommitMessage("hook 9", trailers=trailers), {"x/9.md": "x\n"})
    result = invoke("calibrate", "--memory", str(memory), "--format", "json")
    assert result.exit_code == 0, message_of(result.stderr)
    data = json.loads(result.stdout)
    assert data["points"] == {"native": 3, "degradation": 2, "recall": 1}
    assert data["left_out"] == {
        "decided under another profile": 1,
        "manual compaction (a person chose the moment)": 1,
    }
    assert sorted((p["kind"], p["session"], p["tokens"]) for p in data["trouble_points"]) == [
        ("degradation", "run-1", 150000),
        ("degradation", "run-1", 170000),
        ("native", "hook-0", 167000),
        ("native", "hook-1", 168000),
        ("native", "hook-9", 169000),
        ("recall", "verified-0", 155000),
    ]
    assert data["proposed"] == {"soft_compact": "101000", "hard_handoff": "142000"}
    assert data["method"] == {"lower_decile": 150000.0, "margin": 0.05, "min_points": 5}


@pytest.mark.parametrize(
    ("value", "share"),
    [("0.85", 0.85), ("85%", 0.85), ("0.75 (6/8 facts)", 0.75), ("1", 1.0), ("1.5", None),
     ("n/a", None), ("", None)],
)  # fmt: skip
def test_recall_trailers(value: str, share: float | None) -> None:
    assert recall_of(value) == share


def test_thresholds_written_elsewhere_are_refused(tmp_path: Path) -> None:
    child = tmp_path / "child.yaml"
    child.write_text("version: 1\nname: child\nextends: default\n")
    result = invoke("calibrate", "--transcripts", transcripts(tmp_path), "--write", str(child))
    assert (result.exit_code, result.stdout) == (2, "")
    assert message_of(result.stderr) == (
        f"{child}: soft_compact of profile 'coding' is written in another file of the extends "
        f"chain (<bundled>/default.yaml:24:31): give that file to --write, or set the "
        f"profile's thresholds in {child} first\n"
    )
    shared = tmp_path / "shared.yaml"
    shared.write_text(
        "version: 1\nname: shared\ndefaults:\n  soft_compact: 100000\n  hard_handoff: 200000\n"
        "profiles:\n  coding: {}\n"
    )
    result = invoke(
        "calibrate", "--transcripts", transcripts(tmp_path / "b"), "--write", str(shared)
    )
    assert (result.exit_code, result.stdout) == (2, "")
    assert message_of(result.stderr) == (
        f"{shared}:4:17: soft_compact is written under defaults, for every profile: set it in "
        "profile 'coding' first to calibrate this profile alone\n"
    )


def test_thresholds_in_two_units_are_not_calibrated(tmp_path: Path) -> None:
    mixed = tmp_path / "mixed.yaml"
    mixed.write_text(
        "version: 1\nname: mixed\nextends: default\nprofiles:\n"
        "  coding: {soft_compact: 60%, hard_handoff: 150000, context_window: 200000}\n"
    )
    result = invoke("calibrate", "--transcripts", transcripts(tmp_path), "--write", str(mixed))
    assert result.exit_code == 0, message_of(result.stderr)
    assert result.stdout.splitlines()[-1] == (
        "  soft_compact and hard_handoff are written in different units (tokens and a share of "
        "the window): write both the same way to calibrate them: nothing proposed, nothing "
        "written"
    )


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("--write", "missing.yaml"), "--write missing.yaml: no such policy file"),
        (("--write", "."), "--write .: a folder, not a policy file"),
        (("--write", "p.yaml", "--policy", "default"),
         "--write POLICY is the policy calibrated: leave out --policy"),
    ],
)  # fmt: skip
def test_bad_options(tmp_path: Path, args: tuple[str, ...], error: str) -> None:
    (tmp_path / "p.yaml").write_text("")
    result = invoke("calibrate", "--transcripts", transcripts(tmp_path), *args)
    assert (result.exit_code, result.stdout) == (2, "")
    assert (
        message_of(result.stderr)
        == f"clm-policy calibrate: {error} (try 'clm-policy calibrate --help')\n"
    )


def test_write_takes_a_policy_named_twice_and_overrides_the_environments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--policy P --write P`` is one policy; $CLM_POLICY_POLICY, a default, gives way to an
    explicit --write (both were refused: "leave out --policy", which was not given)."""
    policy = tmp_path / "p.yaml"
    policy.write_text(
        "version: 1\nname: p\nextends: default\nprofiles:\n"
        "  coding: {soft_compact: 60%, hard_handoff: 75%, context_window: 200000}\n"
    )
    found = transcripts(tmp_path)
    result = invoke(
        "calibrate", "--transcripts", found, "--policy", str(policy), "--write", str(policy)
    )
    assert result.exit_code == 0, message_of(result.stderr)
    assert result.stdout.startswith(f"calibrate profile coding of policy p ({policy})\n")
    monkeypatch.setenv("CLM_POLICY_POLICY", "default")
    result = invoke("calibrate", "--transcripts", found, "--write", str(policy))
    assert result.exit_code == 0, message_of(result.stderr)
    assert result.stdout.startswith(f"calibrate profile coding of policy p ({policy})\n")


def test_a_value_in_a_form_that_cannot_be_edited_in_place(tmp_path: Path) -> None:
    policy = tmp_path / "cr.yaml"
    text = "version: 1\rname: cr\rextends: default\rprofiles:\r  coding: {soft_compact: 60%, hard_handoff: 75%, context_window: 200000}\r"
    policy.write_bytes(text.encode())
    result = invoke("calibrate", "--transcripts", transcripts(tmp_path), "--write", str(policy))
    assert (result.exit_code, result.stdout) == (2, "")
    assert message_of(result.stderr) == (
        f"{policy}:5:26: the value is written in a form calibrate cannot edit in place\n"
    )
    assert policy.read_bytes() == text.encode()


def test_points_past_the_profile_s_window_are_left_out_not_proposed_as_shares(
    tmp_path: Path,
) -> None:
    # the README's example: the demo (no window recorded; its context passes 200,000) and the
    # team policy, whose shares are of a 200,000 window — once proposed as 88% and 111%
    assert run_process("run", "--memory", "mem", cwd=tmp_path).returncode == 0
    team = Path(shutil.copy(POLICIES / "examples" / "team.yaml", tmp_path / "team.yaml"))
    before = team.read_bytes()
    result = invoke("calibrate", "--memory", "mem", "--profile", "coding", "--write", str(team))
    assert (result.exit_code, message_of(result.stderr)) == (0, "")
    lines = result.stdout.splitlines()
    assert "  left out: 5 past the profile's window (the session ran with a larger one)" in lines
    assert lines[-1] == (
        "  too little history: 0 trouble points, at least 5 needed: nothing proposed, "
        "nothing written"
    )
    assert team.read_bytes() == before
