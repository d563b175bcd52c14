"""Disable comments: silence a named check on one line or in a whole file.

``# clm-lint disable-line CHECK[,CHECK]`` at the end of a line silences those checks on that
line; on a line of its own it silences them on the next line. ``# clm-lint disable-file
CHECK[,CHECK]`` anywhere silences them in the whole file. ``all`` names every check. A problem
found while loading is never silenced (:data:`clm_policy.lint.checks.UNSILENCED`), and a
comment naming an unknown check or one of those is itself reported (:func:`misnamed`), and so
is a comment that starts like one but is not (``# clm-lint disable unused-signal``,
``# clm-lint: disable-line``, no check named): it would silence nothing, saying nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from clm_policy.base.errors import Location
from clm_policy.base.suggest import suggest
from clm_policy.lint.checks import CHECKS, UNSILENCED, disable_comment
from clm_policy.lint.problem import Problem

_DIRECTIVE = re.compile(r"#\s*clm-lint\s+(disable-line|disable-file)\s+([A-Za-z0-9_,\s-]+?)\s*$")
# A comment meant as a directive: clm-lint in any case, or the `clm-policy: disable` other
# linters' habits suggest (pylint's `# pylint: disable=`).
_MEANT = re.compile(r"#\s*clm-(?:lint\b|policy\s*:?\s*disable)", re.IGNORECASE)
_FORM = "write `# clm-lint disable-line CHECK[,CHECK]` or `# clm-lint disable-file CHECK[,CHECK]`"


@dataclass
class Directives:
    by_line: dict[int, set[str]] = field(default_factory=dict)
    file: set[str] = field(default_factory=set)
    # (line, col, check) of each named check, to report unknown ones
    named: list[tuple[int, int, str]] = field(default_factory=list)
    # (line, col) of each comment meant as a directive that is not one
    malformed: list[tuple[int, int]] = field(default_factory=list)

    def silences(self, line: int, check: str) -> bool:
        if check in UNSILENCED:
            return False
        return any(check in ids or "all" in ids for ids in (self.file, self.by_line.get(line, ())))

    def misnamed(self, file: str) -> Iterator[Problem]:
        """A problem for each check named that does not exist or cannot be silenced."""
        known = [str(m.ID) for m in CHECKS]
        for line, col, check in self.named:
            if check in UNSILENCED:
                why = f"'{check}' cannot be silenced: the policy does not load while it has one"
            elif check not in known and check != "all":
                why = f"no check named '{check}': it silences nothing{suggest(check, known)}"
            else:
                continue
            where = Location(file, line, col)
            yield Problem.at(where, str(disable_comment.ID), disable_comment.LEVEL, why)
        for line, col in self.malformed:
            why = f"not a disable comment, it silences nothing: {_FORM}"
            where = Location(file, line, col)
            yield Problem.at(where, str(disable_comment.ID), disable_comment.LEVEL, why)


def parse(text: str) -> Directives:
    found = Directives()
    for number, line in enumerate(text.splitlines(), start=1):
        meant = _MEANT.search(line) if "clm-" in line.lower() else None
        match = _DIRECTIVE.search(line) if meant else None
        if meant and match is None:
            found.malformed.append((number, meant.start() + 1))
        if match is None:
            continue
        ids = {part.strip() for part in match.group(2).split(",") if part.strip()}
        found.named.extend((number, match.start(2) + 1, check) for check in sorted(ids))
        if match.group(1) == "disable-file":
            found.file |= ids
            continue
        own_line = line[: match.start()].strip() == ""
        target = number + 1 if own_line else number
        found.by_line.setdefault(target, set()).update(ids)
    return found
