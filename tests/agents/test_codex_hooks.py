"""Codex CLI's hooks end to end, as a real process with the hook's JSON on standard input,
and the memory repository checked afterwards.

Rollouts are written here in Codex's shape (``session_meta``, ``turn_context``, response
items, ``token_count`` events whose ``last_token_usage.total_tokens`` is the context, and
``compacted`` lines), with the context each test needs. The project's policy is the bundled
``claude-code`` one: thresholds as shares of the window the rollout names (258,400), so
coding compacts at 155,040 tokens and hands off at 193,800.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from clm_policy.agents.hooks.codex import (
    EVENTS,
    last_compaction_text,
    run_codex_hook,
    settings_snippet,
)
from clm_policy.agents.hooks.shared import log_path
from clm_policy.config.project import load_config, memory_path

from conftest import as_shown, git, invoke, message_of, real_fixtures

SESSION = "0199a2c4-5b7e-7c31-9d0e-4f2a8b6c1d3e"
NEXT_SESSION = "0199a2c4-0000-7000-8000-00000000aa02"
WINDOW = 258_400
GOAL = "Make the ledger export skip zero-amount rows and run the tests."
SUMMARY_PREFIX = (
    "Another language model started to solve this problem and produced a summary of its "
    "thinking process."
)


def rollout(
    path: Path,
    context: int,
    *,
    session: str = SESSION,
    steps: int = 3,
    compactions: tuple[str, ...] = (),
    goal: str = GOAL,
) -> Path:
    """A Codex session: a goal, ``steps`` turns patching a file and running the tests (one
    token_count each, the last reporting ``context`` tokens), then for each entry of
    ``compactions``: Codex's recount (input 0, the cumulative total unchanged), the
    ``compacted`` line (the entry is its ``message``) and ``context_compacted``."""
    lines: list[dict[str, Any]] = []
    total = 0

    def add(kind: str, payload: dict[str, Any]) -> None:
        second = len(lines)
        lines.append(
            {
                "timestamp": f"2026-11-30T10:{second // 60:02d}:{second % 60:02d}.000Z",
                "type": kind,
                "payload": payload,
            }
        )

    def count(context_now: int, *, recomputed: bool = False) -> None:
        nonlocal total
        output = 0 if recomputed else 300
        if not recomputed:  # Codex's own recount after a compaction is no request
            total += context_now + output
        last = {
            "input_tokens": 0 if recomputed else context_now,
            "cached_input_tokens": 0 if recomputed else max(context_now - 2000, 0),
            "output_tokens": output,
            "reasoning_output_tokens": 0,
            "total_tokens": context_now if recomputed else context_now + output,
        }
        add(
            "event_msg",
            {
                "type": "token_count",
                "info": {
                    "total_token_usage": {**last, "total_tokens": total},
                    "last_token_usage": last,
                    "model_context_window": WINDOW,
                },
                "rate_limits": None,
            },
        )

    add(
        "session_meta",
        {
            "id": session,
            "timestamp": "2026-11-30T10:00:00.000Z",
            "cwd": str(path.parent),
            "originator": "codex_cli_rs",
            "cli_version": "0.130.0",
            "source": "cli",
            "model_provider": "openai",
        },
    )
    add(
        "turn_context",
        {"cwd": str(path.parent), "approval_policy": "on-request", "model": "gpt-5-codex"},
    )
    add("response_item", {"type": "message", "role": "user", "content": [_text(goal)]})
    add("event_msg", {"type": "user_message", "message": goal, "images": []})
    for step in range(steps):
        patch = (
            "*** Begin Patch\n*** Update File: ledger/export.py\n@@\n-    return rows\n"
            "+    return [r for r in rows if r.amount]\n*** End Patch\n"
        )
        add(
            "response_item",
            {
                "type": "custom_tool_call",
                "name": "apply_patch",
                "call_id": f"call_p{step}",
                "input": patch,
            },
        )
        add(
            "response_item",
            {"type": "custom_tool_call_output", "call_id": f"call_p{step}", "output": "Done!"},
        )
        add(
            "response_item",
            {
                "type": "function_call",
                "name": "shell",
                "arguments": json.dumps({"command": ["bash", "-lc", "python -m pytest -q"]}),
                "call_id": f"call_t{step}",
            },
        )
        add(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": f"call_t{step}",
                "output": json.dumps({"output": "3 passed\n", "metadata": {"exit_code": 0}}),
            },
        )
        count(int(context * (step + 1) / steps))
    reply = "Zero-amount rows are skipped now; the tests pass."
    add("response_item", {"type": "message", "role": "assistant", "content": [_out(reply)]})
    add("event_msg", {"type": "agent_message", "message": reply})
    for message in compactions:
        count(12_000, recomputed=True)
        add("compacted", {"message": message})
        add("event_msg", {"type": "context_compacted"})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _text(text: str) -> dict[str, str]:
    return {"type": "input_text", "text": text}


def _out(text: str) -> dict[str, str]:
    return {"type": "output_text", "text": text}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ledger"
    root.mkdir()
    (root / ".clm-policy.yaml").write_text("version: 1\npolicy: claude-code\nprofile: coding\n")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(root)
    return root


def memory_of(project: Path) -> Path:
    return Path(memory_path(None, load_config(project)))


def hook(project: Path, event: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """The hook as Codex runs it: a process in the project, the JSON on stdin."""
    payload = {
        "session_id": SESSION,
        "turn_id": "019d036d-c7fa-72d2-b6fd-78878bfe34e4",
        "cwd": str(project),
        "model": "gpt-5-codex",
        **event,
    }
    return subprocess.run(
        [sys.executable, "-m", "clm_policy", "hook", "codex"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=project,
        timeout=120,
        check=False,
    )


def subjects(memory: Path) -> list[str]:
    return git(memory, "log", "--all", "--format=%s").splitlines()


def head(memory: Path) -> str:
    return git(memory, "log", "-1", "--format=%s%n%(trailers:only,unfold)")


def prompt(path: Path) -> dict[str, Any]:
    return {
        "hook_event_name": "UserPromptSubmit",
        "permission_mode": "default",
        "prompt": "next",
        "transcript_path": str(path),
    }


def compact_event(path: Path, trigger: str, name: str = "PreCompact") -> dict[str, Any]:
    return {"hook_event_name": name, "trigger": trigger, "transcript_path": str(path)}


# -- UserPromptSubmit -----------------------------------------------------------------------


def test_user_prompt_submit_continue_says_nothing(project: Path) -> None:
    path = rollout(project / "rollout.jsonl", 40_000)
    done = hook(project, prompt(path))
    assert (done.returncode, done.stdout, message_of(done.stderr)) == (0, "", "")


def test_user_prompt_submit_advises_a_compaction(project: Path) -> None:
    path = rollout(project / "rollout.jsonl", 170_000)
    done = hook(project, prompt(path))
    assert done.returncode == 0, message_of(done.stderr)
    reply = json.loads(done.stdout)
    assert reply["systemMessage"] == (
        "clm-policy: context 66% (170,300 of 258,400) (context 170300 >= soft limit 155040). "
        "Run /compact."
    )
    extra = reply["hookSpecificOutput"]
    assert extra["hookEventName"] == "UserPromptSubmit"
    context = extra["additionalContext"]
    assert context.startswith("[clm-policy] The context window is 66% (170,300 of 258,400) full")
    # what a summary must keep, in the handoff request's terms, and the next step as known
    assert (
        "When you summarise the conversation: Keep the user's task, standing instructions, "
        "what was approved or ruled out, each task's status"
    ) in context
    assert "The next step is unknown; last being done: ran `python -m pytest -q`" in context
    assert GOAL not in context  # never a goal guessed from the user's words


def test_the_compact_advice_never_repeats_a_secret(project: Path) -> None:
    key, secret = "AKIAZ7Q2XKD4MNB6PL3R", "wJalrXUtnFEMIK7MDENGbPxRfiCYzq8Kd3Lm9Tvu"
    goal = f"Deploy with {key} and aws_secret_access_key={secret} then rerun the tests"
    done = hook(project, prompt(rollout(project / "rollout.jsonl", 170_000, goal=goal)))
    assert json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    for part in (key, key[:8], secret[:8]):
        assert part not in done.stdout


def test_user_prompt_submit_asks_for_a_handoff(project: Path) -> None:
    path = rollout(project / "rollout.jsonl", 200_000)
    reply = json.loads(hook(project, prompt(path)).stdout)
    assert reply["systemMessage"] == (
        "clm-policy: context 78% (200,300 of 258,400), the policy hands off (context 200300 "
        ">= hard limit 193800). Codex will finish its step and write a handoff; then start a "
        "new session (/new): it starts from the handoff."
    )
    assert "end your reply with a handoff" in reply["hookSpecificOutput"]["additionalContext"]


# -- PreCompact and PostCompact -------------------------------------------------------------


def test_pre_compact_commits_a_snapshot(project: Path) -> None:
    path = rollout(project / "rollout.jsonl", 170_000)
    done = hook(project, compact_event(path, "manual"))
    assert (done.returncode, done.stdout, message_of(done.stderr)) == (0, "", "")
    memory = memory_of(project)
    trail = head(memory)
    assert trail.startswith(f"clm(compact): {SESSION} step 3, codex:manual\n")
    assert "Clm-Agent: codex" in trail
    assert "Clm-Agent-Trigger: manual" in trail
    assert "Clm-Agent-Tokens: 170300" in trail
    assert "Clm-Context-Tokens: 170300" in trail
    summary = git(memory, "show", f"HEAD:sessions/{SESSION}/compactions/000003.md")
    assert GOAL in summary
    assert "ledger/export.py" in summary
    state = json.loads(git(memory, "show", f"HEAD:sessions/{SESSION}/state.json"))
    assert state["goal"] == GOAL
    assert state["tokens"]["context_window"] == WINDOW


def test_an_automatic_compaction_at_the_hard_limit_becomes_a_handoff(project: Path) -> None:
    path = rollout(project / "rollout.jsonl", 200_000)
    done = hook(project, compact_event(path, "auto"))
    assert (done.returncode, message_of(done.stderr)) == (0, "")
    reply = json.loads(done.stdout)
    assert reply["continue"] is False  # Codex ends the turn before it compacts
    assert reply["stopReason"].startswith(
        "clm-policy: the policy hands off here (context 200300 >= hard limit 193800), so the "
        "automatic compaction is stopped. The handoff is committed (manifests/"
    )
    assert reply["stopReason"].endswith("Start a new session (/new): it starts from the handoff.")
    memory = memory_of(project)
    trail = head(memory)
    assert trail.startswith(f"clm(handoff): {SESSION} step 3, hard_handoff\n")
    assert "Clm-Agent: codex" in trail
    assert "Clm-Agent-Trigger: auto" in trail
    (manifest,) = [
        m
        for m in git(memory, "ls-tree", "--name-only", "HEAD", "manifests/").split()
        if m.endswith(".json")
    ]
    data = json.loads(git(memory, "show", f"HEAD:{manifest}"))
    assert data["goal"] == GOAL
    assert data["changed_artifacts"] == ["ledger/export.py"]
    assert "python -m pytest -q: passed" in data["commands_and_results"]
    # a manual /compact is the person's choice: a snapshot, not a handoff
    done = hook(project, compact_event(path, "manual"))
    assert (done.returncode, done.stdout) == (0, "")
    assert subjects(memory)[0] == f"clm(compact): {SESSION} step 3, codex:manual"


def test_a_session_that_handed_off_is_stopped_once(project: Path) -> None:
    path = rollout(project / "rollout.jsonl", 200_000)
    assert json.loads(hook(project, compact_event(path, "auto")).stdout)["continue"] is False
    # the person carried on in the same session: Codex compacts again, and may
    done = hook(project, compact_event(path, "auto"))
    assert done.returncode == 0, message_of(done.stderr)
    reply = json.loads(done.stdout)
    assert "continue" not in reply
    assert reply["systemMessage"] == (
        "clm-policy: this session has handed off already; Codex compacts it as asked "
        f"(snapshot sessions/{SESSION}/compactions/000003.md). Start a new session (/new): it "
        "starts from the handoff."
    )
    memory = memory_of(project)
    assert subjects(memory)[:2] == [
        f"clm(compact): {SESSION} step 3, codex:auto",
        f"clm(handoff): {SESSION} step 3, hard_handoff",
    ]


def test_post_compact_commits_codex_own_summary_once(project: Path) -> None:
    text = (
        f"{SUMMARY_PREFIX}\nThe export skips zero rows; ghp_Zx8Kq2Lm9Nv4Bc7Df1Gh5Jk3Pw6Rt0Ys2Ua4E "
        "leaked; next: release notes."
    )
    path = rollout(project / "rollout.jsonl", 170_000, compactions=(text,))
    assert last_compaction_text(str(path)) == text
    done = hook(project, compact_event(path, "auto", "PostCompact"))
    assert (done.returncode, done.stdout, message_of(done.stderr)) == (0, "", "")
    memory = memory_of(project)
    trail = head(memory)
    assert trail.startswith(f"clm(summary): {SESSION} step 3, codex:auto\n")
    assert "Clm-Agent: codex" in trail
    assert "Clm-Agent-Compaction: 1" in trail
    kept = git(memory, "show", f"HEAD:sessions/{SESSION}/summaries/000003.md")
    assert "The export skips zero rows; [REDACTED:github-pat] leaked; next: release notes." in kept
    assert "Clm-Recall" not in trail  # no snapshot of the session to check the summary against
    before = subjects(memory)
    # the same compaction again (a rollout not written yet looks like this): nothing new
    assert hook(project, compact_event(path, "auto", "PostCompact")).stdout == ""
    assert subjects(memory) == before


def test_post_compact_checks_the_summary_against_the_snapshot(project: Path) -> None:
    path = rollout(project / "rollout.jsonl", 170_000)
    assert hook(project, compact_event(path, "manual")).returncode == 0  # the snapshot
    memory = memory_of(project)
    snapshot = json.loads(git(memory, "show", f"HEAD:sessions/{SESSION}/state.json"))
    path = rollout(
        project / "rollout.jsonl", 170_000, compactions=(f"{SUMMARY_PREFIX}\n{snapshot['goal']}",)
    )
    done = hook(project, compact_event(path, "manual", "PostCompact"))
    assert (done.returncode, message_of(done.stderr)) == (0, "")
    trail = head(memory)
    assert trail.startswith(f"clm(summary): {SESSION} step 3, codex:manual\n")
    assert "\nClm-Recall: " in trail
    kept = git(memory, "show", f"HEAD:sessions/{SESSION}/summaries/000003.md")
    assert '\nrecall_by_kind: {"goal": [1, 1]' in kept


def test_post_compact_after_a_remote_compaction_records_nothing(project: Path) -> None:
    path = rollout(project / "rollout.jsonl", 170_000)
    assert hook(project, compact_event(path, "manual")).returncode == 0  # the snapshot
    memory = memory_of(project)
    before = subjects(memory)
    path = rollout(project / "rollout.jsonl", 170_000, compactions=("",))  # encrypted
    done = hook(project, compact_event(path, "manual", "PostCompact"))
    assert (done.returncode, done.stdout, message_of(done.stderr)) == (0, "", "")
    assert subjects(memory) == before


def test_post_compact_without_a_compaction_in_the_rollout_records_nothing(project: Path) -> None:
    path = rollout(project / "rollout.jsonl", 170_000)
    assert last_compaction_text(str(path)) == ""
    done = hook(project, compact_event(path, "manual", "PostCompact"))
    assert (done.returncode, done.stdout, message_of(done.stderr)) == (0, "", "")
    assert not memory_of(project).exists()  # nothing to record: not even a repository


# -- SessionStart ---------------------------------------------------------------------------


def test_after_a_compaction_the_session_gets_what_must_survive(project: Path) -> None:
    path = rollout(project / "rollout.jsonl", 170_000)
    assert hook(project, compact_event(path, "auto")).returncode == 0
    done = hook(
        project,
        {"hook_event_name": "SessionStart", "source": "compact", "transcript_path": str(path)},
    )
    assert done.returncode == 0, message_of(done.stderr)
    extra = json.loads(done.stdout)["hookSpecificOutput"]
    assert extra["hookEventName"] == "SessionStart"
    assert f"Goal: {GOAL}" in extra["additionalContext"]
    assert "Changed files: ledger/export.py" in extra["additionalContext"]


def start_next_session(project: Path) -> tuple[dict[str, Any], str]:
    """A new Codex session starts in ``project``: its SessionStart call, and the context the
    hook gives it."""
    fresh = rollout(project / "next.jsonl", 5_000, session=NEXT_SESSION, steps=1)
    start = {
        "hook_event_name": "SessionStart",
        "source": "startup",
        "permission_mode": "default",
        "transcript_path": str(fresh),
        "session_id": NEXT_SESSION,
    }
    done = hook(project, start)
    assert done.returncode == 0, message_of(done.stderr)
    return start, json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


def test_the_next_session_starts_from_the_handoff_once(project: Path) -> None:
    path = rollout(project / "rollout.jsonl", 200_000)
    assert json.loads(hook(project, compact_event(path, "auto")).stdout)["continue"] is False
    start, context = start_next_session(project)
    assert context.startswith("# Handoff: you continue the task of an earlier session")
    assert f"1.\n> {GOAL}" in context  # the user's message word for word
    trail = head(memory_of(project))
    assert trail.startswith(f"clm(start): {NEXT_SESSION} step 0, seeded\n")
    assert "Clm-Agent: codex" in trail
    assert f"Clm-Parent-Session: {SESSION}" in trail
    # taken: another new session gets nothing; neither does a resumed one
    again = {**start, "session_id": "0199a2c4-0000-7000-8000-00000000aa03"}
    assert hook(project, again).stdout == ""
    assert hook(project, {**start, "source": "resume"}).stdout == ""
    # a transcript_path of null (Codex sends one when the rollout does not exist yet)
    assert hook(project, {**again, "source": "clear", "transcript_path": None}).stdout == ""


def test_a_seed_in_japanese_fits_what_codex_takes(project: Path) -> None:
    # Codex 0.171 keeps 10,000 bytes of a hook's context (2,500 of its tokens at 4 bytes) and
    # cuts out the middle of a longer one: the seed is measured in bytes, a Japanese character
    # being 3 (tests/agents_e2e/test_codex.py shows it with the real binary)
    goal = "帳票の出力でゼロ金額の行を除外し、テストを実行してください。"
    path = rollout(project / "rollout.jsonl", 200_000, goal=goal)
    stop = {
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "last_assistant_message": "ゼロ金額の行は除外しました。",
        "transcript_path": str(path),
    }
    assert json.loads(hook(project, stop).stdout)["decision"] == "block"
    line = "金額がゼロの行は出力しない。理由は帳票の仕様による。"
    words = f"## Goal\n{goal}\n" + "".join(
        f"## {title}\n" + "".join(f"- {title} {n}: {line}\n" for n in range(40))
        for title in ("Tasks", "Decisions", "Verification")
    )
    words += "## Next step\n変更履歴を書く。\n"
    done = hook(project, {**stop, "stop_hook_active": True, "last_assistant_message": words})
    assert done.returncode == 0, message_of(done.stderr)
    _start, context = start_next_session(project)
    assert 8_000 < len(context.encode("utf-8")) <= 9_400
    assert "> 変更履歴を書く。" in context  # the agent's next step: its words first
    assert "> - Tasks 0: " in context
    assert context.rstrip().splitlines()[-1].startswith("Left out for length:")
    assert not context.endswith("…")  # made to fit, not cut


# -- Stop -----------------------------------------------------------------------------------


def test_stop_blocks_once_then_commits_the_handoff(project: Path) -> None:
    path = rollout(project / "rollout.jsonl", 200_000)
    stop = {
        "hook_event_name": "Stop",
        "permission_mode": "default",
        "stop_hook_active": False,
        "last_assistant_message": "Zero-amount rows are skipped now.",
        "transcript_path": str(path),
    }
    reply = json.loads(hook(project, stop).stdout)
    assert reply["decision"] == "block"
    assert "`## Goal`, `## Tasks`, `## Decisions`, `## Verification`" in reply["reason"]
    note = "## Goal\nskip zero rows\n## Done and verified\n- export, tests\n## Next safe action\nrelease notes"
    done = hook(project, {**stop, "stop_hook_active": True, "last_assistant_message": note})
    assert done.returncode == 0, message_of(done.stderr)
    message = json.loads(done.stdout)["systemMessage"]
    assert message.startswith("clm-policy: handoff committed (manifests/")
    assert message.endswith("Start a new session (/new): it starts from the handoff.")
    memory = memory_of(project)
    assert subjects(memory)[0] == f"clm(handoff): {SESSION} step 3, hard_handoff"
    assert "Clm-Agent: codex" in head(memory)
    handoff = git(memory, "show", f"HEAD:sessions/{SESSION}/handoffs/001.md")
    assert "## Next safe action\n\nrelease notes\n" in handoff
    # what the agent verified, after what the rollout shows passing
    assert "## Verified\n\n- python -m pytest -q: passed\n- export, tests\n" in handoff
    assert "Clm-Recall-Agent: " in head(memory)
    # the session has a handoff now: never blocked again
    assert hook(project, stop).stdout == ""


def test_stop_below_the_limit_never_blocks_nor_hands_off(project: Path) -> None:
    path = rollout(project / "rollout.jsonl", 170_000)
    # stop_hook_active is also true when another tool's Stop hook kept Codex going
    for active in (False, True):
        done = hook(
            project,
            {
                "hook_event_name": "Stop",
                "stop_hook_active": active,
                "last_assistant_message": None,
                "transcript_path": str(path),
            },
        )
        assert (done.returncode, done.stdout, message_of(done.stderr)) == (0, "", "")
    assert not memory_of(project).exists() or len(subjects(memory_of(project))) == 1


# -- what Codex is told to run, and bad input -----------------------------------------------


def test_print_settings_is_the_hooks_json_codex_reads(project: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "clm_policy", "hook", "codex", "--print-settings"],
        capture_output=True,
        text=True,
        cwd=project,
        timeout=120,
        check=True,
    )
    data = json.loads(done.stdout)
    assert list(data) == ["hooks"]  # Codex refuses a hooks.json with other top-level keys
    events = [
        "UserPromptSubmit",
        "PreCompact",
        "PostCompact",
        "SessionStart",
        "Stop",
        "SubagentStop",
    ]
    assert list(data["hooks"]) == events
    for event, groups in data["hooks"].items():
        ((handler,),) = [group["hooks"] for group in groups]
        assert "matcher" not in groups[0]  # every trigger, every source
        assert handler["type"] == "command"
        assert handler["command"].endswith(" hook codex")
        assert handler["timeout"] == EVENTS[event].timeout


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"garbage {",
        b"[1, 2]",
        json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": SESSION}).encode(),
        json.dumps(
            {"hook_event_name": "PreCompact", "trigger": "auto", "transcript_path": None}
        ).encode(),
        json.dumps(
            {
                "hook_event_name": "UserPromptSubmit",
                "transcript_path": "/nonexistent/rollout.jsonl",
                "session_id": SESSION,
            }
        ).encode(),
        json.dumps(
            {"hook_event_name": "PreCompact", "trigger": "manual", "transcript_path": "/"}
        ).encode(),
        json.dumps(
            {"hook_event_name": "PostCompact", "trigger": "auto", "transcript_path": "/"}
        ).encode(),
        json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash"}).encode(),
    ],
)
def test_bad_input_never_breaks_the_agent(project: Path, raw: bytes) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "clm_policy", "hook", "codex"],
        input=raw,
        capture_output=True,
        cwd=project,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout, message_of(done.stderr)) == (0, b"", b"")


def test_a_rollout_that_is_not_a_rollout_never_breaks_the_agent(project: Path) -> None:
    path = project / "rollout.jsonl"
    path.write_text("not json at all\n{\n")
    for event in (
        prompt(path),
        compact_event(path, "auto"),
        compact_event(path, "auto", "PostCompact"),
    ):
        done = hook(project, event)
        assert (done.returncode, done.stdout, message_of(done.stderr)) == (0, "", "")


def test_problems_are_logged(project: Path) -> None:
    broken = project / "not-a-rollout.jsonl"
    broken.write_text("hello\n")
    reply = run_codex_hook(
        json.dumps(
            {
                "hook_event_name": "PreCompact",
                "trigger": "auto",
                "transcript_path": str(broken),
                "session_id": SESSION,
                "cwd": str(project),
            }
        ).encode()
    )
    assert reply.exit_code == 0
    assert (reply.stdout, reply.stderr) == ("", "")
    logged = log_path().read_text()
    assert "InputError" in logged
    assert "not-a-rollout.jsonl" in logged


def test_a_rollout_that_does_not_exist_yet_is_no_problem(project: Path) -> None:
    for event in ("UserPromptSubmit", "Stop", "PreCompact"):
        reply = run_codex_hook(
            json.dumps(
                {
                    "hook_event_name": event,
                    "trigger": "auto",
                    "transcript_path": str(project / "not-yet.jsonl"),
                    "session_id": SESSION,
                    "cwd": str(project),
                }
            ).encode()
        )
        assert (reply.exit_code, reply.stdout, reply.stderr) == (0, "", "")
    assert not log_path().exists()


def test_a_truncated_last_line_is_normal(project: Path) -> None:
    path = rollout(project / "rollout.jsonl", 170_000)
    with path.open("a") as fh:
        fh.write('{"timestamp": "2026-11-30T10:09:00.000Z", "type": "event_msg", "payl')
    done = hook(project, prompt(path))
    assert json.loads(done.stdout)["systemMessage"].endswith("Run /compact.")


# -- docs/codex.md tells the truth ----------------------------------------------------------

DOC = Path(__file__).parents[2] / "docs" / "codex.md"


def test_the_doc_shows_the_hooks_json_print_settings_prints() -> None:
    blocks = re.findall(r"```json\n(.*?)```", DOC.read_text(), flags=re.S)
    (block,) = [b for b in blocks if b.startswith('{\n  "hooks"')]
    assert json.loads(block) == settings_snippet("clm-policy")


def test_the_doc_shows_the_subagent_stop_input_codex_sends() -> None:
    blocks = re.findall(r"```json\n(.*?)```", DOC.read_text(), flags=re.S)
    (block,) = [b for b in blocks if '"hook_event_name": "SubagentStop"' in b]
    real = real_fixtures("codex") / "hook-inputs"
    captured = json.loads((real / "SubagentStop.json").read_text())
    shown = json.loads(block)
    assert list(shown) == list(captured)  # the fields, in Codex's order
    # the paths are the test's sandbox, the ids the run's (a regeneration makes new ones):
    # the same shape, UUIDs; every other value as Codex sent it
    run_ids = ("session_id", "agent_id", "turn_id")
    uuid = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
    for key in run_ids:
        assert uuid.fullmatch(shown[key]), key
        assert uuid.fullmatch(captured[key]), key
    paths = ("transcript_path", "agent_transcript_path", "cwd")
    assert {k: v for k, v in shown.items() if k not in (*paths, *run_ids)} == {
        k: v for k, v in captured.items() if k not in (*paths, *run_ids)
    }


def test_the_doc_decide_example_is_current() -> None:
    (block,) = [
        b
        for b in re.findall(r"```console\n(.*?)```", DOC.read_text(), flags=re.S)
        if b.startswith("$ clm-policy decide --transcript")
    ]
    shown = block.split("\n\n")[0].splitlines()[1:-1]  # without the command and `read:`
    fixture = Path(__file__).parents[1] / "fixtures" / "transcripts" / "codex_rollout.jsonl"
    done = invoke("decide", "--transcript", str(fixture), "--policy", "claude-code")
    assert done.stdout.splitlines()[:-1] == shown


def test_install_merges_into_the_projects_hooks_json_keeping_the_persons_own(
    tmp_path: Path,
) -> None:
    """``hook codex --install --project``: the --help taught ``--print-settings >
    .codex/hooks.json``, which replaced a file with the person's hooks in it. --install merges
    ours in, keeps theirs where they are, and changes nothing the second time."""
    hooks = tmp_path / ".codex" / "hooks.json"
    hooks.parent.mkdir()
    mine = {"hooks": [{"type": "command", "command": "echo mine"}]}
    hooks.write_text(json.dumps({"hooks": {"Stop": [mine], "PreToolUse": [mine]}}))
    exe = f"{Path(sys.executable).parent / 'clm-policy'}"

    def install(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "clm_policy", "hook", "codex", "--install", *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=120,
            check=False,
        )

    done = install("--project")
    assert done.returncode == 0, message_of(done.stderr)
    lines = done.stdout.splitlines()
    assert lines[:3] == [
        f"wrote {as_shown(tmp_path / '.clm-policy.yaml', tmp_path)} (policy claude-code, profile coding)",
        f"wrote {as_shown(hooks, tmp_path)}",
        f"  added UserPromptSubmit hook `{exe} hook codex`",
    ]
    data = json.loads(hooks.read_text())
    assert list(data) == ["hooks"]
    assert data["hooks"]["PreToolUse"] == [mine]
    assert data["hooks"]["Stop"][0] == mine  # theirs first, where it was
    assert data["hooks"]["Stop"][1]["hooks"][0]["command"] == f"{exe} hook codex"
    assert sorted(data["hooks"]) == sorted(
        [*json.loads(invoke("hook", "codex", "--print-settings").stdout)["hooks"], "PreToolUse"]
    )
    before = hooks.read_text()
    again = install()
    assert (again.returncode, again.stdout) == (
        0,
        f"{as_shown(hooks, tmp_path)}: already up to date; nothing written\n",
    )
    assert hooks.read_text() == before


def test_install_user_and_a_broken_hooks_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codex_home = tmp_path / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    project = tmp_path / "shop"
    project.mkdir()
    monkeypatch.chdir(project)
    done = invoke("hook", "codex", "--install", "--user")
    assert done.exit_code == 0, message_of(done.stderr)
    assert done.stdout.splitlines()[0] == f"wrote {as_shown(codex_home / 'hooks.json')}"
    assert not (project / ".clm-policy.yaml").exists()  # --user sets no project up
    broken = project / ".codex" / "hooks.json"
    broken.parent.mkdir()
    broken.write_text("[]")
    refused = invoke("hook", "codex", "--install")
    assert (refused.exit_code, refused.stdout) == (2, "")
    assert (
        message_of(refused.stderr)
        == f"{as_shown(broken)}:1:1: expected a JSON object (Codex hooks.json), got a list\n"
    )
    assert broken.read_text() == "[]"
    assert not (project / ".clm-policy.yaml").exists()
    usage = invoke("hook", "codex", "--install", "--print-settings")
    assert usage.exit_code == 2
    assert invoke("hook", "codex", "--user").exit_code == 2
