"""Claude Code's hooks end to end, as a real process with the hook's JSON on standard input,
and the memory repository checked afterwards.

Transcripts are written here in Claude Code's shape (user and assistant lines in a main chain,
usage on assistant lines), with the context the test needs.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from clm_policy.agents.hooks.claude_code import STOP_LINE, run_claude_hook
from clm_policy.agents.hooks.focus import compact_focus
from clm_policy.agents.hooks.reply import CONTEXT_LIMIT, Reply, size_for
from clm_policy.agents.hooks.shared import log_path
from clm_policy.config.project import load_config, memory_path
from clm_policy.lifecycle.request import handoff_request

from conftest import git, invoke
from probes import probe_cli

SESSION = "3f6d2b1a-8c4e-4f7a-9b2d-1e5c7a9d0f42"
NEXT_SESSION = "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d"


GOAL = "Make the CSV parser keep quoted commas."


def transcript(
    path: Path,
    context: int,
    *,
    session: str = SESSION,
    steps: int = 3,
    goal: str = GOAL,
    model: str = "claude-sonnet-4-6",
    last: str = "Quoted commas survive now; tests pass.",
    command: str = "python -m pytest -q",
) -> Path:
    """A Claude Code session: a goal, ``steps`` turns editing a file and running the tests,
    the last assistant line reporting ``context`` tokens of context."""
    lines: list[dict[str, Any]] = []
    parent = None

    def add(kind: str, message: dict[str, Any], **extra: Any) -> None:
        nonlocal parent
        uid = f"{kind[0]}{len(lines):03d}"
        lines.append(
            {
                "parentUuid": parent,
                "isSidechain": False,
                "type": kind,
                "uuid": uid,
                "sessionId": session,
                "cwd": str(path.parent),
                "version": "2.0.76",
                "timestamp": f"2026-11-30T10:00:{len(lines):02d}.000Z",
                "message": message,
                **extra,
            }
        )
        parent = uid

    add("user", {"role": "user", "content": goal})
    for step in range(steps):
        share = (step + 1) / steps
        usage = {
            "input_tokens": 10,
            "cache_creation_input_tokens": 1000,
            "cache_read_input_tokens": max(int(context * share) - 1010, 0),
            "output_tokens": 200,
        }
        add(
            "assistant",
            {
                "id": f"msg_{step}",
                "model": model,
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Working on step {step + 1}."},
                    {
                        "type": "tool_use",
                        "id": f"toolu_e{step}",
                        "name": "Edit",
                        "input": {"file_path": str(path.parent / "csvtool" / "parse.py")},
                    },
                    {
                        "type": "tool_use",
                        "id": f"toolu_b{step}",
                        "name": "Bash",
                        "input": {"command": command},
                    },
                ],
                "usage": usage,
            },
            requestId=f"req_{step}",
        )
        add(
            "user",
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_e{step}", "content": "ok"},
                    {
                        "type": "tool_result",
                        "tool_use_id": f"toolu_b{step}",
                        "content": "3 passed",
                        "is_error": False,
                    },
                ],
            },
        )
    add(
        "assistant",
        {
            "id": "msg_last",
            "model": model,
            "role": "assistant",
            "content": [{"type": "text", "text": last}],
            "usage": {
                "input_tokens": 10,
                "cache_creation_input_tokens": 1000,
                "cache_read_input_tokens": context - 1010,
                "output_tokens": 120,
            },
        },
        requestId="req_last",
    )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return make_project(tmp_path, monkeypatch)


def make_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project set up for Claude Code: .clm-policy.yaml with the claude-code policy
    (coding: compact at 60% = 120,000 tokens, hand off at 75% = 150,000 of a 200K model)."""
    root = tmp_path / "shop"
    root.mkdir()
    (root / ".clm-policy.yaml").write_text("version: 1\npolicy: claude-code\nprofile: coding\n")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(root)
    return root


def memory_of(project: Path) -> Path:
    return Path(memory_path(None, load_config(project)))


def hook(
    project: Path, event: dict[str, Any], run_in: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The hook as Claude Code runs it: a process, the JSON on stdin, in the project (or, the
    process, in ``run_in``: the hook's ``cwd`` still names the project)."""
    payload = {"session_id": SESSION, "cwd": str(project), "permission_mode": "default", **event}
    return subprocess.run(
        [sys.executable, "-m", "clm_policy", "hook", "claude-code"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=run_in or project,
        timeout=120,
        check=False,
    )


def subjects(memory: Path) -> list[str]:
    return git(memory, "log", "--all", "--format=%s").splitlines()


def test_user_prompt_submit_continue_says_nothing(project: Path) -> None:
    path = transcript(project / "t.jsonl", 40_000)
    done = hook(
        project,
        {"hook_event_name": "UserPromptSubmit", "prompt": "go on", "transcript_path": str(path)},
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_a_prompt_that_continues_loads_nothing_heavy(project: Path) -> None:
    """Claude Code runs the hook on every prompt: the common answer (nothing) imports neither
    click nor pydantic nor the modules that cost start-up time (benchmarks/bench_hook.py)."""
    path = transcript(project / "t.jsonl", 40_000)
    event = {
        "session_id": SESSION,
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "go on",
        "transcript_path": str(path),
    }
    done = probe_cli("hook", ["hook", "claude-code"], stdin=json.dumps(event), cwd=project, runs=2)
    assert (done.stdout, done.loaded, done.code) == ("", [], 0)


def prompt_event(project: Path) -> str:
    path = transcript(project / "t.jsonl", 40_000)
    event = {
        "session_id": SESSION,
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "go on",
        "transcript_path": str(path),
    }
    return json.dumps(event)


def test_the_first_prompt_after_a_policy_change_compiles_it_once(project: Path) -> None:
    """The project's own policy, edited: the first hook reads its YAML and the default's
    (libyaml), checks them against the schema and compiles them, once per edit — and loads
    nothing else heavy (benchmarks/bench_hook.py, "first after a change"). The very first
    check is pydantic's, which keeps its validator; later ones run it without pydantic."""
    policy = project / "team.yaml"
    policy.write_text(
        "version: 1\nextends: claude-code\nprofiles:\n  coding: {soft_compact: 61%}\n"
    )
    (project / ".clm-policy.yaml").write_text("version: 1\npolicy: team.yaml\n")
    event = prompt_event(project)
    done = probe_cli("compile", ["hook", "claude-code"], stdin=event, cwd=project)
    assert (done.stdout, done.stderr, done.loaded, done.code) == ("", "", [], 0)
    assert "clm_policy.policy.compile" in done.new  # it did compile (a cache miss)
    again = probe_cli("hook", ["hook", "claude-code"], stdin=event, cwd=project)
    assert (again.loaded, "clm_policy.policy.compile" in again.new) == ([], False)
    assert "pydantic" in done.new
    policy.write_text(policy.read_text().replace("61%", "62%"))
    changed = probe_cli("recompile", ["hook", "claude-code"], stdin=event, cwd=project)
    assert (changed.loaded, "clm_policy.policy.compile" in changed.new) == ([], True)
    assert "pydantic_core" in changed.new


@pytest.mark.parametrize(
    "setup",
    [
        ["hook", "claude-code", "--install", "--project"],
        ["hook", "codex", "--print-settings"],
        ["init", "--claude-code"],
    ],
    ids=lambda a: " ".join(a),
)
def test_setting_a_project_up_compiles_its_policy_for_the_first_hook(
    project: Path, setup: list[str]
) -> None:
    from clm_policy.base.privatefiles import cache_dir
    from clm_policy.policy.cache import entry_path

    directory = cache_dir()
    assert directory is not None
    assert not Path(entry_path(directory, "claude-code")).exists()
    result = invoke(*setup)
    assert result.exit_code == 0, result.stderr
    assert Path(entry_path(directory, "claude-code")).exists()
    # the first prompt of a session finds it: no YAML read, nothing compiled
    first = probe_cli("hook", ["hook", "claude-code"], stdin=prompt_event(project), cwd=project)
    assert (first.stdout, first.loaded, first.code) == ("", [], 0)
    assert "clm_policy.policy.compile" not in first.new


def test_user_prompt_submit_advises_a_compaction(project: Path) -> None:
    path = transcript(project / "t.jsonl", 130_000)
    done = hook(
        project,
        {"hook_event_name": "UserPromptSubmit", "prompt": "next", "transcript_path": str(path)},
    )
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    # the share Claude Code shows as "% context used": of the window less the 20,000 tokens
    # it keeps for the reply, as the status line shows it
    assert reply["systemMessage"] == (
        "clm-policy: context 72% (130,000 of 180,000) (context 130000 >= soft limit 120000). "
        "Run: /compact Keep the user's task, standing instructions, what was approved or ruled "
        "out, each task's status, decisions and what was rejected, the checks' exact commands "
        "and latest results, open questions, blockers, running processes, branch, remotes, "
        "uncommitted work. The next step is unknown; last being done: ran `python -m pytest -q` "
        "(passed)."
    )
    extra = reply["hookSpecificOutput"]
    assert extra["hookEventName"] == "UserPromptSubmit"
    assert extra["additionalContext"].startswith("[clm-policy] The context window is 72%")


# An AWS key pair in the goal, where the focus's first 80 characters would cut the secret in
# half (a half is no longer recognised: the goal is redacted before it is cut).
AWS_KEY_ID = "AKIAZ7Q2XKD4MNB6PL3R"
AWS_SECRET = "wJalrXUtnFEMIK7MDENGbPxRfiCYzq8Kd3Lm9Tvu"
AWS_GOAL = f"Deploy with {AWS_KEY_ID} and aws_secret_access_key={AWS_SECRET} then rerun the tests"


def test_the_compact_advice_never_repeats_a_secret(project: Path) -> None:
    command = f"AWS_ACCESS_KEY_ID={AWS_KEY_ID} aws_secret_access_key={AWS_SECRET} ./deploy.sh"
    path = transcript(project / "t.jsonl", 130_000, goal=AWS_GOAL, command=command)
    done = hook(
        project,
        {"hook_event_name": "UserPromptSubmit", "prompt": "next", "transcript_path": str(path)},
    )
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert (
        "last being done: ran `AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key-id] "
        "aws_secret_access_key=[REDACTED:aws-secret-access-key] ./deploy.sh` (passed)."
    ) in reply["systemMessage"]
    for part in (AWS_KEY_ID, AWS_KEY_ID[:8], AWS_SECRET[:8]):
        assert part not in done.stdout


def test_advice_shows_no_control_character(project: Path) -> None:
    command = (
        "echo \x1b]0;pwned\x07 the \u202eparser\r and \x1b]52;c;aGk=\x07 https://u:tok@h/r.git"
    )
    path = transcript(project / "t.jsonl", 130_000, command=command)
    done = hook(
        project,
        {"hook_event_name": "UserPromptSubmit", "prompt": "next", "transcript_path": str(path)},
    )
    reply = json.loads(done.stdout)
    said = reply["systemMessage"] + reply["hookSpecificOutput"]["additionalContext"]
    # (the redactor took the URL's password; the printer masks what is left of it)
    assert "last being done: ran `echo \\x1b]0;pwned\\x07 the \\u202eparser" in said
    assert not any(c in said for c in "\x1b\x07\r\u202e")
    assert "tok" not in done.stdout


@pytest.mark.parametrize(
    ("agent", "text", "kept"),
    [
        # Codex counts bytes: 3 for a Chinese character
        ("codex", "移" * 5_000, (CONTEXT_LIMIT - 3) // 3),
        ("codex", "x" * 20_000, CONTEXT_LIMIT - 3),
        # Claude Code counts UTF-16 code units: 2 for an emoji
        ("claude-code", "移" * 5_000, 5_000),
        ("claude-code", "\U0001f600" * 5_000, (CONTEXT_LIMIT - 1) // 2),
    ],
)
def test_what_a_hook_says_is_held_to_what_its_agent_takes(agent: str, text: str, kept: int) -> None:
    size = size_for(agent)
    out = Reply(context=text, event="SessionStart").render(size)
    context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert size(context) <= CONTEXT_LIMIT
    if kept == len(text):
        assert context == text
    else:
        assert context == text[:kept] + "…"


def test_everything_a_hook_says_is_redacted_safe_and_short() -> None:
    reply = Reply(
        message=f"use {AWS_KEY_ID}\x1b]0;t\x07",
        context="\x1b" * (CONTEXT_LIMIT - 1),  # x4 once escaped
        event="SessionStart",
    )
    out = reply.render()
    data = json.loads(out.stdout)
    assert data["systemMessage"] == "use [REDACTED:aws-access-key-id]\\x1b]0;t\\x07"
    context = data["hookSpecificOutput"]["additionalContext"]
    assert len(context) == CONTEXT_LIMIT
    assert context.startswith("\\x1b\\x1b")
    blocked = Reply(exit_code=2, stderr=f"\x1b]52;c;{AWS_KEY_ID}\x07").render()
    assert (blocked.exit_code, blocked.stderr) == (
        2,
        "\\x1b]52;c;[REDACTED:aws-access-key-id]\\x07",
    )


def test_user_prompt_submit_asks_for_a_handoff(project: Path) -> None:
    path = transcript(project / "t.jsonl", 155_000)
    done = hook(
        project,
        {"hook_event_name": "UserPromptSubmit", "prompt": "next", "transcript_path": str(path)},
    )
    reply = json.loads(done.stdout)
    assert "the policy hands off" in reply["systemMessage"]
    assert "run /clear" in reply["systemMessage"]
    assert "end your reply with a handoff" in reply["hookSpecificOutput"]["additionalContext"]


def test_pre_compact_commits_a_snapshot_and_post_compact_the_agent_summary(project: Path) -> None:
    path = transcript(project / "t.jsonl", 140_000)
    done = hook(
        project,
        {
            "hook_event_name": "PreCompact",
            "trigger": "manual",
            "custom_instructions": "",
            "transcript_path": str(path),
        },
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    memory = memory_of(project)
    head = git(memory, "log", "-1", "--format=%s%n%(trailers:only,unfold)")
    assert head.startswith(f"clm(compact): {SESSION} step 4, claude-code:manual\n")
    assert "Clm-Agent: claude-code" in head
    assert "Clm-Agent-Trigger: manual" in head
    assert "Clm-Agent-Tokens: 140000" in head
    summary = git(memory, "show", f"HEAD:sessions/{SESSION}/compactions/000004.md")
    assert "Make the CSV parser keep quoted commas." in summary
    done = hook(
        project,
        {
            "hook_event_name": "PostCompact",
            "trigger": "manual",
            "compact_summary": "We fixed quoted commas; ghp_Zx8Kq2Lm9Nv4Bc7Df1Gh5Jk3Pw6Rt0Ys2Ua4E leaked",
            "transcript_path": str(path),
        },
    )
    assert done.returncode == 0, done.stderr
    assert subjects(memory)[0] == f"clm(summary): {SESSION} step 4, claude-code:manual"
    kept = git(memory, "show", f"HEAD:sessions/{SESSION}/summaries/000004.md")
    assert "We fixed quoted commas; [REDACTED:github-pat] leaked" in kept
    # checked against the snapshot's facts: goal, the file, the command, the passing check
    head = git(memory, "log", "-1", "--format=%(trailers:only,unfold)")
    assert "Clm-Recall: 0.00 (0/4)\n" in head
    assert (
        "Clm-Recall-Missing: goal 1, changed_artifacts 1, commands_and_results 1, verified 1\n"
        in head
    )
    assert 'facts_missing: [["goal", "Make the CSV parser keep quoted commas."]' in kept
    better = "Goal: make the CSV parser keep quoted commas. Ran python -m pytest -q: passed. " + (
        "Next: continue from step 3."
    )
    done = hook(
        project,
        {
            "hook_event_name": "PostCompact",
            "trigger": "manual",
            "compact_summary": better,
            "transcript_path": str(path),
        },
    )
    assert done.returncode == 0, done.stderr
    head = git(memory, "log", "-1", "--format=%(trailers:only,unfold)")
    assert "Clm-Recall: 0.75 (3/4)\nClm-Recall-Missing: changed_artifacts 1\n" in head
    # after the compaction, the session starts with what must survive
    done = hook(
        project,
        {"hook_event_name": "SessionStart", "source": "compact", "transcript_path": str(path)},
    )
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Goal: Make the CSV parser keep quoted commas." in context
    assert "Next safe action: " in context


def test_an_automatic_compaction_at_the_hard_limit_becomes_a_handoff(project: Path) -> None:
    path = transcript(project / "t.jsonl", 166_000)
    done = hook(
        project, {"hook_event_name": "PreCompact", "trigger": "auto", "transcript_path": str(path)}
    )
    assert done.returncode == 2  # blocks Claude Code's own compaction
    assert done.stdout == ""
    assert "the automatic compaction is blocked" in done.stderr
    assert "Run /clear" in done.stderr
    memory = memory_of(project)
    assert subjects(memory)[0] == f"clm(handoff): {SESSION} step 4, hard_handoff"
    manifests = git(memory, "ls-tree", "--name-only", "HEAD", "manifests/").split()
    (manifest,) = [m for m in manifests if m.endswith(".json")]
    data = json.loads(git(memory, "show", f"HEAD:{manifest}"))
    assert data["goal"] == "Make the CSV parser keep quoted commas."
    assert any(p.endswith("csvtool/parse.py") for p in data["changed_artifacts"])
    assert "python -m pytest -q: passed" in data["commands_and_results"]
    # a manual /compact is the person's choice: a snapshot, not a handoff
    done = hook(
        project,
        {"hook_event_name": "PreCompact", "trigger": "manual", "transcript_path": str(path)},
    )
    assert done.returncode == 0


def test_the_next_session_starts_from_the_handoff_once(project: Path) -> None:
    path = transcript(project / "t.jsonl", 166_000)
    assert (
        hook(
            project,
            {"hook_event_name": "PreCompact", "trigger": "auto", "transcript_path": str(path)},
        ).returncode
        == 2
    )
    fresh = transcript(project / "next.jsonl", 5_000, session=NEXT_SESSION, steps=0)
    start = {
        "hook_event_name": "SessionStart",
        "source": "clear",
        "transcript_path": str(fresh),
        "session_id": NEXT_SESSION,
    }
    done = hook(project, start)
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("# Handoff: you continue the task of an earlier session")
    # no words of the agent (an automatic compaction at the hard limit): the record alone
    assert "its agent wrote no handoff" in context
    assert "1.\n> Make the CSV parser keep quoted commas." in context
    assert "**Next step:** " in context
    assert len(context) <= 9_400
    memory = memory_of(project)
    head = git(memory, "log", "-1", "--format=%s%n%(trailers:only,unfold)")
    assert head.startswith(f"clm(start): {NEXT_SESSION} step 0, seeded\n")
    assert f"Clm-Parent-Session: {SESSION}" in head
    assert "Clm-Seed: manifests/" in head
    # taken: a second fresh session gets nothing
    again = hook(project, {**start, "session_id": "7b7b7b7b-0000-4000-8000-000000000001"})
    assert (again.returncode, again.stdout) == (0, "")
    # found with one git log, none of a seed's modules imported (bench_hook.py, "start")
    third = {**start, "session_id": "7b7b7b7b-0000-4000-8000-000000000002", "cwd": str(project)}
    probe = probe_cli("start", ["hook", "claude-code"], stdin=json.dumps(third), cwd=project)
    assert (probe.stdout, probe.stderr, probe.loaded, probe.code) == ("", "", [], 0)
    assert "clm_policy.memory.audit" in probe.new
    # a resumed session gets nothing new
    resumed = hook(project, {**start, "source": "resume"})
    assert resumed.stdout == ""


def test_the_first_prompt_after_clear_says_which_handoff_the_session_starts_from(
    project: Path,
) -> None:
    """Issue 26: `/clear` gave no sign that the new session was seeded. Its first prompt
    says so to the person, in one line (its transcript is not written yet: that is no
    reason to say nothing); the second says nothing."""
    path = transcript(project / "t.jsonl", 166_000)
    assert (
        hook(
            project,
            {"hook_event_name": "PreCompact", "trigger": "auto", "transcript_path": str(path)},
        ).returncode
        == 2
    )
    fresh = project / "next.jsonl"  # a new session's first prompt comes before its transcript
    common = {"transcript_path": str(fresh), "session_id": NEXT_SESSION}
    assert hook(project, {"hook_event_name": "SessionStart", "source": "clear", **common}).stdout
    manifest = git(memory_of(project), "log", "-1", "--format=%(trailers:key=Clm-Seed,valueonly)")
    first = hook(project, {"hook_event_name": "UserPromptSubmit", "prompt": "go on", **common})
    assert json.loads(first.stdout) == {
        "systemMessage": (
            f"clm-policy: this session starts from the handoff {manifest.strip()} "
            "(goal: Make the CSV parser keep quoted commas.)."
        )
    }
    again = hook(project, {"hook_event_name": "UserPromptSubmit", "prompt": "more", **common})
    assert (again.returncode, again.stdout) == (0, "")


def test_the_first_prompt_after_clear_reads_a_transcript_of_the_command_alone(
    project: Path,
) -> None:
    """Claude Code 2.1.332 may have written only the new session's first line (`mode`) when
    its first prompt's hook runs (seen in the real terminal under load): a file no reader could
    tell the format of ("not an OpenAI chat transcript" in the hook log, and the seed's line
    lost). A file with no conversation line yet, only records of the agent, is one not written
    yet."""
    from conftest import real_fixtures

    real = real_fixtures("claude-code") / "transcripts" / "after-clear.jsonl"
    first = real.read_text().splitlines(keepends=True)[0]
    assert json.loads(first)["type"] == "mode"
    head = project / "after-clear.jsonl"
    head.write_text(first)
    path = transcript(project / "t.jsonl", 166_000)
    assert (
        hook(
            project,
            {"hook_event_name": "PreCompact", "trigger": "auto", "transcript_path": str(path)},
        ).returncode
        == 2
    )
    common = {"transcript_path": str(head), "session_id": NEXT_SESSION}
    assert hook(project, {"hook_event_name": "SessionStart", "source": "clear", **common}).stdout
    done = hook(project, {"hook_event_name": "UserPromptSubmit", "prompt": "go on", **common})
    assert json.loads(done.stdout)["systemMessage"].startswith(
        "clm-policy: this session starts from the handoff manifests/"
    )
    assert not log_path().exists()


def test_stop_tells_the_person_a_short_line_and_the_next_prompt_asks_the_model(
    project: Path,
) -> None:
    """Claude Code 2.1.332 shows the person every Stop answer that reaches the model
    ("Stop hook says: ..." for additionalContext; a block or exit 2 as "Stop hook reported a
    problem"), and no one UserPromptSubmit's additionalContext. So at Stop the person gets one
    short line and the model nothing; the next prompt carries the request, unseen, and that
    turn's Stop commits the reply."""
    path = transcript(project / "t.jsonl", 155_000)
    stop = {"hook_event_name": "Stop", "stop_hook_active": False, "transcript_path": str(path)}
    done = hook(project, {**stop, "prompt_id": "p1"})
    assert json.loads(done.stdout) == {"systemMessage": STOP_LINE}
    assert "Before you stop" not in done.stdout  # the model's request is not on the screen
    asked = hook(
        project,
        {
            "hook_event_name": "UserPromptSubmit",
            "prompt": "go on",
            "prompt_id": "p2",
            "transcript_path": str(path),
        },
    )
    reply = json.loads(asked.stdout)
    assert reply["systemMessage"].startswith(
        "clm-policy: context 86% (155,000 of 180,000), the policy hands off"
    )
    request = reply["hookSpecificOutput"]["additionalContext"]
    assert request.startswith("[clm-policy] The context window is 86% (155,000 of 180,000) full")
    assert request.endswith(handoff_request())
    assert "`## Goal`, `## Tasks`, `## Decisions`, `## Verification`" in request
    note = "Goal: make the CSV parser keep quoted commas. Done: parser, tests. Next: release notes."
    done = hook(project, {**stop, "prompt_id": "p2", "last_assistant_message": note})
    assert done.returncode == 0, done.stderr
    assert "handoff committed" in json.loads(done.stdout)["systemMessage"]
    memory = memory_of(project)
    assert subjects(memory)[0].startswith(f"clm(handoff): {SESSION} step 4")
    handoff = git(memory, "show", f"HEAD:sessions/{SESSION}/handoffs/001.md")
    # the reply is kept whole, and read by its sections: its next step is the next safe action
    assert f"From its reply to the handoff request:\n\n{note}\n" in handoff
    assert "## Next safe action\n\nrelease notes.\n" in handoff
    assert "## Done\n\n- parser, tests.\n" in handoff
    # the agent's reply checked against the record (what it forgot); the seed's share of the
    # record is what the budget kept, no quality figure
    head = git(memory, "log", "-1", "--format=%(trailers:only,unfold)")
    assert "Clm-Recall: " not in head
    assert "Clm-Seed-Kept: 1.00 (3/3)\n" in head
    assert "Clm-Recall-Agent: 0.33 (1/3)\n" in head
    assert "Clm-Recall-Agent-Missing: changed_artifacts 1, verified 1\n" in head
    # the session has a handoff now: never blocked again
    assert hook(project, stop).stdout == ""


def test_a_failed_push_leaves_no_token_in_the_log(project: Path) -> None:
    """The handoff is committed all the same, and the person is told so, with /clear, and
    that the push failed (it used to be a line in the hook log alone: no /clear)."""
    token = "ghp_" + "Zx8Kq2Lm9Nv4Bc7Df1Gh5Jk3Pw6Rt0Ys2Ua4E"
    remote = f"https://clm-bot:{token}@127.0.0.1:1/team/memory.git"  # nothing listens there
    (project / ".clm-policy.yaml").write_text(
        f"version: 1\npolicy: claude-code\nprofile: coding\nremote: {remote}\n"
    )
    assert invoke("trust", str(project / ".clm-policy.yaml")).exit_code == 0
    path = transcript(project / "t.jsonl", 155_000)
    stop = {"hook_event_name": "Stop", "stop_hook_active": True, "transcript_path": str(path)}
    done = hook(project, {**stop, "last_assistant_message": "Goal: commas. Next: release."})
    assert (done.returncode, done.stderr) == (0, "")
    told = json.loads(done.stdout)["systemMessage"]
    assert re.fullmatch(
        r"clm-policy: handoff committed \(manifests/[^ ]+\.json\)\. Run /clear: the next session "
        r"starts from it\. Pushing it failed \(the hook log says why: [^ ]+/hook\.log\)\.",
        told,
    ), told
    memory = memory_of(project)
    assert git(memory, "log", "-1", "--format=%s").startswith(f"clm(handoff): {SESSION}")
    assert hook(project, stop).stdout == ""  # handed off: nothing more to ask or commit
    logged = log_path().read_text()
    assert " PushError: the handoff is committed locally (" in logged
    assert (
        "but pushing it to 'https://***@127.0.0.1:1/team/memory.git' failed: git push "
        "https://***@127.0.0.1:1/team/memory.git main failed: "
    ) in logged
    assert token[:8] not in logged


def test_stop_below_the_limit_and_with_stop_hook_active_never_blocks(project: Path) -> None:
    path = transcript(project / "t.jsonl", 40_000)
    for active in (False, True):
        done = hook(
            project,
            {"hook_event_name": "Stop", "stop_hook_active": active, "transcript_path": str(path)},
        )
        assert done.stdout == "" or "decision" not in json.loads(done.stdout)


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"not json",
        b"[1, 2]",
        json.dumps({"hook_event_name": "UserPromptSubmit"}).encode(),  # no transcript
        json.dumps(
            {
                "hook_event_name": "UserPromptSubmit",
                "transcript_path": "/nonexistent/x.jsonl",
                "session_id": SESSION,
            }
        ).encode(),
        json.dumps(
            {"hook_event_name": "PreCompact", "transcript_path": "/", "session_id": SESSION}
        ).encode(),
        json.dumps({"hook_event_name": "Nonsense"}).encode(),
    ],
)
def test_bad_input_never_breaks_the_agent(project: Path, raw: bytes) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "clm_policy", "hook", "claude-code"],
        input=raw,
        capture_output=True,
        cwd=project,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_problems_are_logged(project: Path) -> None:
    broken = project / "not-a-transcript.jsonl"
    broken.write_text("hello\n")
    reply = run_claude_hook(
        json.dumps(
            {
                "hook_event_name": "UserPromptSubmit",
                "transcript_path": str(broken),
                "session_id": SESSION,
            }
        ).encode()
    )
    assert reply.exit_code == 0
    logged = log_path().read_text()
    assert "InputError" in logged
    assert "not-a-transcript.jsonl" in logged


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_a_cwd_no_folder_can_have_is_an_input_error(project: Path, agent: str) -> None:
    """A hook input whose ``cwd`` holds a NUL byte reached os.path.realpath: a ValueError,
    logged (with CLM_POLICY_DEBUG) as an unexpected error with its traceback. Now it is the
    input's error, one line; the agent is answered with nothing, as for any bad input."""
    path = transcript(project / "t.jsonl", 130_000)
    event = {"hook_event_name": "SessionStart", "source": "startup", "cwd": "/tmp/\x00shop"}
    payload = {"session_id": SESSION, "transcript_path": str(path), **event}
    done = subprocess.run(
        [sys.executable, "-m", "clm_policy", "hook", agent],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=project,
        env={**os.environ, "CLM_POLICY_DEBUG": "1"},
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    logged = log_path().read_text()
    assert "SessionStart: InputError: SessionStart: the hook's cwd holds a NUL byte" in logged
    assert "Traceback" not in logged
    assert logged.count("\n") == 1


def test_a_transcript_that_does_not_exist_yet_is_no_problem(project: Path) -> None:
    """A new session's first prompt: Claude Code has not written the transcript yet (its
    folder may not exist either). Nothing to say, and nothing to log."""
    for path in (project / "not-yet.jsonl", project / "new-project" / "not-yet.jsonl"):
        for event in ("UserPromptSubmit", "Stop", "PreCompact", "PostCompact"):
            done = hook(
                project,
                {
                    "hook_event_name": event,
                    "transcript_path": str(path),
                    "trigger": "auto",
                    "compact_summary": "s",
                },
            )
            assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert not log_path().exists()


def test_the_log_shows_no_control_character(project: Path) -> None:
    # a "transcript" that is a folder: the error names it, control characters and all
    folder = project / "\x1b]0;pwn\x07\u202e\nforged line.jsonl"
    folder.mkdir()
    event = {
        "hook_event_name": "UserPromptSubmit",
        "transcript_path": str(folder),
        "session_id": SESSION,
    }
    assert run_claude_hook(json.dumps(event).encode()).exit_code == 0
    logged = log_path().read_text()
    assert "\\x1b]0;pwn\\x07\\u202e forged line.jsonl" in logged
    assert "\x1b" not in logged
    assert logged.count("\n") == 1  # one line


def test_a_truncated_last_line_is_normal(project: Path) -> None:
    path = transcript(project / "t.jsonl", 130_000)
    with path.open("a") as fh:
        fh.write('{"parentUuid": "a009", "type": "assistant", "message": {"usa')
    done = hook(
        project,
        {"hook_event_name": "UserPromptSubmit", "prompt": "x", "transcript_path": str(path)},
    )
    assert "Run: /compact" in json.loads(done.stdout)["systemMessage"]


def test_compact_focus_is_short() -> None:
    from clm_policy.models.state import SessionState

    state = SessionState(
        session_id="s", goal="x " * 500, changed_artifacts=[f"f{i}.py" for i in range(50)]
    )
    focus = compact_focus(state)
    assert len(focus) <= 500
    assert "x x" not in focus  # never a goal guessed from the user's words


# -- one road ----------------------------------------------------------------------------------

REPLY = """## Goal
Make the CSV parser keep quoted commas (the user ruled out a new dependency).

## Tasks
- quoted commas: done
- release notes: not started

## Verification
- `python -m pytest -q`: passed

## Open questions and blockers
none

## Environment
- nothing running; csvtool/parse.py uncommitted

## Next step
Write the release notes for the parser fix.
"""


def test_the_stop_reply_and_handoff_with_reply_give_the_same_seed(
    project: Path, tmp_path: Path
) -> None:
    """The Stop hook's road and ``clm-policy handoff --transcript --reply`` are one: the same
    transcript and the same words give the same manifest words and the same seed (the memory
    repository's path aside)."""
    path = transcript(project / "t.jsonl", 155_000)
    stop = {"hook_event_name": "Stop", "stop_hook_active": True, "transcript_path": str(path)}
    done = hook(project, {**stop, "last_assistant_message": REPLY})
    assert "handoff committed" in json.loads(done.stdout)["systemMessage"]
    fresh = transcript(project / "next.jsonl", 5_000, session=NEXT_SESSION, steps=0)
    start = {"hook_event_name": "SessionStart", "source": "clear"}
    started = hook(project, {**start, "transcript_path": str(fresh), "session_id": NEXT_SESSION})
    by_hook = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]

    reply = tmp_path / "reply.md"
    reply.write_text(REPLY)
    other = tmp_path / "other-memory"
    assert invoke("init", str(other)).exit_code == 0
    result = invoke(
        "handoff",
        "--memory",
        str(other),
        "--transcript",
        str(path),
        "--reply",
        str(reply),
        "--policy",
        "claude-code",
        "--profile",
        "coding",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    by_cli = out["seed"][0]["content"]
    assert out["manifest"]["agent_words"] == {
        "source": "reply",
        "text": REPLY.strip(),
        "step": None,
    }

    def same(seed: str, memory: Path) -> str:
        return seed.replace(str(memory), "<memory>").replace(
            str(memory).replace(str(Path.home()), "~", 1), "<memory>"
        )

    assert "> Write the release notes for the parser fix." in by_hook
    assert same(by_hook, memory_of(project)) == same(by_cli, other)


@pytest.mark.parametrize(
    ("answer", "setting", "trailer", "words"),
    [
        (
            "## Goal\n\nQuoted commas (MODEL-WORDS-1).\n\n## Next step\n\nCommit.",
            {},
            "openai:m1",
            True,
        ),
        (None, {}, "deterministic (fallback: timeout; tried openai:m1)", False),
        (
            "unused",
            {"CLM_POLICY_SUMMARIZER_MODEL": ""},
            "deterministic (fallback: configuration)",
            False,
        ),
    ],
)
def test_a_model_writes_the_hard_limit_handoff_the_agent_did_not(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    answer: str | None,
    setting: dict[str, str],
    trailer: str,
    words: bool,
) -> None:
    """With a model configured, the hard-limit handoff (the agent wrote none) carries the
    model's handoff; a model that does not answer in time, or a configuration that names
    none, leaves the handoff as it is without one — never no handoff."""
    from chatserver import ChatServer, chat_reply, serve

    reply = chat_reply(answer) if answer is not None else (lambda body: None)
    with serve(ChatServer(then=reply)) as chat:
        env = {
            "CLM_POLICY_SUMMARIZER": "openai",
            "CLM_POLICY_SUMMARIZER_MODEL": "m1",
            "CLM_POLICY_SUMMARIZER_BASE_URL": chat.url,
            "CLM_POLICY_SUMMARIZER_API_KEY": "sk-test-0123456789abcdef",
            "CLM_POLICY_SUMMARIZER_TIMEOUT": "0.5",
            **setting,
        }
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        path = transcript(project / "t.jsonl", 166_000)
        event = {"hook_event_name": "PreCompact", "trigger": "auto", "transcript_path": str(path)}
        done = hook(project, event)
    assert done.returncode == 2, done.stderr  # blocks Claude Code's own compaction
    memory = memory_of(project)
    assert subjects(memory)[0] == f"clm(handoff): {SESSION} step 4, hard_handoff"
    found = git(memory, "log", "-1", "--format=%(trailers:key=Clm-Summarizer,valueonly)")
    assert found.strip() == trailer
    manifests = git(memory, "show", "--name-only", "--format=", "HEAD", "--", "manifests/")
    data = json.loads(git(memory, "show", f"HEAD:{manifests.split()[0]}"))
    if words:
        assert data["agent_words"]["source"] == "model"
        assert data["goal"] == "Quoted commas (MODEL-WORDS-1)."  # the handoff's own goal
    else:
        assert data["agent_words"] is None
        assert data["goal"] == GOAL


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("event", ["UserPromptSubmit", "Stop"])
def test_a_transcript_that_is_a_fifo_or_a_device_is_not_read(project: Path, event: str) -> None:
    """A FIFO with no writer blocked the hook in `open` for ever, and /dev/zero (a device:
    size 0, endless bytes) was read whole until memory ran out: both are refused unread, in
    the hook log, and the agent goes on."""
    fifo = project / "t.fifo"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        done = subprocess.run(
            [sys.executable, "-m", "clm_policy", "hook", "claude-code"],
            input=json.dumps(
                {"session_id": SESSION, "cwd": str(project), "hook_event_name": event}
                | {"transcript_path": str(path), "prompt": "go on", "stop_hook_active": False}
            ),
            capture_output=True,
            text=True,
            cwd=project,
            timeout=120,
            check=False,
            # (the old reader's endless read ends here, not in the machine's memory)
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30)),
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
        logged = log_path().read_text().splitlines()[-1]
        assert logged.endswith(
            f"{event}: InputError: {path}: is not a regular file (a pipe or a device?)"
        )


def test_a_project_without_a_config_keeps_its_memory_outside_its_work_tree(
    project: Path, tmp_path: Path
) -> None:
    """Hooks installed for every project (`--install --user`) in a project with no
    .clm-policy.yaml: the memory is the project's default outside its tree, keyed to the
    hook's cwd — it used to be ./clm-memory, in the project's work tree (or in whatever
    folder the process ran in)."""
    (project / ".clm-policy.yaml").unlink()
    git(project, "init", "-q")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    path = transcript(project / "t.jsonl", 166_000)
    event = {"hook_event_name": "PreCompact", "trigger": "manual", "transcript_path": str(path)}
    for cwd in (project, elsewhere):
        done = hook(project, event, run_in=cwd)
        assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert not (project / "clm-memory").exists()
    assert not (elsewhere / "clm-memory").exists()
    assert git(project, "status", "--porcelain").split() == ["??", "t.jsonl"]
    memory = Path(memory_path(None, load_config(project), outside=True))
    assert memory.is_relative_to(tmp_path / "data" / "clm-policy" / "projects")
    assert git(memory, "log", "--format=%s").startswith(f"clm(compact): {SESSION}")


def test_a_session_id_shaped_like_a_secret_is_never_announced_nor_committed(
    project: Path,
) -> None:
    """The id is committed as written, so one a secret rule matches is unusable, at every
    event alike: the prompt used to announce a handoff that the Stop then refused."""
    secret = "ghp_" + "Zx8Kq2Lm9Nv4Bc7Df1Gh5Jk3Pw6Rt0Ys2Ua4E"
    path = transcript(project / "t.jsonl", 155_000)
    common = {"session_id": secret, "transcript_path": str(path)}
    prompt = hook(project, {"hook_event_name": "UserPromptSubmit", "prompt": "go on", **common})
    stop = hook(project, {"hook_event_name": "Stop", "stop_hook_active": True, **common})
    for done in (prompt, stop):
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    logged = log_path().read_text().splitlines()
    assert logged[-2].endswith("UserPromptSubmit: no usable session_id in the hook's input")
    assert logged[-1].endswith("Stop: no usable session_id in the hook's input")
    assert secret[:8] not in log_path().read_text()


def test_a_session_handed_off_twice_starts_one_session_from_its_newest_handoff(
    project: Path,
) -> None:
    """A session handed off twice (a person's handoff, then another): the next session
    starts from the newer one, and a later new session from neither — it was started from
    the older one, which the newer had replaced."""
    memory = memory_of(project)
    assert invoke("init", str(memory)).exit_code == 0
    state = project / "state.json"
    tokens = {"context_tokens": 1000, "context_window": 200_000}
    for step, reply in ((3, "the first handoff"), (4, "the second handoff")):
        data = {"session_id": SESSION, "goal": "ship it", "step_index": step, "tokens": tokens}
        state.write_text(json.dumps(data))
        (project / "reply.md").write_text(f"Goal: {reply}\n")
        done = invoke("handoff", "-m", str(memory), "-s", str(state), "--reply", "reply.md")
        assert done.exit_code == 0, done.stderr
    fresh = transcript(project / "next.jsonl", 5_000, session=NEXT_SESSION, steps=0)
    start = {"hook_event_name": "SessionStart", "source": "startup", "transcript_path": str(fresh)}
    first = hook(project, {**start, "session_id": NEXT_SESSION})
    context = json.loads(first.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "the second handoff" in context
    assert "the first handoff" not in context
    later = hook(project, {**start, "session_id": "7b7b7b7b-0000-4000-8000-000000000003"})
    assert (later.returncode, later.stdout) == (0, "")


def test_a_memory_repositorys_own_config_runs_nothing_from_a_hook(project: Path) -> None:
    """A clean filter the memory repository's .git/config names (for every file, by
    .git/info/attributes) ran at each commit a hook made; now the hook commits nothing, says
    why in the hook log and exits 0, and the program never runs."""
    path = transcript(project / "t.jsonl", 150_000)
    event = {"hook_event_name": "PreCompact", "trigger": "manual", "transcript_path": str(path)}
    assert hook(project, event).returncode == 0
    memory = memory_of(project)
    before = subjects(memory)
    canary = project.parent / "filter-ran"
    program = project.parent / "clean.sh"
    program.write_text(f'#!/bin/sh\necho ran >> "{canary}"\ncat\n')
    program.chmod(0o755)
    (memory / ".git" / "info" / "attributes").write_text("* filter=x\n")
    git(memory, "config", "filter.x.clean", str(program))
    transcript(path, 160_000, steps=5)  # more to snapshot
    done = hook(project, event)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert not canary.exists()
    assert subjects(memory) == before
    logged = log_path().read_text().splitlines()[-1]
    assert "PreCompact: InputError: " in logged
    assert "filter.x.clean names a program git would run" in logged
