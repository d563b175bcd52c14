"""Standard input, bounded: the one way clm-policy reads it.

Whatever sends the input — Claude Code or Codex to a hook, a script to ``decide --state -``,
Claude Code to the status line — may send more than any use has for it, so nothing reads
standard input to its end: :func:`read_stdin` reads at most one byte more than the caller's
limit (the caller says "too large" when it got that byte), and leaves the rest unread.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO


def read_stdin(limit: int, stream: BinaryIO | None = None) -> bytes:
    """At most ``limit + 1`` bytes of ``stream`` (standard input's bytes by default): more
    than ``limit`` bytes means the input is too large. No standard input, or one that cannot
    be read (closed, a directory), reads as empty."""
    if stream is None:
        # None: pythonw, or a daemon without standard streams
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:
            return b""
    try:
        return stream.read(limit + 1)
    except (OSError, ValueError):
        return b""
