"""A shell command shown on one line, as a person reads it in a handoff or a message.

Agents often run a script through a here-document — ``python - <<'PY'`` with a hundred lines
of an edit, then ``cargo test`` — and what such a command did is in its first line and in the
lines after the document, not in the document's body. :func:`command_line` leaves each body
out (``…`` in its place), puts the command's lines one after the other (``;`` between two
commands, a space where a line continues), and cuts the rest as :func:`clipped_line` does.
The transcript keeps the command whole.
"""

from __future__ import annotations

from clm_policy.base.errors import clipped_line
from clm_policy.base.lazypattern import LazyPattern

_HEREDOC = LazyPattern(r"(?<!<)<<(-?)[ \t]*(?:'([^'\n]+)'|\"([^\"\n]+)\"|\\?([A-Za-z_][\w.-]*))")
_CONTINUES = ("\\", "&&", "||", "|", "(", "{", ";", " do", " then", " else")


def command_line(command: str, limit: int) -> str:
    """``command`` on one line of at most ``limit`` characters, here-document bodies left
    out (see the module's doc)."""
    if "\n" not in command:
        return clipped_line(command, limit)
    return clipped_line(_joined(_without_bodies(command.splitlines())), limit)


def _without_bodies(lines: list[str]) -> list[str]:
    kept: list[str] = []
    ends: list[tuple[str, bool]] = []  # the terminators awaited, in order (and <<- or not)
    for line in lines:
        if ends:
            word, tabs = ends[0]
            if (line.lstrip("\t") if tabs else line).rstrip() == word:
                ends.pop(0)
            continue
        for match in _HEREDOC.finditer(line):
            word = match.group(2) or match.group(3) or match.group(4)
            ends.append((word, bool(match.group(1))))
        kept.append(f"{line.rstrip()} …" if ends else line)
    return kept


def _joined(lines: list[str]) -> str:
    out = ""
    for line in (ln.strip() for ln in lines):
        if not line or line.startswith("#"):
            continue
        if not out or out.endswith(_CONTINUES):
            out = f"{out.removesuffix(chr(92)).rstrip()} {line}".strip()
        else:
            out = f"{out}; {line}"
    return out
