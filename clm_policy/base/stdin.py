"""Standard input, bounded: the one way clm-policy reads it.

Whatever sends the input — Claude Code or Codex to a hook, a script to ``decide --state -``,
Claude Code to the status line — may send more than any use has for it, so nothing reads
standard input to its end: :func:`read_stdin` reads at most one byte more than the caller's
limit (the caller says "too large" when it got that byte), and leaves the rest unread.
:func:`read_stdin_kept` reads through it and keeps what it read, for a process that may ask
twice (the quick ``decide`` path, then click's in the same process, when the quick one
declined).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO


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


_KEPT: list[Any] = []  # [the stream read, its bytes, whether it ended]: read once


def read_stdin_kept(limit: int) -> bytes | None:
    """Standard input's bytes as :func:`read_stdin` reads them (at most ``limit + 1``), kept:
    a second call on the same stream gets the same bytes, and only what the first did not
    read is read then. None: no standard input."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        return None
    if not _KEPT or _KEPT[0] is not stream:
        _KEPT[:] = [stream, b"", False]
    raw: bytes = _KEPT[1]
    if len(raw) <= limit and not _KEPT[2]:
        raw += read_stdin(limit - len(raw), stream)
        _KEPT[1:] = [raw, len(raw) <= limit]  # fewer bytes than asked for: the end
    return raw[: limit + 1]
