"""The MCP server in process, through the SDK's own client (``mcp.Client`` on an
``MCPServer``): the tools, their answers, what they commit, and every bad call refused with
nothing written.

The calling session is a real Claude Code 2.1.328 transcript (tests/fixtures/real) laid where
Claude Code keeps it, ending with the assistant line that calls the tool.
"""

from __future__ import annotations

import json
import random
import shutil
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp.server.mcpserver")

from mcp import Client

from clm_policy.agents.hooks.claude_code import run_claude_hook
from clm_policy.agents.hooks.reply import HookOutput
from clm_policy.agents.mcp.calling import (
    HOLDS_CALL,
    NAMED,
    NEWEST,
    find_caller,
    transcripts_dir,
)
from clm_policy.agents.mcp.server import DESCRIPTIONS, build_server
from clm_policy.agents.mcp.tools import Tools
from clm_policy.agents.statusline import status_line
from clm_policy.config.project import load_config, memory_path, write_config
from clm_policy.lifecycle.request import SECTIONS, handoff_request

from conftest import git, real_fixtures

REAL = real_fixtures("claude-code") / "transcripts" / "session.jsonl"
# the real session's id (a regeneration of the fixtures makes a new one)
SESSION = next(
    json.loads(line)["sessionId"] for line in REAL.read_text().splitlines() if '"sessionId"' in line
)
OTHER = "7c0a4d51-1f1e-4c52-9a0e-3b5b2f1d8e77"
_rng = random.Random(7)
SECRET = (
    "sk-ant-api03-"
    + "".join(_rng.choice(string.ascii_letters + string.digits + "_-") for _ in range(93))
    + "AA"
)


def calling_line(tool: str, context: int, session: str = SESSION, call: str = "toolu_1") -> str:
    """The assistant line of a session that calls ``mcp__clm-policy__<tool>`` with ``context``
    tokens in the window."""
    fresh, created = 6, 1200
    line = {
        "parentUuid": None,
        "isSidechain": False,
        "type": "assistant",
        "uuid": f"u-{call}",
        "sessionId": session,
        "cwd": "/e2e/project",
        "version": "2.1.328",
        "timestamp": "2026-12-01T07:11:00.000Z",
        "message": {
            "id": f"msg_{call}",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [
                {"type": "tool_use", "id": call, "name": f"mcp__clm-policy__{tool}", "input": {}}
            ],
            "stop_reason": "tool_use",
            "usage": {
                "input_tokens": fresh,
                "cache_creation_input_tokens": created,
                "cache_read_input_tokens": context - fresh - created,
                "output_tokens": 40,
            },
        },
    }
    return json.dumps(line) + "\n"


class Project:
    """A Claude Code project: its folder, ``.clm-policy.yaml``, Claude Code's configuration
    folder and the transcripts of its sessions."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.path = root / "project"
        self.path.mkdir()
        write_config(self.path)
        self.claude = root / "claude-config"
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(self.claude))
        monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(self.path))
        monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", SESSION)
        self.transcripts = Path(
            transcripts_dir({"CLAUDE_CONFIG_DIR": str(self.claude)}, str(self.path))
        )
        self.transcripts.mkdir(parents=True)

    def session(self, tool: str | None, context: int = 130_000, session: str = SESSION) -> Path:
        """The real transcript as session ``session``, calling ``tool`` last (None: no call)."""
        path = self.transcripts / f"{session}.jsonl"
        shutil.copyfile(REAL, path)
        text = path.read_text().replace(SESSION, session)
        if tool is not None:
            text += calling_line(tool, context, session)
        path.write_text(text)
        return path

    @property
    def memory(self) -> Path:
        return Path(memory_path(None, load_config(self.path)))

    def commits(self) -> list[str]:
        if not self.memory.exists():
            return []
        return git(self.memory, "log", "--format=%s").splitlines()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return Project(tmp_path, monkeypatch)


@pytest.fixture
def call(project: Project) -> Callable[..., Any]:
    """``call(tool, **arguments)``: the tool's result through the SDK's client."""

    def _call(name: str, **arguments: Any) -> Any:
        async def go() -> Any:
            server = build_server(Tools(cwd=str(project.path)))
            async with Client(server) as client:
                return await client.call_tool(name, arguments)

        return anyio.run(go)

    return _call


def ok(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    data: dict[str, Any] = result.structured_content
    assert json.loads(result.content[0].text) == data
    return data


def refused(result: Any) -> str:
    assert result.is_error
    assert result.structured_content is None
    text: str = result.content[0].text
    return text


# -- what the model sees


def test_the_tools_their_descriptions_and_typed_bounded_arguments(project: Project) -> None:
    async def listed() -> Any:
        async with Client(build_server(Tools(cwd=str(project.path)))) as client:
            return (await client.list_tools()).tools

    tools = {t.name: t for t in anyio.run(listed)}
    assert sorted(tools) == sorted(DESCRIPTIONS)
    assert {name: t.description for name, t in tools.items()} == DESCRIPTIONS
    handoff = tools["handoff"].input_schema
    assert handoff["required"] == ["goal", "next_step"]
    props = handoff["properties"]
    # the fields are the handoff request's parts, described as the Stop request describes them
    assert list(props) == [
        "goal",
        "next_step",
        "tasks",
        "decisions",
        "verification",
        "blockers",
        "environment",
        "plan",
        "notes",
    ]
    for section in SECTIONS:
        assert props[section.field]["description"] == section.asks
        assert section.asks in handoff_request()
    assert props["goal"]["type"] == "string"
    assert props["goal"]["maxLength"] == 2000
    assert props["tasks"]["type"] == "array"
    assert props["tasks"]["maxItems"] == 50
    assert props["tasks"]["items"] == {"maxLength": 1000, "type": "string"}
    assert props["notes"]["maxLength"] == 4000
    assert tools["memory_write"].input_schema["required"] == ["key", "text"]
    assert tools["status"].input_schema["properties"] == {}


# -- status and explain


def test_status_says_the_context_the_decision_and_what_to_do(
    project: Project, call: Callable[..., Any]
) -> None:
    transcript = project.session("status")
    data = ok(call("status"))
    assert data["session"] == SESSION
    assert data["transcript"] == str(transcript)
    assert data["found_by"] == HOLDS_CALL
    assert data["context"] == {
        "tokens": 130_000,
        "window": 200_000,
        "window_source": "model claude-sonnet-4",
        "share": 0.65,
        "estimated": False,
        "model": "claude-sonnet-4-6",
    }
    assert data["thresholds"] == {"compact_at": 120_000, "handoff_at": 150_000}
    decision = data["decision"]
    assert (decision["action"], decision["trigger"]) == ("compact", "soft_compact")
    assert decision["policy"] == "claude-code"
    assert data["advice"] == (
        "The context is 65% (130,000 of 200,000) full and the policy says compact (context "
        "130000 >= soft limit 120000): finish the current step without reading large files or "
        "long outputs; the person runs /compact."
    )
    assert project.commits() == []  # status writes nothing


def test_status_at_the_hard_limit_asks_for_the_handoff_tool(
    project: Project, call: Callable[..., Any]
) -> None:
    project.session("status", context=160_000)
    data = ok(call("status"))
    assert data["decision"]["trigger"] == "hard_handoff"
    assert data["advice"].startswith(
        "The policy says hand off (context 160000 >= hard limit 150000): finish the step"
    )


def test_explain_gives_every_rule_with_the_values_it_read(
    project: Project, call: Callable[..., Any]
) -> None:
    project.session("explain")
    data = ok(call("explain"))
    explanation = data["explanation"]
    assert explanation["decision"]["trigger"] == "soft_compact"
    rules = {r["id"]: r for r in explanation["rules"]}
    assert rules["soft_compact"]["decided"] is True
    assert rules["soft_compact"]["result"] is True
    assert rules["hard_handoff"]["result"] is False
    assert rules["hard_handoff"]["names"]["tokens.context"] == 130_000
    assert explanation["otherwise"] == "continue"


# -- handoff


def test_handoff_commits_the_agents_fields_with_the_transcripts_lists_and_seeds_the_next(
    project: Project, call: Callable[..., Any]
) -> None:
    project.session("handoff")
    data = ok(
        call(
            "handoff",
            goal="calc.py with add() and subtract()",
            tasks=["add(): done", "subtract(): not started"],
            verification=["`python3 -B test_calc.py`: 1 passed"],
            blockers=[],
            next_step="write subtract() and its test",
            plan=["run python3 -B test_calc.py"],
            notes=f"the deploy key {SECRET} is not to be used",
        )
    )
    assert data["session"] == SESSION
    assert data["rule"] == "agent"  # the policy says compact, not hand off: the agent chose
    manifest = json.loads(git(project.memory, "show", f"HEAD:{data['manifest']}"))
    # the agent's words whole, as a reply under the request's headings would be
    assert manifest["agent_words"] == {
        "source": "tool",
        "step": None,
        "text": (
            "## Goal\n\ncalc.py with add() and subtract()\n\n## Tasks\n\n- add(): done\n- "
            "subtract(): not started\n\n## Verification\n\n- `python3 -B test_calc.py`: 1 "
            "passed\n\n## Next step\n\nwrite subtract() and its test\n\n- run python3 -B "
            "test_calc.py\n\n## Notes\n\nthe deploy key [REDACTED:anthropic-api-key] is not to "
            "be used"
        ),
    }
    assert manifest["goal"] == "calc.py with add() and subtract()"
    assert manifest["done"] == ["add(): done"]
    assert "subtract(): not started" in manifest["remaining"]
    assert manifest["status"] == "in_progress"
    assert manifest["next_safe_action"] == "write subtract() and its test"
    # project-relative, the file changed last last (calc.py, then test_calc.py, then calc.py)
    assert manifest["changed_artifacts"] == ["test_calc.py", "calc.py"]
    assert manifest["commands_and_results"][-1] == "python3 -B test_calc.py: passed"
    assert manifest["decision_rationale"] == (
        "the agent handed off; the policy says compact (context 130000 >= soft limit 120000)"
    )
    assert SECRET not in json.dumps(data)
    trailers = git(project.memory, "log", "-1", "--format=%(trailers:only,unfold)")
    assert f"Clm-Session: {SESSION}\n" in trailers
    assert "Clm-Rule: agent\n" in trailers
    assert "Clm-Via: mcp\n" in trailers
    assert "Clm-Agent: claude-code\n" in trailers
    assert "Clm-Redactions: 1\n" in trailers
    assert data["commit"] == git(project.memory, "rev-parse", "HEAD").strip()
    assert data["seed"].startswith("# Handoff: you continue the task of an earlier session\n")
    assert "> write subtract() and its test" in data["seed"]

    # the next session (SessionStart at startup) is told exactly what the tool announced
    start = {
        "hook_event_name": "SessionStart",
        "source": "startup",
        "session_id": OTHER,
        "transcript_path": str(project.transcripts / f"{OTHER}.jsonl"),
        "cwd": str(project.path),
    }
    reply = run_claude_hook(json.dumps(start).encode())
    context = json.loads(reply.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context == data["seed"]


def test_the_tool_and_handoff_with_a_reply_give_the_same_seed(
    project: Project, call: Callable[..., Any], tmp_path: Path
) -> None:
    """The MCP road and ``clm-policy handoff --transcript --reply`` are one: the tool's fields
    are the reply a person would write under the request's headings, and the same words give
    the same seed (the memory repository's path aside)."""
    transcript = project.session("handoff")
    data = ok(
        call(
            "handoff",
            goal="calc.py with add() and subtract()",
            tasks=["add(): done", "subtract(): not started"],
            blockers=[],
            next_step="write subtract() and its test",
        )
    )
    manifest = json.loads(git(project.memory, "show", f"HEAD:{data['manifest']}"))
    words = manifest["agent_words"]["text"]
    reply = tmp_path / "reply.md"
    reply.write_text(words)
    other = tmp_path / "other"
    from conftest import invoke

    assert invoke("init", str(other)).exit_code == 0
    result = invoke(
        "handoff", "--memory", str(other), "--transcript", str(transcript), "--reply",
        str(reply), "--policy", "claude-code", "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["manifest"]["agent_words"]["text"] == words
    by_cli = out["seed"][0]["content"].replace(str(other), "<memory>")
    home = str(Path.home())
    shown = (
        str(project.memory).replace(home, "~", 1) if str(project.memory).startswith(home) else ""
    )
    by_tool = data["seed"].replace(str(project.memory), "<memory>")
    assert (by_tool.replace(shown, "<memory>") if shown else by_tool) == by_cli


def test_a_handoff_with_empty_fields_is_the_record_alone(
    project: Project, call: Callable[..., Any]
) -> None:
    project.session("handoff")
    data = ok(call("handoff", goal="", next_step="  "))
    manifest = json.loads(git(project.memory, "show", f"HEAD:{data['manifest']}"))
    assert manifest["agent_words"] is None
    assert "its agent wrote no handoff" in data["seed"]
    assert "- `calc.py`" in data["seed"]  # the record: the files the session changed


def test_memory_read_reads_a_handoff_by_its_key_or_its_number_and_says_what_a_path_means(
    project: Project, call: Callable[..., Any]
) -> None:
    """The seed names ``sessions/<id>/handoffs/001``; an agent that counts (``…/1``) was told
    "no handoff", and one that gave the file (``….md``) an invalid key cut before the '.md'
    that made it one."""
    project.session("handoff")
    data = ok(call("handoff", goal="calc.py", next_step="write subtract()"))
    key = data["handoff"].removesuffix(".md")
    whole = git(project.memory, "show", f"HEAD:{data['handoff']}").removesuffix("\n")
    assert ok(call("memory_read", key=key))["content"] == whole
    counted = key.removesuffix("001") + "1"
    assert ok(call("memory_read", key=counted)) == {
        "key": counted,
        "content": whole,
        "tags": ["handoff"],
        "updated_at": None,
    }
    assert refused(call("memory_read", key=data["handoff"])).startswith(
        f"Error executing tool memory_read: invalid memory key '{data['handoff'][:60]}…' "
        f"(did you mean '{key}'?): use letters"
    )
    ok(call("memory_write", key="decisions/db", text="SQLite"))
    assert refused(call("memory_read", key="topics/decisions/db")) == (
        "Error executing tool memory_read: no memory topic 'topics/decisions/db' (did you mean "
        "'decisions/db'?)"
    )
    assert refused(call("memory_read", key="topics/decisions/db.md")).startswith(
        "Error executing tool memory_read: invalid memory key 'topics/decisions/db.md' (did you "
        "mean 'decisions/db'?): use letters"
    )


def test_a_handoff_whose_push_fails_is_committed_and_says_so(
    project: Project, call: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person's own remote, which the new memory repository lacks: the handoff stands
    (the next session starts from it), and the answer says the push failed."""
    monkeypatch.setenv("CLM_POLICY_REMOTE", "origin")
    project.session("handoff")
    data = ok(call("handoff", goal="commas", next_step="release"))
    assert data["push_failed"].startswith("the handoff is committed locally (")
    assert "but pushing it to 'origin' failed: " in data["push_failed"]
    assert project.commits()[0].startswith(f"clm(handoff): {SESSION}")
    monkeypatch.delenv("CLM_POLICY_REMOTE")
    project.session("handoff", context=140_000)  # a later turn: a handoff of its own
    assert ok(call("handoff", goal="g", next_step="n"))["push_failed"] is None


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"goal": "g" * 2001, "next_step": "go"},
            "argument 'goal': String should have at most 2000 characters",
        ),
        ({"goal": 42, "next_step": "go"}, "argument 'goal': Input should be a valid string"),
        (
            {"goal": "g", "next_step": "go", "tasks": "all of it"},
            "argument 'tasks': Input should be a valid list",
        ),
        (
            {"goal": "g", "next_step": "go", "verification": ["v" * 1001]},
            "argument 'verification[0]': String should have at most 1000 characters",
        ),
        (
            {"goal": "g", "next_step": "go", "blockers": ["b"] * 51},
            "argument 'blockers': List should have at most 50 items after validation, not 51",
        ),
        ({"goal": "g"}, "missing argument 'next_step'"),
    ],
)
def test_a_bad_handoff_is_a_tool_error_and_writes_nothing(
    project: Project, call: Callable[..., Any], arguments: dict[str, Any], message: str
) -> None:
    project.session("handoff")
    assert refused(call("handoff", **arguments)) == f"Error executing tool handoff: {message}"
    assert project.commits() == []


HANDOFF_ARGUMENTS = (
    "its arguments: goal, next_step, tasks, decisions, verification, blockers, environment, "
    "plan, notes"
)


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        (
            "handoff",
            {"goal": "g", "next_step": "n", "bogus": 1},
            f"unknown argument 'bogus'; {HANDOFF_ARGUMENTS}",
        ),
        (  # a typo would drop what the agent wrote
            "handoff",
            {"goal": "g", "next_step": "n", "blocker": ["the CI is red"], "note": "x"},
            "unknown argument 'blocker' (did you mean 'blockers'?); unknown argument 'note' "
            f"(did you mean 'notes'?); {HANDOFF_ARGUMENTS}",
        ),
        ("status", {"verbose": True}, "unknown argument 'verbose'; its arguments: none"),
        ("explain", {"rule": "x"}, "unknown argument 'rule'; its arguments: none"),
        (
            "memory_search",
            {"query": "db", "limit": 3},
            "unknown argument 'limit'; its arguments: query",
        ),
        (
            "memory_read",
            {"keys": "decisions/db"},
            "unknown argument 'keys' (did you mean 'key'?); its arguments: key",
        ),
        (
            "memory_write",
            {"key": "k", "text": "t", "tags": ["a"], "b\nc": 1, **{f"x{n}": n for n in range(5)}},
            "unknown argument 'tags'; unknown argument 'b\\nc'; unknown argument 'x0'; unknown "
            "argument 'x1'; unknown argument 'x2'; 2 more unknown; its arguments: key, text",
        ),
    ],
)
def test_an_argument_a_tool_does_not_take_is_refused_and_nothing_is_written(
    project: Project, call: Callable[..., Any], tool: str, arguments: dict[str, Any], message: str
) -> None:
    project.session(tool)
    assert refused(call(tool, **arguments)) == f"Error executing tool {tool}: {message}"
    assert project.commits() == []


def test_no_session_to_be_found_is_a_tool_error(project: Project, call: Callable[..., Any]) -> None:
    for tool in ("handoff", "status", "explain"):
        arguments = {"goal": "g", "next_step": "go"} if tool == "handoff" else {}
        assert refused(call(tool, **arguments)) == (
            f"Error executing tool {tool}: no Claude Code session found for {project.path}: no "
            f"transcript in {project.transcripts} (nor of CLAUDE_CODE_SESSION_ID {SESSION!r} "
            "elsewhere)"
        )
    assert project.commits() == []


def test_an_unknown_tool_is_refused(project: Project, call: Callable[..., Any]) -> None:
    assert refused(call("rm_rf")) == "Unknown tool: rm_rf"


# -- memory topics


def test_memory_write_read_search_redacted_and_committed(
    project: Project, call: Callable[..., Any]
) -> None:
    assert ok(call("memory_search", query="sqlite")) == {
        "memory": str(project.memory),
        "results": [],
    }
    written = ok(
        call(
            "memory_write",
            key="decisions/db",
            text=f"We use SQLite for the cache.\nThe admin key {SECRET} is revoked.",
        )
    )
    assert written["path"] == "topics/decisions/db.md"
    assert written["redactions"] == 1
    assert written["commit"] == git(project.memory, "rev-parse", "HEAD").strip()
    assert project.commits()[0] == "clm(memory): decisions/db"
    read = ok(call("memory_read", key="decisions/db"))
    assert read["content"] == (
        "We use SQLite for the cache.\nThe admin key [REDACTED:anthropic-api-key] is revoked."
    )
    found = ok(call("memory_search", query="sqlite"))["results"]
    assert [(r["key"], r["excerpt"][:28]) for r in found] == [
        ("decisions/db", "We use SQLite for the cache.")
    ]


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        (
            "memory_write",
            {"key": "../x", "text": "t"},
            "invalid memory key '../x': use letters, digits, '_' and '-', parts joined by '/' "
            "(at most 200 characters, no '..', no leading '/')",
        ),
        (
            "memory_write",
            {"key": "/etc/passwd", "text": "t"},
            "invalid memory key '/etc/passwd': use letters, digits, '_' and '-', parts joined by "
            "'/' (at most 200 characters, no '..', no leading '/')",
        ),
        (
            "memory_write",
            {"key": "notes", "text": "t" * (64 * 1024 + 1)},
            "argument 'text': String should have at most 65536 characters",
        ),
        ("memory_write", {"key": "notes", "text": " "}, "the text is empty"),
        (
            "memory_write",
            {"key": ["notes"], "text": "t"},
            "argument 'key': Input should be a valid string",
        ),
        (
            "memory_read",
            {"key": "../x"},
            "invalid memory key '../x': use letters, digits, '_' and '-', parts joined by '/' (at most 200 characters, no '..', no leading '/')",
        ),
        (
            "memory_read",
            {"key": "nothing/here"},
            "no memory topic 'nothing/here' (memory_search finds topics)",
        ),
        (
            "memory_search",
            {"query": "q" * 201},
            "argument 'query': String should have at most 200 characters",
        ),
        ("memory_search", {"query": "  "}, "the query is empty"),
    ],
)
def test_bad_memory_calls_are_tool_errors_and_write_nothing(
    project: Project, call: Callable[..., Any], tool: str, arguments: dict[str, Any], message: str
) -> None:
    text = refused(call(tool, **arguments))
    assert text == f"Error executing tool {tool}: {message}"
    assert text.count(tool) == 1  # the SDK's words name the tool; the message does not again
    assert project.commits() == []
    assert not (project.path.parent / "x.md").exists()


# -- which session calls


def _env(project: Project, session: str | None = SESSION) -> dict[str, str]:
    env = {"CLAUDE_CONFIG_DIR": str(project.claude), "CLAUDE_PROJECT_DIR": str(project.path)}
    if session:
        env["CLAUDE_CODE_SESSION_ID"] = session
    return env


def test_the_caller_is_the_transcript_holding_the_call(project: Project) -> None:
    # after /clear the server lives on with the old session's id: the new one holds the call
    project.session(None, session=SESSION)
    project.session("handoff", session=OTHER)
    found = find_caller("handoff", _env(project), str(project.path), wait=0)
    assert (found.session_id, found.found_by) == (OTHER, HOLDS_CALL)
    # a call that has its result already is no longer pending
    with (project.transcripts / f"{OTHER}.jsonl").open("a") as out:
        result = {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "{}"}],
            },
        }
        out.write(json.dumps(result) + "\n")
    found = find_caller("handoff", _env(project), str(project.path), wait=0)
    assert (found.session_id, found.found_by) == (SESSION, NAMED)


def test_the_call_is_looked_for_until_it_lands_or_the_wait_is_over(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code may write the call's line a moment after it calls the tool: with a wait,
    the transcripts are looked at again until the line lands; without one, once."""
    from clm_policy.agents.mcp import calling

    slept: list[float] = []
    monkeypatch.setattr(calling.time, "sleep", slept.append)
    project.session(None, session=SESSION)
    new = project.session(None, session=OTHER)  # after /clear: the old session, and the new
    found = find_caller("status", _env(project), str(project.path))
    assert (found.session_id, found.found_by, slept) == (SESSION, NAMED, [])

    def lands(seconds: float) -> None:
        slept.append(seconds)
        if len(slept) == 3:
            with new.open("a") as out:
                out.write(calling_line("status", 1000, OTHER))

    monkeypatch.setattr(calling.time, "sleep", lands)
    found = find_caller("status", _env(project), str(project.path), wait=calling.WAIT)
    assert (found.session_id, found.found_by, slept) == (OTHER, HOLDS_CALL, [calling.POLL] * 3)


@pytest.mark.parametrize("client", ["claude-code", "mcp"])
def test_the_server_waits_for_the_call_only_when_claude_code_calls(
    project: Project, monkeypatch: pytest.MonkeyPatch, client: str
) -> None:
    """Issue 27: the status call waited two seconds whenever its call was not in a transcript.
    The line is Claude Code's to write (``clientInfo.name`` "claude-code"): its call is waited
    for until it lands, with the calling response's figures; any other client's never reaches
    a transcript, and is answered at once."""
    from mcp.types import Implementation

    from clm_policy.agents.mcp import calling

    path = project.session(None, session=SESSION)
    slept: list[float] = []

    def lands(seconds: float) -> None:
        slept.append(seconds)
        with path.open("a") as out:
            out.write(calling_line("status", 90_000))

    monkeypatch.setattr(calling.time, "sleep", lands)

    async def go() -> Any:
        info = Implementation(name=client, version="2.1.332")
        async with Client(build_server(Tools(cwd=str(project.path))), client_info=info) as c:
            return await c.call_tool("status", {})

    data = ok(anyio.run(go))
    if client == "claude-code":
        assert (slept, data["found_by"], data["context"]["tokens"]) == ([0.01], HOLDS_CALL, 90_000)
    else:
        assert (slept, data["found_by"]) == ([], NAMED)


def test_without_the_call_or_an_id_the_newest_transcript(project: Project) -> None:
    import os

    older = project.session(None, session=SESSION)
    project.session(None, session=OTHER)
    os.utime(older, (1, 1))
    found = find_caller("status", _env(project, None), str(project.path), wait=0)
    assert (found.session_id, found.found_by) == (OTHER, NEWEST)
    assert found.transcript == str(project.transcripts / f"{OTHER}.jsonl")


def test_claude_codes_folders_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without CLAUDE_CONFIG_DIR: ~/.claude; without CLAUDE_PROJECT_DIR: the working folder,
    every character but letters and digits as '-'."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    folder = home / ".claude" / "projects" / "-work-my-shop-v2"
    folder.mkdir(parents=True)
    (folder / f"{SESSION}.jsonl").write_text(calling_line("status", 1000))
    found = find_caller("status", {}, "/work/my_shop.v2", wait=0)
    assert (found.session_id, found.project, found.found_by) == (
        SESSION,
        "/work/my_shop.v2",
        HOLDS_CALL,
    )


def test_after_a_handoff_through_the_tool_the_prompt_advises_nothing_and_the_line_says_so(
    project: Project, call: Callable[..., Any]
) -> None:
    """Issue 26: after the agent handed off through MCP, the next prompt still advised
    `/compact` (130,000 of a 200K window: the compaction range) and the status line still said
    `compact`. A handoff committed by any road ends the advice; the line says "handed off"."""
    path = project.session("handoff", context=130_000)
    prompt = {
        "session_id": SESSION,
        "cwd": str(project.path),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "go on",
        "transcript_path": str(path),
    }
    status = {
        "session_id": SESSION,
        "workspace": {"current_dir": str(project.path)},
        "model": {"id": "claude-sonnet-4-5"},
        "context_window": {
            "context_window_size": 200_000,
            "current_usage": {"input_tokens": 130_000},
        },
    }
    before = run_claude_hook(json.dumps(prompt).encode())
    assert "Run: /compact" in json.loads(before.stdout)["systemMessage"]
    assert status_line(json.dumps(status).encode()) == (
        "ctx 72% 130k/180k · handoff at 83% · compact · claude-code/coding"
    )
    ok(call("handoff", goal="calc.py", next_step="write subtract()"))
    assert run_claude_hook(json.dumps(prompt).encode()) == HookOutput()
    assert status_line(json.dumps(status).encode()) == (
        "ctx 72% 130k/180k · handoff at 83% · handed off · claude-code/coding"
    )


def test_a_handoffs_fields_reach_the_commit_message_terminal_safe(
    project: Project, call: Callable[..., Any]
) -> None:
    """What a terminal would obey, in the fields an agent writes, is escaped in the commit
    message (``git log`` shows it), as the printer escapes it (issue 26)."""
    project.session("handoff")
    hostile = "\x1b]0;pwn\x07\x1b[31m\u202e\x9b"
    ok(
        call(
            "handoff",
            goal=f"ship {hostile} the parser",
            tasks=[f"done {hostile}"],
            next_step=f"next {hostile}",
            notes=f"notes {hostile}",
        )
    )
    message = git(project.memory, "log", "-1", "--format=%B")
    assert not any(c in message for c in "\x1b\x07\u202e\x9b"), message
    assert "\\x1b]0;pwn\\x07\\x1b[31m\\u202e\\x9b" in message


def test_a_second_handoff_at_the_same_turn_commits_nothing_and_says_so(
    project: Project, call: Callable[..., Any]
) -> None:
    """The tool called twice with nothing new in the session between the calls committed a
    second handoff (a new number, the same content); the road every handoff takes
    (lifecycle/pipelines.py) now commits nothing and the answer says which handoff stands."""
    project.session("handoff")
    first = ok(call("handoff", goal="commas", next_step="release"))
    assert first["committed"] is True
    commits = project.commits()
    again = ok(call("handoff", goal="commas", next_step="release"))
    assert project.commits() == commits
    assert (again["committed"], again["commit"]) == (False, first["commit"])
    assert again["handoff"] == first["handoff"]
    assert again["message"].endswith(
        f"is handed off already: commit {first['commit'][:12]} ({first['handoff']}); nothing "
        "new to commit"
    )
    project.session("handoff", context=140_000)  # the session went on: a new handoff
    later = ok(call("handoff", goal="commas", next_step="release"))
    assert later["committed"] is True
    assert later["commit"] != first["commit"]
