"""clm-policy replay --transcripts: the readers' per-request series, where a policy would first
have acted in real sessions beside the agent's own compactions, and bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_replay import golden

from clm_policy.policy.compile import load_policy
from clm_policy.replay.transcripts import what_if
from clm_policy.transcripts.reading import read_context, read_transcript

from conftest import invoke, message_of, run_process

FIXTURES = Path(__file__).parents[1] / "fixtures" / "transcripts"
CLAUDE = FIXTURES / "claude_compact_then_usage.jsonl"


@pytest.mark.parametrize(
    ("name", "turns", "compactions"),
    [
        (
            "claude_compact_then_usage.jsonl",
            [(1, 150206, 150206, 80), (2, 167094, 317300, 380), (3, 21009, 338309, 520)],
            [(2, 167094, "auto")],
        ),
        # the inline sidechain's requests are not the main chain's
        (
            "claude_sidechain_inline.jsonl",
            [(1, 20008, 20008, 120), (2, 21506, 41514, 270), (3, 22804, 64318, 360)],
            [],
        ),
        ("claude_no_usage.jsonl", [], []),
        (
            "codex_compacted_then_count.jsonl",
            [(1, 122100, 120000, 2100), (2, 233800, 351500, 4400), (3, 20600, 371600, 4900)],
            [(2, 233800, None)],
        ),
        # rate-limit updates repeat a figure: no new request
        (
            "codex_rollout.jsonl",
            [
                (1, 9300, 9120, 180),
                (2, 11020, 19800, 520),
                (3, 11910, 31500, 730),
                (4, 91450, 1210000, 9800),
            ],
            [],
        ),
    ],
)
def test_a_full_read_gives_the_series(
    name: str, turns: list[tuple[int, ...]], compactions: list[tuple[object, ...]]
) -> None:
    reading = read_transcript(FIXTURES / name)
    assert (reading.turns, reading.compactions) == (turns, compactions)
    if turns:  # the last request's figures are the reading's own, unless compacted since
        assert turns[-1][0] == reading.step_index
        assert turns[-1][2:] == (reading.input_tokens, reading.output_tokens)
    tail = read_context(FIXTURES / name)
    assert (tail.turns, tail.compactions) == (None, None)  # the per-prompt path builds none


def test_a_streamed_response_is_one_turn_with_its_last_figures(tmp_path: Path) -> None:
    def line(output: int) -> str:
        usage = {"input_tokens": 10, "cache_read_input_tokens": 990, "output_tokens": output}
        message = {
            "id": "msg_1",
            "model": "claude-x",
            "role": "assistant",
            "usage": usage,
            "content": [{"type": "text", "text": "hi"}],
        }
        return json.dumps({"type": "assistant", "sessionId": "s", "message": message})

    path = tmp_path / "t.jsonl"
    path.write_text(line(5) + "\n" + line(40) + "\n")
    assert read_transcript(path).turns == [(1, 1000, 1000, 40)]


def sessions(tmp_path: Path, count: int = 6) -> Path:
    """``count`` copies of a Claude Code session that compacted on its own at step 2, each
    with its own session id and preTokens 161,000, 162,000, ..."""
    folder = tmp_path / "projects" / "p"
    folder.mkdir(parents=True)
    text = CLAUDE.read_text()
    for i in range(1, count + 1):
        (folder / f"s{i}.jsonl").write_text(
            text.replace("7c1e4a52-93d0-4b8e-a6f1-2d5c8e90b3a7", f"sess-{i}").replace(
                '"preTokens":167094', f'"preTokens":16{i}000'
            )
        )
    return folder


def test_where_the_policy_would_first_act(tmp_path: Path) -> None:
    sessions(tmp_path, 2)
    shutil.copy(FIXTURES / "codex_compacted_then_count.jsonl", tmp_path / "projects" / "p")
    shutil.copy(FIXTURES / "claude_session.jsonl", tmp_path / "projects" / "p")
    pattern = str(tmp_path / "projects" / "*" / "*.jsonl")
    result = invoke("replay", "--transcripts", pattern, "--policy", "claude-code")
    assert result.exit_code == 0, message_of(result.stderr)
    golden("replay_transcripts.txt", result.stdout.replace(str(tmp_path), "<tmp>"))


def test_json_as_a_process(tmp_path: Path) -> None:
    sessions(tmp_path, 1)
    pattern = str(tmp_path / "projects" / "*" / "*.jsonl")
    proc = run_process(
        "replay",
        "--transcripts",
        pattern,
        "--policy",
        "default",
        "--profile",
        "research",
        "--format",
        "json",
    )
    assert (proc.returncode, message_of(proc.stderr)) == (0, "")
    data = json.loads(proc.stdout)
    assert (data["profile"], data["verdicts"]) == (
        "research",
        {"before": 0, "after": 0, "never": 1, "instead": 0, "neither": 0},
    )
    (session,) = data["sessions"]
    assert session == {
        "path": str(tmp_path / "projects" / "p" / "s1.jsonl"),
        "format": "claude-code",
        "session_id": "sess-1",
        "steps": 3,
        "model": "claude-sonnet-4-6",
        "window": None,
        "window_source": None,
        "first": None,
        "native_compactions": [{"step": 2, "pre_tokens": 161000, "trigger": "auto"}],
        "verdict": "never",
    }


def test_the_state_at_each_request_counts_the_agent_s_compactions(tmp_path: Path) -> None:
    """After the agent's compaction at step 2, the request at step 3 sees one compaction, made
    one step before."""
    path = tmp_path / "after.yaml"
    path.write_text(
        "version: 1\nname: after\nextends: default\nrules:\n  - id: after\n    when: "
        "compacted_before and steps_since_compact == 1 and compact_count == 1\n"
        "    action: handoff\n"
    )
    reading = read_transcript(CLAUDE)
    assert what_if(reading, load_policy("default"), "coding").first is None
    after = what_if(reading, load_policy(path), "coding")
    assert after.first is not None
    assert (after.first.step, after.first.context_tokens, after.first.rule) == (3, 21009, "after")
    assert after.verdict == "after"


def test_a_glob_that_matches_nothing_is_exit_2(tmp_path: Path) -> None:
    result = invoke("replay", "--transcripts", str(tmp_path / "*.jsonl"), "--policy", "default")
    assert (result.exit_code, result.stdout) == (2, "")
    assert (
        message_of(result.stderr)
        == f"clm-policy: --transcripts '{tmp_path}/*.jsonl' matches no file\n"
    )


def test_a_folder_is_its_transcripts_at_any_depth_without_subagents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code's projects folder (<project>/<session>.jsonl, the subagents' transcripts
    in <session>/subagents/) and Codex's sessions folder (YYYY/MM/DD/rollout-*.jsonl)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    project = sessions(tmp_path / ".claude", 2)  # ~/.claude/projects/p/s1.jsonl, s2.jsonl
    subagents = project / "s1" / "subagents"
    subagents.mkdir(parents=True)
    shutil.copy(CLAUDE, subagents / "agent-a1.jsonl")
    (project / "notes.txt").write_text("not a transcript\n")
    day = tmp_path / ".codex" / "sessions" / "2026" / "11" / "30"
    day.mkdir(parents=True)
    shutil.copy(FIXTURES / "codex_compacted_then_count.jsonl", day / "rollout-1.jsonl")
    cases = [
        ("~/.claude/projects", [project / "s1.jsonl", project / "s2.jsonl"]),
        (
            str(tmp_path / ".claude" / "projects") + "/",
            [project / "s1.jsonl", project / "s2.jsonl"],
        ),
        ("~/.codex/sessions", [day / "rollout-1.jsonl"]),
    ]
    for folder, expected in cases:
        done = invoke("replay", "--transcripts", folder, "-p", "default", "--format", "json")
        assert done.exit_code == 0, message_of(done.stderr)
        data = json.loads(done.stdout)
        assert ([s["path"] for s in data["sessions"]], data["skipped"]) == (
            [str(p) for p in expected],
            [],
        )
    empty = tmp_path / "empty"
    empty.mkdir()
    done = invoke("replay", "--transcripts", str(empty), "-p", "default")
    assert (done.exit_code, message_of(done.stderr)) == (
        2,
        f"clm-policy: --transcripts '{empty}' is a folder without a *.jsonl file\n",
    )


def test_the_glob_expands_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    sessions(home / ".claude", 1)
    result = invoke("replay", "--transcripts", "~/.claude/projects/*/*.jsonl", "-p", "default")
    assert result.exit_code == 0, message_of(result.stderr)
    assert result.stdout.startswith(
        "replay of 1 session (~/.claude/projects/*/*.jsonl) under policy default"
    )


def test_unreadable_files_are_skipped_and_listed(tmp_path: Path) -> None:
    folder = sessions(tmp_path, 1)
    (folder / "broken.jsonl").write_text("not a transcript\n")
    shutil.copy(FIXTURES / "openai_with_usage.json", folder / "chat.jsonl")
    result = invoke("replay", "--transcripts", str(folder / "*.jsonl"), "--policy", "default")
    assert result.exit_code == 0, message_of(result.stderr)
    assert result.stdout.splitlines()[-3:] == [
        "skipped 2 files:",
        f"  {folder}/broken.jsonl: cannot tell the transcript format: neither the last nor the "
        "first lines look like Claude Code, Codex or OpenAI chat messages",
        f"  {folder}/chat.jsonl: no per-request figures in an OpenAI chat transcript",
    ]


def test_no_readable_file_is_exit_2_with_its_position(tmp_path: Path) -> None:
    claude = {"type": "user", "message": {"role": "user", "content": "hi"}}
    codex = {"type": "session_meta", "payload": {"id": "x"}}
    (tmp_path / "a.jsonl").write_text(f"{json.dumps(claude)}\n{json.dumps(codex)}\n")
    (tmp_path / "b.jsonl").write_text("not a transcript\n")
    result = invoke("replay", "--transcripts", str(tmp_path / "*.jsonl"), "--policy", "default")
    assert (result.exit_code, result.stdout) == (2, "")
    assert message_of(result.stderr) == (
        f"{tmp_path}/a.jsonl:1: line 1 belongs to a Claude Code transcript: this is not a "
        "Codex rollout\n"
    )


def test_a_policy_the_sessions_cannot_be_decided_under(tmp_path: Path) -> None:
    """Shares of a window without a window: each session is refused, so the command is."""
    folder = sessions(tmp_path, 1)
    policy = tmp_path / "shares.yaml"
    policy.write_text(
        "version: 1\nname: shares\nextends: default\nprofiles:\n"
        "  coding: {soft_compact: 60%, hard_handoff: 75%}\n"
    )
    result = invoke("replay", "--transcripts", str(folder / "*.jsonl"), "--policy", str(policy))
    assert (result.exit_code, result.stdout) == (2, "")
    assert message_of(result.stderr) == (
        f"{folder}/s1.jsonl: profile 'coding' gives soft_compact as a share of the context "
        "window, but no window is known: set tokens.context_window or tokens.model in the "
        "state, or context_window in the profile\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--profile", "nope"),
            "clm-policy: unknown profile 'nope' (policy default has: "
            "coding, research, exploration, tool_heavy, multi_agent)\n",
        ),
        (
            ("--fail-on-change",),
            "clm-policy replay: --fail-on-change and --rev go with --memory "
            "(try 'clm-policy replay --help')\n",
        ),
    ],
)
def test_bad_options(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    folder = sessions(tmp_path, 1)
    result = invoke("replay", "--transcripts", str(folder / "*"), "--policy", "default", *args)
    assert (result.exit_code, result.stdout, message_of(result.stderr)) == (2, "", message)
