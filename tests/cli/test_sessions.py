"""``clm-policy status`` and ``clm-policy signal`` as a person meets them, run as processes on
a real memory repository: a session that handed off says so, long session ids keep the
columns in line, and the command ``signal`` suggests next is one that works."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from conftest import POLICIES, REPO, git, run_process

UUID = "0b7e6a52-93d0-4b8e-a6f1-2d5c8e90b3a7"  # a Claude Code session id: 36 characters


def ok(*args: str, cwd: Path) -> str:
    done = run_process(*args, cwd=cwd)
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout


def sessions(tmp_path: Path) -> None:
    """mem: a run that handed off (scenario-c), one stopped early (scenario-b) and a session
    handed off by hand from its state, named like Claude Code's."""
    ok("run", "--scenario", "handoff", "--memory", "mem", cwd=tmp_path)
    ok("run", "--scenario", "compaction", "--memory", "mem", "--max-steps", "2", cwd=tmp_path)
    state = {"session_id": UUID, "goal": "ship it", "tokens": {"context_tokens": 400000}}
    (tmp_path / "s.json").write_text(json.dumps(state))
    ok("handoff", "--memory", "mem", "--state", "s.json", cwd=tmp_path)


def test_status_says_handed_off_and_fits_long_ids(tmp_path: Path) -> None:
    sessions(tmp_path)
    assert ok("status", "--memory", "mem", cwd=tmp_path).splitlines() == [
        "session                               status          step    context   fill compact "
        "handoff recall  last decision",
        f"{UUID}  handed off         0    400,000      -       0       1      -  -",
        "scenario-b                            running            2     30,000      -       0 "
        "      0      -  continue (-)",
        "scenario-c                            handed off         1    360,016      -       0 "
        "      1      -  handoff (hard_handoff)",
    ]
    detail = ok("status", "--memory", "mem", "--session", "scenario-c", cwd=tmp_path)
    assert "status    handed off (task running) at step 1; run stopped: handoff\n" in detail
    rows = json.loads(ok("status", "--memory", "mem", "--format", "json", cwd=tmp_path))
    assert [(r["session"], r["status"], r["handed_off"]) for r in rows] == [
        (UUID, "running", True),
        ("scenario-b", "running", False),
        ("scenario-c", "running", True),
    ]


def test_status_of_short_ids_keeps_its_width(tmp_path: Path) -> None:
    ok("run", "--scenario", "continue_only", "--memory", "mem", cwd=tmp_path)
    assert ok("status", "--memory", "mem", cwd=tmp_path).splitlines() == [
        "session     status          step    context   fill compact handoff recall  last decision",
        "scenario-a  completed          2      1,107      -       0       0      -  continue (-)",
    ]


def suggested(stdout: str) -> list[str]:
    """The command on the ``next:`` line, as words (its comment left out)."""
    (line,) = [x for x in stdout.splitlines() if x.startswith("next: ")]
    words = shlex.split(line.removeprefix("next: "), comments=True)
    assert words[0] == "clm-policy", line
    return words[1:]


def test_signal_suggests_a_command_that_works(tmp_path: Path) -> None:
    sessions(tmp_path)
    compacted = {"session_id": "by-hand", "goal": "ship it", "tokens": {"context_tokens": 260000}}
    (tmp_path / "c.json").write_text(json.dumps(compacted))
    ok("compact", "--memory", "mem", "--state", "c.json", cwd=tmp_path)  # `run` did not make it
    for session, expected in (
        ("scenario-b", ["run", "--memory", "mem", "--resume", "scenario-b"]),
        ("by-hand", ["decide", "--memory", "mem", "--session", "by-hand", "--explain"]),
    ):
        said = ok(
            "signal", "--memory", "mem", "--session", session, "degradation=true", cwd=tmp_path
        )
        assert said.startswith(f"signalled session {session}: degradation=true (commit "), said
        assert suggested(said) == expected
        ok(*expected, cwd=tmp_path)  # the suggestion runs
    # a session `run --resume` cannot go on with says why, and what still works
    again = ok("signal", "--memory", "mem", "--session", "by-hand", "--phase-done", cwd=tmp_path)
    assert again.splitlines()[1:] == [
        "`clm-policy run --resume` cannot go on with it: session 'by-hand' was not made by "
        "`clm-policy run`: give --scenario",
        "next: clm-policy decide --memory mem --session by-hand --explain   # what the "
        "policy says of it now",
    ]
    # said twice: nothing changes, and the suggestion still holds
    twice = ok("signal", "--memory", "mem", "--session", "by-hand", "--phase-done", cwd=tmp_path)
    assert twice.splitlines()[0] == "session by-hand says phase-done already; nothing changed"
    assert suggested(twice) == ["decide", "--memory", "mem", "--session", "by-hand", "--explain"]


def test_signal_refuses_a_session_that_ended_and_commits_nothing(tmp_path: Path) -> None:
    """A signal on a session that ended was committed, then `signal` said the session could
    not be resumed: refused first, in the words `run --resume` uses, and git is unchanged."""
    sessions(tmp_path)
    head = git(tmp_path / "mem", "rev-parse", "HEAD")
    lists = "(clm-policy status --memory mem lists the sessions)"
    for session, how in (
        ("scenario-c", "session 'scenario-c' ended (handoff)"),
        (UUID, f"session '{UUID}' was handed off after its run stopped (commit "),
    ):
        resumed = run_process("run", "--memory", "mem", "--resume", session, cwd=tmp_path)
        assert resumed.returncode == 2
        assert resumed.stderr.startswith(f"clm-policy: {how}"), resumed.stderr
        said = run_process(
            "signal", "--memory", "mem", "--session", session, "--phase-done", cwd=tmp_path
        )
        assert (said.returncode, said.stdout) == (2, ""), said
        (line,) = said.stderr.splitlines()
        assert line.startswith(f"clm-policy: {how}"), line
        assert line.endswith(
            f"; nothing to signal: only a session that goes on reads a signal {lists}"
        )
        assert git(tmp_path / "mem", "rev-parse", "HEAD") == head
    assert git(tmp_path / "mem", "status", "--porcelain") == ""


def test_a_taken_session_id_says_how_to_continue_it(tmp_path: Path) -> None:
    ok("run", "--scenario", "compaction", "--memory", "mem", "--max-steps", "2", cwd=tmp_path)
    second = ok("run", "--scenario", "compaction", "--memory", "mem", cwd=tmp_path)
    assert (
        "session scenario-b exists already (to continue it: clm-policy run --memory mem "
        "--resume scenario-b); this run is session scenario-b.2"
    ) in second
    ok("run", "--memory", "mem", "--resume", "scenario-b", cwd=tmp_path)


def test_signal_on_a_session_of_another_policy_suggests_a_decide_that_works(
    tmp_path: Path,
) -> None:
    """The suggested `decide --session` read the session under the default policy, which
    declares no signal of the team's: it failed, exit 2, on the signal just given."""
    team = tmp_path / "my policies" / "team.yaml"
    team.parent.mkdir()
    team.write_text((POLICIES / "examples" / "team.yaml").read_text())
    scenario = tmp_path / "scenario.yaml"  # gone after the run: `run --resume` cannot go on
    scenario.write_text((REPO / "clm_policy" / "scenarios" / "continue_only.yaml").read_text())
    ok(
        *("run", "--scenario", str(scenario), "--memory", "mem", "--policy", str(team)),
        *("--max-steps", "1"),
        cwd=tmp_path,
    )
    scenario.unlink()
    said = ok(
        "signal",
        "--memory",
        "mem",
        "--session",
        "scenario-a",
        "open_subagent_calls=2",
        cwd=tmp_path,
    )
    expected = ["decide", "--memory", "mem", "--session", "scenario-a", "--policy", str(team)]
    assert suggested(said) == [*expected, "--explain"]
    decided = ok(*expected, "--explain", cwd=tmp_path)
    assert "signals.open_subagent_calls=2" in decided


def test_signal_refusals_suggest_a_name_and_quote_a_value_briefly(tmp_path: Path) -> None:
    team = tmp_path / "team.yaml"
    team.write_text((POLICIES / "examples" / "team.yaml").read_text())
    ok(
        *("run", "--scenario", "continue_only", "--memory", "mem", "--policy", str(team)),
        *("--max-steps", "1"),  # stopped, not completed: it goes on
        cwd=tmp_path,
    )
    for given, message in (
        (
            "open_subagent_cals=1",
            "signal 'open_subagent_cals' is not declared by policy team; did you mean "
            "'open_subagent_calls'? (declared: degradation, open_subagent_calls)",
        ),
        ("open_subagent_calls=1.5", "signal 'open_subagent_calls' must be an int, got 1.5"),
        (
            "open_subagent_calls=" + "9" * 5000,  # more digits than Python reads: a string
            f"signal 'open_subagent_calls' must be an int, got '{'9' * 60}…'",
        ),
    ):
        done = run_process(
            "signal", "--memory", "mem", "--session", "scenario-a", given, cwd=tmp_path
        )
        assert (done.returncode, done.stderr) == (2, f"clm-policy: {message}\n")
