"""A lint finding: where, how bad, which check, and what is wrong."""

from __future__ import annotations

from dataclasses import dataclass

from clm_policy.base.errors import Location
from clm_policy.base.termsafe import one_line

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True, slots=True, order=True)
class Problem:
    """One finding. Sorting orders problems by file, line, column, then check ID."""

    file: str
    line: int
    col: int
    check: str
    level: str
    message: str

    @classmethod
    def at(cls, location: Location, check: str, level: str, message: str) -> Problem:
        return cls(location.file, location.line, location.col, check, level, message)

    def __str__(self) -> str:
        """One line: a file name or a message holding a newline shows it as ``\\n``."""
        where = f"{one_line(self.file)}:{self.line}:{self.col}"
        return f"{where}: {self.level} [{self.check}] {one_line(self.message)}"
