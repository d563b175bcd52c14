"""`clm-policy run --resume` never takes its agent, endpoint or model from the session's
run.json: the memory repository is shared by push and pull, so run.json is a teammate's data,
and the user's API key goes only where the user's own configuration points (issue 16).

Two endpoints on 127.0.0.1 stand for the attacker's (named in a committed run.json) and the
user's (CLM_POLICY_OPENAI_BASE_URL); a teammate's change arrives as a commit pulled from a
clone of the memory repository."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from chatserver import ChatServer, serve

from conftest import git, invoke

KEY = "sk-user-0123456789abcdefABCDEF"


def completion(content: str) -> Any:
    def reply(body: dict[str, Any]) -> tuple[int, bytes]:
        data = {"choices": [{"message": {"role": "assistant", "content": content}}]}
        return 200, json.dumps(data).encode()

    return reply


@pytest.fixture
def attacker() -> Iterator[ChatServer]:
    with serve(ChatServer(then=completion("TASK COMPLETE"))) as chat:
        yield chat


@pytest.fixture
def users(monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatServer]:
    """The user's own endpoint, with a key and a model in the environment."""
    with serve(ChatServer()) as chat:
        monkeypatch.delenv("CLM_POLICY_OPENAI_API_KEY", raising=False)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("CLM_POLICY_OPENAI_BASE_URL", chat.url)
        monkeypatch.setenv("CLM_POLICY_OPENAI_MODEL", "users-model")
        yield chat


def teammate_changes_run_json(memory: Path, tmp_path: Path, session: str, **changes: Any) -> None:
    """A teammate edits sessions/SESSION/run.json in their clone and pushes; the user pulls."""
    clone = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(memory), str(clone))
    path = clone / "sessions" / session / "run.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}, indent=2))
    git(clone, "commit", "-qam", "resume against our endpoint")
    git(memory, "pull", "-q", "--ff-only", str(clone), "HEAD")


def test_a_simulated_session_stays_simulated_whatever_run_json_says(
    tmp_path: Path, attacker: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    for name in ("CLM_POLICY_OPENAI_BASE_URL", "CLM_POLICY_OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    memory = tmp_path / "mem"
    assert invoke("run", "--memory", str(memory), "--max-steps", "2").exit_code == 0
    teammate_changes_run_json(
        memory, tmp_path, "demo", agent="openai", base_url=attacker.url, model="their-model"
    )
    resumed = invoke("run", "--memory", str(memory), "--resume", "demo", "--max-steps", "1")
    assert resumed.exit_code == 0, resumed.stderr
    assert attacker.requests == []
    assert resumed.stderr == (
        f"clm-policy: sessions/demo/run.json names agent 'openai' (endpoint '{attacker.url}', "
        "model 'their-model'): ignored; the session resumes with the simulated agent (the "
        "agent, endpoint and model are yours to choose: --agent, CLM_POLICY_OPENAI_BASE_URL, "
        "CLM_POLICY_OPENAI_MODEL)\n"
    )
    assert resumed.stdout.startswith("resuming session demo of ")
    # asking for the openai agent on it is a contradiction: refused, nothing sent
    asked = invoke("run", "--memory", str(memory), "--resume", "demo", "--agent", "openai")
    assert asked.exit_code == 2
    assert asked.stderr == (
        "clm-policy: session 'demo' was run with the simulated agent (its scenario is in "
        "sessions/demo/run.json): --agent openai cannot resume it\n"
    )
    assert attacker.requests == []


def test_an_openai_session_resumes_against_the_users_endpoint_only(
    tmp_path: Path, attacker: ChatServer, users: ChatServer
) -> None:
    memory = tmp_path / "mem"
    users.script(completion("step one"), completion("step two"))
    first = invoke(
        "run", "--agent", "openai", "--goal", "g", "--memory", str(memory), "--max-steps", "1"
    )
    assert first.exit_code == 0, first.stderr
    session = f"openai-{datetime.now(UTC):%Y%m%d}"
    teammate_changes_run_json(
        memory, tmp_path, session, base_url=attacker.url, model="expensive-model"
    )
    # without --agent, a resume never sends anything: the agent is the user's to choose
    plain = invoke("run", "--memory", str(memory), "--resume", session)
    assert plain.exit_code == 2
    assert plain.stderr == (
        f"clm-policy: session '{session}' was run with --agent openai: resume it with "
        f"--agent openai (your endpoint and model: CLM_POLICY_OPENAI_BASE_URL, "
        "CLM_POLICY_OPENAI_MODEL; never run.json's)\n"
    )
    resumed = invoke(
        "run", "--memory", str(memory), "--resume", session, "--agent", "openai",
        "--max-steps", "1",
    )  # fmt: skip
    assert resumed.exit_code == 0, resumed.stderr
    assert attacker.requests == []
    assert len(users.requests) == 2
    assert users.requests[-1]["headers"]["Authorization"] == f"Bearer {KEY}"
    assert users.requests[-1]["body"]["model"] == "users-model"
    assert resumed.stderr == (
        f"clm-policy: sessions/{session}/run.json names endpoint '{attacker.url}' and model "
        "'expensive-model': ignored (a resumed session uses your configuration)\n"
    )
    assert resumed.stdout.splitlines()[1] == (
        f"  endpoint {users.url} (CLM_POLICY_OPENAI_BASE_URL), model users-model "
        "(CLM_POLICY_OPENAI_MODEL)"
    )
    # what was used is what run.json records now
    record = json.loads(git(memory, "show", f"HEAD:sessions/{session}/run.json"))
    assert (record["base_url"], record["model"]) == (users.url, "users-model")


def test_a_resumed_openai_session_needs_the_users_model(
    tmp_path: Path, users: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = tmp_path / "mem"
    users.script(completion("step one"))
    first = invoke(
        "run", "--agent", "openai", "--goal", "g", "--memory", str(memory), "--max-steps", "1"
    )
    assert first.exit_code == 0, first.stderr
    session = f"openai-{datetime.now(UTC):%Y%m%d}"
    monkeypatch.delenv("CLM_POLICY_OPENAI_MODEL")
    resumed = invoke("run", "--memory", str(memory), "--resume", session, "--agent", "openai")
    assert resumed.exit_code == 2
    assert resumed.stderr == (
        "clm-policy: no model: set CLM_POLICY_OPENAI_MODEL (the session ran with "
        "'users-model'; a resumed session takes the model from your configuration, never "
        "from run.json)\n"
    )
    assert len(users.requests) == 1
