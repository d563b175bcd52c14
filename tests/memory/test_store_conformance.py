"""One protocol, three backends: the same checks run against ``file``, ``mem0`` and ``hybrid``
(clm_policy.memory.store.MemoryStore), then what only Mem0 adds and how its failures are kept
from losing the git write. Mem0 talks to the scripted endpoint of tests/chatserver.py on
127.0.0.1 (chat and embeddings); any other connection fails the test. Skipped, saying why,
where the ``mem0`` extra is not installed (.ci/run installs it)."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from chatserver import ChatServer, chat_reply, serve

from clm_policy.base.errors import InputError
from clm_policy.memory.backends import open_store
from clm_policy.memory.git.write import MemoryRepo
from clm_policy.memory.mem0settings import Mem0Settings
from clm_policy.memory.mem0store import RECALL_KEY, Mem0Error
from clm_policy.memory.store import BackendFailure, MemoryStore, Remembered

from conftest import NEEDS_MEM0, git

BACKENDS = [
    "file",
    pytest.param("mem0", marks=NEEDS_MEM0),
    pytest.param("hybrid", marks=NEEDS_MEM0),
]
FACT = "The payments sandbox rejects refunds above 500 EUR"
SECRET = "ghp_" + "x7Kq2Lm9Pz4Rt8Vb3Nc6Wd1Yf5Hj0Gs2Ae4U"  # a GitHub token's shape
CONVERSATION = (
    ("user", f"Heads-up: {FACT}. My token is {SECRET}."),
    ("assistant", "Noted; reading the refund module."),
    ("tool", "FAILED tests/test_refund.py::test_partial"),
    ("system", "## Context compacted at step 3"),
)


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """A connection anywhere but this machine fails the test (telemetry, a default URL)."""
    tried: list[object] = []
    connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> None:
        host = address[0] if isinstance(address, tuple) else address
        if self.family in (socket.AF_INET, socket.AF_INET6) and host not in (
            "127.0.0.1",
            "::1",
            "localhost",
        ):
            tried.append(address)
            raise AssertionError(f"a connection to {address!r} was attempted")
        connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded)
    yield tried
    assert tried == []


@pytest.fixture
def endpoint() -> Iterator[ChatServer]:
    chat = ChatServer()
    extracted = json.dumps({"memory": [{"id": "0", "text": FACT, "attributed_to": "user"}]})
    chat.script(then=chat_reply(extracted))
    with serve(chat):
        yield chat


def settings(url: str, timeout: float = 10.0) -> Mem0Settings:
    return Mem0Settings(url, "scripted-llm", "scripted-embed", 64, "sk-test", timeout)


@pytest.fixture(params=BACKENDS)
def store(
    request: pytest.FixtureRequest, memory: Path, endpoint: ChatServer
) -> Iterator[MemoryStore]:
    with MemoryRepo(memory) as repo:
        opened = open_store(request.param, repo, settings=settings(endpoint.url))
        try:
            yield opened
        finally:
            opened.close()


# -- the protocol, for every backend -----------------------------------------------------------


def test_a_topic_is_written_read_listed_and_replaced(store: MemoryStore) -> None:
    store.write("db/rules", "Never run migrations against production.", tags=["db"])
    store.write("auth", "Tokens expire after 15 minutes.")
    store.write("db/rules", "Never run migrations against production on Fridays.", tags=["db"])
    assert store.list_keys() == ["auth", "db/rules"]
    assert store.read("db/rules") == "Never run migrations against production on Fridays."
    assert store.read("missing") is None
    assert store.failures == []


def test_search_finds_a_topic_by_a_word_of_it(store: MemoryStore) -> None:
    store.write("auth", "Tokens expire after 15 minutes.")
    store.write("db/rules", "Never run migrations against production.")
    found = store.search("migrations", limit=1)
    assert [(e.key, e.content) for e in found] == [
        ("db/rules", "Never run migrations against production.")
    ]
    assert store.search("   ") == []


def test_a_secret_never_reaches_the_store(store: MemoryStore) -> None:
    store.write("creds", f"deploy with {SECRET}")
    assert store.read("creds") == "deploy with [REDACTED:github-pat]"


def test_a_key_that_is_no_key_is_refused(store: MemoryStore) -> None:
    with pytest.raises(InputError, match=r"\.\./x"):
        store.write("../x", "no")


def test_the_seed_starts_with_the_named_topics_in_order(store: MemoryStore) -> None:
    for key in ("a", "b", "c", "d"):
        store.write(key, f"topic {key}: payments notes")
    seed = store.seed(["c", "missing", "a", "b", "d"], "Add refunds to payments", limit=3)
    assert [k for k, _ in seed][:3] == ["c", "a", "b"]
    assert seed[0] == ("c", "topic c: payments notes")


def test_remembering_a_compaction_raises_nothing(store: MemoryStore) -> None:
    store.remember(Remembered("compact", "s1", 3, CONVERSATION))
    store.remember(Remembered("handoff", "s1", 9, ()))
    assert store.failures == []
    store.close()
    store.close()  # twice is harmless


# -- what Mem0 adds ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "backend", [pytest.param("mem0", marks=NEEDS_MEM0), pytest.param("hybrid", marks=NEEDS_MEM0)]
)
def test_mem0_recalls_an_older_fact_in_the_seed(
    backend: str, memory: Path, endpoint: ChatServer
) -> None:
    with MemoryRepo(memory) as repo:
        store = open_store(backend, repo, settings=settings(endpoint.url))
        try:
            store.remember(Remembered("compact", "s1", 3, CONVERSATION))
            seed = dict(store.seed([], "Add partial refunds", about="Verify: refund limits"))
        finally:
            store.close()
    assert seed[RECALL_KEY] == (
        "Facts Mem0 recalls from earlier in this task (most similar to the goal and the next "
        f"action first):\n\n- {FACT}"
    )
    # the extraction call saw the conversation redacted, the tool's output, no system message
    (asked,) = endpoint.bodies()
    prompt = asked["messages"][-1]["content"]
    assert f"user: Heads-up: {FACT}. My token is [REDACTED:github-pat]." in prompt
    assert "user: Tool output: FAILED tests/test_refund.py::test_partial" in prompt
    assert SECRET not in json.dumps(endpoint.requests)
    assert "Context compacted" not in prompt
    assert asked["model"] == "scripted-llm"
    assert {r["headers"]["authorization"] for r in endpoint.requests} == {"Bearer sk-test"}


@pytest.mark.parametrize(
    "backend", [pytest.param("mem0", marks=NEEDS_MEM0), pytest.param("hybrid", marks=NEEDS_MEM0)]
)
def test_one_tasks_facts_never_come_back_in_anothers_seed(
    backend: str, memory: Path, endpoint: ChatServer
) -> None:
    with MemoryRepo(memory) as repo:
        store = open_store(backend, repo, settings=settings(endpoint.url))
        try:
            store.begin_task("refunds")
            store.remember(Remembered("compact", "refunds", 3, CONVERSATION))
            store.begin_task("exporter")
            other = dict(store.seed([], "Add partial refunds", about="refund limits"))
            store.begin_task("refunds")
            same = dict(store.seed([], "Add partial refunds", about="refund limits"))
        finally:
            store.close()
    assert RECALL_KEY not in other
    assert FACT in same[RECALL_KEY]


@NEEDS_MEM0
def test_the_file_backend_keeps_no_conversation(memory: Path) -> None:
    with MemoryRepo(memory) as repo:
        store = open_store("file", repo)
        store.remember(Remembered("compact", "s1", 3, CONVERSATION))
        assert store.seed([], "Add partial refunds") == []
        assert git(memory, "log", "--format=%s") == "clm(init): memory repository\n"


@NEEDS_MEM0
def test_mem0_keeps_its_data_beside_the_repository_with_telemetry_off(
    memory: Path, endpoint: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-would-send-everything-elsewhere")
    with MemoryRepo(memory) as repo:
        store = open_store("mem0", repo, settings=settings(endpoint.url))
        store.remember(Remembered("compact", "s1", 3, CONVERSATION))
        store.close()
    folder = memory / ".git" / "clm-policy" / "mem0"
    assert {"history.db", "qdrant"} <= {p.name for p in folder.iterdir()}
    import mem0.memory.setup as setup

    # MEM0_DIR, read once when Mem0 is imported: the first store's folder, never ~/.mem0
    assert setup.mem0_dir.endswith(os.path.join("mem0", "home"))
    assert ".mem0" not in setup.mem0_dir
    assert endpoint.bodies()  # the request came here, not to OpenRouter
    assert os.environ["OPENROUTER_API_KEY"] == "sk-or-v1-would-send-everything-elsewhere"
    assert "MEM0_TELEMETRY" not in os.environ
    import mem0.memory.telemetry as telemetry

    assert telemetry.MEM0_TELEMETRY is False
    assert git(memory, "status", "--porcelain") == ""  # nothing of it is in the work tree


# -- Mem0's failures never lose the git write ----------------------------------------------------


@NEEDS_MEM0
def test_hybrid_commits_to_git_when_mem0_is_down(memory: Path, endpoint: ChatServer) -> None:
    endpoint.embeddings = lambda body: (500, b'{"error": {"message": "down"}}')
    endpoint.script(then=lambda body: (500, b'{"error": {"message": "down"}}'))
    with MemoryRepo(memory) as repo:
        store = open_store("hybrid", repo, settings=settings(endpoint.url))
        try:
            store.write("db/rules", "Never run migrations against production.")
            store.remember(Remembered("compact", "s1", 3, CONVERSATION))
            seed = store.seed(["db/rules"], "payments")
            failures = list(store.failures)
        finally:
            store.close()
    assert git(memory, "log", "-1", "--format=%s") == "clm(memory): db/rules\n"
    assert seed == [("db/rules", "Never run migrations against production.")]
    assert [f.operation for f in failures] == ["write", "remember", "seed"]
    assert failures[0] == BackendFailure("write", "InternalServerError, http 500")


@NEEDS_MEM0
def test_mem0_alone_raises_when_a_topic_cannot_be_written(
    memory: Path, endpoint: ChatServer
) -> None:
    endpoint.embeddings = lambda body: (500, b'{"error": {"message": "down"}}')
    with MemoryRepo(memory) as repo:
        store = open_store("mem0", repo, settings=settings(endpoint.url))
        try:
            with pytest.raises(
                Mem0Error,
                match=r"^Mem0 could not write topic 'db/rules' \(InternalServerError, http 500\)$",
            ):
                store.write("db/rules", "Never run migrations against production.")
        finally:
            store.close()


@NEEDS_MEM0
def test_a_slow_endpoint_costs_the_deadline_and_is_then_skipped(
    memory: Path, endpoint: ChatServer
) -> None:
    endpoint.script(then=lambda body: None)  # the extraction hangs until the test is over
    with MemoryRepo(memory) as repo:
        store = open_store("hybrid", repo, settings=settings(endpoint.url, timeout=0.5))
        try:
            started = time.monotonic()
            store.remember(Remembered("compact", "s1", 3, CONVERSATION))
            store.write("db/rules", "Never run migrations against production.")
            took = time.monotonic() - started
            failures = list(store.failures)
        finally:
            store.close()
    assert [f.operation for f in failures][:1] == ["remember"]
    assert failures[0].reason in ("timeout after 0.5s", "LLMError (APITimeoutError)")
    assert took < 30  # the deadline, not the endpoint, decided
    assert git(memory, "log", "-1", "--format=%s") == "clm(memory): db/rules\n"


def test_the_mem0_settings_come_from_the_environment() -> None:
    with pytest.raises(InputError) as err:
        Mem0Settings.from_env({})
    assert str(err.value) == (
        "the mem0 memory backend needs a model: set CLM_POLICY_MEM0_BASE_URL to your "
        "OpenAI-compatible endpoint (and CLM_POLICY_MEM0_LLM_MODEL, CLM_POLICY_MEM0_EMBED_MODEL, "
        "CLM_POLICY_MEM0_EMBED_DIMS), or to 'offline' for the offline stand-in"
    )
    with pytest.raises(InputError) as err:
        Mem0Settings.from_env({"CLM_POLICY_MEM0_BASE_URL": "http://10.0.0.5:8000/v1"})
    assert "plain http only to this machine" in str(err.value)
    with pytest.raises(InputError) as err:
        Mem0Settings.from_env({"CLM_POLICY_MEM0_BASE_URL": "https://models.example/v1"})
    assert str(err.value) == (
        "the mem0 memory backend at https://models.example/v1: set CLM_POLICY_MEM0_LLM_MODEL, "
        "CLM_POLICY_MEM0_EMBED_MODEL, CLM_POLICY_MEM0_EMBED_DIMS"
    )
    remote = {
        "CLM_POLICY_MEM0_BASE_URL": "https://models.example/v1",
        "CLM_POLICY_MEM0_LLM_MODEL": "small",
        "CLM_POLICY_MEM0_EMBED_MODEL": "embed",
        "CLM_POLICY_MEM0_EMBED_DIMS": "768",
    }
    with pytest.raises(InputError, match=r"^no API key for the mem0 backend's endpoint"):
        Mem0Settings.from_env(remote)
    found = Mem0Settings.from_env({**remote, "OPENAI_API_KEY": "sk-abc"})
    assert (found.base_url, found.dims, found.api_key, found.timeout) == (
        "https://models.example/v1",
        768,
        "sk-abc",
        30.0,
    )
    assert "sk-abc" not in repr(found)
    local = {**remote, "CLM_POLICY_MEM0_BASE_URL": "http://127.0.0.1:9/v1"}
    assert Mem0Settings.from_env(local).api_key == "not-needed"
    assert Mem0Settings.from_env({"CLM_POLICY_MEM0_BASE_URL": "offline"}).base_url is None
