"""Each agent's hooks are one table (event -> handler, timeout): the settings the agent reads
are generated from it, the hook answers exactly its events, the docs name them, and an event
whose protocol the agents share has one handler."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clm_policy.agents.hooks import claude_code, codex, events, shared
from clm_policy.agents.hooks.claude_settings import snippet
from clm_policy.agents.hooks.hook import Hook
from clm_policy.agents.hooks.reply import HookOutput, Reply
from clm_policy.agents.hooks.shared import HookEvent, run_hook

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
    assert claude_code.EVENTS["SessionStart"].handler is events.session_start
    assert codex.EVENTS["SessionStart"].handler is events.session_start
    # both agents' subagents stop with SubagentStop, its input the same fields
    assert claude_code.EVENTS["SubagentStop"].handler is events.record_subagent
    assert codex.EVENTS["SubagentStop"].handler is events.record_subagent
    assert set(codex.EVENTS) == set(claude_code.EVENTS)


def test_the_hook_answers_the_events_of_its_table_and_no_other(tmp_path: Path) -> None:
    seen: list[str] = []

    def handler(hook: Hook) -> Reply:
        seen.append(hook.call.name)
        return Reply(message="answered")

    events = {"Ping": HookEvent(handler, 5)}
    for name in ("Ping", "Pong"):
        event = {"hook_event_name": name, "cwd": str(tmp_path)}
        reply = run_hook(json.dumps(event).encode(), "claude-code", events)
        assert reply.stdout == ('{"systemMessage": "answered"}' if name == "Ping" else "")
    assert seen == ["Ping"]


def hook_log() -> list[str]:
    path = shared.log_path()
    lines = path.read_text().splitlines() if path.exists() else []
    return [line.split(" ", 1)[1] for line in lines]  # without the time stamp


@pytest.mark.parametrize(
    ("raw", "logged"),
    [
        (b"not json", "hook input is not JSON: Expecting value: line 1 column 1 (char 0)"),
        (b'{"a": "\xff"}', "hook input is not UTF-8: byte 0xff at offset 7"),
        (b"[1, 2]", "hook input is not a JSON object"),
    ],
)
@pytest.mark.parametrize("agent", AGENTS)
def test_bad_input_is_one_line_in_the_log(agent: str, raw: bytes, logged: str) -> None:
    run = claude_code.run_claude_hook if agent == "claude-code" else codex.run_codex_hook
    assert run(raw) == HookOutput()
    assert hook_log() == [f"{agent}: InputError: {logged}"]


def test_an_unexpected_error_is_one_line_and_a_traceback_only_when_debugging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(hook: Hook) -> Reply:
        raise RuntimeError("kaboom\nsecond line")

    events = {"Ping": HookEvent(broken, 5)}
    raw = json.dumps({"hook_event_name": "Ping", "cwd": str(tmp_path)}).encode()
    assert run_hook(raw, "codex", events) == HookOutput()
    assert hook_log() == ["codex: Ping: RuntimeError: kaboom second line"]
    monkeypatch.setenv("CLM_POLICY_DEBUG", "1")
    run_hook(raw, "codex", events)
    logged = shared.log_path().read_text().splitlines()
    assert logged[1].endswith(" codex: Ping: RuntimeError: kaboom second line")
    assert logged[2] == "Traceback (most recent call last):"
    assert logged[-2:] == ["RuntimeError: kaboom", "second line"]
