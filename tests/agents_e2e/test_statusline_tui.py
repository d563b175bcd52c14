"""clm-policy's status line in the real, interactive Claude Code (tmux), against the scripted
API: what it says before the first response, after responses at 41% and 65% of a 200K
window, and that it still speaks right after ``/compact``; the status line's real input."""

from __future__ import annotations

import json

import pytest

from . import capture
from .anthropic import ClaudeScript, Turn, Usage
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
        # (what it says here is a finding of the report: 2.1.328 sends an all-zero
        # current_usage right after /compact, not null)
        assert after.startswith("ctx "), after
        assert after.endswith("claude-code/coding"), after

    inputs = read_jsonl(inputs_file)
    assert inputs
    first = inputs[0]
    assert first["model"] == {"id": CLAUDE_200K_MODEL, "display_name": "Sonnet 4.5"}
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
