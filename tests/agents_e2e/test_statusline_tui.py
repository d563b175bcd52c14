"""clm-policy's status line in the real, interactive Claude Code (tmux), against the scripted
API: what it says before the first response, after responses at 41% and 65% of a 200K
window, and that it still speaks right after ``/compact``; the status line's real input."""

from __future__ import annotations

import json
import re

import pytest

from . import capture
from .anthropic import ClaudeScript, Turn, Usage, all_text
from .conftest import skip_module_unless
from .drivers import CLAUDE_200K_MODEL, Claude
from .sandbox import Sandbox, read_jsonl
from .tui import prepare, running, tmux_available

pytestmark = [
    pytest.mark.agents_e2e,
    pytest.mark.skipif(not tmux_available(), reason="agents e2e: tmux is not installed"),
]
skip_module_unless("claude-code")


def test_the_status_line_in_the_tui(
    claude: Claude, claude_script: ClaudeScript, sandbox: Sandbox
) -> None:
    claude_script.main = [
        Turn("Hello from the scripted model.", [], Usage.context(82_000)),
        Turn("Still here.", [], Usage.context(130_000)),
    ]
    inputs_file = sandbox.root / "statusline-inputs.jsonl"
    script = prepare(claude, inputs_file)
    with running(script, sandbox.root / "tmux.sock") as screen:
        shown = screen.wait_for(
            lambda s: "claude-code/coding" in screen.status_line(s), "the status line"
        )
        assert (
            screen.status_line(shown)
            == "ctx n/a (no usage yet) · compact at 60% · claude-code/coding"
        )

        screen.type("Say hello.")
        shown = screen.wait_for(
            lambda s: "ctx 41%" in screen.status_line(s), "the status line at 41%"
        )
        assert "Hello from the scripted model." in shown
        assert (
            screen.status_line(shown)
            == "ctx 41% 82k/200k · compact at 60% · continue · claude-code/coding"
        )

        screen.type("Go on.")
        shown = screen.wait_for(
            lambda s: "ctx 65%" in screen.status_line(s), "the status line at 65%"
        )
        assert (
            screen.status_line(shown)
            == "ctx 65% 130k/200k · handoff at 75% · compact · claude-code/coding"
        )

        screen.type("/compact")
        shown = screen.wait_for(
            lambda s: (
                "ctx 65%" not in screen.status_line(s)
                and "claude-code/coding" in screen.status_line(s)
            ),
            "the status line after /compact",
        )
        after = screen.status_line(shown)
        # 2.1.328 sends an all-zero current_usage (and used_percentage 0) right after
        # /compact: no figure, so not "ctx 0% 0/200k" but the transcript's estimate (marked
        # ~) or "n/a" while the transcript does not show the compaction yet
        assert re.fullmatch(
            r"ctx (~\d+% ~[\d.]+k/200k · compact at 60% · continue|n/a \(no usage yet\) · "
            r"compact at 60%) · claude-code/coding",
            after,
        ), after

    inputs = read_jsonl(inputs_file)
    assert inputs
    first = inputs[0]
    assert first["model"] == {"id": CLAUDE_200K_MODEL, "display_name": "Sonnet 4.6"}
    assert first["workspace"]["current_dir"] == str(sandbox.project)
    assert first["context_window"]["context_window_size"] == 200_000
    assert first["context_window"]["current_usage"] is None
    with_usage = [
        i
        for i in inputs
        if (i["context_window"].get("current_usage") or {}).get("cache_read_input_tokens")
    ]
    assert with_usage
    window = with_usage[0]["context_window"]
    usage = window["current_usage"]
    assert (
        usage["input_tokens"]
        + usage["cache_creation_input_tokens"]
        + usage["cache_read_input_tokens"]
        == 82_000
    )
    assert window["used_percentage"] == 41
    assert len(claude.server.of_kind("compact")) == 1

    if capture.ENABLED:
        pairs = capture.normaliser(sandbox, claude.server.url)
        capture.save("claude-code", "statusline-input-before-usage.json", first, pairs)
        capture.save("claude-code", "statusline-input.json", with_usage[0], pairs)
        capture.save("claude-code", "statusline-input-after-compact.json", inputs[-1], pairs)
        capture.save(
            "claude-code", "tui-screen.txt", json.dumps(shown.splitlines(), indent=0), pairs
        )


def test_the_hooks_take_the_window_the_status_line_saw(
    claude: Claude, claude_script: ClaudeScript, sandbox: Sandbox
) -> None:
    """A model clm-policy's table does not know: Claude Code gives it 1,000,000 tokens and
    says so to the status line only; the hooks take that window (they never get it)."""
    claude.model = "claude-foo-9"
    claude_script.main = [
        Turn("Hello from the scripted model.", [], Usage.context(650_000)),
        Turn("Still here.", [], Usage.context(651_000)),
    ]
    script = prepare(claude, sandbox.root / "statusline-inputs.jsonl")
    with running(script, sandbox.root / "tmux.sock") as screen:
        screen.wait_for(lambda s: "claude-code/coding" in screen.status_line(s), "the status line")
        screen.type("Say hello.")
        shown = screen.wait_for(
            lambda s: "ctx 65%" in screen.status_line(s), "the status line at 65%"
        )
        assert screen.status_line(shown) == (
            "ctx 65% 650k/1M · handoff at 75% · compact · claude-code/coding"
        )
        screen.type("Go on.")
        screen.wait_for("Still here.", "the second reply")
    (_first, second) = claude.server.of_kind("main")
    assert isinstance(second.body, dict)
    sent = all_text(second.body)
    assert (
        "UserPromptSubmit hook additional context: [clm-policy] The context window is 65% "
        "(650,000 of 1,000,000) full (context 650000 >= soft limit 600000)"
    ) in sent
    assert not sandbox.clm_hook_log.exists()
