"""The OpenAI-compatible agent against a local endpoint the tests start (127.0.0.1, port 0):
what it sends (model, key, the conversation with the hint and the seed), what it reads
(replies, usage), how it ends (the done marker, the step limit), how `clm-policy run --agent
openai` compacts, hands off and commits, and how a failing endpoint ends a run (exit 2, the
session committed as stopped). Nothing here reaches the network."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from chatserver import ChatServer, Reply
from chatserver import serve as serve_chat

from clm_policy.base.errors import EndpointError, InputError
from clm_policy.lifecycle.request import handoff_request
from clm_policy.lifecycle.seed import PART_1
from clm_policy.loop.openai_agent import (
    NO_USAGE,
    OpenAIChatAgent,
    OpenAIConfig,
    continue_prompt,
    system_prompt,
)
from clm_policy.models.enums import MessageRole, TaskStatus
from clm_policy.models.state import Message

from conftest import git, invoke, run_process

KEY = "sk-test-0123456789abcdefABCDEF"
MODEL = "test-model-1"
TODAY = datetime.now(UTC).strftime("%Y%m%d")


def tokens(text: str) -> int:
    """The fake endpoint's tokenizer: four characters a token (as clm-policy estimates)."""
    return -(-len(text) // 4)


def answer(content: str, *, usage: bool = True) -> Reply:
    """A completion saying ``content``; usage counts the request's messages and the reply."""

    def reply(body: dict[str, Any]) -> tuple[int, bytes]:
        data: dict[str, Any] = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
        }
        if usage:
            prompt = sum(tokens(m["content"]) for m in body["messages"])
            data["usage"] = {
                "prompt_tokens": prompt,
                "completion_tokens": tokens(content),
                "total_tokens": prompt + tokens(content),
            }
        return 200, json.dumps(data).encode()

    return reply


def status(code: int, body: bytes) -> Reply:
    return lambda _body: (code, body)


def hang(_body: dict[str, Any]) -> None:
    return None


class Endpoint(ChatServer):
    """A scripted OpenAI-compatible endpoint: ``replies`` in order, then ``then``."""

    def env(self, timeout: str = "10") -> dict[str, str]:
        return {
            "CLM_POLICY_OPENAI_BASE_URL": self.url,
            "CLM_POLICY_OPENAI_MODEL": MODEL,
            "OPENAI_API_KEY": KEY,
            "CLM_POLICY_OPENAI_TIMEOUT": timeout,
        }


@contextmanager
def serve() -> Iterator[Endpoint]:
    """An endpoint on 127.0.0.1 for the block; a request hanging in it is released at the end."""
    endpoint = Endpoint()
    with serve_chat(endpoint):
        yield endpoint


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[Endpoint]:
    """The endpoint, and the environment pointing at it (for runs in-process or as a process)."""
    with serve() as found:
        for name in ("OPENAI_API_KEY", "CLM_POLICY_OPENAI_API_KEY"):
            monkeypatch.delenv(name, raising=False)
        for name, value in found.env().items():
            monkeypatch.setenv(name, value)
        yield found


def config(endpoint: Endpoint, **changes: Any) -> OpenAIConfig:
    return (
        OpenAIConfig.from_env(endpoint.env())
        if not changes
        else OpenAIConfig(**{"model": MODEL, "api_key": KEY, "base_url": endpoint.url, **changes})
    )


def sent(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in body["messages"]]


# -- the agent on its own ---------------------------------------------------------------------


def test_a_step_sends_the_model_key_and_conversation(endpoint: Endpoint) -> None:
    endpoint.script(answer("Read the code."), answer("Wrote the plan.\n\n**Task complete.**"))
    agent = OpenAIChatAgent(config(endpoint), "Plan the migration")
    first = agent.step([])
    (request,) = endpoint.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == f"Bearer {KEY}"
    assert request["headers"]["Content-Type"] == "application/json"
    assert request["body"]["model"] == MODEL
    assert sent(request["body"]) == [
        ("system", system_prompt()),
        ("user", "Plan the migration"),
    ]
    assert [(m.role.value, m.content) for m in first.messages_added] == [
        ("user", "Plan the migration"),
        ("assistant", "Read the code."),
    ]
    prompt = tokens(system_prompt()) + tokens("Plan the migration")
    assert (first.input_tokens, first.output_tokens) == (prompt, tokens("Read the code."))
    assert first.messages_added[-1].tokens == tokens("Read the code.")
    assert (first.task_status, first.notes) == (TaskStatus.RUNNING, "")
    second = agent.step(first.messages_added)
    assert sent(endpoint.bodies()[1])[1:] == [
        ("user", "Plan the migration"),
        ("assistant", "Read the code."),
        ("user", continue_prompt()),
    ]
    assert second.task_status is TaskStatus.COMPLETED  # the marker's line, emphasis ignored
    assert (agent.played, agent.last_reply) == (2, "Wrote the plan.\n\n**Task complete.**")


@pytest.mark.parametrize(
    ("reply", "done"),
    [
        ("All done.\nTASK COMPLETE", True),
        ("TASK COMPLETE.", True),
        ("  `task   complete`  ", True),
        ("I will say TASK COMPLETE when it is done.", False),
        ("TASK COMPLETELY FINISHED", False),
        ("", False),
    ],
)
def test_the_done_marker_is_a_line_of_its_own(endpoint: Endpoint, reply: str, done: bool) -> None:
    endpoint.script(answer(reply))
    result = OpenAIChatAgent(config(endpoint), "g").step([])
    assert (result.task_status is TaskStatus.COMPLETED) is done


def test_a_configured_done_marker(endpoint: Endpoint) -> None:
    endpoint.script(answer("TASK COMPLETE"), answer("finished: GOAL MET"), answer("GOAL MET"))
    agent = OpenAIChatAgent(config(endpoint, done_marker="GOAL MET"), "g")
    assert agent.system_prompt.endswith("end your reply with a line that says only: GOAL MET")
    steps = [agent.step([]).task_status for _ in range(3)]
    assert steps == [TaskStatus.RUNNING, TaskStatus.RUNNING, TaskStatus.COMPLETED]


def test_the_hint_and_the_seed_are_sent_once(endpoint: Endpoint) -> None:
    endpoint.script(then=answer("ok"))
    agent = OpenAIChatAgent(config(endpoint), "g")
    agent.inject_context("HINT: keep the API")
    added = agent.step([Message(role=MessageRole.USER, content="g")]).messages_added
    assert sent(endpoint.bodies()[-1])[1:] == [
        ("user", "g"),
        ("system", "HINT: keep the API"),
        ("user", continue_prompt()),
    ]
    assert [m.role.value for m in added] == ["system", "user", "assistant"]
    # the loop puts the hint into the state itself: it is not sent twice
    agent.inject_context("HINT 2")
    hinted = [Message(role=MessageRole.SYSTEM, content="HINT 2"), *added]
    agent.step(hinted)
    assert [c for _, c in sent(endpoint.bodies()[-1])].count("HINT 2") == 1
    # a seed replaces what was queued; the goal opens the seeded conversation
    agent.inject_context("stale hint")
    agent.reset_with_seed([Message(role=MessageRole.SYSTEM, content="SEED: the manifest")])
    agent.step([])
    assert sent(endpoint.bodies()[-1])[1:] == [("system", "SEED: the manifest"), ("user", "g")]


def test_no_usage_leaves_the_estimate_to_the_monitor(endpoint: Endpoint) -> None:
    endpoint.script(answer("done", usage=False))
    result = OpenAIChatAgent(config(endpoint), "g").step([])
    assert (result.input_tokens, result.output_tokens, result.notes) == (0, 0, NO_USAGE)
    assert result.messages_added[-1].tokens is None


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (
            status(500, b'{"error": {"message": "boom", "type": "server_error"}}'),
            "HTTP 500 (server_error)",
        ),
        (
            status(
                401,
                b'{"error": {"message": "Incorrect API key provided: sk-test-0123", "type": "invalid_request_error", "code": "invalid_api_key"}}',
            ),
            "HTTP 401 (invalid_request_error, invalid_api_key)",
        ),
        (
            status(429, b"slow down, here is a long body that is never shown"),
            "HTTP 429 (Too Many Requests)",
        ),
        (status(307, b""), "HTTP 307 (Temporary Redirect)"),  # not followed: one request
        (status(200, b"<html>not json</html>"), "the response is not a JSON object"),
        (status(200, b"[1, 2]"), "the response is not a JSON object"),
        (status(200, b'{"choices": []}'), "the response has no choices[0].message.content"),
        (
            status(200, b'{"choices": [{"message": {"content": null}}]}'),
            "the response has no choices[0].message.content",
        ),
    ],
    ids=["500", "401", "429", "redirect", "html", "array", "no-choices", "null-content"],
)
def test_endpoint_failures_are_short_and_never_show_the_key(
    endpoint: Endpoint, reply: Reply, message: str
) -> None:
    endpoint.script(reply)
    with pytest.raises(EndpointError) as caught:
        OpenAIChatAgent(config(endpoint), "g").step([])
    assert str(caught.value) == f"POST {endpoint.url}/chat/completions: {message}"
    assert "sk-test" not in str(caught.value)
    assert len(endpoint.requests) == 1


def test_a_hang_ends_at_the_timeout(endpoint: Endpoint) -> None:
    endpoint.script(hang)
    agent = OpenAIChatAgent(config(endpoint, timeout=0.2), "g")
    with pytest.raises(EndpointError, match=r"chat/completions: no answer within 0\.2 s$"):
        agent.step([])
    assert agent.played == 0


def closed_port() -> int:
    """A port on 127.0.0.1 nobody listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_a_local_endpoint_is_reached_without_a_proxy(
    endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{closed_port()}")  # would refuse
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    endpoint.script(answer("ok"))
    assert OpenAIChatAgent(config(endpoint), "g").step([]).messages_added[-1].content == "ok"


def test_no_server_is_a_connection_error() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    agent = OpenAIChatAgent(OpenAIConfig(model=MODEL, api_key=KEY, base_url=url), "g")
    with pytest.raises(
        EndpointError,
        match=r"^POST http://127\.0\.0\.1:\d+/v1/chat/completions: cannot connect \(.+\)$",
    ):
        agent.step([])


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"OPENAI_API_KEY": KEY},
            "no model: set CLM_POLICY_OPENAI_MODEL (for example gpt-4o-mini)",
        ),
        (
            {"CLM_POLICY_OPENAI_MODEL": "m"},
            "no API key: set OPENAI_API_KEY (or CLM_POLICY_OPENAI_API_KEY)",
        ),
        (
            {"CLM_POLICY_OPENAI_MODEL": "m", "OPENAI_API_KEY": "sk-a\nInjected: 1"},
            "OPENAI_API_KEY: the key holds spaces or unprintable characters",
        ),
        (
            {
                "CLM_POLICY_OPENAI_MODEL": "m",
                "OPENAI_API_KEY": KEY,
                "CLM_POLICY_OPENAI_BASE_URL": "http://api.example.com/v1",
            },
            "CLM_POLICY_OPENAI_BASE_URL: plain http only to this machine (localhost, 127.0.0.1, ::1): the API key would cross the network readable; use https",
        ),
        (
            {
                "CLM_POLICY_OPENAI_MODEL": "m",
                "OPENAI_API_KEY": KEY,
                "CLM_POLICY_OPENAI_BASE_URL": "https://u:sk-secret@example.com/v1",
            },
            "CLM_POLICY_OPENAI_BASE_URL: a base URL takes no user name, password, query or fragment (the key goes in OPENAI_API_KEY)",
        ),
        (
            {
                "CLM_POLICY_OPENAI_MODEL": "m",
                "OPENAI_API_KEY": KEY,
                "CLM_POLICY_OPENAI_BASE_URL": "file:///etc/passwd",
            },
            "CLM_POLICY_OPENAI_BASE_URL: not an http(s) URL with a host",
        ),
        (
            {
                "CLM_POLICY_OPENAI_MODEL": "m",
                "OPENAI_API_KEY": KEY,
                "CLM_POLICY_OPENAI_TIMEOUT": "soon",
            },
            "CLM_POLICY_OPENAI_TIMEOUT: 'soon' is no number of seconds",
        ),
        (
            {
                "CLM_POLICY_OPENAI_MODEL": "m",
                "OPENAI_API_KEY": KEY,
                "CLM_POLICY_OPENAI_TIMEOUT": "0",
            },
            "CLM_POLICY_OPENAI_TIMEOUT: the timeout must be 0 < seconds <= 3600",
        ),
    ],
)
def test_configuration_errors(env: dict[str, str], message: str) -> None:
    with pytest.raises(InputError) as caught:
        OpenAIConfig.from_env(env)
    assert str(caught.value) == message
    assert "sk-" not in str(caught.value)


def test_configuration_from_the_environment() -> None:
    found = OpenAIConfig.from_env(
        {
            "CLM_POLICY_OPENAI_MODEL": "m",
            "OPENAI_API_KEY": "sk-generic",
            "CLM_POLICY_OPENAI_API_KEY": "sk-specific",
            "CLM_POLICY_OPENAI_BASE_URL": "http://[::1]:8000/v1/",
        }
    )
    assert (found.api_key, found.base_url, found.url, found.timeout) == (
        "sk-specific",
        "http://[::1]:8000/v1",
        "http://[::1]:8000/v1/chat/completions",
        120.0,
    )
    assert "sk-" not in repr(found)
    default = OpenAIConfig.from_env({"CLM_POLICY_OPENAI_MODEL": "m", "OPENAI_API_KEY": "k"})
    assert default.url == "https://api.openai.com/v1/chat/completions"


# -- clm-policy run --agent openai ------------------------------------------------------------


def work(n: int) -> str:
    """Step ``n``'s answer: about 300 tokens of work."""
    return f"Step {n}: " + "migrated one more module; " * 46


HANDOFF_REPLY = (
    "## Goal\nMigrate the modules\n\n## Tasks\n- modules 1-10: migrated\n\n"
    "## Next step\nMigrate module 11"
)


def migration(endpoint: Endpoint) -> None:
    """Fifteen steps of work, then done: under --soft-compact 1500 --hard-handoff 2500 that is
    a compaction at step 5, a handoff at step 10 (the model asked for its handoff writes
    :data:`HANDOFF_REPLY`), and in the next session (which starts from the seed) a compaction
    at its step 4."""
    endpoint.script(
        *(answer(work(n)) for n in range(1, 11)),
        answer(HANDOFF_REPLY),
        *(answer(work(n)) for n in range(11, 16)),
        answer("All migrated.\nTASK COMPLETE"),
    )


LIMITS = ("--soft-compact", "1500", "--hard-handoff", "2500", "--continue-after-handoff")


def run_openai(tmp_path: Path, *args: str) -> dict[str, Any]:
    result = invoke(
        "run", "--agent", "openai", "--memory", str(tmp_path / "mem"), "--format", "json", *args
    )
    assert result.exit_code == 0, result.stderr or result.stdout
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def test_run_compacts_hands_off_and_commits(endpoint: Endpoint, tmp_path: Path) -> None:
    migration(endpoint)
    out = run_openai(tmp_path, "--goal", "Migrate the modules", *LIMITS)
    first = f"openai-{TODAY}"
    assert (out["agent"], out["model"], out["scenario"]) == ("openai", MODEL, None)
    assert (out["stopped_reason"], out["steps"], out["compact_count"]) == ("completed", 16, 2)
    assert out["sessions"] == [first, f"{first}-2"]
    assert [
        (e["session"], e["step"], e["action"], e["rule"])
        for e in out["timeline"]
        if e["action"] != "continue"
    ] == [
        (first, 5, "compact", "soft_compact"),
        (first, 10, "handoff", "hard_handoff"),
        (f"{first}-2", 4, "compact", "soft_compact"),  # the seed fills the context early
    ]
    requests = endpoint.requests
    assert len(requests) == 17  # 16 steps and the handoff the model was asked for
    assert {r["headers"]["Authorization"] for r in requests} == {f"Bearer {KEY}"}
    assert {r["body"]["model"] for r in requests} == {MODEL}
    # step 6 carries the hint of the compaction at step 5, once, and what it kept
    hints = [c for role, c in sent(requests[5]["body"]) if role == "system"][1:]
    assert len(hints) == 1
    assert hints[0].startswith("## Context compacted at step 5\n")
    assert "**Goal:** Migrate the modules" in hints[0]
    # at the handoff the model is asked for it, as every road asks; its reply is kept whole
    assert sent(requests[10]["body"])[-1] == ("user", handoff_request())
    repo = tmp_path / "mem"
    manifest_path = git(
        repo, "log", "--format=%(trailers:key=Clm-Manifest,valueonly)", "-1", "--grep=clm(handoff)"
    ).strip()
    manifest = json.loads(git(repo, "show", f"HEAD:{manifest_path}"))
    assert manifest["agent_words"] == {"source": "reply", "step": None, "text": HANDOFF_REPLY}
    # the next session starts from the handoff's seed, and the goal as the user's message
    seeded = sent(requests[11]["body"])
    assert seeded[1][0] == "system"
    assert seeded[1][1].startswith("# Handoff: you continue the task of an earlier session")
    assert f"{PART_1}\n\n> ## Goal\n> Migrate the modules\n" in seeded[1][1]
    assert seeded[-1] == ("user", "Migrate the modules")
    assert {role for role, _ in seeded[:-1]} == {"system"}  # no transcript crosses a handoff
    # the context is what the endpoint reported: the request's prompt plus the reply
    metrics = [
        json.loads(x)
        for x in git(repo, "show", f"HEAD:sessions/{first}/metrics.jsonl").splitlines()
    ]
    prompt = sum(tokens(c) for _, c in sent(requests[0]["body"]))
    assert (metrics[0]["context_tokens"], metrics[0]["estimated"]) == (
        prompt + tokens(work(1)),
        False,
    )
    events = git(repo, "log", "--format=%s").splitlines()
    assert events[0] == f"clm(session): {first}-2 step 6, completed"
    assert f"clm(handoff): {first} step 10, hard_handoff" in events
    assert f"clm(compact): {first} step 5, soft_compact" in events
    record = json.loads(git(repo, "show", f"HEAD:sessions/{first}-2/run.json"))
    assert {k: record[k] for k in ("agent", "model", "base_url", "done_marker", "stopped")} == {
        "agent": "openai",
        "model": MODEL,
        "base_url": endpoint.url,
        "done_marker": "TASK COMPLETE",
        "stopped": "completed",
    }
    assert "scenario" not in record
    leaked = subprocess.run(
        ["git", "-C", str(repo), "grep", "-F", KEY, "HEAD"], capture_output=True, check=False
    )
    assert leaked.returncode == 1  # the key is in no committed file


def test_run_as_a_process(endpoint: Endpoint, tmp_path: Path) -> None:
    migration(endpoint)
    proc = run_process(
        "run",
        "--agent",
        "openai",
        "--goal",
        "Migrate the modules",
        "--memory",
        "mem",
        *LIMITS,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    first = f"openai-{TODAY}"
    lines = proc.stdout.splitlines()
    assert lines[0] == (
        f"working on the goal with model {MODEL} at {endpoint.url} under policy default "
        "(profile coding) into a new memory repository mem"
    )
    assert (
        lines[1]
        == f"  session {first}, at most 20 steps; done when the model answers 'TASK COMPLETE'"
    )
    assert "last reply: All migrated. TASK COMPLETE" in lines
    assert (
        f"stopped: completed after 16 steps; 2 compactions, 1 handoff, sessions {first}, {first}-2"
    ) in lines
    assert len(endpoint.requests) == 17
    status = json.loads(
        invoke("status", "--memory", str(tmp_path / "mem"), "--format", "json").stdout
    )
    assert [(r["session"], r["stopped"]) for r in status] == [
        (first, "handoff"),
        (f"{first}-2", "completed"),
    ]


def test_the_step_limit_and_a_second_run(endpoint: Endpoint, tmp_path: Path) -> None:
    endpoint.script(then=answer("still working"))
    out = run_openai(tmp_path, "--goal", "g")
    assert (out["stopped_reason"], out["steps"]) == ("max_steps", 20)  # the default limit
    again = run_openai(tmp_path, "--goal", "g", "--max-steps", "2")
    assert (again["stopped_reason"], again["steps"]) == ("max_steps", 2)
    assert again["sessions"] == [f"openai-{TODAY}.2"]  # a new session, never the old one


def test_a_done_marker_of_ones_own(endpoint: Endpoint, tmp_path: Path) -> None:
    endpoint.script(answer("TASK COMPLETE"), answer("Shipped.\nALL DONE"))
    out = run_openai(tmp_path, "--goal", "g", "--done-marker", "ALL DONE")
    assert (out["stopped_reason"], out["steps"]) == ("completed", 2)
    assert sent(endpoint.bodies()[0])[0] == ("system", system_prompt("ALL DONE"))
    session = out["sessions"][0]
    record = json.loads(git(tmp_path / "mem", "show", f"HEAD:sessions/{session}/run.json"))
    assert record["done_marker"] == "ALL DONE"


def test_no_usage_is_estimated(endpoint: Endpoint, tmp_path: Path) -> None:
    endpoint.script(answer("working", usage=False), answer("TASK COMPLETE", usage=False))
    out = run_openai(tmp_path, "--goal", "g")
    assert out["stopped_reason"] == "completed"
    final = out["final_state"]["tokens"]
    assert (final["estimated"], final["input_tokens"], final["output_tokens"]) == (True, 0, 0)
    sys_prompt = tokens(system_prompt())
    # the messages (goal, answer, continue prompt, answer) plus the system prompt, estimated
    expected = sys_prompt + tokens("g" + "working" + continue_prompt() + "TASK COMPLETE")
    assert final["context_tokens"] == expected


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (status(500, b"{}"), "HTTP 500 (Internal Server Error)"),
        (status(200, b"\x00garbage"), "the response is not a JSON object"),
        (hang, "no answer within 0.3 s"),
    ],
    ids=["500", "garbage", "hang"],
)
def test_a_failing_endpoint_stops_the_run_and_saves_it(
    endpoint: Endpoint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reply: Reply, message: str
) -> None:
    monkeypatch.setenv("CLM_POLICY_OPENAI_TIMEOUT", "0.3")
    endpoint.script(answer("step one"), answer("step two"), reply)
    mem = tmp_path / "mem"
    result = invoke("run", "--agent", "openai", "--goal", "g", "--memory", str(mem))
    session = f"openai-{TODAY}"
    assert result.exit_code == 2
    assert result.stderr == (
        f"clm-policy: POST {endpoint.url}/chat/completions: {message}; session {session} is "
        f"saved at step 2 (stopped: endpoint_error); to go on: clm-policy run --memory {mem} "
        f"--resume {session} --agent openai\n"
    )
    assert (
        git(mem, "log", "-1", "--format=%s") == f"clm(session): {session} step 2, endpoint_error\n"
    )
    record = json.loads(git(mem, "show", f"HEAD:sessions/{session}/run.json"))
    assert (record["stopped"], record["played"]) == ("endpoint_error", 2)
    state = json.loads(git(mem, "show", f"HEAD:sessions/{session}/state.json"))
    assert [m["content"] for m in state["messages"]] == [
        "g",
        "step one",
        continue_prompt(),
        "step two",
    ]
    assert len(git(mem, "show", f"HEAD:sessions/{session}/metrics.jsonl").splitlines()) == 2


def test_a_stopped_session_resumes_with_its_conversation(
    endpoint: Endpoint, tmp_path: Path
) -> None:
    endpoint.script(answer("step one"), status(503, b""), answer("TASK COMPLETE"))
    mem = tmp_path / "mem"
    failed = invoke("run", "--agent", "openai", "--goal", "g", "--memory", str(mem))
    assert failed.exit_code == 2
    session = f"openai-{TODAY}"
    again = invoke(
        "run", "--memory", str(mem), "--resume", session, "--agent", "openai", "--format", "json"
    )
    assert again.exit_code == 0, again.stderr
    out = json.loads(again.stdout)
    assert (out["agent"], out["stopped_reason"], out["steps"]) == ("openai", "completed", 1)
    assert sent(endpoint.bodies()[-1])[1:] == [
        ("user", "g"),
        ("assistant", "step one"),
        ("user", continue_prompt()),
    ]
    record = json.loads(git(mem, "show", f"HEAD:sessions/{session}/run.json"))
    assert (record["stopped"], record["played"]) == ("completed", 2)
    ended = invoke("run", "--memory", str(mem), "--resume", session)
    assert ended.exit_code == 2
    assert f"session '{session}' ended (completed); nothing to resume" in ended.stderr


@pytest.mark.parametrize(
    ("args", "unset", "message"),
    [
        (
            ["--goal", "g"],
            "CLM_POLICY_OPENAI_MODEL",
            "no model: set CLM_POLICY_OPENAI_MODEL (for example gpt-4o-mini)",
        ),
        (
            ["--goal", "g"],
            "OPENAI_API_KEY",
            "no API key: set OPENAI_API_KEY (or CLM_POLICY_OPENAI_API_KEY)",
        ),
        ([], None, "--agent openai needs --goal TEXT: what the model is to work on"),
        (["--goal", "  "], None, "--goal is empty"),
        (
            ["--goal", "g", "--scenario", "demo"],
            None,
            "--scenario is for the simulated agent; --agent openai works on --goal",
        ),
        (
            ["--goal", "g", "--done-marker", "..."],
            None,
            "done marker '...': one line of 1 to 100 characters, not only punctuation",
        ),
        (["--goal", "g", "--profile", "nosuch"], None, None),
    ],
)
def test_bad_input_writes_nothing(
    endpoint: Endpoint,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    unset: str | None,
    message: str | None,
) -> None:
    if unset is not None:
        monkeypatch.delenv(unset)
    result = invoke("run", "--agent", "openai", "--memory", str(tmp_path / "mem"), *args)
    assert result.exit_code == 2
    if message is not None:
        assert result.stderr == f"clm-policy: {message}\n"
    assert not (tmp_path / "mem").exists()
    assert endpoint.requests == []


def test_options_of_the_other_agent_are_refused(tmp_path: Path) -> None:
    for args in (["--goal", "g"], ["--done-marker", "DONE"]):
        result = invoke("run", "--memory", str(tmp_path / "mem"), *args)
        assert result.exit_code == 2
        assert result.stderr == (
            f"clm-policy: {args[0]} is for --agent openai (the simulated agent plays a scenario)\n"
        )
    simulated = invoke("run", "--memory", str(tmp_path / "mem"), "--max-steps", "1")
    assert simulated.exit_code == 0
    wrong = invoke(
        "run", "--memory", str(tmp_path / "mem"), "--resume", "demo", "--agent", "openai"
    )
    assert wrong.exit_code == 2
    assert wrong.stderr == (
        "clm-policy: session 'demo' was run with the simulated agent (its scenario is in "
        "sessions/demo/run.json): --agent openai cannot resume it\n"
    )


def test_ctrl_c_while_the_model_answers_says_so_and_again_abandons_it(
    endpoint: Endpoint, tmp_path: Path
) -> None:
    """The first Ctrl-C during a request says at once that the step finishes first (it was
    silent until the answer or the timeout came); a second one abandons the request: the
    session is committed as stopped interrupted at the step before, with the resume command."""
    import os
    import select
    import signal
    import sys

    endpoint.script(answer("Step one done."), then=hang)
    env = {**os.environ, **endpoint.env(timeout="300")}
    args = ("run", "--agent", "openai", "--goal", "Migrate the modules", "--memory", "mem")
    proc = subprocess.Popen(
        [sys.executable, "-m", "clm_policy", *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stderr is not None
    try:
        while len(endpoint.bodies()) < 2:  # the second request is under way, and hangs
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        said = b""
        while b"Ctrl-C again abandons it" not in said:
            # (before, nothing was said until the answer or the timeout: fail, do not hang)
            assert select.select([proc.stderr], [], [], 60)[0], said
            chunk = os.read(proc.stderr.fileno(), 4096)
            assert chunk, said
            said += chunk
        assert proc.poll() is None  # still waiting for the answer
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    session = f"openai-{TODAY}"
    assert (said + err).decode().splitlines() == [
        NOTICE,
        f"clm-policy: interrupted; session {session} is saved at step 1 (stopped: interrupted); "
        f"to go on: clm-policy run --memory mem --resume {session} --agent openai",
    ]
    record = json.loads(git(tmp_path / "mem", "show", f"HEAD:sessions/{session}/run.json"))
    assert (record["stopped"], record["played"]) == ("interrupted", 1)


NOTICE = (
    "clm-policy: Ctrl-C: the step under way finishes first, then the session is saved (an "
    "agent's answer may take until its timeout); Ctrl-C again abandons it"
)


def test_ctrl_c_during_a_step_reads_as_one_notice_and_one_closing_line(
    endpoint: Endpoint, tmp_path: Path
) -> None:
    """Ctrl-C once while the model answers: the notice, then, once the step is done, one line
    saying the run was interrupted, what was saved and how to resume. Before, an empty line
    (click's) came between them, and a `clm-policy: interrupted` of its own repeated it."""
    import os
    import select
    import signal
    import sys
    import threading

    answering = threading.Event()

    def held(body: dict[str, Any]) -> tuple[int, bytes]:
        answering.wait(120)  # until the test has seen the notice (a bound, not a speed)
        return answer("Step two done.")(body)

    endpoint.script(answer("Step one done."), then=held)
    env = {**os.environ, **endpoint.env(timeout="300")}
    args = ("run", "--agent", "openai", "--goal", "Migrate the modules", "--memory", "mem")
    proc = subprocess.Popen(
        [sys.executable, "-m", "clm_policy", *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stderr is not None
    try:
        while len(endpoint.bodies()) < 2:  # the second request is under way, and held
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        said = b""
        while not said.endswith(b"\n"):  # the notice, whole
            assert select.select([proc.stderr], [], [], 60)[0], said
            chunk = os.read(proc.stderr.fileno(), 4096)
            assert chunk, said
            said += chunk
        answering.set()  # the step finishes: the run stops after it
        _out, err = proc.communicate(timeout=120)
    finally:
        answering.set()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    session = f"openai-{TODAY}"
    assert (said + err).decode().splitlines() == [
        NOTICE,
        f"clm-policy: interrupted; session {session} is saved at step 2 (stopped: interrupted); "
        f"to go on: clm-policy run --memory mem --resume {session} --agent openai",
    ]
    record = json.loads(git(tmp_path / "mem", "show", f"HEAD:sessions/{session}/run.json"))
    assert (record["stopped"], record["played"]) == ("interrupted", 2)
