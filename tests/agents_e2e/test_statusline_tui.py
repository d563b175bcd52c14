"""clm-policy's status line in the real, interactive Claude Code (tmux), against the scripted
API: what it says before the first response, after responses at 41% and 65% of a 200K
window, and that it still speaks right after ``/compact``; the status line's real input."""

from __future__ import annotations

import json

import pytest

from clm_policy.agents.hooks.claude_code import STOP_LINE

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
            == "ctx n/a (no usage yet) · compact at 67% · claude-code/coding"
        )

        screen.type("Say hello.")
        shown = screen.wait_for(
            lambda s: "ctx 46%" in screen.status_line(s), "the status line at 46%"
        )
        assert "Hello from the scripted model." in shown
        assert (
            screen.status_line(shown)
            == "ctx 46% 82k/180k · compact at 67% · continue · claude-code/coding"
        )

        screen.type("Go on.")
        shown = screen.wait_for(
            lambda s: "ctx 72%" in screen.status_line(s), "the status line at 72%"
        )
        assert (
            screen.status_line(shown)
            == "ctx 72% 130k/180k · handoff at 83% · compact · claude-code/coding"
        )

        screen.type("/compact")
        shown = screen.wait_for(
            lambda s: (
                "ctx 72%" not in screen.status_line(s)
                and "claude-code/coding" in screen.status_line(s)
            ),
            "the status line after /compact",
        )
        after = screen.status_line(shown)
        # 2.1.332 sends an all-zero current_usage (and used_percentage 0) right after
        # /compact: no figure until the next response — not "ctx 0%", nor an estimate from
        # the summary that leaves out the system prompt and the tools ("~1%")
        assert after == "ctx n/a (just compacted) · compact at 67% · claude-code/coding"

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
            lambda s: "ctx 66%" in screen.status_line(s), "the status line at 66%"
        )
        assert screen.status_line(shown) == (
            "ctx 66% 650k/980k · handoff at 77% · compact · claude-code/coding"
        )
        screen.type("Go on.")
        screen.wait_for("Still here.", "the second reply")
    (_first, second) = claude.server.of_kind("main")
    assert isinstance(second.body, dict)
    sent = all_text(second.body)
    assert (
        "UserPromptSubmit hook additional context: [clm-policy] The context window is 66% "
        "(650,000 of 980,000) full (context 650000 >= soft limit 600000)"
    ) in sent
    assert not sandbox.clm_hook_log.exists()


def test_the_terminal_at_the_handoff_point(
    claude: Claude, claude_script: ClaudeScript, sandbox: Sandbox
) -> None:
    """Issue 26, in the real terminal with the settings-file hooks: at 160,000 of 200,000
    Claude Code shows "89% context used" and the status line says 89% too (not 80%); the Stop
    hook's request to the model is not printed to the person (no "Stop hook says"); the next
    prompt carries it unseen and that turn's Stop commits the handoff; the line then says
    "handed off"; after /clear the first prompt says which handoff the session starts from."""
    handoff = (
        "## Goal\ncalc.py with add()\n## Done and verified\nnone\n## Not verified\nadd()\n"
        "## Blockers\nnone\n## Next safe action\nwrite test_calc.py"
    )
    # Claude Code shows "N% context used" for a model whose auto-compaction it does not enforce
    # (claude-sonnet-4-5); for one it does (claude-sonnet-4-6), a countdown instead ("4% until
    # auto-compact" here), which is no share of the window to compare with
    claude.model = "claude-sonnet-4-5"
    claude_script.main = [
        Turn("Working on calc.py.", [], Usage.context(160_000)),
        Turn(handoff, [], Usage.context(161_000)),
        Turn("Starting from the handoff.", [], Usage.context(12_000)),
    ]
    script = prepare(claude, sandbox.root / "statusline-inputs.jsonl")
    with running(script, sandbox.root / "tmux.sock") as screen:
        screen.wait_for(lambda s: "claude-code/coding" in screen.status_line(s), "the status line")
        screen.type("Write calc.py with add().")
        shown = screen.wait_for("89% context used", "Claude Code's own figure")
        shown = screen.wait_for(lambda s: "ctx 89%" in screen.status_line(s), "the line at 89%")
        assert screen.status_line(shown) == (
            "ctx 89% 160k/180k · past handoff at 83% · handoff · claude-code/coding"
        )
        shown = screen.wait_for(STOP_LINE[:60], "the Stop hook's line for the person")
        assert "Stop hook says" not in shown
        assert "Before you stop" not in shown
        assert "Finish the step you are on" not in shown

        screen.type("Go on.")
        shown = screen.wait_for(
            lambda s: "handed off" in screen.status_line(s), "the line after the handoff"
        )
        assert "## Next safe action" in shown or "Next safe action" in shown  # the reply
        assert "Finish the step you are on" not in shown  # the request stays unseen
        assert screen.status_line(shown) == (
            "ctx 89% 161k/180k · past handoff at 83% · handed off · claude-code/coding"
        )

        screen.type("/clear")
        screen.type("Carry on.")
        shown = screen.wait_for(
            lambda s: (
                "Starting from the handoff." in s
                and "thissessionstartsfromthehandoff" in "".join(s.split())
            ),
            "the first reply after /clear, and the line naming the handoff",
        )
    (start,) = [c for c in sandbox.memory_log() if "Clm-Event: start" in c["trailers"]]
    seed = next(
        line.split(": ", 1)[1]
        for line in start["trailers"].splitlines()
        if line.startswith("Clm-Seed: ")
    )
    told = f"clm-policy: this session starts from the handoff {seed} (goal: calc.py with add())."
    assert "".join(shown.split()).count("".join(told.split())) == 1  # (wrapped on screen)
    assert not sandbox.clm_hook_log.exists()
