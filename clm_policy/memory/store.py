"""Memory backends: the MemoryStore protocol, and the git-backed store (the ``file`` backend).

What a backend does for the loop is one protocol, :class:`MemoryStore`:

- durable *topics* (``write``, ``read``, ``search``, ``list_keys``): notes an agent or a
  person keeps under a key;
- :meth:`~MemoryStore.remember` a compaction or a handoff: the conversation it takes out of
  the context (:class:`Remembered`). The event itself — summary, manifest, state — is always
  committed to the memory repository by the pipeline (the audit trail); this is what a
  backend may keep besides;
- :meth:`~MemoryStore.seed`: the memory entries a fresh session starts from after a handoff
  (the manifest's memory keys first, then what matches the task);
- :meth:`~MemoryStore.begin_task`: the task (its first session) the next events belong to —
  Mem0 keeps the facts of one task apart from another's; topics are shared by all;
- ``failures``: what a backend could not do and did not raise (Mem0's endpoint down or slow:
  the git write is never lost; clm_policy.memory.hybrid).

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
from typing import Protocol

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
        query = query.replace("\x00", "")  # a process argument cannot hold a NUL byte
        if not query.strip():
            return []
        out = self.repo.git(
            "grep", "-I", "-i", "-F", "-c", "-e", query, "HEAD", "--", f"{TOPICS}/", check=False
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
        patterns = [
            arg
            for query in queries
            if (clean := query.replace("\x00", "")).strip()
            for arg in ("-e", clean)
        ]
        if not patterns:
            return False
        status, _, _ = self.repo.run(
            "grep", "-q", "-I", "-i", "-F", *patterns, "HEAD", "--", f"{TOPICS}/"
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
        lines = [
            "# Memory",
            "",
            "Durable memory topics (regenerated by clm-policy on every write; do not edit by "
            "hand).",
            "",
        ]
        lines += [current.get(key, f"- [{key}](topics/{key}.md)") for key in keys]
        return "\n".join(lines) + "\n"
