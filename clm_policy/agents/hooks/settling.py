"""The transcript as the agent writes it: the hooks read a file the agent is still writing.

Claude Code 2.1.x writes its transcript every 100 ms (``FLUSH_INTERVAL_MS``): when a Stop hook
runs, the reply it is told of is often not in the file yet, and the usage figure is the
response's before; at PreCompact, the response that pushed the context past the limit may be
missing too. So the hooks wait — a moment at most — for the reply, or for the file to settle.
"""

from __future__ import annotations

import os
import time

from clm_policy.base.privatefiles import read_regular

REPLY_WAIT = 0.5
SETTLE_QUIET = 0.15
SETTLE_LIMIT = 0.6
"""A compaction hook reads the transcript once its size has not changed for SETTLE_QUIET
seconds (Claude Code flushes it every 100 ms), or after SETTLE_LIMIT seconds."""
_POLL = 0.005


def wait_for_reply(path: str, reply: str | None) -> None:
    """Wait (at most :data:`REPLY_WAIT` seconds) until the end of the transcript at ``path``
    holds ``reply``, the reply a Stop hook is told of."""
    if not reply or not reply.strip():
        return
    import json

    needle = json.dumps(reply.strip()[:120], ensure_ascii=False)[1:-1].encode("utf-8")
    deadline = time.monotonic() + REPLY_WAIT
    while needle not in tail(path, 256 * 1024) and time.monotonic() < deadline:
        time.sleep(_POLL)


def tail(path: str, limit: int) -> bytes:
    """The last ``limit`` bytes of the file at ``path`` (none when it is not a readable
    regular file: a FIFO named as the transcript must not hang the hook)."""
    return read_regular(path, limit, last=True) or b""


def settle(path: str) -> None:
    start = last_change = time.monotonic()
    seen = size(path)
    while True:
        time.sleep(_POLL)
        now = time.monotonic()
        current = size(path)
        if current != seen:
            seen, last_change = current, now
        if now - last_change >= SETTLE_QUIET or now - start >= SETTLE_LIMIT:
            return


def size(path: str) -> int:
    """The size of the file at ``path`` (-1: none)."""

    try:
        return os.stat(path).st_size
    except OSError:
        return -1
