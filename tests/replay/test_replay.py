"""clm-policy replay --memory: the demo's recorded decisions decided again under other policies;
what a decision's line records; odd lines and foreign commits; bad input."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from clm_policy.loop.monitor import seen_state
from clm_policy.memory.git.write import MemoryRepo
from clm_policy.memory.trailers import CommitMessage
from clm_policy.models.enums import MessageRole, TaskStatus
from clm_policy.models.state import (
    COUNTED_FIELDS,
    READ_FIELDS,
    Message,
    SessionState,
    TokenSnapshot,
)
from clm_policy.policy.compile import load_policy
from clm_policy.replay import records
from clm_policy.replay.memory import replay_memory

from conftest import git, golden, invoke, message_of, run_process

LOWER = """\
version: 1
name: lower
extends: default
profiles:
  coding: {soft_compact: 200000, hard_handoff: 240000}
"""


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A memory repository holding the demo run's 43 decisions (made once, only read)."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
        env.setenv("GIT_CONFIG_NOSYSTEM", "1")
        for role in ("AUTHOR", "COMMITTER"):
            env.setenv(f"GIT_{role}_NAME", "clm-policy tests")
            env.setenv(f"GIT_{role}_EMAIL", "tests@clm-policy.invalid")
        root = tmp_path_factory.mktemp("demo")
        done = invoke("run", "--memory", str(root / "mem"), "--stop-at-handoff")
        assert done.exit_code == 0, message_of(done.stderr)
        yield root / "mem"


@pytest.fixture
def memory_copy(demo: Path, tmp_path: Path) -> Path:
    """A copy of the demo repository that a test may add commits to."""
    return Path(shutil.copytree(demo, tmp_path / "mem", symlinks=True))


def policy_file(tmp_path: Path, text: str = LOWER, name: str = "lower.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_the_same_policy_changes_nothing(demo: Path) -> None:
    result = invoke("replay", "--memory", str(demo), "--policy", "default", "--fail-on-change")
    assert result.exit_code == 0, message_of(result.stderr)
    head = git(demo, "rev-parse", "HEAD").strip()[:12]
    assert result.stdout == (
        f"replay of {demo} at HEAD ({head}) under policy default (<bundled>/default.yaml)\n"
        "43 decisions in 1 session: 43 unchanged, 0 changed\n"
        "\n"
        "no decision would change under policy default\n"
    )


def test_a_run_given_thresholds_is_replayed_with_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's --soft-compact/--hard-handoff (kept in run.json) decided its steps: the same
    policy replayed without them reported changes, and --fail-on-change failed CI on history
    that had nothing to do with the policy change."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "clm-policy tests")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "tests@clm-policy.invalid")
    mem = str(tmp_path / "mem")
    flags = ("--soft-compact", "100000", "--hard-handoff", "200000", "--stop-at-handoff")
    assert invoke("run", "--memory", mem, *flags).exit_code == 0
    result = invoke("replay", "--memory", mem, "--policy", "default", "--fail-on-change")
    assert result.exit_code == 0, result.stdout
    lines = result.stdout.splitlines()
    assert lines[1].endswith(" unchanged, 0 changed")
    assert lines[2] == "decided with the thresholds their run was given (run.json): demo"
    data = json.loads(invoke("replay", "--memory", mem, "--format", "json").stdout)
    assert (data["changed"], data["sessions_with_run_thresholds"]) == (0, ["demo"])


def test_lower_thresholds_change_decisions(
    demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy_file(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = invoke("replay", "--memory", str(demo), "--policy", "lower.yaml")
    assert result.exit_code == 0, message_of(result.stderr)
    head = git(demo, "rev-parse", "HEAD").strip()[:12]
    golden("replay_memory.txt", result.stdout.replace(head, "<commit>").replace(str(demo), "<mem>"))
    failing = invoke("replay", "--memory", str(demo), "--policy", "lower.yaml", "--fail-on-change")
    assert (failing.exit_code, failing.stdout) == (1, result.stdout)


def test_json_output_as_a_process(demo: Path, tmp_path: Path) -> None:
    proc = run_process(
        "replay", "--memory", str(demo), "--policy", policy_file(tmp_path), "--format", "json"
    )
    assert proc.returncode == 0, message_of(proc.stderr)
    assert message_of(proc.stderr) == ""  # no progress line: not a terminal, and JSON asked
    data = json.loads(proc.stdout)
    counts = {k: data[k] for k in ("sessions", "decisions", "replayed", "unchanged", "changed")}
    assert counts == {
        "sessions": 1,
        "decisions": 43,
        "replayed": 43,
        "unchanged": 31,
        "changed": 12,
    }
    assert (data["refused"], data["not_replayable"], data["skipped_files"]) == (0, 0, [])
    summary = [
        (c["from"]["rule"], c["to"]["rule"], c["from"]["action"], c["to"]["action"], c["count"])
        for c in data["changes"]
    ]
    assert summary == [
        (None, "soft_compact", "continue", "compact", 8),
        (None, "hard_handoff", "continue", "handoff", 2),
        ("soft_compact", "hard_handoff", "compact", "handoff", 2),
    ]
    assert data["changes"][2]["examples"] == [
        {
            "session": "demo",
            "line": 23,
            "step": 23,
            "context_tokens": 257352,
            "old": "context 257352 >= soft limit 250000",
            "new": "context 257352 >= hard limit 240000",
        },
        {
            "session": "demo",
            "line": 42,
            "step": 42,
            "context_tokens": 257171,
            "old": "context 257171 >= soft limit 250000",
            "new": "context 257171 >= hard limit 240000",
        },
    ]


def test_a_policy_that_cannot_decide_the_recorded_states_refuses(
    demo: Path, tmp_path: Path
) -> None:
    research_only = policy_file(
        tmp_path,
        "version: 1\nname: narrow\nprofiles:\n  research: {soft_compact: 1000, hard_handoff: 2000}\n"
        "rules: []\n",
        "narrow.yaml",
    )
    result = invoke("replay", "--memory", str(demo), "--policy", research_only, "--fail-on-change")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[1:] == [
        "43 decisions in 1 session: 0 unchanged, 0 changed, 43 refused",
        "",
        "refused by the new policy:",
        "  43  unknown profile 'coding' (policy narrow has: research)",
        "        e.g. demo step 1 (line 1), context 15,016; demo step 2 (line 2), context 26,032; "
        "demo step 3 (line 3), context 37,048",
    ]


def test_a_line_records_every_name_a_decision_reads() -> None:
    """What seen_state records is enough: the engine reads the same values from the record as
    from the live state (every field it reads, READ_FIELDS, with values other than the
    defaults)."""
    state = SessionState(
        session_id="s1",
        status=TaskStatus.WAITING,
        step_index=12,
        last_compact_step=7,
        compact_count=2,
        profile="research",
        tokens=TokenSnapshot(
            context_tokens=290000,
            input_tokens=900000,
            output_tokens=30000,
            total_tokens=930000,
            context_window=400000,
            model="gpt-5",
            estimated=True,
        ),
        signals={"degradation": True},
        messages=[Message(role=MessageRole.USER, content="hi")] * 3,
        human_interventions=4,
        blockers=["x", "y"],
    )
    defaults = SessionState(session_id="defaults")
    for name in READ_FIELDS:
        if name != "tokens":
            assert getattr(state, name) != getattr(defaults, name), name
    line = json.dumps(
        {
            "action": "continue",
            "proposed": "continue",
            "trigger": None,
            "profile": "research",
            **seen_state(state),
        }
    )
    item = records.recorded(records.Line("s1", 1, line))
    assert isinstance(item, records.Recorded)
    policy = load_policy("default")
    prof = policy.profile("research")
    assert policy.namespace(item.state, prof) == policy.namespace(state, prof)
    assert set(COUNTED_FIELDS) == {"messages", "blockers"}


def line_of(**fields: object) -> dict[str, object]:
    """A valid line of decisions.jsonl (session s1 at step 0, continue), with ``fields``."""
    base: dict[str, object] = {
        "state": {"session_id": "s1"},
        "lengths": {"messages": 1, "blockers": 0},
        "action": "continue",
        "proposed": "continue",
        "trigger": None,
        "profile": "coding",
    }
    return base | fields


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"action": "compact", "trigger": "soft_compact", "profile": "coding"}, records.NO_STATE),
        (line_of(state={"session_id": "s1", "step_index": "3"}), records.BAD_STATE),
        (line_of(state={"step_index": 3}), records.BAD_STATE),
        (line_of(lengths=None), records.BAD_LENGTHS),
        (line_of(lengths={"messages": 1}), records.BAD_LENGTHS),
        (line_of(lengths={"messages": 1, "blockers": -1}), records.BAD_LENGTHS),
        (line_of(lengths={"messages": 1, "blockers": True}), records.BAD_LENGTHS),
        (line_of(action="explode"), records.BAD_DECISION),
        (line_of(proposed=None), records.BAD_DECISION),
        (line_of(trigger=3), records.BAD_DECISION),
        (line_of(profile=""), records.BAD_DECISION),
        # a compaction that failed verification, logged as the handoff that replaced it
        (
            line_of(action="handoff", proposed="compact", trigger="verify_failed"),
            records.CHANGED_AFTER,
        ),
        (line_of(action="continue", proposed="compact"), records.CHANGED_AFTER),
    ],
)
def test_what_a_line_lacks_is_named(record: dict[str, object], expected: str) -> None:
    assert records.recorded(records.Line("s1", 1, json.dumps(record))) == expected


def test_a_blocked_proposal_is_the_policy_s_decision() -> None:
    blocked = line_of(
        action="continue",
        proposed="compact",
        trigger="soft_compact",
        blocked_by=[{"guard": "g", "severity": "block", "message": "m"}],
    )
    item = records.recorded(records.Line("s1", 1, json.dumps(blocked)))
    assert isinstance(item, records.Recorded)
    assert (item.action, item.trigger) == ("continue", "soft_compact")


def test_a_person_s_rejection_is_not_the_policy_s_decision() -> None:
    """The loop records ``confirmed: false`` and the action it took (continue); replay compares
    the policy's own proposal."""
    state = SessionState(session_id="s1", step_index=3, tokens=TokenSnapshot(context_tokens=9))
    line = {
        "action": "continue",
        "proposed": "handoff",
        "trigger": "phase_boundary",
        "profile": "coding",
        **seen_state(state),
        "confirmed": False,
    }
    item = records.recorded(records.Line("s1", 1, json.dumps(line)))
    assert isinstance(item, records.Recorded)
    assert (item.action, item.trigger) == ("handoff", "phase_boundary")


def test_odd_lines_and_foreign_files_are_reported_not_guessed(memory_copy: Path) -> None:
    huge = "x" * (records.LINE_LIMIT + 1)
    odd = "\n".join(["[1, 2]", "not json", "", '{"action": "compact"}', huge, "\x00{}"]) + "\n"
    with MemoryRepo(memory_copy) as repo:
        repo.commit(
            CommitMessage("foreign", trailers={"Clm-Event": "memory"}),
            {"sessions/odd/decisions.jsonl": odd, "sessions/.hidden/decisions.jsonl": "{}\n"},
        )
    (memory_copy / "sessions" / "link").mkdir()
    os.symlink("/etc/passwd", memory_copy / "sessions" / "link" / "decisions.jsonl")
    git(memory_copy, "add", "sessions/link/decisions.jsonl")
    git(memory_copy, "commit", "-q", "-m", "a foreign commit")
    result = invoke("replay", "--memory", str(memory_copy), "--policy", "default")
    assert result.exit_code == 0, message_of(result.stderr)
    assert result.stdout.splitlines()[1:] == [
        "48 decisions in 2 sessions: 43 unchanged, 0 changed, 5 not replayable",
        "",
        "not replayable:",
        "  3  not a JSON object",
        "       e.g. odd (line 1); odd (line 2); odd (line 6)",
        "  1  no state recorded (the line was written before decisions recorded what they read)",
        "       e.g. odd (line 4)",
        "  1  longer than 1 MiB",
        "       e.g. odd (line 5)",
        "",
        "skipped files:",
        "  sessions/link/decisions.jsonl: not a regular file",
        "",
        "no decision would change under policy default",
    ]


def test_a_file_over_the_limit_is_skipped(
    memory_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(records, "FILE_LIMIT", 1000)
    found = replay_memory(str(memory_copy), "default")
    assert [(s.path, s.reason) for s in found.skipped_files] == [
        ("sessions/demo/decisions.jsonl", "larger than 0 MiB")
    ]
    assert (found.decisions, found.sessions) == (0, 0)


def test_too_much_to_read_is_refused(memory_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(records, "TOTAL_LIMIT", 1000)
    result = invoke("replay", "--memory", str(memory_copy), "--policy", "default")
    assert result.exit_code == 2
    head = git(memory_copy, "rev-parse", "HEAD").strip()[:12]
    assert message_of(result.stderr) == (
        f"clm-policy: {memory_copy}: the decisions.jsonl files at {head} hold 0 MiB together, "
        "more than replay reads (0 MiB)\n"
    )


def test_an_older_commit_by_rev(demo: Path) -> None:
    first = git(demo, "rev-list", "--max-parents=0", "HEAD").strip()
    result = invoke("replay", "--memory", str(demo), "--policy", "default", "--rev", first)
    assert result.exit_code == 0, message_of(result.stderr)
    assert result.stdout.splitlines()[1] == (
        f"no recorded decisions: nothing to replay (`clm-policy run --memory {demo}` records them)"
    )


def test_a_memory_repository_without_history(tmp_path: Path) -> None:
    mem = tmp_path / "empty"
    mem.mkdir()
    (mem / ".clm-memory").write_text("")
    git(mem, "init", "-q")
    result = invoke("replay", "--memory", str(mem), "--policy", "default")
    assert (result.exit_code, message_of(result.stderr)) == (0, "")
    assert result.stdout == f"{mem}: no history yet (no commit): nothing to replay\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--rev", "nope"), "clm-policy: {mem}: no commit named 'nope'\n"),
        (
            ("--rev", "--all"),
            "clm-policy: invalid revision '--all': it must not be empty or start with '-'\n",
        ),
        (
            ("--profile", "coding"),
            "clm-policy replay: --profile goes with --transcripts (a recorded decision keeps "
            "its own profile) (try 'clm-policy replay --help')\n",
        ),
        (
            ("--transcripts", "x*"),
            "clm-policy replay: give --memory or --transcripts, not both "
            "(try 'clm-policy replay --help')\n",
        ),
    ],
)
def test_bad_options(demo: Path, args: tuple[str, ...], message: str) -> None:
    result = invoke("replay", "--memory", str(demo), "--policy", "default", *args)
    assert (result.exit_code, result.stdout) == (2, "")
    assert message_of(result.stderr) == message.format(mem=demo)


def test_a_policy_that_does_not_load_is_exit_2_at_its_position(demo: Path, tmp_path: Path) -> None:
    broken = policy_file(tmp_path, LOWER.replace("200000", "lots"), "broken.yaml")
    result = invoke("replay", "--memory", str(demo), "--policy", broken)
    assert (result.exit_code, result.stdout) == (2, "")
    assert message_of(result.stderr) == (
        f"{broken}:5:26: profiles.coding.soft_compact: expected tokens (an integer) or a share "
        "like '70%', got string 'lots'\n"
    )


def test_progress_on_a_terminal(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    replay_memory(str(demo), "default", progress=True)
    err = capsys.readouterr().err
    assert err.startswith("\rreplaying decisions: 1")
    assert err.endswith("\r")
