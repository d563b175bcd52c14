"""Regular expressions compiled the first time they are used, not when their module is imported.

The redactor's rules and their judges are some sixty patterns, a few of them large (the generic
key/value rule, the list of placeholder shapes); compiling them all was most of what importing
the redactor cost, while a commit's texts meet few of them. A hook that redacts one
line of advice should not pay for the rest; nor should one that reads a transcript's tail pay
for the patterns a full read uses (nor, then, for importing :mod:`re` at all: it is imported
with the first pattern compiled, so flags are written inline, ``(?s)``).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # no typing at run time: the hooks import the redactor
    import re
    from collections.abc import Callable, Iterator


class LazyPattern:
    """``re.compile(source, flags)``, done on first use; the methods the redactor calls."""

    __slots__ = ("_compiled", "flags", "source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source = source
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def ready(self) -> bool:
        """Whether it has been compiled (what a first use cost: the tests look)."""
        return self._compiled is not None

    @property
    def compiled(self) -> re.Pattern[str]:
        return self._compiled or self._compile()

    def _compile(self) -> re.Pattern[str]:
        import re

        self._compiled = re.compile(self.source, self.flags)
        return self._compiled

    # Each method is one call and one test on the way to the compiled pattern's: the judges call
    # them for every candidate.
    def search(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return (self._compiled or self._compile()).search(text, pos, endpos)

    def match(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return (self._compiled or self._compile()).match(text, pos, endpos)

    def fullmatch(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return (self._compiled or self._compile()).fullmatch(text, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str) -> str:
        return (self._compiled or self._compile()).sub(repl, text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return (self._compiled or self._compile()).finditer(text)

    def __repr__(self) -> str:
        return f"LazyPattern({self.source!r}, {self.flags!r})"
