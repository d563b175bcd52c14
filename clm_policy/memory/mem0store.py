"""The ``mem0`` backend: memory in Mem0 (``pip install 'clm-policy[mem0]'``), kept on this
machine.

Mem0 is configured for local use only (DESIGN.md §12): its LLM and embedder are the
``openai`` providers pointed at the user's endpoint (clm_policy.memory.mem0settings: from the
environment, never from a file) or at the offline stand-in; its vector store is Qdrant in
embedded mode under a folder of ours (``<memory repo>/.git/clm-policy/mem0`` by default:
beside the repository, never committed); its history database is there too. Telemetry is off
(``MEM0_TELEMETRY=false`` before Mem0 is imported, ``MEM0_DIR`` ours) and
``OPENROUTER_API_KEY`` is hidden from it while it builds its clients (it would send
everything to OpenRouter instead of the endpoint configured).

It keeps topics as single memories (``infer=False``, ``clm_kind: topic``; written again, one
replaces the old), and the facts Mem0's LLM extracts from what a compaction or handoff takes out
of the context (:meth:`Mem0Store.remember`, ``clm_kind: fact``, ``clm_task``: a task recalls
its own facts only, :meth:`Mem0Store.seed`).

Every call runs under a deadline (the settings' timeout; the HTTP clients get it too, without
retries). ``remember`` and ``seed`` never raise: a failure is recorded in ``failures`` (and
the seed has no recall entry); writing a topic raises :class:`Mem0Error` — for this backend
Mem0 is the only place a topic goes. Everything sent to Mem0 passes the memory's redactor.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from typing import Any

from clm_policy.base.errors import ClmError, InputError
from clm_policy.memory.layout import check_key
from clm_policy.memory.mem0settings import Mem0Settings
from clm_policy.memory.store import SEED_HITS, BackendFailure, MemoryEntry, Remembered

NAMESPACE = "clm"
"""Mem0's ``user_id`` for everything of one memory repository (one store per folder)."""
RECALL_KEY = "mem0/recall"
RECALL_FACTS = 8
"""Facts the seed's recall entry lists, at most."""
REMEMBER_CHARS = 40_000
"""What one ``remember`` sends at most (the newest messages kept)."""
MESSAGE_CHARS = 4_000
ALL = 10_000
"""Memories listed at most when topics are listed."""
_LOGGERS = ("mem0", "qdrant_client", "httpx", "openai")
_IMPORT_LOCK = threading.Lock()
_FAILED = object()


class Mem0Error(ClmError):
    """Mem0 could not do what was asked (it is not installed, or its store cannot be opened,
    or a topic could not be written)."""


class _Notes(logging.Handler):
    """Mem0's own log lines (spaCy not installed, ...) go here, not to the terminal."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if len(self.lines) < 200:
            self.lines.append(f"{record.name}: {record.levelname.lower()}: {record.getMessage()}")


NOTES = _Notes()


def available() -> bool:
    """Whether the ``mem0`` extra is installed (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("mem0") is not None


def _import_mem0(home: str) -> Any:
    """``mem0.Memory``, imported once per process with telemetry off and ``MEM0_DIR`` at
    ``home`` (Mem0 reads both when it is imported, and writes a config.json there)."""
    with _IMPORT_LOCK:
        if not available():
            raise Mem0Error("the mem0 memory backend needs Mem0: pip install 'clm-policy[mem0]'")
        for name in _LOGGERS:
            logger = logging.getLogger(name)
            if NOTES not in logger.handlers:
                logger.addHandler(NOTES)
                logger.propagate = False
                logger.setLevel(logging.WARNING)
        with _environment(MEM0_TELEMETRY="false", MEM0_DIR=home):
            import warnings

            with warnings.catch_warnings():  # its dependencies' deprecations are not ours
                warnings.simplefilter("ignore")
                from mem0 import Memory

        return Memory


@contextmanager
def _environment(**values: str | None) -> Iterator[None]:
    """``os.environ`` with ``values`` set (None: removed) for the block, restored after."""
    old = {name: os.environ.get(name) for name in values}
    try:
        _set_environment(values)
        yield
    finally:
        _set_environment(old)


def _set_environment(values: dict[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def mem0_config(folder: str, settings: Mem0Settings, url: str) -> dict[str, Any]:
    """Mem0's configuration: everything local under ``folder``, the model at ``url``."""
    endpoint = {"api_key": settings.api_key, "openai_base_url": url}
    llm = {"model": settings.llm_model, **endpoint, "temperature": 0}
    embedder = {"model": settings.embed_model, **endpoint, "embedding_dims": settings.dims}
    return {
        "llm": {"provider": "openai", "config": llm},
        "embedder": {"provider": "openai", "config": embedder},
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "collection_name": "clm",
                "path": os.path.join(folder, "qdrant"),
                "embedding_model_dims": settings.dims,
                "on_disk": True,
            },
        },
        "history_db_path": os.path.join(folder, "history.db"),
    }


def failure_reason(exc: BaseException) -> str:
    """A few words for a failure, safe to record: the error's type and an HTTP status, never
    its message (which may quote a URL or content)."""
    status = getattr(exc, "status_code", None)
    cause = exc.__cause__
    name = type(exc).__name__
    if cause is not None and name in ("LLMError", "EmbeddingError", "VectorStoreError"):
        status = status or getattr(cause, "status_code", None)
        name = f"{name} ({type(cause).__name__})"
    return f"{name}, http {status}" if isinstance(status, int) else name


class Mem0Store:
    """The ``mem0`` backend (see the module's docstring). ``folder`` holds its data; it is
    made if absent. Close it (or use it in a ``with`` block): Qdrant's folder is locked while
    it is open."""

    backend = "mem0"

    def __init__(self, folder: str | os.PathLike[str], settings: Mem0Settings) -> None:
        self.settings = settings
        self.folder = os.path.abspath(folder)
        self.failures: list[BackendFailure] = []
        self.task: str | None = None
        self._offline = None
        os.makedirs(self.folder, mode=0o700, exist_ok=True)
        memory_class = _import_mem0(os.path.join(self.folder, "home"))
        url = settings.base_url
        if url is None:
            from clm_policy.memory.mem0_offline import OfflineModel

            self._offline = OfflineModel()
            url = self._offline.url
        try:
            with _environment(OPENROUTER_API_KEY=None):  # it would win over our endpoint
                self._memory = memory_class.from_config(mem0_config(self.folder, settings, url))
        except Exception as exc:
            self._stop_offline()
            raise Mem0Error(
                f"{self.folder}: Mem0 could not open its store ({failure_reason(exc)}); is "
                "another process using this memory's Mem0 folder?"
            ) from None
        for owner in (self._memory.llm, self._memory.embedding_model):
            client = getattr(owner, "client", None)
            if client is not None and hasattr(client, "with_options"):
                owner.client = client.with_options(timeout=settings.timeout, max_retries=0)
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="clm-mem0")
        self._busy: Future[Any] | None = None

    def write(self, key: str, content: str, *, tags: Sequence[str] | None = None) -> None:
        check_key(key)
        from clm_policy.memory.redact import redact_text

        text = redact_text(content).text
        clean_tags = [redact_text(t).text for t in tags or ()]

        def replace() -> None:
            for old in self._topics(key):
                self._memory.delete(old["id"])
            self._memory.add(
                text,
                user_id=NAMESPACE,
                metadata={"clm_kind": "topic", "clm_key": key, "clm_tags": json.dumps(clean_tags)},
                infer=False,
            )

        if self._call("write", replace) is _FAILED:
            raise Mem0Error(f"Mem0 could not write topic {key!r} ({self.failures[-1].reason})")

    def read(self, key: str) -> str | None:
        rows = self._call("read", self._topics, key)
        return None if rows is _FAILED or not rows else _topic(rows[0]).content

    def list_keys(self) -> list[str]:
        rows = self._call("list", self._list, {"clm_kind": "topic"})
        if rows is _FAILED:
            return []
        return sorted({str((r.get("metadata") or {}).get("clm_key")) for r in rows} - {"None"})

    def search(self, query: str, *, limit: int = 10) -> list[MemoryEntry]:
        """Topics and facts most similar to ``query``, best first."""
        if not query.strip():
            return []
        rows = self._call("search", self._search, query, {}, limit)
        return [] if rows is _FAILED else [_entry(r) for r in rows]

    def begin_task(self, task: str) -> None:
        """The facts remembered and recalled from now on are ``task``'s."""
        self.task = task

    def remember(self, event: Remembered) -> None:
        """Give the conversation ``event`` takes out of the context to Mem0 (its LLM extracts
        the facts); a failure is recorded, never raised."""
        messages = _messages(event)
        if not messages:
            return
        metadata: dict[str, Any] = {
            "clm_kind": "fact",
            "clm_task": self.task or event.session,
            "clm_event": event.kind,
            "clm_session": event.session,
            "clm_step": event.step,
        }
        self._call(
            "remember",
            lambda: self._memory.add(messages, user_id=NAMESPACE, metadata=metadata, infer=True),
        )

    def seed(
        self, keys: Sequence[str], goal: str, *, about: str = "", limit: int = SEED_HITS
    ) -> list[tuple[str, str]]:
        """The topics named by ``keys`` (at most ``limit``), then :data:`RECALL_KEY`: the facts
        most similar to ``goal`` and ``about`` (none when Mem0 has none, or failed)."""
        hits: dict[str, str] = {}
        for key in keys:
            if len(hits) >= limit:
                break
            content = self.read(key)
            if content is not None:
                hits.setdefault(key, content)
        recall = self.recall(goal, about)
        if recall:
            hits[RECALL_KEY] = recall
        return list(hits.items())

    def recall(self, *queries: str, limit: int = RECALL_FACTS) -> str:
        """The facts most similar to each of ``queries`` (the goal, the next action), each
        searched on its own — one long query of both would score every fact lower — as one
        Markdown list, the first query's facts first ("" when none)."""
        where: dict[str, Any] = {"clm_kind": "fact"}
        if self.task is not None:
            where["clm_task"] = self.task
        facts: list[str] = []
        for query in (q.strip() for q in queries):
            if not query:
                continue
            rows = self._call("seed", self._search, query, where, limit)
            if rows is _FAILED:
                return ""
            facts += [" ".join(str(r.get("memory", "")).split()) for r in rows or []]
        facts = [f for f in dict.fromkeys(facts) if f][:limit]
        if not facts:
            return ""
        return (
            "Facts Mem0 recalls from earlier in this task (most similar to the goal and the "
            "next action first):\n\n" + "\n".join(f"- {f}" for f in facts)
        )

    def close(self) -> None:
        """Stop the worker (a call still hanging is abandoned) and close Mem0's store."""
        pool = getattr(self, "_pool", None)
        if pool is None:
            return
        self._pool = None  # type: ignore[assignment]
        pool.shutdown(wait=self._busy is None or self._busy.done(), cancel_futures=True)
        try:
            self._memory.close()  # its history database; Qdrant's clients are ours to close
            for store in (self._memory.vector_store, getattr(self._memory, "_entity_store", None)):
                client = getattr(store, "client", None)
                if client is not None:
                    client.close()
        except Exception as exc:  # closing is best effort: the data is on disk
            self.failures.append(BackendFailure("close", failure_reason(exc)))
        self._stop_offline()

    def __enter__(self) -> Mem0Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _stop_offline(self) -> None:
        if self._offline is not None:
            self._offline.close()
            self._offline = None

    def _call(self, operation: str, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` on the worker under the deadline; :data:`_FAILED` (and a failure
        recorded) when it raises, times out, or an earlier call still hangs."""
        if self._pool is None:
            raise InputError("this Mem0 store is closed")
        if self._busy is not None:
            if not self._busy.done():
                self.failures.append(
                    BackendFailure(operation, "skipped: an earlier call is still running")
                )
                return _FAILED
            self._busy = None
        future = self._pool.submit(fn, *args)
        try:
            return future.result(timeout=self.settings.timeout)
        except FutureTimeout:
            self._busy = future
            self.failures.append(
                BackendFailure(operation, f"timeout after {self.settings.timeout:g}s")
            )
        except Exception as exc:
            self.failures.append(BackendFailure(operation, failure_reason(exc)))
        return _FAILED

    def _list(self, where: dict[str, Any]) -> list[dict[str, Any]]:
        found = self._memory.get_all(filters={"user_id": NAMESPACE, **where}, top_k=ALL)
        return list(found.get("results", []))

    def _topics(self, key: str) -> list[dict[str, Any]]:
        return self._list({"clm_kind": "topic", "clm_key": key})

    def _search(self, query: str, where: dict[str, Any], limit: int) -> list[dict[str, Any]]:
        found = self._memory.search(
            query[:2000], filters={"user_id": NAMESPACE, **where}, top_k=max(1, limit)
        )
        return list(found.get("results", []))


def _messages(event: Remembered) -> list[dict[str, str]]:
    """The conversation as Mem0 takes it (a tool's output as the user's side: Mem0 reads only
    user and assistant turns), redacted, the newest :data:`REMEMBER_CHARS` of it."""
    from clm_policy.memory.redact import redact_text

    out: list[dict[str, str]] = []
    size = 0
    for role, content in reversed(event.messages):
        text = content.strip()[:MESSAGE_CHARS]
        if not text or role == "system":
            continue
        if role == "tool":
            role, text = "user", f"Tool output: {text}"
        size += len(text)
        if size > REMEMBER_CHARS:
            break
        out.append({"role": role, "content": redact_text(text).text})
    return out[::-1]


def _topic(row: dict[str, Any]) -> MemoryEntry:
    meta = row.get("metadata") or {}
    try:
        tags = tuple(str(t) for t in json.loads(meta.get("clm_tags") or "[]"))
    except (TypeError, ValueError):
        tags = ()
    return MemoryEntry(
        str(meta.get("clm_key")),
        str(row.get("memory", "")),
        tags,
        str(row.get("updated_at") or row.get("created_at") or ""),
    )


def _entry(row: dict[str, Any]) -> MemoryEntry:
    meta = row.get("metadata") or {}
    if meta.get("clm_kind") == "topic" and meta.get("clm_key"):
        return _topic(row)
    return MemoryEntry(
        f"mem0/{str(row.get('id', ''))[:8]}",
        str(row.get("memory", "")),
        updated_at=str(row.get("created_at") or ""),
    )
