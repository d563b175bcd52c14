"""clm-policy's Claude Code plugin: its hooks.json is the hooks' event table, its engine
module's decisions (``clm-policy hook claude-code --engine``), and ``--install --plugin``.

The module itself runs in Claude Code's engine (``claude plugin test integrations/claude-code``
and the interactive terminal: tests/agents_e2e/test_claude_code_plugin.py); here the JSON it
sends is sent by a process, as it does, and the answers and the memory repository checked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_claude_hooks import SESSION, hook, make_project, memory_of, transcript

from clm_policy.agents.hooks import claude_plugin
from clm_policy.agents.hooks.claude_code import ENGINE_PROMPT, EVENTS
from clm_policy.agents.hooks.engine import APPLY
from clm_policy.agents.hooks.shared import log_path
from clm_policy.lifecycle.request import handoff_request

from conftest import REPO, git

PLUGIN = REPO / "integrations" / "claude-code"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return make_project(tmp_path, monkeypatch)


def engine(project: Path, event: dict[str, Any], **env: str) -> dict[str, Any]:
    """The engine module's call, as it makes it: a process, the JSON on stdin."""
    payload = {
        "session_id": SESSION,
        "cwd": str(project),
        "model": "claude-sonnet-4-5",
        "handoff": "replace",
        **event,
    }
    done = subprocess.run(
        [sys.executable, "-m", "clm_policy", "hook", "claude-code", "--engine"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=project,
        timeout=120,
        check=False,
        env={**os.environ, **env},
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def turn(project: Path, path: Path, tokens: int, **extra: Any) -> dict[str, Any]:
    context = {"tokens": tokens, "window": 200_000, "percent": tokens * 100 // 200_000}
    event = {"hook_event_name": "engine.turn", "transcript_path": str(path), "context": context}
    return engine(project, {**event, **extra})


# -- the package -----------------------------------------------------------------------------


def test_the_committed_hooks_json_is_the_generators_output() -> None:
    """One table of Claude Code's events (clm_policy.agents.hooks.claude_code.EVENTS) makes
    both the settings-file snippet and the plugin's hooks.json; regenerate with
    ``python -m clm_policy.agents.hooks.claude_plugin --write``."""
    committed = (PLUGIN / "hooks" / "hooks.json").read_text(encoding="utf-8")
    assert committed == claude_plugin.render()
    data = json.loads(committed)
    assert data["modules"] == ["./engine.ts"]
    assert list(data["hooks"]) == list(EVENTS)
    for event, spec in EVENTS.items():
        ((entry,),) = [group["hooks"] for group in data["hooks"][event]]
        assert entry == {
            "type": "command",
            "command": 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/clm-policy-hook.sh"',
            "timeout": spec.timeout,
        }


def test_the_handoff_skill_asks_what_the_request_asks() -> None:
    """The skill names every field of the MCP tool and every heading of the request, so the
    agent writes what the one parser reads (lifecycle.request)."""
    from clm_policy.lifecycle.request import PLAN_FIELD, SECTIONS

    skill = (PLUGIN / "skills" / "handoff" / "SKILL.md").read_text()
    for section in SECTIONS:
        assert f"`{section.field}`" in skill, section.field
        assert f"`## {section.heading}`" in skill, section.heading
    assert f"`{PLAN_FIELD}`" in skill
    assert "next_safe_action" not in skill
    assert "## Done and verified" not in skill


def test_the_marketplace_lists_the_plugin_and_the_manifest_its_option() -> None:
    market = json.loads((REPO / "integrations" / ".claude-plugin" / "marketplace.json").read_text())
    assert market["name"] == "clm-policy"
    (entry,) = market["plugins"]
    assert (entry["name"], entry["source"]) == ("clm-policy", "./claude-code")
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "clm-policy"
    from clm_policy import __version__

    assert manifest["version"] == __version__
    option = manifest["userConfig"]["handoff"]
    assert (option["default"], option["options"]) == ("replace", ["replace", "append", "clear"])
    servers = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]
    assert servers == {"clm-policy": {"type": "stdio", "command": "clm-policy", "args": ["mcp"]}}


def test_the_hook_script_without_clm_policy_on_path_logs_one_line_and_exits_0(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    done = subprocess.run(
        ["sh", str(PLUGIN / "hooks" / "clm-policy-hook.sh")],
        input='{"hook_event_name": "UserPromptSubmit"}',
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_STATE_HOME": str(state)},
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    (line,) = (state / "clm-policy" / "hook.log").read_text().splitlines()
    assert line.split(" ", 1)[1] == (
        "claude-code: clm-policy is not on PATH: pip install clm-policy (the plugin runs it)"
    )


def test_install_plugin_without_claude_says_the_two_commands(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    code, text = claude_plugin.plugin_command("user", project)
    market = claude_plugin.integrations_dir()
    assert code == 1
    assert text == (
        "Claude Code (`claude`) is not on PATH; with it, run:\n"
        f"  claude plugin marketplace add {market} --scope user\n"
        "  claude plugin install clm-policy@clm-policy --scope user"
    )


def test_install_plugin_runs_claudes_own_commands(project: Path, tmp_path: Path) -> None:
    """A stand-in ``claude`` that records its arguments: the marketplace, then the plugin."""
    seen = tmp_path / "argv.txt"
    fake = tmp_path / "claude"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {seen}\necho "ok: $2"\n')
    fake.chmod(0o755)
    code, text = claude_plugin.plugin_command("project", project, claude=str(fake))
    market = claude_plugin.integrations_dir()
    assert code == 0, text
    assert seen.read_text().splitlines() == [
        f"plugin marketplace add {market} --scope project",
        "plugin install clm-policy@clm-policy --scope project",
    ]
    assert text.splitlines()[0] == f"$ claude plugin marketplace add {market} --scope project"


@pytest.mark.parametrize(
    ("script", "why"),
    [
        ("#!/nonexistent/sh\n", "cannot run {fake}: No such file or directory"),
        ("not a script", "cannot run {fake}: Exec format error"),
        ("#!/bin/sh\necho 'no marketplace' >&2\nexit 3\n", "claude exited 3"),
    ],
    ids=["no-interpreter", "not-a-program", "fails"],
)
def test_a_claude_that_fails_or_cannot_run_is_said_exit_1(
    project: Path, tmp_path: Path, script: str, why: str
) -> None:
    """A ``claude`` on PATH that cannot be started is what one that exits non-zero is: a line
    that says why and exit 1 (it was an internal error, exit 3)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "claude"
    fake.write_text(script)
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        [sys.executable, "-m", "clm_policy", "hook", "claude-code", "--install", "--plugin"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    market = claude_plugin.integrations_dir()
    assert (done.returncode, done.stderr) == (1, "")
    said = "  no marketplace\n" if "exit 3" in script else ""
    assert done.stdout.endswith(
        f"$ claude plugin marketplace add {market} --scope project\n{said}"
        f"{why.format(fake=fake)}: the plugin is not installed\n"
    )


def test_uninstall_plugin_runs_claudes_own_commands_and_writes_nothing(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--uninstall --plugin`` (it was a usage error, while the install pointed to the docs
    to undo it): the plugin uninstalled, then the marketplace removed, in the scope; no
    configuration is written; without ``claude``, the two commands, exit 1."""
    seen = tmp_path / "argv.txt"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "claude"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {seen}\necho "ok: $2"\n')
    fake.chmod(0o755)
    before = sorted(p.name for p in project.iterdir())
    args = [sys.executable, "-m", "clm_policy", "hook", "claude-code", "--uninstall", "--plugin"]
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        args, cwd=project, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert seen.read_text().splitlines() == [
        "plugin uninstall clm-policy@clm-policy --scope project",
        "plugin marketplace remove clm-policy --scope project",
    ]
    assert done.stdout == (
        "$ claude plugin uninstall clm-policy@clm-policy --scope project\n"
        "  ok: uninstall\n"
        "$ claude plugin marketplace remove clm-policy --scope project\n"
        "  ok: marketplace\n"
        "Start a new Claude Code session for it to take effect (/plugin lists what is left). "
        "The project's .clm-policy.yaml and its memory repository are kept.\n"
    )
    assert sorted(p.name for p in project.iterdir()) == before
    monkeypatch.setenv("PATH", "/nonexistent")
    code, text = claude_plugin.plugin_command("user", project, uninstall=True)
    assert (code, text) == (
        1,
        "Claude Code (`claude`) is not on PATH; with it, run:\n"
        "  claude plugin uninstall clm-policy@clm-policy --scope user\n"
        "  claude plugin marketplace remove clm-policy --scope user",
    )


def test_the_settings_install_names_the_plugin(project: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "clm_policy", "hook", "claude-code", "--install", "--project"],
        capture_output=True,
        text=True,
        cwd=project,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (
        "Or install clm-policy as a Claude Code plugin, which also compacts and hands off by "
        "itself in the terminal: clm-policy hook claude-code --install --plugin"
    ) in done.stdout


# -- the engine's decisions --------------------------------------------------------------------


def test_a_turn_that_continues_answers_the_status(project: Path) -> None:
    path = transcript(project / "t.jsonl", 40_000)
    assert turn(project, path, 40_000) == {
        "act": "none",
        "status": "ctx 22% 40k/180k · compact at 67% · continue · claude-code/coding",
    }


def test_a_turn_past_the_compact_threshold_compacts_with_the_focus(project: Path) -> None:
    """The policy decides from Claude Code's own figure (the transcript says 40,000; the
    engine's usage 130,000, the newer)."""
    path = transcript(project / "t.jsonl", 40_000)
    answer = turn(project, path, 130_000)
    assert answer == {
        "act": "compact",
        "instructions": (  # the focus the prompt hook advises (test_claude_hooks)
            "Keep the user's task, standing instructions, what was approved or ruled out, each "
            "task's status, decisions and what was rejected, the checks' exact commands and "
            "latest results, open questions, blockers, running processes, branch, remotes, "
            "uncommitted work. The next step is unknown; last being done: ran `python -m pytest "
            "-q` (passed)."
        ),
        "toast": "compacting: context 72% (130,000 of 180,000)",
        "status": "ctx 72% 130k/180k · handoff at 83% · compact · claude-code/coding",
    }


def test_past_the_handoff_point_it_asks_once_then_applies_the_committed_handoff(
    project: Path,
) -> None:
    path = transcript(project / "t.jsonl", 160_000)
    asked = turn(project, path, 160_000)
    assert asked["act"] == "ask"
    assert asked["prompt"] == ENGINE_PROMPT
    assert asked["toast"] == (
        "context 89% (160,000 of 180,000): the policy hands off; Claude writes its handoff"
    )
    assert turn(project, path, 160_000)["act"] == "none"  # asked: the reply comes first
    # the prompt the engine submitted: its hook asks the model, unseen; its Stop commits
    env = {"CLM_POLICY_ENGINE": "replace"}
    prompt = {
        "hook_event_name": "UserPromptSubmit",
        "prompt": ENGINE_PROMPT,
        "prompt_id": "p2",
        "transcript_path": str(path),
    }
    reply = json.loads(hook_with_env(project, prompt, env).stdout)
    assert list(reply) == ["hookSpecificOutput"]  # the person saw the prompt: no line more
    assert reply["hookSpecificOutput"]["additionalContext"].endswith(handoff_request())
    note = "## Goal\nquoted commas\n## Next step\nrelease notes"
    stop = {
        "hook_event_name": "Stop",
        "prompt_id": "p2",
        "transcript_path": str(path),
        "last_assistant_message": note,
    }
    stopped = hook_with_env(project, stop, env)
    assert (stopped.returncode, stopped.stdout) == (0, "")  # the engine says it, once
    # after the turn: apply it; at the compaction, the seed, marked taken
    applied = turn(project, path, 160_000)
    assert (applied["act"], applied["instructions"]) == ("apply", APPLY)
    compact = {
        "hook_event_name": "engine.compact",
        "transcript_path": str(path),
        "trigger": "plugin",
        "instructions": APPLY,
    }
    seeded = engine(project, compact)
    assert seeded["act"] == "replace"
    assert seeded["seed"].startswith("# Handoff: you continue the task of an earlier session")
    assert "release notes" in seeded["seed"]
    manifest = seeded["toast"].removeprefix("handed off (").split(")")[0]
    assert seeded["toast"] == f"handed off ({manifest}): the conversation continues from it"
    memory = memory_of(project)
    head = git(memory, "log", "-1", "--format=%s%n%(trailers:only,unfold)")
    assert head.startswith(f"clm(start): {SESSION} step 0, seeded\n")
    assert f"Clm-Seed: {manifest}\n" in head
    assert "Clm-Parent-Session" not in head  # the same session goes on
    # applied: once; and the session's compaction at SessionStart brings nothing more
    assert engine(project, compact) == {"act": "none"}
    start = {"hook_event_name": "SessionStart", "source": "compact", "transcript_path": str(path)}
    assert hook_with_env(project, start, env).stdout == ""
    # a /clear later finds nothing to start from: the handoff is taken
    clear = {
        "hook_event_name": "SessionStart",
        "source": "clear",
        "transcript_path": str(path),
        "session_id": "5a5a5a5a-0000-4000-8000-000000000001",
    }
    assert hook_with_env(project, clear, env).stdout == ""


def test_clear_mode_applies_nothing_in_place(project: Path) -> None:
    path = transcript(project / "t.jsonl", 160_000)
    stop = {
        "hook_event_name": "Stop",
        "stop_hook_active": True,
        "transcript_path": str(path),
        "last_assistant_message": "## Goal\ncommas\n## Next safe action\nrelease",
    }
    committed = hook_with_env(project, stop, {"CLM_POLICY_ENGINE": "clear"})
    assert json.loads(committed.stdout)["systemMessage"].endswith(
        "Run /clear: the next session starts from it."
    )
    assert turn(project, path, 160_000, handoff="clear")["act"] == "none"
    compact = {"hook_event_name": "engine.compact", "transcript_path": str(path)}
    assert engine(project, {**compact, "handoff": "clear"}) == {"act": "none"}


def test_where_the_engine_acts_the_prompt_advises_no_compaction(project: Path) -> None:
    path = transcript(project / "t.jsonl", 130_000)
    prompt = {
        "hook_event_name": "UserPromptSubmit",
        "prompt": "go on",
        "transcript_path": str(path),
    }
    assert "Run: /compact" in hook(project, prompt).stdout  # without the engine: advice
    done = hook_with_env(project, prompt, {"CLM_POLICY_ENGINE": "replace"})
    assert (done.returncode, done.stdout) == (0, "")


@pytest.mark.parametrize(
    ("raw", "idle", "logged"),
    [
        (
            "not json",
            "hook input is not JSON: Expecting value: line 1 column 1 (char 0)",
            "claude-code engine: hook input is not JSON: Expecting value: line 1 column 1 (char 0)",
        ),
        (
            '{"hook_event_name": "engine.nope"}',
            "unknown engine event 'engine.nope' (known: engine.start, engine.turn, engine.compact)",
            "claude-code engine: engine.nope: unknown engine event 'engine.nope' (known: "
            "engine.start, engine.turn, engine.compact)",
        ),
    ],
)
def test_bad_input_is_an_idle_answer_and_one_log_line(
    project: Path, raw: str, idle: str, logged: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "clm_policy", "hook", "claude-code", "--engine"],
        input=raw,
        capture_output=True,
        text=True,
        cwd=project,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout) == {
        "act": "none",
        "idle": idle,
        "status": f"idle: {idle} (see the hook log)",
    }
    (line,) = log_path().read_text().splitlines()
    assert line.split(" ", 1)[1] == logged


def test_a_broken_policy_is_an_idle_answer(project: Path) -> None:
    (project / ".clm-policy.yaml").write_text("version: 1\npolicy: nope\n")
    path = transcript(project / "t.jsonl", 130_000)
    answer = turn(project, path, 130_000)
    assert answer["act"] == "none"
    assert answer["idle"].startswith(f"{project / '.clm-policy.yaml'}:2:9: no bundled policy")
    (line,) = log_path().read_text().splitlines()
    assert "claude-code engine: engine.turn: " in line


def test_the_quick_path_answers_as_the_click_command(project: Path) -> None:
    from conftest import invoke

    path = transcript(project / "t.jsonl", 130_000)
    event = {
        "hook_event_name": "engine.start",
        "session_id": SESSION,
        "cwd": str(project),
        "transcript_path": str(path),
        "context": {"tokens": 130_000, "window": 200_000},
    }
    quick = engine(project, event)
    clicked = invoke("hook", "claude-code", "--engine", stdin=json.dumps(event))
    assert clicked.exit_code == 0
    assert json.loads(clicked.stdout) == quick


def hook_with_env(
    project: Path, event: dict[str, Any], env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    payload = {"session_id": SESSION, "cwd": str(project), "permission_mode": "default", **event}
    return subprocess.run(
        [sys.executable, "-m", "clm_policy", "hook", "claude-code"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=project,
        timeout=120,
        check=False,
        env={**os.environ, **env},
    )
