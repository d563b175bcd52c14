"""The real Claude Code (pinned) calling clm-policy's MCP server: the agent writes its own
handoff through ``mcp__clm-policy__handoff``, clm-policy commits it, and the next session
starts from it.

The project is set up as docs/mcp.md says: ``clm-policy init --claude-code``, the hooks, and
``clm-policy mcp --install --project`` (``.mcp.json``). ``claude -p`` uses a project's
``.mcp.json`` servers without the approval an interactive session asks for; the tool is
allowed with ``--allowedTools mcp__clm-policy__handoff``.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest

from .anthropic import ClaudeScript, Tool, Turn, Usage, last_user_text
from .conftest import skip_module_unless
from .drivers import CLAUDE_TOOLS, Claude
from .sandbox import Sandbox
from .test_claude_code import SEED, commits_of, main_requests, text_of_request, trailers

pytestmark = pytest.mark.agents_e2e
skip_module_unless("claude-code")

pytest.importorskip("mcp.server.mcpserver", reason="the MCP extra: pip install -e '.[mcp]'")

HANDOFF = "mcp__clm-policy__handoff"
_rng = random.Random(20)
SECRET = (
    "sk-ant-api03-"
    + "".join(_rng.choice(string.ascii_letters + string.digits + "_-") for _ in range(93))
    + "AA"
)
STATUS = "mcp__clm-policy__status"


def _install(claude: Claude) -> None:
    ran = claude.sandbox.clm("mcp", "--install", "--project")
    assert ran.returncode == 0, ran.describe()
    config = json.loads((claude.sandbox.project / ".mcp.json").read_text())
    assert config["mcpServers"]["clm-policy"]["args"] == ["mcp"]
    claude.tools = f"{CLAUDE_TOOLS} {HANDOFF} {STATUS}"


def _tool_result(claude: Claude, session: str, index: int) -> dict[str, object]:
    """The JSON a tool answered, as the model got it in the request after the call."""
    text = last_user_text(main_requests(claude, session)[index].body)
    result: dict[str, object] = json.loads(text[text.index("{") : text.rindex("}") + 1])
    return result


def test_the_agent_hands_off_through_the_mcp_tool_and_the_next_session_starts_from_it(
    claude: Claude, claude_script: ClaudeScript, sandbox: Sandbox
) -> None:
    _install(claude)
    project: Path = sandbox.project
    claude_script.main = [
        Turn(
            "Writing calc.py.",
            [
                Tool(
                    "Write",
                    {
                        "file_path": str(project / "calc.py"),
                        "content": "def add(a, b):\n    return a + b\n",
                    },
                )
            ],
            Usage.context(40_000),
        ),
        Turn(
            "",
            [
                Tool(
                    "Bash",
                    {
                        "command": "python3 -B -c 'import calc; print(calc.add(2, 3))'",
                        "description": "Try add",
                    },
                )
            ],
            Usage.context(60_000),
        ),
        Turn("Checking where the context stands.", [Tool(STATUS, {})], Usage.context(70_000)),
        Turn(
            "Handing off.",
            [
                Tool(
                    HANDOFF,
                    {
                        "goal": "calc.py with add() and subtract(), both tested",
                        "tasks": ["add(): done", "subtract(): does not exist yet"],
                        "verification": ["`python3 -B -c 'import calc; ...'`: printed 5"],
                        "blockers": [],
                        "next_step": "write subtract() in calc.py and test it",
                        "notes": f"keep calc.py free of imports; token {SECRET} must never be kept",
                    },
                )
            ],
            Usage.context(75_000),
        ),
        Turn("The handoff is committed.", [], Usage.context(76_000)),
    ]
    first = claude.p("Write calc.py with add() and subtract().")
    old = first["session_id"]
    assert first["result"] == "The handoff is committed."

    # status answered the model: this session, its context, the policy's decision
    status = _tool_result(claude, old, 3)
    assert status["session"] == old
    assert status["found_by"] == "its transcript holds this call"
    assert status["context"] == {
        "tokens": 70_000,  # the figure of the response that calls the tool
        "window": 200_000,
        "window_source": "model claude-sonnet-4",
        "share": 0.35,
        "estimated": False,
        "model": "claude-sonnet-4-6",
    }
    assert status["thresholds"] == {"compact_at": 120_000, "handoff_at": 150_000}
    assert status["decision"]["action"] == "continue"  # type: ignore[index]
    assert (
        status["advice"]
        == "Carry on: the context is 35% (70,000 of 200,000) full; nothing to do yet."
    )

    # the handoff: committed from the agent's fields and the transcript's lists
    answer = _tool_result(claude, old, 4)
    (handoff,) = commits_of(sandbox, "handoff")
    facts = trailers(handoff)
    assert answer["commit"] == handoff["sha"]
    assert facts["Clm-Session"] == old
    assert facts["Clm-Rule"] == "agent"
    assert facts["Clm-Via"] == "mcp"
    assert facts["Clm-Agent"] == "claude-code"
    assert facts["Clm-Redactions"] == "1"
    assert answer["manifest"] == facts["Clm-Manifest"]
    manifest = json.loads(sandbox.memory_show(facts["Clm-Manifest"]))
    assert manifest["schema_version"] == 3
    assert manifest["goal"] == "calc.py with add() and subtract(), both tested"
    assert manifest["done"] == ["add(): done"]
    assert "subtract(): does not exist yet" in manifest["remaining"]
    assert manifest["next_safe_action"] == "write subtract() in calc.py and test it"
    words = manifest["agent_words"]
    assert (words["source"], words["text"].splitlines()[:3]) == (
        "tool",
        ["## Goal", "", "calc.py with add() and subtract(), both tested"],
    )
    assert manifest["changed_artifacts"] == ["calc.py"]  # project-relative
    assert manifest["commands_and_results"] == [
        "python3 -B -c 'import calc; print(calc.add(2, 3))': passed"
    ]
    assert words["text"].endswith(
        "## Notes\n\nkeep calc.py free of imports; token [REDACTED:anthropic-api-key] must "
        "never be kept"
    )
    assert "sk-ant-api03" not in json.dumps(answer)
    assert manifest["decision_rationale"].startswith(
        "the agent handed off; the policy says continue"
    )
    seed = str(answer["seed"])
    assert seed.startswith("# Handoff: you continue the task of an earlier session")
    assert "> write subtract() in calc.py and test it" in seed  # the agent's words, whole
    # the Stop hook saw the handoff and asked for nothing more
    assert len(sandbox.hook_inputs("Stop")) == 1

    # a fresh session: its first request carries the seed the tool announced
    fresh = claude.p("Continue the calc work.")
    new = fresh["session_id"]
    assert new != old
    sent = text_of_request(main_requests(claude, new)[0])
    assert SEED in sent
    assert "> calc.py with add() and subtract(), both tested" in sent
    assert "> write subtract() in calc.py and test it" in sent
    assert "> - add(): done" in sent
    (start,) = commits_of(sandbox, "start")
    assert trailers(start)["Clm-Parent-Session"] == old
    assert trailers(start)["Clm-Seed"] == facts["Clm-Manifest"]


def test_a_bad_call_is_a_tool_error_and_writes_nothing(
    claude: Claude, claude_script: ClaudeScript, sandbox: Sandbox
) -> None:
    _install(claude)
    claude_script.main = [
        Turn("Handing off.", [Tool(HANDOFF, {"goal": "x" * 2001, "next_step": "go"})]),
        Turn("It refused.", []),
    ]
    first = claude.p("Hand off.")
    text = last_user_text(main_requests(claude, first["session_id"])[1].body)
    assert (
        "Error executing tool handoff: argument 'goal': String should have at most 2000 characters"
        in text
    )
    assert not commits_of(sandbox, "handoff")
