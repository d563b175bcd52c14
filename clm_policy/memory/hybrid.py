"""The ``hybrid`` backend: the git repository and Mem0 together.

Git stays the audit trail and the source of truth: a topic is committed first (a failure
there raises, as the ``file`` backend's does), then given to Mem0 under its deadline — Mem0
being down or slow is recorded in ``failures`` and never loses the git write. Reads are git's
(``read``, ``list_keys``; ``search`` lists git's hits first, then Mem0's others). A compaction
or handoff is committed by its pipeline; its conversation goes to Mem0 (``remember``). The
seed is the ``file`` backend's (the manifest's memory keys, then topics matching the goal)
and, after it, Mem0's recall of older facts (clm_policy.memory.mem0store.RECALL_KEY).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

from clm_policy.memory.mem0store import Mem0Error, Mem0Store
from clm_policy.memory.store import (
    SEED_HITS,
    BackendFailure,
    GitMemoryStore,
    MemoryEntry,
    Remembered,
)


@dataclass
class HybridStore:
    git: GitMemoryStore
    mem0: Mem0Store
    backend: str = "hybrid"

    @property
    def failures(self) -> list[BackendFailure]:
        """Mem0's (git's write raises instead)."""
        return self.mem0.failures

    def write(self, key: str, content: str, *, tags: Sequence[str] | None = None) -> None:
        self.git.write(key, content, tags=tags)  # raises: nothing goes to Mem0 then
        with contextlib.suppress(Mem0Error):  # recorded in mem0.failures; git has the topic
            self.mem0.write(key, content, tags=tags)

    def read(self, key: str) -> str | None:
        return self.git.read(key)

    def list_keys(self) -> list[str]:
        return self.git.list_keys()

    def search(self, query: str, *, limit: int = 10) -> list[MemoryEntry]:
        found = {e.key: e for e in self.git.search(query, limit=limit)}
        for entry in self.mem0.search(query, limit=limit):
            if len(found) >= limit:
                break
            found.setdefault(entry.key, entry)
        return list(found.values())

    def begin_task(self, task: str) -> None:
        self.mem0.begin_task(task)

    def remember(self, event: Remembered) -> None:
        self.git.remember(event)
        self.mem0.remember(event)

    def seed(
        self, keys: Sequence[str], goal: str, *, about: str = "", limit: int = SEED_HITS
    ) -> list[tuple[str, str]]:
        from clm_policy.memory.mem0store import RECALL_KEY

        hits = self.git.seed(keys, goal, about=about, limit=limit)
        recall = self.mem0.recall(goal, about)
        return [*hits, (RECALL_KEY, recall)] if recall else hits

    def close(self) -> None:
        self.mem0.close()
