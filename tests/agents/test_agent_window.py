"""The window Claude Code knows, never an assumed 200,000 (clm_policy.agents.hooks.windows).

Claude Code 2.1.328's default model (claude-opus-5-5) has a 1,000,000-token window; its
hooks' input never says so, the status line's does (``context_window_size``). These tests
run the status line and the hooks as processes, the status line with its real input
(tests/fixtures/real/claude-code-2.1.328/statusline-input.json).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_claude_hooks import SESSION, hook, make_project, memory_of, transcript

from conftest import git, real_fixtures

REAL = real_fixtures("claude-code")
UNKNOWN = "claude-foo-9"  # a model the bundled table does not know (Claude Code: 1M)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CLAUDE_CODE_AUTO_COMPACT_WINDOW", raising=False)
    monkeypatch.delenv("ANTHROPIC_MODEL", raising=False)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    return make_project(tmp_path, monkeypatch)


def prompt(project: Path, path: Path, **extra: Any) -> dict[str, Any]:
    done = hook(
        project,
        {
            "hook_event_name": "UserPromptSubmit",
            "prompt": "next",
            "transcript_path": str(path),
            **extra,
        },
    )
    assert (done.returncode, done.stderr) == (0, ""), done
    return json.loads(done.stdout) if done.stdout else {}


def status_line(project: Path, window: int, model: str) -> str:
    """Claude Code's status-line call for SESSION, with its real input."""
    data = json.loads((REAL / "statusline-input.json").read_text())
    data.update(session_id=SESSION, cwd=str(project), transcript_path=str(project / "t.jsonl"))
    data["workspace"] = {"current_dir": str(project), "project_dir": str(project)}
    data["model"] = {"id": model, "display_name": model}
    data["context_window"]["context_window_size"] = window
    done = subprocess.run(
        [sys.executable, "-m", "clm_policy", "statusline"],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        cwd=project,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


def test_the_default_model_has_a_1m_window(project: Path) -> None:
    """The defect: 130,000 tokens of claude-opus-5-5 were "65% (130,000 of 200,000)"."""
    path = transcript(project / "t.jsonl", 130_000, model="claude-opus-5-5")
    assert prompt(project, path) == {}  # 13%: nothing to advise
    path = transcript(project / "t.jsonl", 650_000, model="claude-opus-5-5")
    advice = prompt(project, path)
    assert advice["systemMessage"].startswith(
        "clm-policy: context 66% (650,000 of 980,000) (context 650000 >= soft limit 600000)."
    )


def test_a_200k_model_keeps_its_window(project: Path) -> None:
    path = transcript(project / "t.jsonl", 130_000, model="claude-sonnet-4-6")
    assert prompt(project, path)["systemMessage"].startswith(
        "clm-policy: context 72% (130,000 of 180,000)"
    )


def test_the_window_the_status_line_saw_is_the_hooks_window(project: Path) -> None:
    path = transcript(project / "t.jsonl", 650_000, model=UNKNOWN)
    line = status_line(project, 1_000_000, UNKNOWN)
    assert line.startswith("ctx 8% 82k/980k · compact at 61%")  # the real input's usage
    advice = prompt(project, path)
    assert advice["systemMessage"].startswith("clm-policy: context 66% (650,000 of 980,000)")
    # what the status line saw beats the policy's table: a 200K model run with 1M
    path = transcript(project / "t.jsonl", 300_000, model="claude-sonnet-4-6")
    status_line(project, 1_000_000, "claude-sonnet-4-6[1m]")
    assert prompt(project, path) == {}


def test_an_unknown_window_decides_nothing_and_says_how_to_tell_it(project: Path) -> None:
    path = transcript(project / "t.jsonl", 900_000, model=UNKNOWN)
    told = prompt(project, path, prompt_id="p1")
    assert told == {
        "systemMessage": (
            f"clm-policy: the context window of {UNKNOWN} is unknown, so the policy's "
            "thresholds (shares of the window) decide nothing in this session: no compaction "
            "or handoff is advised. Tell it the window: run Claude Code with clm-policy's "
            "status line (clm-policy hook claude-code --install), set "
            "CLAUDE_CODE_AUTO_COMPACT_WINDOW, or add the model to the policy's models: table "
            f"({UNKNOWN}: <tokens>)."
        )
    }
    assert prompt(project, path, prompt_id="p2") == {}  # said once
    stop = {
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "prompt_id": "p2",
        "transcript_path": str(path),
        "last_assistant_message": "Quoted commas survive now; tests pass.",
    }
    assert hook(project, stop).stdout == ""  # no handoff on a share of nothing
    pre = {"hook_event_name": "PreCompact", "trigger": "auto", "transcript_path": str(path)}
    done = hook(project, pre)
    assert (done.returncode, done.stdout) == (0, "")  # a snapshot, the compaction goes ahead
    subjects = git(memory_of(project), "log", "--format=%s").splitlines()
    assert subjects[0] == f"clm(compact): {SESSION} step 4, claude-code:auto"


def test_before_the_first_response_nothing_is_said_of_the_window(project: Path) -> None:
    """A session's transcript with no response yet (after /clear, a first prompt): no model
    is named, no window known, and nothing to advise either."""
    path = project / "t.jsonl"
    first = {
        "type": "user",
        "isSidechain": False,
        "uuid": "u1",
        "sessionId": SESSION,
        "cwd": str(project),
        "message": {"role": "user", "content": "<command-name>/clear</command-name>"},
    }
    path.write_text(json.dumps(first) + "\n")
    assert prompt(project, path, prompt_id="p1") == {}
    # the first response names a model the table does not know: now it is said, once
    path = transcript(project / "t.jsonl", 40_000, model=UNKNOWN)
    assert prompt(project, path, prompt_id="p2")["systemMessage"].startswith(
        f"clm-policy: the context window of {UNKNOWN} is unknown"
    )


def test_a_1m_model_named_at_session_start(project: Path) -> None:
    start = {"hook_event_name": "SessionStart", "source": "compact", "model": f"{UNKNOWN}[1m]"}
    assert hook(project, {**start, "transcript_path": str(project / "t.jsonl")}).returncode == 0
    path = transcript(project / "t.jsonl", 650_000, model=UNKNOWN)
    assert prompt(project, path)["systemMessage"].startswith(
        "clm-policy: context 66% (650,000 of 980,000)"
    )


def test_where_claude_code_compacts_on_its_own(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = transcript(project / "t.jsonl", 260_000, model=UNKNOWN)
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"autoCompactWindow": 400_000}))
    assert prompt(project, path)["systemMessage"].startswith(
        "clm-policy: context 68% (260,000 of 380,000)"
    )
    monkeypatch.setenv("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "500000")  # wins over the settings
    path = transcript(project / "t.jsonl", 325_000, model=UNKNOWN)
    assert prompt(project, path)["systemMessage"].startswith(
        "clm-policy: context 68% (325,000 of 480,000)"
    )


def test_a_settings_file_that_is_a_fifo_does_not_hang_the_hook(project: Path) -> None:
    """A FIFO (or a device) where a settings file should be is no settings: it is opened
    without blocking and skipped (a plain open waited for a writer for ever)."""
    import os

    path = transcript(project / "t.jsonl", 260_000, model=UNKNOWN)
    (project / ".claude").mkdir()
    os.mkfifo(project / ".claude" / "settings.json")
    os.mkfifo(project / ".claude" / "settings.local.json")
    said = prompt(project, path)["systemMessage"]  # as with no settings at all
    assert said.startswith(f"clm-policy: the context window of {UNKNOWN} is unknown")
