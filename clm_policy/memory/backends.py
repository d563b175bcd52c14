"""Which memory backend a command uses, and opening it: ``file`` (the git repository; the
default), ``mem0`` or ``hybrid`` (clm_policy.memory.store describes the three).

The backend is chosen by ``--memory-backend``, else ``CLM_POLICY_MEMORY_BACKEND``, else the
project's ``.clm-policy.yaml`` (``memory.backend: hybrid`` — a name only, harmless from a
stranger's file: where Mem0's model runs comes from the environment alone,
clm_policy.memory.mem0settings), else ``file``.
"""

from __future__ import annotations

import os
from pathlib import Path

from clm_policy.base.errors import InputError, quote
from clm_policy.memory.git.write import MemoryRepo
from clm_policy.memory.mem0settings import Mem0Settings
from clm_policy.memory.store import GitMemoryStore, MemoryStore

FILE, MEM0, HYBRID = "file", "mem0", "hybrid"
BACKENDS = (FILE, MEM0, HYBRID)
MEM0_FOLDER = Path("clm-policy", "mem0")
"""Mem0's data of a memory repository, under its git directory: beside it, never committed."""


def check_backend(name: str, where: str = "--memory-backend") -> str:
    """``name`` if it is a backend; else an :class:`InputError` naming the choices."""
    chosen = name.strip().lower()
    if chosen not in BACKENDS:
        from clm_policy.base.suggest import suggest

        raise InputError(
            f"{where}: {quote(name)} is no memory backend{suggest(chosen, BACKENDS)} "
            f"(one of {', '.join(BACKENDS)})"
        )
    return chosen


def needs_mem0(backend: str) -> bool:
    return backend in (MEM0, HYBRID)


def open_store(
    backend: str,
    repo: MemoryRepo,
    *,
    settings: Mem0Settings | None = None,
    folder: str | Path | None = None,
) -> MemoryStore:
    """The store of ``backend`` over ``repo``. Mem0's model comes from ``settings``, else
    from the environment; its data lives in ``folder`` (default :data:`MEM0_FOLDER` under the
    repository's git directory). Close it when done."""
    chosen = check_backend(backend)
    git = GitMemoryStore(repo)
    if not needs_mem0(chosen):
        return git
    from clm_policy.memory.mem0store import Mem0Store

    if settings is None:
        settings = Mem0Settings.from_env(os.environ)
    mem0 = Mem0Store(folder or Path(repo.git_dir, MEM0_FOLDER), settings)
    if chosen == MEM0:
        return mem0
    from clm_policy.memory.hybrid import HybridStore

    return HybridStore(git, mem0)
