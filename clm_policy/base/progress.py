"""Progress of long work on a terminal: one line on standard error, rewritten in place.

Long commands (``replay`` over many sessions, ``report`` of a long session) show how far they
are, where a person watches: only when standard error is a terminal, and never with
``--format json`` (the caller passes ``enabled=False``). The line is rewritten at most every
:data:`INTERVAL` seconds, so progress costs nothing measurable however many steps report it,
and it is erased when the work is done, so the command's own output is what stays.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

from clm_policy.base.termsafe import terminal_safe

if TYPE_CHECKING:
    from typing import Self, TextIO

INTERVAL = 0.1
"""Seconds between two rewrites of the line, at least."""


class Progress:
    """``with Progress("replaying", total) as p: ... p.advance()`` (see the module docstring).

    ``total`` may be None when it is not known in advance (the count alone is shown).
    """

    def __init__(
        self,
        label: str,
        total: int | None = None,
        *,
        enabled: bool | None = None,
        stream: TextIO | None = None,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self.label = label
        self.total = total
        self.done = 0
        self._shown_at = 0.0
        self._width = 0

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def advance(self, steps: int = 1) -> None:
        """Count ``steps`` more done; show it if the line is due for a rewrite."""
        self.done += steps
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._shown_at >= INTERVAL:
            self._shown_at = now
            self._show()

    def _show(self) -> None:
        if self.total:
            share = min(self.done / self.total, 1.0)
            text = f"{self.label}: {self.done:,}/{self.total:,} ({share:.0%})"
        else:
            text = f"{self.label}: {self.done:,}"
        text = terminal_safe(text, lines=False)
        self._width = max(self._width, len(text))
        # the one control character written on purpose: back to the start of the line
        self.stream.write("\r" + text.ljust(self._width))
        self.stream.flush()

    def close(self) -> None:
        """Erase the line (nothing was written when progress is off)."""
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0


class Notice:
    """A line on a terminal's standard error while a person waits for something outside the
    program (another process holding the memory repository's write lock): :meth:`say` it
    when the wait is long enough to say, :meth:`close` erases it, however the wait ended.
    Nothing is written where standard error is not a terminal (``enabled``, as for
    :class:`Progress`)."""

    def __init__(
        self, text: str, *, enabled: bool | None = None, stream: TextIO | None = None
    ) -> None:
        self._line = Progress(terminal_safe(text, lines=False), enabled=enabled, stream=stream)
        self._width = 0

    def say(self) -> None:
        line = self._line
        if line.enabled and not self._width:
            self._width = len(line.label)
            line.stream.write("\r" + line.label)
            line.stream.flush()

    def close(self) -> None:
        if self._width:
            self._line.stream.write("\r" + " " * self._width + "\r")
            self._line.stream.flush()
            self._width = 0


class Waiting:
    """A wait for another process, polled: between two tries :meth:`pause` sleeps, a little
    longer each time (from ``first`` to ``longest`` seconds), and once ``notice_after`` seconds
    have passed a terminal is told ``text`` (a :class:`Notice`), erased when the wait ends
    (``with Waiting(...) as wait``). :attr:`waited`: the seconds since it began."""

    def __init__(
        self, text: str, *, notice_after: float = 1.0, first: float = 0.002, longest: float = 0.05
    ) -> None:
        self._text = text
        self._after = notice_after
        self._pause = first
        self._longest = longest
        self._start = time.monotonic()
        self._notice: Notice | None = None

    @property
    def waited(self) -> float:
        return time.monotonic() - self._start

    def pause(self) -> None:
        if self._notice is None and self.waited >= self._after:
            self._notice = Notice(self._text)
            self._notice.say()
        time.sleep(self._pause)
        self._pause = min(self._pause * 2, self._longest)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._notice is not None:
            self._notice.close()
