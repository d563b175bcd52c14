"""Transcript readers (clm_policy.agents): Claude Code, Codex and OpenAI chat transcripts.

The fixtures under tests/fixtures/transcripts/ are written in the real shapes (checked
against the public format documentation and code; see clm_policy/agents/*.py); bigger and
randomised transcripts are generated here.
"""

from __future__ import annotations

import json
import math
import os
import random
from pathlib import Path
from typing import Any

import pytest

from clm_policy.base.errors import InputError
from clm_policy.lifecycle.estimate import estimate_tokens
from clm_policy.memory.layout import is_session
from clm_policy.models.state_io import state_from
from clm_policy.transcripts import reading as tr
from clm_policy.transcripts.claude_code import COMPACTED as CLAUDE_COMPACTED
from clm_policy.transcripts.claude_code import NO_USAGE as CLAUDE_NO_USAGE
from clm_policy.transcripts.codex import COMPACTED as CODEX_COMPACTED
from clm_policy.transcripts.codex import NO_USAGE as CODEX_NO_USAGE
from clm_policy.transcripts.codex import RECOMPUTED
from clm_policy.transcripts.files import Paths
from clm_policy.transcripts.openai_chat import NO_USAGE as OPENAI_NO_USAGE
from clm_policy.transcripts.reading import detect_format, read_context, read_transcript
from clm_policy.transcripts.takeover import state_of

from conftest import REPO, real_fixtures
from probes import probe_code

HERE = Path(__file__).resolve().parents[1]
FIXTURES = HERE / "fixtures" / "transcripts"
ALL_FIXTURES = sorted(
    str(p.relative_to(FIXTURES)) for p in FIXTURES.rglob("*") if p.suffix in (".jsonl", ".json")
)
SESSION = "7c1e4a52-93d0-4b8e-a6f1-2d5c8e90b3a7"
CODEX_SESSION = "0199a2c4-5b7e-7c31-9d0e-4f2a8b6c1d3e"
SONNET = "claude-sonnet-4-6"
CSV_GOAL = "Fix the CSV parser so quoted commas survive, and add a test."
LEDGER_GOAL = "Make the ledger export skip zero-amount rows and run the tests."
CSV = "/home/dev/csvtool"


def fixture(name: str) -> str:
    return str(FIXTURES / name)


def figures(reading: tr.TranscriptReading) -> tuple[object, ...]:
    return (
        reading.format,
        reading.context_tokens,
        reading.context_estimated,
        reading.context_window,
        reading.model,
    )


def jsonl(path: Path, lines: list[Any], tail: str = "") -> Path:
    path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines) + tail)
    return path


# ---------------------------------------------------------------------------------------------
# What each fixture reads as (a full read)

EXPECTED: dict[str, dict[str, Any]] = {
    "claude_session.jsonl": {
        "format": "claude-code",
        "context_tokens": 4 + 512 + 18200,  # input + cache creation + cache read, no output
        "context_estimated": False,
        "model": SONNET,
        "session_id": SESSION,
        "cwd": CSV,
        "step_index": 6,  # 10 assistant lines: 6 responses (streamed ones share an id), 1 synthetic
        "goal": CSV_GOAL,
        # project-relative, the file changed last last; results read from the output
        "changed_artifacts": ["tests/test_quoted.py", "csvtool/parse.py"],
        "commands_and_results": [
            "python -m pytest -q: passed (3 passed in 0.04s)",
            "python -m pytest -q tests/test_quoted.py: failed "
            "(1 failed in 0.05s; first: tests/test_quoted.py::test_quoted_comma - ImportError: "
            "cannot import name 'parse_line')",
            "python -m pytest -q: passed (4 passed in 0.05s)",
        ],
        "last_assistant_message": (
            "The parser now keeps quoted commas together; all four tests pass."
        ),
        # per response, once: 15923 + 16239 + 16640 + 16989 + 17249 + 18716
        "input_tokens": 101756,
        # per response, its last line's output: 95 + 210 + 180 + 70 + 160 + 60
        "output_tokens": 775,
        "warnings": [],
    },
    "claude_sidechain_inline.jsonl": {
        "context_tokens": 4 + 700 + 22100,  # the last main-chain response, not the subagent's
        "context_estimated": False,
        "step_index": 3,
        "goal": "Add jittered backoff to the HTTP retries.",
        # the subagent's edit too; no cwd in this file: the home folder is ~
        "changed_artifacts": ["~/svc/src/http/retry.py", "~/svc/src/http/client.py"],
        "last_assistant_message": None,
        "warnings": [],
    },
    "claude_subagent/subagents/agent-a3f9c2e.jsonl": {
        "context_tokens": 4 + 120 + 8000,
        "context_estimated": False,
        "session_id": SESSION,
        "agent_id": "a3f9c2e",
        "step_index": 2,
        "goal": "List the modules that import retry.py",
        "last_assistant_message": "Two modules import it: src/http/client.py and src/jobs/poll.py.",
        "output_tokens": 50 + 41,
    },
    "claude_compact_end.jsonl": {
        "context_tokens": 562,  # estimated: test_claude_compaction_at_the_end derives it
        "context_estimated": True,
        "model": SONNET,
        "step_index": 2,
        "compact_count": 1,
        "last_compact_step": 2,
        "compacted_at_tokens": 167094,
        "goal": "Now apply the same fix to the TSV reader.",  # the latest request
        "warnings": [CLAUDE_COMPACTED],
    },
    "claude_compact_then_usage.jsonl": {
        "context_tokens": 9 + 14200 + 6800,
        "context_estimated": False,
        "step_index": 3,
        "compact_count": 1,
        "last_compact_step": 2,
        "compacted_at_tokens": 167094,
        "goal": "Now apply the same fix to the TSV reader.",
        "changed_artifacts": ["csvtool/tsv.py"],
        "warnings": [],
    },
    "claude_no_usage.jsonl": {
        "context_tokens": estimate_tokens(
            "Explain what csvtool/parse.py does."
            "It splits each line on commas and strips the fields."
        ),
        "context_estimated": True,
        "model": None,
        "step_index": 1,
        "warnings": [CLAUDE_NO_USAGE],
    },
    "claude_truncated.jsonl": {
        "context_tokens": 3 + 900 + 12000,
        "context_estimated": False,
        "commands_and_results": ["ruff check .: no result"],  # its result is the cut line
        "warnings": [tr.TRUNCATED],
    },
    "codex_rollout.jsonl": {
        "format": "codex",
        "context_tokens": 91450,  # last_token_usage.total_tokens, never total_token_usage
        "context_estimated": False,
        "context_window": 258400,
        "model": "gpt-5-codex",
        "session_id": CODEX_SESSION,
        "cwd": "/home/dev/ledger",
        "step_index": 4,  # the repeated token_count (rate limits) is no new request
        "goal": LEDGER_GOAL,  # not the environment context
        "changed_artifacts": ["ledger/export.py", "tests/test_export_zero.py"],
        "commands_and_results": [
            "rg -n 'def export' ledger: passed",
            # no summary line: the line that says why
            "pytest -q: failed (exit 1: FAILED tests/test_export_zero.py::test_zero_rows_skipped"
            " - NameError: name 'Row' is not defined)",
            "pytest -q tests/test_export_zero.py: passed (1 passed in 0.02s)",
        ],
        "last_assistant_message": "Zero-amount rows are now skipped; the new test passes.",
        "input_tokens": 1210000,  # cumulative: for cost, never for the context
        "output_tokens": 9800,
        "warnings": [],
    },
    "codex_compacted.jsonl": {
        "context_tokens": 18450,  # Codex's recomputed figure (input 0) before `compacted`
        "context_estimated": True,
        "context_window": 258400,
        "step_index": 2,
        "compact_count": 1,
        "last_compact_step": 2,
        "compacted_at_tokens": 233800,
        "commands_and_results": ["cat ledger/export.py: passed"],
        "warnings": [RECOMPUTED],
    },
    "codex_compacted_then_count.jsonl": {
        "context_tokens": 20600,
        "context_estimated": False,
        "step_index": 3,
        "compact_count": 1,
        "last_compact_step": 2,
        "warnings": [],
    },
    "codex_compacted_stale.jsonl": {
        "context_tokens": 339,  # test_codex_compaction_without_a_new_figure derives it
        "context_estimated": True,
        "context_window": 258400,
        "compact_count": 1,
        "compacted_at_tokens": 243000,
        "warnings": [CODEX_COMPACTED],
    },
    "openai_with_usage.json": {
        "format": "openai",
        "context_tokens": 1834,
        "context_estimated": False,
        "model": "gpt-4.1-mini",
        "step_index": 2,
        "goal": "Rename the config key `timeout` to `timeout_s` everywhere.",
        "input_tokens": 1834,
        "output_tokens": 96,
        "warnings": [],
    },
    "openai_no_usage.json": {
        "format": "openai",
        "context_tokens": 86,
        "context_estimated": True,
        "model": None,
        "warnings": [OPENAI_NO_USAGE],
    },
}


def test_every_fixture_has_expectations() -> None:
    assert sorted(EXPECTED) == ALL_FIXTURES


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_reads_as_expected(name: str) -> None:
    reading = read_transcript(fixture(name))
    actual = {key: getattr(reading, key) for key in EXPECTED[name]}
    assert actual == EXPECTED[name]
    assert reading.full
    assert reading.path == fixture(name)


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_read_context_equals_the_full_reads_figures(name: str) -> None:
    full = read_transcript(fixture(name))
    fast = read_context(fixture(name))
    assert figures(fast) == figures(full)
    assert not fast.full
    # the same warning about the figure (the full read may add others)
    assert set(fast.warnings) <= set(full.warnings)


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_detect_format(name: str) -> None:
    expected = {"claude": "claude-code", "codex": "codex", "openai": "openai"}[name.split("_")[0]]
    assert detect_format(fixture(name)) == expected
    assert read_transcript(fixture(name), expected).format == expected


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_state_of_is_a_valid_session_state(name: str) -> None:
    reading = read_transcript(fixture(name))
    state = state_of(reading)
    assert state_from(state.as_dict()) == state  # the reader accepts it: it is valid
    assert is_session(state.session_id)
    assert state.tokens.context_tokens == reading.context_tokens
    assert state.tokens.estimated is reading.context_estimated
    assert state.tokens.context_window == reading.context_window
    assert state.tokens.model == reading.model
    assert state.tokens.input_tokens == reading.input_tokens
    assert state.tokens.total_tokens == reading.input_tokens + reading.output_tokens
    assert (state.goal, state.step_index, state.compact_count) == (
        reading.goal,
        reading.step_index,
        reading.compact_count,
    )
    assert state.last_compact_step == reading.last_compact_step
    # named as committed: relative to the session's folder (clm_policy.transcripts.files.Paths)
    paths = Paths(reading.cwd)
    assert state.changed_artifacts == list(
        dict.fromkeys(paths.shown(paths.absolute(p)) for p in reading.changed_artifacts)
    )
    assert state.commands_and_results == reading.commands_and_results
    # the fast reading makes a state too (figures only)
    assert state_of(read_context(fixture(name)), "s1").tokens.context_tokens == (
        reading.context_tokens
    )


def test_state_of_session_ids(tmp_path: Path) -> None:
    assert state_of(read_transcript(fixture("claude_session.jsonl"))).session_id == SESSION
    subagent = read_transcript(fixture("claude_subagent/subagents/agent-a3f9c2e.jsonl"))
    assert state_of(subagent).session_id == f"{SESSION}-agent-a3f9c2e"
    assert state_of(subagent, "mine-1").session_id == "mine-1"
    with pytest.raises(InputError) as err:
        state_of(subagent, "../up")
    assert err.value.message == (
        "invalid session id '../up' for the memory repository: use letters, digits, '.', '_' "
        "and '-' (at most 128, starting with a letter or digit)"
    )
    # an agent id the repository cannot take is made safe; none at all: the file's name
    odd = jsonl(
        tmp_path / "odd name.jsonl",
        [
            {"type": "user", "sessionId": "../a b/..c", "message": {"content": "hi"}},
            {
                "type": "assistant",
                "message": {"id": "m", "content": [], "usage": {"input_tokens": 5}},
            },
        ],
    )
    assert state_of(read_transcript(odd)).session_id == "a-b-.c"
    assert state_of(read_transcript(fixture("openai_no_usage.json"))).session_id == (
        "openai_no_usage"
    )


# ---------------------------------------------------------------------------------------------
# Claude Code rules


def claude_line(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "isSidechain": False, "sessionId": "s", "uuid": "u", **fields}


def response(msg_id: str, tokens: int, output: int = 1, *, side: bool = False) -> dict[str, Any]:
    return claude_line(
        "assistant",
        isSidechain=side,
        requestId=f"req-{msg_id}",
        message={
            "id": msg_id,
            "model": SONNET,
            "role": "assistant",
            "content": [{"type": "text", "text": "ok"}],
            "usage": {
                "input_tokens": 1,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": tokens - 1,
                "output_tokens": output,
            },
        },
    )


def prompt(text: str, *, side: bool = False, **fields: Any) -> dict[str, Any]:
    return claude_line(
        "user", isSidechain=side, message={"role": "user", "content": text}, **fields
    )


def boundary(pre: int) -> dict[str, Any]:
    return claude_line(
        "system",
        subtype="compact_boundary",
        content="Conversation compacted",
        compactMetadata={"trigger": "auto", "preTokens": pre},
    )


def test_claude_streamed_lines_of_one_response(tmp_path: Path) -> None:
    # one response written as five lines: same id, same input, output growing
    path = jsonl(tmp_path / "t.jsonl", [prompt("go")] + [response("m1", 900, k) for k in range(5)])
    reading = read_transcript(path)
    assert (reading.step_index, reading.context_tokens) == (1, 900)
    assert (reading.input_tokens, reading.output_tokens) == (900, 4)


def test_claude_inline_sidechains_do_not_count() -> None:
    path = fixture("claude_sidechain_inline.jsonl")
    lines = [json.loads(x) for x in Path(path).read_text().splitlines()]
    assert lines[-1]["isSidechain"] is True  # the file ends inside a subagent's run
    last_side = lines[-1]["message"]["usage"]
    assert read_context(path).context_tokens == 22804 < last_side["cache_read_input_tokens"]


def test_claude_subagent_file_is_that_agents_context() -> None:
    path = fixture("claude_subagent/subagents/agent-a3f9c2e.jsonl")
    lines = [json.loads(x) for x in Path(path).read_text().splitlines()]
    assert all(line["isSidechain"] for line in lines)
    assert read_context(path).context_tokens == 8124


def test_claude_compaction_at_the_end() -> None:
    path = fixture("claude_compact_end.jsonl")
    lines = [json.loads(x) for x in Path(path).read_text().splitlines()]
    at = next(i for i, x in enumerate(lines) if x.get("subtype") == "compact_boundary")
    after = lines[at + 1 :]
    assert after[0]["isCompactSummary"] is True
    chars = sum(len(x["message"]["content"]) for x in after)
    for reading in (read_transcript(path), read_context(path)):
        assert reading.context_tokens == estimate_tokens("x" * chars) == 562
        assert reading.context_estimated
        assert reading.warnings == [CLAUDE_COMPACTED]


def test_claude_boundary_then_new_usage(tmp_path: Path) -> None:
    lines = [
        prompt("go"),
        response("m1", 150000),
        boundary(150123),
        prompt("summary", isCompactSummary=True),
    ]
    path = jsonl(tmp_path / "t.jsonl", [*lines, response("m2", 12000)])
    reading = read_transcript(path)
    assert (reading.context_tokens, reading.context_estimated) == (12000, False)
    assert (reading.compact_count, reading.last_compact_step, reading.compacted_at_tokens) == (
        1,
        1,
        150123,
    )
    # two compactions in a row: counted, the last one's figure kept
    path = jsonl(
        tmp_path / "u.jsonl", [*lines, boundary(9000), prompt("s2", isCompactSummary=True)]
    )
    reading = read_transcript(path)
    assert (reading.compact_count, reading.compacted_at_tokens) == (2, 9000)
    assert reading.context_tokens == estimate_tokens("s2") == 1


def test_claude_synthetic_and_api_error_lines_are_no_responses(tmp_path: Path) -> None:
    synthetic = response("s1", 0)
    synthetic["message"]["model"] = "<synthetic>"
    api_error = response("e1", 5000)
    api_error["isApiErrorMessage"] = True
    path = jsonl(tmp_path / "t.jsonl", [prompt("go"), response("m1", 3000), synthetic, api_error])
    reading = read_transcript(path)
    assert (reading.context_tokens, reading.step_index) == (3000, 1)


def test_claude_goal_skips_wrappers(tmp_path: Path) -> None:
    lines = [
        prompt(
            "Caveat: The messages below were generated by the user while running local commands.",
            isMeta=True,
        ),
        prompt("<command-name>/clear</command-name>\n<command-message>clear</command-message>"),
        prompt("<local-command-stdout></local-command-stdout>"),
        prompt("<system-reminder>\nfile opened\n</system-reminder>"),
        claude_line(
            "user",
            message={
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}],
            },
        ),
        prompt(
            "This session is being continued from a previous conversation.", isCompactSummary=True
        ),
        prompt("<system-reminder>ignore</system-reminder>\nShip the release notes."),
        prompt("Thanks!"),
    ]
    reading = read_transcript(jsonl(tmp_path / "t.jsonl", lines))
    assert reading.goal == "Ship the release notes."  # the latest substantive request
    assert [r.text for r in reading.work.requests] == ["Ship the release notes.", "Thanks!"]


def test_claude_keeps_the_last_fifty_commands(tmp_path: Path) -> None:
    lines: list[Any] = [prompt("go")]
    for k in range(60):
        use = {"type": "tool_use", "id": f"t{k}", "name": "Bash", "input": {"command": f"echo {k}"}}
        lines.append(claude_line("assistant", message={"id": f"m{k}", "content": [use]}))
        result = {"type": "tool_result", "tool_use_id": f"t{k}", "content": f"Exit code {k % 3}"}
        if k % 3:
            result["is_error"] = True
        lines.append(claude_line("user", message={"content": [result]}))
    commands = read_transcript(jsonl(tmp_path / "t.jsonl", lines)).commands_and_results
    assert len(commands) == tr.COMMAND_LIMIT
    assert commands[0] == "echo 10: failed (exit 1)"
    assert commands[-1] == "echo 59: failed (exit 2)"
    assert commands[-3] == "echo 57: passed"


# ---------------------------------------------------------------------------------------------
# Codex rules


def test_codex_context_is_the_last_request_never_the_cumulative_sum() -> None:
    path = fixture("codex_rollout.jsonl")
    lines = [json.loads(x) for x in Path(path).read_text().splitlines()]
    info = next(
        x["payload"]["info"]
        for x in reversed(lines)
        if x["payload"].get("type") == "token_count" and x["payload"]["info"]
    )
    assert info["total_token_usage"]["total_tokens"] == 1219800 > info["model_context_window"]
    for reading in (read_transcript(path), read_context(path)):
        assert reading.context_tokens == info["last_token_usage"]["total_tokens"] == 91450
        assert reading.context_window == 258400


def test_codex_compaction_with_a_recomputed_figure() -> None:
    path = fixture("codex_compacted.jsonl")
    kinds = [json.loads(x)["type"] for x in Path(path).read_text().splitlines()]
    assert kinds[-3:] == ["event_msg", "compacted", "event_msg"]  # token_count, compacted, event
    for reading in (read_transcript(path), read_context(path)):
        assert (reading.context_tokens, reading.context_estimated) == (18450, True)
    after = read_transcript(fixture("codex_compacted_then_count.jsonl"))
    assert (after.context_tokens, after.context_estimated) == (20600, False)


def test_codex_compaction_without_a_new_figure() -> None:
    path = fixture("codex_compacted_stale.jsonl")
    lines = [json.loads(x) for x in Path(path).read_text().splitlines()]
    at = next(i for i, x in enumerate(lines) if x["type"] == "compacted")
    history = lines[at]["payload"]["replacement_history"]
    chars = sum(len(c["text"]) for item in history for c in item["content"])
    chars += sum(
        len(c["text"])
        for x in lines[at + 1 :]
        if x["type"] == "response_item"
        for c in x["payload"]["content"]
    )
    reading = read_transcript(path)
    assert reading.context_tokens == estimate_tokens("x" * chars) == 339
    assert reading.context_estimated


def test_codex_token_count_after_compaction_in_either_order(tmp_path: Path) -> None:
    # some versions write the recomputed token_count after the compacted line
    def count(last_input: int, total: int) -> dict[str, Any]:
        usage = {
            "input_tokens": last_input,
            "cached_input_tokens": 0,
            "output_tokens": 0,
            "reasoning_output_tokens": 0,
            "total_tokens": total,
        }
        info = {
            "total_token_usage": usage,
            "last_token_usage": usage,
            "model_context_window": 200000,
        }
        return {
            "timestamp": "t",
            "type": "event_msg",
            "payload": {"type": "token_count", "info": info},
        }

    compacted = {"timestamp": "t", "type": "compacted", "payload": {"message": "summary"}}
    path = jsonl(tmp_path / "r.jsonl", [count(150000, 151000), compacted, count(0, 9000)])
    assert (read_context(path).context_tokens, read_context(path).context_estimated) == (9000, True)
    path = jsonl(tmp_path / "s.jsonl", [count(150000, 151000), compacted])
    assert read_context(path).context_tokens == estimate_tokens("summary")
    # a recomputed figure does not survive a second compaction
    path = jsonl(tmp_path / "t.jsonl", [count(0, 9000), compacted, compacted])
    assert read_transcript(path).context_tokens == estimate_tokens("summary")


def test_a_command_left_running_long_ago_is_not_what_was_last_being_done(tmp_path: Path) -> None:
    # Codex keeps a command running ("Process running with session ID 7") and the agent never
    # asks about it again; later runs finish, the last one failing: that one was being done,
    # the session is not mid-turn, and the old command keeps its place, with no result
    def item(payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "t", "type": "response_item", "payload": payload}

    def run(call: str, cmd: str, output: str) -> list[dict[str, Any]]:
        arguments = json.dumps({"cmd": cmd, "yield_time_ms": 1000})
        return [
            item(
                {
                    "type": "function_call",
                    "name": "exec_command",
                    "arguments": arguments,
                    "call_id": call,
                }
            ),
            item({"type": "function_call_output", "call_id": call, "output": output}),
        ]

    lines = [
        {"timestamp": "t", "type": "session_meta", "payload": {"id": "c1", "cwd": "/w"}},
        *run(
            "1",
            "npm run dev",
            "Wall time: 1.0 seconds\nProcess running with session ID 7\nOutput:\n",
        ),
        *run(
            "2",
            "cargo test",
            "Process exited with code 0\nOutput:\ntest result: ok. 3 passed; 0 failed; 0 ignored\n",
        ),
        *run(
            "3",
            "npx prettier --check src",
            'Process exited with code 2\nOutput:\n[error] No parser could be inferred for file "src/main.rs".\n',
        ),
        item(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "The format check failed."}],
            }
        ),
    ]
    reading = read_transcript(jsonl(tmp_path / "r.jsonl", lines))
    assert reading.work.last_activity == (
        "ran `npx prettier --check src` (failed (exit 2: [error] No parser could be inferred "
        'for file "src/main.rs".))'
    )
    assert not reading.work.in_flight
    assert reading.commands_and_results[0] == "npm run dev: no result"


def test_codex_tool_call_variants(tmp_path: Path) -> None:
    def item(payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "t", "type": "response_item", "payload": payload}

    patch = "*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n*** Delete File: c.py\n*** End Patch"
    heredoc = f"apply_patch <<'EOF'\n{patch.replace('a.py', 'd.py')}\nEOF"
    args = json.dumps({"input": patch})
    lines = [
        {"timestamp": "t", "type": "session_meta", "payload": {"id": "c1", "cwd": "/w"}},
        item({"type": "function_call", "name": "apply_patch", "arguments": args, "call_id": "1"}),
        item(
            {
                "type": "function_call",
                "name": "shell",
                "arguments": json.dumps({"command": ["bash", "-lc", heredoc]}),
                "call_id": "2",
            }
        ),
        item(
            {
                "type": "local_shell_call",
                "call_id": "3",
                "status": "completed",
                "action": {"type": "exec", "command": ["make", "lint"]},
            }
        ),
        item(
            {
                "type": "function_call_output",
                "call_id": "3",
                "output": {"content": "lint failed", "success": False},
            }
        ),
        item(
            {
                "type": "function_call",
                "name": "shell",
                "arguments": json.dumps({"command": ["ls", "my dir"]}),
                "call_id": "4",
            }
        ),
        item({"type": "function_call_output", "call_id": "4", "output": "a b"}),
        item(
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": "sleep 60"}),
                "call_id": "5",
            }
        ),
        item(
            {
                "type": "function_call_output",
                "call_id": "5",
                "output": "Wall time: 1.0 seconds\nProcess running with session ID 7\nOutput:\n",
            }
        ),
    ]
    reading = read_transcript(jsonl(tmp_path / "r.jsonl", lines))
    # a.py moved to b.py, then d.py moved over it; c.py deleted (the patches have no result:
    # the transcript ends before them, and an edit in flight counts)
    assert reading.changed_artifacts == ["b.py"]
    assert (reading.work.moved, reading.work.deleted) == ([("d.py", "b.py")], ["c.py"])
    assert reading.commands_and_results == [
        "make lint: failed (lint failed)",  # its output: what it said
        "ls 'my dir': no exit code",
        "sleep 60: no result",  # still running when the transcript ends
    ]
    assert reading.warnings == [CODEX_NO_USAGE]


# ---------------------------------------------------------------------------------------------
# Bad input: an InputError with a location, or a reading with warnings; never a traceback


def error_of(call: Any, *args: Any) -> str:
    with pytest.raises(InputError) as err:
        call(*args)
    return str(err.value)


@pytest.mark.parametrize("call", [read_transcript, read_context, detect_format])
def test_missing_directory_and_fifo(tmp_path: Path, call: Any) -> None:
    missing = tmp_path / "nope.jsonl"
    assert error_of(call, missing) == f"{missing}: no such file"
    assert error_of(call, tmp_path) == f"{tmp_path}: is a directory, not a transcript file"
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    assert error_of(call, fifo) == f"{fifo}: is not a regular file (a pipe or a device?)"


def test_a_nul_byte_in_the_path() -> None:
    assert error_of(read_context, "a\0b.jsonl") == "'a\\x00b.jsonl': invalid file name"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("{}\n")
    path.chmod(0)
    assert error_of(read_context, path) == f"{path}: cannot read: Permission denied"


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("")
    assert error_of(read_transcript, path) == f"{path}: the file is empty: no transcript to read"
    assert error_of(detect_format, path) == f"{path}: the file is empty: no transcript to read"
    path.write_text("\n \n")
    assert error_of(read_context, path) == f"{path}: the file is empty: no transcript to read"
    path.write_text("")
    for call in (read_transcript, read_context):
        reading = call(path, "claude-code")
        assert (reading.context_tokens, reading.context_estimated) == (0, True)
        assert reading.warnings == [tr.EMPTY]


def test_unknown_format_name() -> None:
    assert error_of(read_transcript, fixture("claude_session.jsonl"), "claude") == (
        "unknown transcript format 'claude': use auto, claude-code, codex or openai"
    )


def test_garbage_never_quoted_whole(tmp_path: Path) -> None:
    secret = "sk-ant-api03-" + "A" * 90
    path = tmp_path / "t.txt"
    path.write_text(f"export ANTHROPIC_API_KEY={secret}\nmore text\n")
    message = error_of(read_transcript, path)
    assert message == (
        f"{path}: cannot tell the transcript format: neither the last nor the first lines look "
        "like Claude Code, Codex or OpenAI chat messages"
    )
    message = error_of(read_transcript, path, "claude-code")
    assert message == f"{path}:1: line 1 is not a JSON object: this is not a Claude Code transcript"
    assert secret not in message


def test_a_file_of_another_format(tmp_path: Path) -> None:
    codex = fixture("codex_rollout.jsonl")
    assert error_of(read_transcript, codex, "claude-code") == (
        f"{codex}:1: line 1 belongs to a Codex rollout: this is not a Claude Code transcript"
    )
    assert error_of(read_context, codex, "claude-code") == (
        f"{codex}: the last lines belong to a Codex rollout: this is not a Claude Code transcript"
    )
    claude = fixture("claude_session.jsonl")
    assert error_of(read_transcript, claude, "codex") == (
        f"{claude}:1: line 1 belongs to a Claude Code transcript: this is not a Codex rollout"
    )
    assert error_of(read_transcript, claude, "openai") == (
        f"{claude}:2:1: invalid JSON (Extra data): not an OpenAI chat transcript"
    )
    openai = fixture("openai_no_usage.json")
    assert error_of(read_transcript, openai, "codex") == (
        f"{openai}:1: line 1 is not a JSON object: this is not a Codex rollout"
    )
    other = tmp_path / "o.json"
    other.write_text('{"choices": []}')
    assert error_of(read_transcript, other, "openai") == (
        f"{other}:1: not an OpenAI chat transcript: expected a list of chat messages or an "
        "object with 'messages'"
    )
    unknown = jsonl(tmp_path / "u.jsonl", [{"type": "custom-event", "x": 1}])
    assert error_of(read_transcript, unknown, "claude-code") == (
        f"{unknown}: no line is a Claude Code transcript line"
    )


@pytest.mark.parametrize("fmt", ["claude-code", "codex"])
def test_a_file_with_no_json_object_at_all_is_refused_read_from_the_end_too(
    tmp_path: Path, fmt: str
) -> None:
    # binary data named as a transcript: read from its end (decide, the hooks' context) it once
    # gave "continue at 0 tokens", and `compact` committed a compaction of it
    garbage = tmp_path / "g.jsonl"
    garbage.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x01" * 40 + b"\nnot json\n[1, 2]\n\xff\xfe")
    name = {"claude-code": "Claude Code transcript", "codex": "Codex rollout"}[fmt]
    assert error_of(read_context, garbage, fmt) == (
        f"{garbage}: no line is a JSON object: this is not a {name}"
    )
    assert error_of(read_transcript, garbage, fmt).startswith(f"{garbage}:1: line 1 is not a JSON")


def test_bad_lines_in_the_middle_are_skipped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    good = [json.dumps(prompt("go")), json.dumps(response("m1", 700))]
    path.write_bytes(
        "\n".join([good[0], "not json", "[1, 2]", good[1]]).encode() + b"\n\xff\xfe{\n" + b"\n"
    )
    reading = read_transcript(path)
    assert reading.context_tokens == 700
    assert reading.warnings == ["3 lines are not JSON objects (first at line 2); skipped"]
    path.write_text("\n".join([good[0], "oops", good[1]]) + "\n")
    assert read_transcript(path).warnings == ["1 line is not a JSON object (line 2); skipped"]


def test_a_truncated_last_line_is_normal(tmp_path: Path) -> None:
    whole = json.dumps(response("m2", 999))
    path = tmp_path / "t.jsonl"
    path.write_text(
        json.dumps(prompt("go")) + "\n" + json.dumps(response("m1", 500)) + "\n" + whole[:40]
    )
    for call in (read_transcript, read_context):
        reading = call(path)
        assert reading.context_tokens == 500
        assert reading.warnings == [tr.TRUNCATED]
    # the only line, still being written
    path.write_text(whole[:40])
    reading = read_transcript(path, "claude-code")
    assert reading.warnings == [tr.TRUNCATED, CLAUDE_NO_USAGE]
    assert reading.context_tokens == 0


def test_no_usage_at_all_is_estimated(tmp_path: Path) -> None:
    text = "Please summarise the design document. " * 10
    reading = read_context(jsonl(tmp_path / "t.jsonl", [prompt(text)]))
    assert (reading.context_tokens, reading.context_estimated) == (estimate_tokens(text), True)
    assert reading.warnings == [CLAUDE_NO_USAGE]


def test_invalid_openai_documents(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('[{"role": "user", "content": "hi"},\n  {"role": ]')
    assert error_of(read_transcript, path) == (
        f"{path}:2:12: invalid JSON (Expecting value): not an OpenAI chat transcript"
    )
    # a .jsonl file (Claude Code's, Codex's) none of whose lines is theirs: said so
    broken = tmp_path / "session.jsonl"
    broken.write_text('{"type": "user", "message": {"content": "hi"\n')
    for call in (read_transcript, read_context):
        assert error_of(call, broken) == (
            f"{broken}:2:1: invalid JSON (Expecting ',' delimiter): not an OpenAI chat "
            "transcript; nor a Claude Code session or a Codex rollout (no line of either)"
        )
    path.write_text('[{"role": "user", "content": "hi"}, 7, {"content": "x"}]')
    reading = read_transcript(path)
    assert reading.warnings == [
        "2 items of the messages are not chat messages; skipped",
        OPENAI_NO_USAGE,
    ]


# ---------------------------------------------------------------------------------------------
# read_context reads the end of the file only


def test_read_context_never_reads_the_head_of_a_large_file(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    session = Path(fixture("claude_session.jsonl")).read_bytes()
    garbage = b"this is not JSON, and read_context must never get here\n" * 370_000  # 20 MB
    path.write_bytes(garbage + session)
    assert path.stat().st_size > 20_000_000
    assert error_of(read_transcript, path) == (
        f"{path}:1: line 1 is not a JSON object: this is not a Claude Code transcript"
    )
    reading = read_context(path)
    assert figures(reading) == figures(read_transcript(fixture("claude_session.jsonl")))
    assert reading.bytes_read <= 2 * tr.BLOCK  # detection and reading: the last block each


def test_read_context_of_a_long_valid_transcript(tmp_path: Path) -> None:
    lines: list[Any] = [prompt("go")]
    for k in range(4000):
        lines.append(response(f"m{k}", 1000 + k))
        lines.append(prompt("tool output " * 100))
    path = jsonl(tmp_path / "t.jsonl", lines)
    assert path.stat().st_size > 5_000_000
    fast, full = read_context(path), read_transcript(path)
    assert figures(fast) == figures(full) == ("claude-code", 4999, False, None, SONNET)
    assert full.bytes_read >= path.stat().st_size
    assert fast.bytes_read <= 2 * tr.BLOCK


def test_read_context_says_how_much_of_the_file_follows_its_figure(tmp_path: Path) -> None:
    """``bytes_after``: the lines after the one the figure comes from (what a Stop hook counts
    as tokens the figure does not hold yet), however much the reader read; None for an
    estimate and for a full read."""
    tool_output = prompt("tool output " * 100)
    lines: list[Any] = [prompt("go")]
    for k in range(400):
        lines += [response(f"m{k}", 1000 + k), tool_output]
    after = [tool_output, {"type": "progress", "data": {"hookEvent": "PostToolUse"}}]
    path = jsonl(tmp_path / "t.jsonl", [*lines, response("m_last", 7000), *after])
    reading = read_context(path)
    assert reading.context_tokens == 7000
    assert reading.bytes_read > tr.BLOCK
    assert reading.bytes_after == sum(len(json.dumps(x, separators=(",", ":"))) + 1 for x in after)
    assert read_context(jsonl(tmp_path / "e.jsonl", [prompt("go")])).bytes_after is None
    assert read_transcript(path).bytes_after is None
    codex = fixture("codex_rollout.jsonl")
    assert read_context(codex).bytes_after == 0  # its last line is the token count
    reply = '{"type":"event_msg","payload":{"type":"agent_message","message":"Done."}}\n'
    more = tmp_path / "rollout.jsonl"
    more.write_bytes(Path(codex).read_bytes() + reply.encode())
    assert read_context(more).bytes_after == len(reply)


def test_read_context_scan_limit(tmp_path: Path) -> None:
    # a subagent's long inline run at the end: no main-chain usage within the limit
    lines = [prompt("go"), response("m0", 5000)]
    lines += [response(f"s{k}", 2000 + k, side=True) for k in range(3000)]
    path = jsonl(tmp_path / "t.jsonl", lines)
    assert read_context(path).context_tokens == 5000  # the default limit reaches it
    limited = read_context(path, max_scan=tr.BLOCK)
    assert limited.context_estimated
    assert limited.warnings == [
        "no main-chain usage in the last 64 KiB; the figure is estimated from that part"
    ]
    assert limited.bytes_read <= 3 * tr.BLOCK


# ---------------------------------------------------------------------------------------------
# The fast path equals the full read on generated transcripts too


def random_claude(rng: random.Random, *, all_side: bool) -> list[Any]:
    lines: list[Any] = []
    for k in range(rng.randint(1, 30)):
        side = all_side or rng.random() < 0.3
        roll = rng.random()
        if roll < 0.35:
            for _ in range(rng.randint(1, 3)):  # streamed lines of one response
                lines.append(response(f"m{k}", rng.randint(1, 200000), side=side))
        elif roll < 0.45:
            lines.append(boundary(rng.randint(1, 200000)) | {"isSidechain": side})
        elif roll < 0.55:
            synthetic = response(f"x{k}", 0, side=side)
            synthetic["message"]["model"] = "<synthetic>"
            lines.append(synthetic)
        elif roll < 0.6:
            lines.append({"type": "progress", "data": {"hookEvent": "PostToolUse"}})
        else:
            lines.append(prompt("words " * rng.randint(0, 50), side=side))
    return lines


def random_codex(rng: random.Random) -> list[Any]:
    def line(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "t", "type": kind, "payload": payload}

    def text(role: str, size: int) -> dict[str, Any]:
        return {
            "type": "message",
            "role": role,
            "content": [{"type": "input_text", "text": "x" * size}],
        }

    lines: list[Any] = []
    for _ in range(rng.randint(1, 30)):
        roll = rng.random()
        if roll < 0.3:
            last = {
                "input_tokens": rng.choice([0, 7, 120000]),
                "total_tokens": rng.randint(0, 3 * 10**5),
            }
            window = rng.choice([None, 258400])
            info = {
                "total_token_usage": last,
                "last_token_usage": last,
                "model_context_window": window,
            }
            lines.append(
                line("event_msg", {"type": "token_count", "info": rng.choice([None, info])})
            )
        elif roll < 0.4:
            payload: dict[str, Any] = {"message": "m" * rng.randint(0, 99)}
            if rng.random() < 0.5:
                payload["replacement_history"] = [text("user", rng.randint(0, 99))]
            lines.append(line("compacted", payload))
        elif roll < 0.5:
            lines.append(
                line("turn_context", {"cwd": "/w", "model": rng.choice(["gpt-5-codex", "o3"])})
            )
        else:
            lines.append(
                line("response_item", text(rng.choice(["user", "assistant"]), rng.randint(0, 400)))
            )
    return lines


@pytest.mark.parametrize("seed", range(60))
def test_generated_transcripts_fast_equals_full(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    cases = {
        "main.jsonl": random_claude(rng, all_side=False),
        "side.jsonl": random_claude(rng, all_side=True),
        "codex.jsonl": [
            {"timestamp": "t", "type": "session_meta", "payload": {"id": "c", "cwd": "/w"}},
            *random_codex(rng),
        ],
    }
    for name, lines in cases.items():
        tail = "" if rng.random() < 0.7 else '{"type":"assistant","message":{"usa'
        path = jsonl(tmp_path / name, lines, tail)
        fmt = "codex" if name == "codex.jsonl" else "claude-code"
        assert figures(read_context(path, fmt)) == figures(read_transcript(path, fmt)), name


# ---------------------------------------------------------------------------------------------
# Imports and the estimate rule


def test_read_context_imports_nothing_heavy() -> None:
    paths = [fixture(name) for name in ALL_FIXTURES]
    code = (
        "from clm_policy.transcripts.reading import read_context\n"
        f"for path in {paths!r}:\n"
        "    read_context(path)\n"
    )
    assert probe_code("transcript-tail", code).loaded == []


@pytest.mark.parametrize("chars", [0, 1, 3, 4, 5, 399, 400, 401, 10**6 + 1])
def test_estimate_rule_equals_the_lifecycle_estimate(chars: int) -> None:
    assert tr.estimate_tokens(chars) == estimate_tokens("x" * chars) == math.ceil(chars / 4)


def test_right_after_a_real_compaction_the_estimate_starts_from_claude_codes_figure(
    tmp_path: Path,
) -> None:
    """Claude Code's own transcript, cut right after its compact summary (the moment a
    status line or hook sees it): the context is postTokens (2,843 in 2.1.332's) and what
    follows — not 0, and not a figure from before the compaction."""
    real = real_fixtures("claude-code") / "transcripts" / "compact-auto.jsonl"
    lines = real.read_text().splitlines(keepends=True)
    summary = next(i for i, line in enumerate(lines) if '"isCompactSummary":true' in line)
    (boundary,) = [
        json.loads(line) for line in lines[:summary] if '"subtype":"compact_boundary"' in line
    ]
    post = boundary["compactMetadata"]["postTokens"]
    assert post > 0
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[: summary + 1]))
    for reading in (read_context(cut), read_transcript(cut)):
        # the summary line itself is counted in postTokens: nothing follows it yet
        assert (reading.context_tokens, reading.context_estimated) == (post, True)
        assert reading.warnings == [
            "compacted after the last usage figure; context estimated: Claude Code's figure "
            "right after the compaction (compactMetadata.postTokens) and characters / 4 of what "
            "follows"
        ]
    full = read_transcript(cut)
    pre = boundary["compactMetadata"]["preTokens"]
    assert (full.compacted_at_tokens, full.compacted_to_tokens) == (pre, post)
    # without postTokens (older versions) the summary itself is counted
    at = next(i for i, line in enumerate(lines) if '"compact_boundary"' in line)
    older = json.loads(lines[at])
    del older["compactMetadata"]["postTokens"]
    cut.write_text("".join([*lines[:at], json.dumps(older) + "\n", *lines[at + 1 : summary + 1]]))
    summary_chars = len(json.loads(lines[summary])["message"]["content"])
    assert read_context(cut).context_tokens == -(-summary_chars // 4)


CODEX_AGENT = real_fixtures("codex") / "rollouts" / "subagent" / "agent.jsonl"


def test_a_spawned_codex_agents_rollout_leaves_out_its_parents_history(tmp_path: Path) -> None:
    """The real rollout of an agent Codex 0.171 spawned with its parent's history: the copy
    (the session's prompt and its patch of main.txt) is its context, not its work; its own
    history starts at the ordinal its session_meta names."""
    lines = [json.loads(line) for line in CODEX_AGENT.read_text().splitlines()]
    meta = lines[0]["payload"]
    assert (meta["forked_from_id"], meta["subagent_history_start_ordinal"]) == (
        meta["session_id"],
        18,
    )
    assert "Add File: main.txt" in json.dumps(lines[:18])
    own = {
        "goal": "",  # its task reaches it encrypted (an agent_message): nothing to read
        "changed_artifacts": ["notes.txt"],
        "commands_and_results": ["cat notes.txt && echo '1 passed': passed"],
        "last_assistant_message": "notes.txt says draft; 1 passed.",
        "step_index": 3,
        "context_tokens": 10_000,
        "session_id": meta["id"],
        "cwd": "/e2e/project",
    }
    full = read_transcript(CODEX_AGENT)
    assert {k: getattr(full, k) for k in own} == own
    # the lines' own ordinals, or their places when a version writes none: the same
    bare = tmp_path / "no-ordinals.jsonl"
    bare.write_text("".join(json.dumps({**r, "ordinal": None}) + "\n" for r in lines))
    assert {k: getattr(read_transcript(bare), k) for k in own} == own
    # without the marker, the parent's work would be taken for the agent's
    del meta["subagent_history_start_ordinal"]
    unmarked = tmp_path / "unmarked.jsonl"
    unmarked.write_text("".join(json.dumps(r) + "\n" for r in lines))
    taken = read_transcript(unmarked)
    assert (taken.goal, taken.changed_artifacts) == (
        "Write main.txt, then have an agent write the notes.",
        ["main.txt", "notes.txt"],
    )


REAL_FILES = sorted(
    str(p.relative_to(REPO))
    for p in [
        *(HERE / "fixtures" / "real").glob("*/*/**/*.jsonl"),
        # the fidelity benchmark's sessions recorded with the same binaries (record.py)
        *(REPO / "benchmarks" / "fidelity" / "recorded").glob("*/**/*.jsonl"),
    ]
)


@pytest.mark.parametrize("name", REAL_FILES)
def test_every_real_transcript_and_rollout_reads_whole_and_from_its_end(name: str) -> None:
    """What the pinned Claude Code and Codex wrote — every record type of theirs
    (token_usage_record, world_state, attachment, api-request, cost-state, ...) — is read or
    skipped on purpose: no warning, and the tail's figures are the whole file's."""
    path = REPO / name
    full, tail = read_transcript(path), read_context(path)
    codex = "/codex" in name or "/rollout-" in name
    assert full.format == tail.format == ("codex" if codex else "claude-code")
    assert full.warnings == tail.warnings == []
    figures = ("context_tokens", "context_estimated", "context_window", "model")
    assert [getattr(tail, f) for f in figures] == [getattr(full, f) for f in figures]
    assert full.context_tokens > 0


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_a_transcript_in_utf_16_or_32_is_refused_and_nothing_is_committed(
    tmp_path: Path, encoding: str
) -> None:
    """Python's json reads bytes in UTF-16 and UTF-32 too: such a file (a transcript saved
    again by a Windows tool) was read line by line in pieces, "continue at 0 tokens", and
    `handoff` committed an empty handoff of it. Claude Code and Codex write UTF-8: now it is
    refused, saying so, and nothing is written."""
    from conftest import git, run_process

    text = "".join(json.dumps(x) + "\n" for x in [prompt("go"), response("m1", 700)])
    path = tmp_path / "t.jsonl"
    path.write_bytes(text.encode(encoding))
    said = f"{path}: {tr.WIDE}"
    assert said.endswith("not UTF-8: convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)")
    for call in (read_transcript, read_context, detect_format):
        assert error_of(call, path) == said, call
    memory = tmp_path / "mem"
    assert run_process("init", str(memory)).returncode == 0
    done = run_process("handoff", "--memory", str(memory), "--transcript", str(path))
    assert (done.returncode, done.stderr) == (2, f"{said}\n")
    assert git(memory, "rev-list", "--count", "HEAD").strip() == "1"  # init's commit alone
