"""Claude Code's own lock on its user file, ``~/.claude.json``, taken before clm-policy
changes that file (``clm-policy mcp --install --user``, ``--uninstall --user``).

Claude Code rewrites ``~/.claude.json`` many times a session (its projects, its counters)
and every running session does so. Each write takes a lock first: the folder
``<file>.lock``, made with ``mkdir`` (which only one process can do) and removed when the
file has been renamed into place — the convention of the npm package proper-lockfile, which
calls a lock older than :data:`STALE_SECONDS` abandoned (its holder refreshes it every few
seconds while it lives). A writer that reads the file, changes it and replaces it without
that lock can lose a session's write, or have its own lost: the merge here holds the lock
from the read to the rename.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING

from clm_policy.base.errors import InputError, Location

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

STALE_SECONDS = 10.0
"""A lock folder not touched for this long is abandoned (proper-lockfile's default, which
Claude Code's writes of its user file keep): it is removed and the lock taken."""
WAIT_SECONDS = 30.0
"""The longest clm-policy waits for a live lock before it gives up, nothing written."""
NOTICE_SECONDS = 1.0
"""How long a wait lasts before a person at a terminal is told what it waits for."""


def lock_path(path: Path) -> str:
    """The lock folder of ``path``, named as Claude Code names it: beside the file as
    given (a link is not followed), ``.lock`` added."""
    return os.fspath(path) + ".lock"


@contextmanager
def claude_file_lock(path: Path, *, wait: float = WAIT_SECONDS) -> Iterator[None]:
    """Hold Claude Code's lock on ``path`` while the body runs; an abandoned lock is taken
    over, a live one waited for up to ``wait`` seconds (:class:`InputError` then)."""
    lock = lock_path(path)
    if not _acquire(lock, path, wait):  # no folder yet: no file, no session writing it
        yield
        return
    try:
        yield
    finally:
        # (gone or not empty: taken over by one who judged it abandoned; theirs now)
        with suppress(OSError):
            os.rmdir(lock)


def _acquire(lock: str, path: Path, wait: float) -> bool:
    """Take ``lock``: True once held, False where the file's folder does not exist."""
    from clm_policy.base.progress import Waiting

    text = (
        f"clm-policy: waiting for Claude Code's lock on {path} (a running session is writing "
        f"it; Ctrl-C stops; at most {wait:g} s)"
    )
    with Waiting(text, notice_after=NOTICE_SECONDS, first=0.005, longest=0.1) as waiting:
        while True:
            try:
                os.mkdir(lock, 0o777)
                return True
            except FileExistsError:
                pass
            except FileNotFoundError:
                return False
            except OSError as exc:  # a folder not yours to write: the write would fail too
                raise InputError(
                    f"cannot lock it ({lock}): {exc.strerror or exc}; nothing written",
                    Location(str(path)),
                ) from None
            if _abandoned(lock):
                continue
            if waiting.waited > wait:
                raise InputError(
                    f"Claude Code has held its lock on this file for over {wait:g} s "
                    f"({lock}); nothing written. Try again; if no Claude Code runs, remove "
                    "that folder.",
                    Location(str(path)),
                )
            waiting.pause()


def _abandoned(lock: str) -> bool:
    """Whether ``lock`` was left by a writer that died (then removed: the caller tries
    again); a lock that went meanwhile counts as abandoned too."""
    try:
        age = time.time() - os.stat(lock).st_mtime
    except FileNotFoundError:
        return True
    if age < STALE_SECONDS:
        return False
    try:
        os.rmdir(lock)
    except FileNotFoundError:
        pass
    except OSError:  # not empty, not ours to remove: treat it as held
        return False
    return True
