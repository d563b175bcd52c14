"""The OpenAI-compatible summarizer against a real HTTP server on 127.0.0.1 that each test
starts (http.server in a thread): a good answer is used, and a 500, garbage, a server that
hangs or an answer that loses facts falls back to the deterministic summary, with the commit
saying which summarizer wrote it and why. The key reaches the server and nothing else: not git,
not a message. Nothing here reaches the network."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from chatserver import ChatServer, Reply, serve

from clm_policy.base.errors import InputError
from clm_policy.lifecycle.compaction import DETERMINISTIC, compact
from clm_policy.lifecycle.pipelines import run_compaction
from clm_policy.lifecycle.summarizers import (
    SYSTEM_PROMPT,
    OpenAISummarizer,
    OpenAISummarizerConfig,
    SummarizerError,
    answer_text,
    summarizer_from_env,
)
from clm_policy.lifecycle.summary import build_summary
from clm_policy.memory.git.write import MemoryRepo
from clm_policy.models.enums import MessageRole
from clm_policy.models.state import Message, SessionState, TokenSnapshot

from conftest import git, invoke

KEY = "sk-test-SUMMARIZER-0123456789abcdef"
MODEL = "sum-model-1"
NOW = datetime(2026, 8, 4, 12, 0, tzinfo=UTC)
TIMEOUT = 0.5
"""Seconds the summarizer waits: the hanging server is never answered, so the test takes this
long whatever the machine's speed."""


def completion(content: str) -> Reply:
    def reply(body: dict[str, Any]) -> tuple[int, bytes]:
        data = {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}
        return 200, json.dumps(data).encode()

    return reply


def echo_record(body: dict[str, Any]) -> tuple[int, bytes] | None:
    """A faithful model: it answers with the session record it was sent."""
    prompt = body["messages"][1]["content"]
    record = prompt.split("# Session record\n\n", 1)[1].split("# Conversation", 1)[0]
    return completion(record)(body)


Server = ChatServer


@pytest.fixture
def server() -> Iterator[Server]:
    """A faithful model (it answers with the session record it was sent), unless a test sets
    another reply (``then``)."""
    with serve(ChatServer(then=echo_record)) as chat:
        yield chat


def summarizer(server: Server) -> OpenAISummarizer:
    return OpenAISummarizer(
        OpenAISummarizerConfig(model=MODEL, api_key=KEY, base_url=server.url, timeout=TIMEOUT)
    )


def env(server: Server) -> dict[str, str]:
    return {
        "CLM_POLICY_SUMMARIZER": "openai",
        "CLM_POLICY_SUMMARIZER_MODEL": MODEL,
        "CLM_POLICY_SUMMARIZER_BASE_URL": server.url,
        "CLM_POLICY_SUMMARIZER_API_KEY": KEY,
        "CLM_POLICY_SUMMARIZER_TIMEOUT": str(TIMEOUT),
    }


def state() -> SessionState:
    return SessionState(
        session_id="s1",
        goal="Add JWT login to the payments API",
        step_index=40,
        tokens=TokenSnapshot(context_tokens=262_000),
        messages=[
            Message(role=MessageRole.SYSTEM, content="You are a coding agent."),
            Message(role=MessageRole.USER, content="Add JWT login to the payments API."),
            Message(role=MessageRole.ASSISTANT, content="Wrote the login handler."),
        ],
        constraints=["no new dependencies"],
        decisions=["JWT with HS256, key from PAYMENTS_JWT_KEY"],
        changed_artifacts=["src/payments/auth.py"],
        commands_and_results=["pytest tests/test_auth.py -q: 5 passed, 1 failed"],
        verified=["POST /login returns a token"],
        not_verified=["refresh of an expired token"],
        memory_keys=["decisions/auth-jwt"],
    )


def commit(memory: Path, server: Server) -> dict[str, str]:
    """Compact ``state()`` with the server's summarizer; the commit's trailers."""
    with MemoryRepo(memory) as repo:
        run_compaction(repo, state(), retain=1, summarizer=summarizer(server), min_recall=0.9)
    out = git(memory, "log", "-1", "--format=%(trailers:only,unfold)")
    return dict(line.split(": ", 1) for line in out.splitlines() if line)


def key_nowhere_in_git(memory: Path) -> None:
    """No commit message, no version of any file, no file in the work tree holds the key."""
    assert "SUMMARIZER-0123" not in git(memory, "log", "--all", "-p", "--format=%B")
    for rev in git(memory, "rev-list", "--all").split():
        found = subprocess.run(
            ["git", "grep", "-F", "-e", "SUMMARIZER-0123", rev], cwd=memory, check=False
        )
        assert found.returncode == 1, rev  # 1: no match
    assert not any(
        "SUMMARIZER-0123" in p.read_text(errors="replace")
        for p in memory.rglob("*")
        if p.is_file() and ".git" not in p.parts
    )


# -- the answers ----------------------------------------------------------------------------


def test_a_good_answer_is_the_summary(server: Server, memory: Path) -> None:
    found = commit(memory, server)
    assert found["Clm-Summarizer"] == f"openai:{MODEL}"
    assert found["Clm-Recall"] == "1.00 (9/9)"
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == f"Bearer {KEY}"
    body = request["body"]
    assert body["model"] == MODEL
    assert body["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    prompt = body["messages"][1]["content"]
    assert build_summary(state()) in prompt  # the record, then the conversation
    assert prompt.endswith(
        "# Conversation, oldest first\n\n- user: Add JWT login to the payments API.\n"
        "- assistant: Wrote the login handler.\n"
    )
    assert "You are a coding agent." not in prompt  # the agent's own system prompt stays out
    document = git(memory, "show", "HEAD:sessions/s1/compactions/000040.md")
    assert '\nsummarizer: "openai:sum-model-1"\n' in document
    key_nowhere_in_git(memory)


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        # the body quotes the key, as some servers' errors do: it is never read into a message
        (lambda _b: (500, json.dumps({"error": {"message": f"bad {KEY}"}}).encode()), "http 500"),
        (lambda _b: (200, b"\x00garbage"), "garbage"),
        (lambda _b: (200, b'{"choices": []}'), "garbage"),
        (completion("   "), "empty"),
        (lambda _b: None, "timeout"),
        (completion("All done, nothing to report."), "recall 0.66 < 0.9"),
    ],
    ids=["500", "garbage", "no-choices", "empty", "hang", "low-recall"],
)
def test_a_failing_answer_falls_back_to_the_deterministic_summary(
    server: Server, memory: Path, reply: Reply, reason: str
) -> None:
    server.then = reply
    found = commit(memory, server)
    assert found["Clm-Summarizer"] == f"deterministic (fallback: {reason})"
    assert found["Clm-Summary-Kept"] == "1.00 (9/9)"  # the fallback is built from the facts
    assert "Clm-Recall" not in found
    document = git(memory, "show", "HEAD:sessions/s1/compactions/000040.md")
    assert build_summary(state()) in document
    assert f'summarizer_tried: "openai:{MODEL}"' in document
    assert len(server.requests) == 1  # asked once, on the state the commit holds
    key_nowhere_in_git(memory)


def test_errors_name_the_failure_never_the_key(server: Server) -> None:
    server.then = lambda _b: (401, json.dumps({"error": {"message": KEY}}).encode())
    with pytest.raises(SummarizerError) as caught:
        summarizer(server).summarize(state())
    assert caught.value.reason == "http 401"
    assert str(caught.value) == f"POST {server.url}/chat/completions: HTTP 401 (Unauthorized)"
    assert KEY not in repr(summarizer(server))
    assert KEY not in repr(summarizer(server).config)


def test_the_model_is_sent_the_cleaned_state(server: Server, memory: Path) -> None:
    secret = "AKIAZ7Q3X9P2M4N6R8T0"
    s = state().replace(decisions=[f"deploy with {secret}"])
    with MemoryRepo(memory) as repo:
        done = run_compaction(repo, s, retain=1, summarizer=summarizer(server))
    assert secret not in json.dumps(server.requests[0]["body"])
    assert done.result.summarizer_trailer == f"openai:{MODEL}"


# -- configuration --------------------------------------------------------------------------


def test_configuration_from_the_environment(server: Server) -> None:
    assert summarizer_from_env({}) is DETERMINISTIC
    assert summarizer_from_env({"CLM_POLICY_SUMMARIZER": "Deterministic"}) is DETERMINISTIC
    made = summarizer_from_env(env(server))
    assert isinstance(made, OpenAISummarizer)
    assert (made.name, made.config.timeout, made.config.base_url) == (
        f"openai:{MODEL}",
        TIMEOUT,
        server.url,
    )
    assert summarizer_from_env(env(server), "deterministic") is DETERMINISTIC  # --summarizer
    # the key: the summarizer's own, else the OpenAI agent's, else OPENAI_API_KEY
    shared = {**env(server), "OPENAI_API_KEY": "sk-other"}
    del shared["CLM_POLICY_SUMMARIZER_API_KEY"]
    assert summarizer_from_env(shared).config.api_key == "sk-other"  # type: ignore[attr-defined]
    # the base URL: the summarizer's own, else the OpenAI agent's
    agent = {**env(server), "CLM_POLICY_OPENAI_BASE_URL": "http://localhost:1/v1"}
    del agent["CLM_POLICY_SUMMARIZER_BASE_URL"]
    assert summarizer_from_env(agent).config.base_url == "http://localhost:1/v1"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"CLM_POLICY_SUMMARIZER": "gpt"}, "CLM_POLICY_SUMMARIZER: 'gpt' is no summarizer"),
        ({"CLM_POLICY_SUMMARIZER_MODEL": ""}, "no model for the summarizer"),
        ({"CLM_POLICY_SUMMARIZER_API_KEY": ""}, "no API key for the summarizer"),
        ({"CLM_POLICY_SUMMARIZER_TIMEOUT": "soon"}, "CLM_POLICY_SUMMARIZER_TIMEOUT: 'soon'"),
        ({"CLM_POLICY_SUMMARIZER_TIMEOUT": "0"}, "CLM_POLICY_SUMMARIZER_TIMEOUT: the timeout"),
        (
            {"CLM_POLICY_SUMMARIZER_BASE_URL": "http://example.com/v1"},
            "CLM_POLICY_SUMMARIZER_BASE_URL: plain http only to this machine",
        ),
        (
            {"CLM_POLICY_SUMMARIZER_API_KEY": "sk bad key"},
            "CLM_POLICY_SUMMARIZER_API_KEY: the key holds spaces",
        ),
    ],
)
def test_a_bad_configuration_is_an_error(
    server: Server, changes: dict[str, str], message: str
) -> None:
    with pytest.raises(InputError) as caught:
        summarizer_from_env({**env(server), **changes})
    assert str(caught.value).startswith(message)
    assert "bad key" not in str(caught.value)


def test_answer_text() -> None:
    assert answer_text("```markdown\n# Summary\n- a\n```") == "# Summary\n- a\n"
    assert answer_text("  # Summary  \n") == "# Summary\n"
    with pytest.raises(SummarizerError) as caught:
        answer_text("x" * 60_001)
    assert caught.value.reason == "too long"


# -- through the commands -------------------------------------------------------------------


def test_compact_with_the_summarizer_option(
    server: Server, memory: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in env(server).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CLM_POLICY_SUMMARIZER")
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state().as_dict()))
    plain = invoke("compact", "--memory", str(memory), "--state", str(path))
    assert plain.exit_code == 0, plain.stderr
    assert server.requests == []  # deterministic unless asked
    server.then = completion("Nothing useful.")
    later = tmp_path / "later.json"  # a later position: the same one is committed already
    later.write_text(json.dumps(state().replace(step_index=41).as_dict()))
    asked = invoke(
        "compact", "--memory", str(memory), "--state", str(later), "--summarizer", "openai"
    )
    assert asked.exit_code == 0, asked.stderr
    assert (
        "  summary   by deterministic (fallback: recall 0.66 < 0.9) (openai:sum-model-1 was "
        "asked)\n" in asked.stdout
    )
    key_nowhere_in_git(memory)


def test_the_loop_uses_the_summarizer_of_the_environment(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in env(server).items():
        monkeypatch.setenv(name, value)
    mem = tmp_path / "mem"
    result = invoke("run", "--memory", str(mem), "--stop-at-handoff")
    assert result.exit_code == 0, result.stderr
    said = git(mem, "log", "--format=%(trailers:key=Clm-Summarizer,valueonly)").split()
    assert said == [f"openai:{MODEL}"] * 2  # the demo's two compactions
    assert len(server.requests) == 2
    key_nowhere_in_git(mem)


def test_a_bad_summarizer_setting_stops_a_run_before_it_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLM_POLICY_SUMMARIZER", "openai")
    result = invoke("run", "--memory", str(tmp_path / "mem"))
    assert result.exit_code == 2
    assert "no model for the summarizer" in result.stderr
    assert "clm(start)" not in git(tmp_path / "mem", "log", "--format=%s")


def test_the_deterministic_compaction_is_unchanged_by_the_module() -> None:
    assert compact(state(), retain=1, now=NOW).summarizer_trailer == "deterministic"
