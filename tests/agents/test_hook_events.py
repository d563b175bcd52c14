"""Each agent's hooks are one table (event -> handler, timeout): the settings the agent reads
are generated from it, the hook answers exactly its events, the docs name them, and an event
whose protocol the agents share has one handler."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clm_policy.agents.hooks import claude_code, codex, shared
from clm_policy.agents.hooks.claude_settings import snippet
from clm_policy.agents.hooks.shared import HookEvent, HookReply, run_hook

from conftest import REPO

AGENTS = {
    "claude-code": (claude_code.EVENTS, snippet("clm-policy"), "claude-code.md"),
    "codex": (codex.EVENTS, codex.settings_snippet("clm-policy"), "codex.md"),
}


@pytest.mark.parametrize("agent", AGENTS)
def test_the_settings_are_the_table(agent: str) -> None:
    events, settings, _ = AGENTS[agent]
    assert list(settings["hooks"]) == list(events)
    for event, groups in settings["hooks"].items():
        ((entry,),) = [group["hooks"] for group in groups]
        assert entry == {
            "type": "command",
            "command": f"clm-policy hook {agent}",
            "timeout": events[event].timeout,
        }


@pytest.mark.parametrize("agent", AGENTS)
def test_the_docs_name_every_event(agent: str) -> None:
    events, _, doc = AGENTS[agent]
    text = (REPO / "docs" / doc).read_text()
    for event in events:
        assert event in text, (doc, event)


def test_where_the_protocols_agree_one_handler_serves_both() -> None:
    assert claude_code.EVENTS["SessionStart"].handler is shared.session_start
    assert codex.EVENTS["SessionStart"].handler is shared.session_start
    assert set(claude_code.EVENTS) == set(codex.EVENTS)


def test_the_hook_answers_the_events_of_its_table_and_no_other(tmp_path: Path) -> None:
    seen: list[str] = []

    def handler(hook: shared.Hook) -> HookReply:
        seen.append(hook.name)
        return HookReply(0, "answered")

    events = {"Ping": HookEvent(handler, 5)}
    for name in ("Ping", "Pong"):
        event = {"hook_event_name": name, "cwd": str(tmp_path)}
        reply = run_hook(json.dumps(event).encode(), "claude-code", events)
        assert reply.stdout == ("answered" if name == "Ping" else "")
    assert seen == ["Ping"]
