"""Memory backends: the MemoryStore protocol, and the git-backed store (the ``file`` backend).

What a backend does for the loop is one protocol, :class:`MemoryStore`: durable *topics*
(notes kept under a key), :meth:`~MemoryStore.remember` the conversation a compaction or
handoff takes out of the context (the event itself is always committed by the pipeline: the
audit trail), :meth:`~MemoryStore.seed` a fresh session after a handoff, and ``failures``: what
a backend could not do and did not raise (Mem0 down or slow never loses the git write).

Three backends implement it (clm_policy.memory.backends chooses): ``file``, this module's
:class:`GitMemoryStore`; ``mem0`` (clm_policy.memory.mem0store, an optional extra); ``hybrid``
(clm_policy.memory.hybrid: both, git the source of truth). tests/memory/test_store_conformance.py
runs the same checks against all three.

A topic here is ``topics/<key>.md``: YAML-ish front matter (key, tags, updated_at) and
Markdown. Every write is redacted, committed, and regenerates MEMORY.md (the index). Search
runs ``git grep`` over the committed topics, so no index file is ever committed or kept.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from clm_policy.memory.change import Change
from clm_policy.memory.git.write import MemoryRepo
from clm_policy.memory.layout import INDEX, TOPICS, check_key, is_key, topic_path
from clm_policy.memory.trailers import CommitMessage

SEED_HITS = 3
"""Memory entries a handoff's seed carries from the topics, at most."""


@dataclass(frozen=True)
class MemoryEntry:
    key: str
    content: str
    tags: tuple[str, ...] = ()
    updated_at: str = ""


@dataclass(frozen=True)
class Remembered:
    """What a compaction or a handoff (``kind``: ``compact`` | ``handoff``) of ``session`` at
    ``step`` takes out of the context: the conversation's ``messages`` as ``(role, content)``,
    oldest first (the agent's system prompt, hints and seeds left out). Not yet redacted: a
    backend that keeps it passes it through the one redactor first."""

    kind: str
    session: str
    step: int
    messages: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class BackendFailure:
    """Something a backend could not do and did not raise: ``operation`` (``remember``,
    ``seed``, ``write``, ...) and ``reason`` in a few words (``timeout after 5s``,
    ``APIConnectionError``) — no URL, key or content."""

    operation: str
    reason: str


class MemoryStore(Protocol):
    """What the loop needs of a memory backend (see the module's docstring)."""

    backend: str

    @property
    def failures(self) -> list[BackendFailure]: ...
    def write(self, key: str, content: str, *, tags: Sequence[str] | None = None) -> str | None:
        """Write the topic ``key``; the commit that holds it, when the backend has one."""
        ...

    def read(self, key: str) -> str | None: ...
    def search(self, query: str, *, limit: int = 10) -> list[MemoryEntry]: ...
    def list_keys(self) -> list[str]: ...
    def begin_task(self, task: str) -> None: ...
    def remember(self, event: Remembered) -> None: ...
    def seed(
        self, keys: Sequence[str], goal: str, *, about: str = "", limit: int = SEED_HITS
    ) -> list[tuple[str, str]]: ...
    def close(self) -> None: ...


EXCERPT = 300
"""Characters of a topic a search shows (the MCP tool's answer, ``clm-policy show --search``)."""


def search_topics(repo: MemoryRepo, query: str, *, limit: int = 10) -> list[dict[str, Any]]:
    """The committed topics whose text holds ``query`` (case-insensitive), most hits first:
    key, tags, updated_at and the first :data:`EXCERPT` characters — what the MCP tool
    ``memory_search`` answers and ``clm-policy show --search`` prints. An empty query is an
    :class:`~clm_policy.base.errors.InputError` (:func:`check_query`)."""
    found = GitMemoryStore(repo).search(check_query(query), limit=limit)
    return [
        {
            "key": entry.key,
            "tags": list(entry.tags),
            "updated_at": entry.updated_at,
            "excerpt": entry.content[:EXCERPT],
        }
        for entry in found
    ]


def check_query(query: str) -> str:
    """``query``, or an :class:`~clm_policy.base.errors.InputError` when it is blank."""
    if not query.strip():
        from clm_policy.base.errors import InputError

        raise InputError("the query is empty")
    return query


def render_topic(entry: MemoryEntry) -> str:
    tags = json.dumps(list(entry.tags))
    return (
        f"---\nkey: {entry.key}\ntags: {tags}\nupdated_at: {entry.updated_at}\n---\n\n"
        f"{entry.content.rstrip()}\n"
    )


def parse_topic(key: str, text: str) -> MemoryEntry:
    tags: tuple[str, ...] = ()
    updated = ""
    body = text
    if text.startswith("---\n"):
        head, _, rest = text[4:].partition("\n---\n")
        body = rest.lstrip("\n")
        for line in head.splitlines():
            name, _, value = line.partition(": ")
            if name == "tags":
                try:
                    tags = tuple(str(t) for t in json.loads(value))
                except ValueError:
                    tags = ()
            elif name == "updated_at":
                updated = value
    return MemoryEntry(key, body.rstrip("\n"), tags, updated)


_INDEX_HEAD = (
    "# Memory\n\nDurable memory topics (regenerated by clm-policy on every write; do not edit by "
    "hand).\n\n"
)


@dataclass
class GitMemoryStore:
    """Topics in a memory repository. Content is redacted before it is written."""

    repo: MemoryRepo
    redactions: dict[str, int] = field(default_factory=dict)
    failures: list[BackendFailure] = field(default_factory=list)  # git raises: stays empty
    backend: str = "file"

    def write(self, key: str, content: str, *, tags: Sequence[str] | None = None) -> str:
        """Write the topic ``key`` and regenerate MEMORY.md in one commit; returns the commit."""
        change = Change()
        self.stage(change, key, content, tags=tags)
        message = CommitMessage(
            f"clm(memory): {key}", trailers={"Clm-Event": "memory", "Clm-Key": key}
        )
        commit = self.repo.commit(message, change)
        for rule, count in change.counts.items():
            self.redactions[rule] = self.redactions.get(rule, 0) + count
        return commit

    def stage(
        self, change: Change, key: str, content: str, *, tags: Sequence[str] | None = None
    ) -> None:
        """Put the topic ``key`` and the index it changes into ``change`` (committed by the
        caller, with whatever else the change holds)."""
        check_key(key)
        # cleaned before the index line cuts the first line to 100 characters
        entry = MemoryEntry(
            key,
            change.clean(content),
            tuple(change.clean(t) for t in tags or ()),
            datetime.now(UTC).isoformat(timespec="seconds"),
        )
        keys = sorted({*self.list_keys(), key})
        change.files[topic_path(key)] = render_topic(entry)
        change.files[INDEX] = self._index(keys, entry)

    def read(self, key: str) -> str | None:
        found = self.entry(key)
        return None if found is None else found.content

    def entry(self, key: str) -> MemoryEntry | None:
        """The topic ``key`` as the work tree has it (never through a symbolic link)."""
        text = self.repo.read_file(topic_path(key))
        return None if text is None else parse_topic(key, text)

    def list_keys(self) -> list[str]:
        out = self.repo.git("ls-files", "-z", "--", f"{TOPICS}/")
        keys = (name[len(TOPICS) + 1 : -3] for name in out.split("\0") if name.endswith(".md"))
        return sorted(key for key in keys if is_key(key))  # anything else is not a topic of ours

    def search(self, query: str, *, limit: int = 10) -> list[MemoryEntry]:
        """Topics whose text contains ``query`` (case-insensitive), best first: most hits."""
        query = query.replace("\x00", "")  # (git reads no NUL byte in a pattern)
        if not query.strip():
            return []
        # the pattern on git's input, not its command line: a query of any length is read
        out = self.repo.git(
            "grep",
            "-I",
            "-i",
            "-F",
            "-c",
            "-f",
            "-",
            "HEAD",
            "--",
            f"{TOPICS}/",
            check=False,
            stdin=query.encode("utf-8", "replace"),
        )
        hits: list[tuple[int, str]] = []
        for line in out.splitlines():
            # HEAD:topics/<key>.md:<count>
            name, _, count = line.rpartition(":")
            path = name.removeprefix("HEAD:")
            key = path[len(TOPICS) + 1 : -3]
            if path.endswith(".md") and count.isdigit() and is_key(key):
                hits.append((-int(count), key))
        found = (self.entry(key) for _, key in sorted(hits)[:limit])
        return [entry for entry in found if entry is not None]

    def _any_holds(self, queries: Sequence[str]) -> bool:
        """Whether a committed topic holds one of ``queries`` as :meth:`search` looks (one git
        process, where a search of each would be one each; True when git cannot tell)."""
        patterns = [clean for query in queries if (clean := query.replace("\x00", "")).strip()]
        if not patterns:
            return False
        # one pattern a line on git's input: words of any length (a command line's argument
        # holds at most 128 KiB)
        lines = "\n".join(patterns).encode("utf-8", "replace")
        status, _, _ = self.repo.run(
            "grep", "-q", "-I", "-i", "-F", "-f", "-", "HEAD", "--", f"{TOPICS}/", stdin=lines
        )
        return status != 1  # 0: found; 1: none; anything else: let the searches say

    def begin_task(self, task: str) -> None:
        """Topics are the repository's, shared by every task."""

    def remember(self, event: Remembered) -> None:
        """Nothing more to keep: the pipeline's commit of the compaction or handoff is this
        backend's record of it (its conversation is not committed: raw transcripts never are)."""

    def seed(
        self, keys: Sequence[str], goal: str, *, about: str = "", limit: int = SEED_HITS
    ) -> list[tuple[str, str]]:
        """``(key, content)`` of the topics named by ``keys`` first, then of topics holding one
        of the first three words of ``goal`` longer than three letters, at most ``limit``.
        ``about`` (the next action) is not searched: a topic search by a sentence finds
        nothing by ``git grep``."""
        from clm_policy.memory.redact import untag

        hits: dict[str, str] = {}
        for key in keys:
            content = self.read(key)
            if content is not None:
                hits.setdefault(key, content)
        words = [w for w in untag(goal).split() if len(w) > 3 and "[REDACTED:" not in w][:3]
        if len(hits) < limit and words and not self._any_holds(words):
            words = []  # no topic holds any of them: the searches would find nothing
        for word in words:
            if len(hits) >= limit:
                break
            for entry in self.search(word, limit=limit):
                hits.setdefault(entry.key, entry.content)
        return list(hits.items())[:limit]

    def close(self) -> None:
        """The repository is its caller's to close."""

    def _index(self, keys: Sequence[str], new: MemoryEntry) -> str:
        """MEMORY.md with ``new``'s line updated; other lines are reused from the current
        index (reading every topic on every write would not scale to thousands)."""
        current: dict[str, str] = {}
        text = self.repo.read_file(INDEX)
        if text is not None:
            for line in text.splitlines():
                if line.startswith("- [") and "](" in line:
                    current[line[3 : line.index("](")]] = line
        first = new.content.strip().splitlines()[0][:100] if new.content.strip() else ""
        current[new.key] = f"- [{new.key}](topics/{new.key}.md){' — ' + first if first else ''}"
        lines = [current.get(key, f"- [{key}](topics/{key}.md)") for key in keys]
        return _INDEX_HEAD + "".join(f"{line}\n" for line in lines)
