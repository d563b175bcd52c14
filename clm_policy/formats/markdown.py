"""The Markdown-safe printer: text someone else wrote, put into Markdown that people read on a
forge (a pull request's body, a handoff's file for people), shown as written and doing nothing
else.

An agent's goal, a blocker, a trailer of a commit made elsewhere: what it says must render as
the characters it holds, inside the block the template puts it in. So, in what these functions
return:

- no inline markup works. A backslash goes before every ``\\`` `` ` `` ``*`` ``[`` ``<`` ``|``
  ``~`` ``$``; before ``_`` unless it stands alone between two letters or digits
  (``test_auth.py`` stays as it is: there it cannot emphasise); before ``&`` that starts an
  entity (``&#64;``); before the ``:`` of ``://`` and the ``.`` of ``www.``. So there is no image
  (``![](…)``, a beacon), no link, no raw HTML (``<img>``, ``<details>``), no HTML comment
  hiding text from the reviewer, no code span or fence opened or closed by a backtick run, no
  table, no strikethrough, no math. A URL is shown as text, letter for letter, and not linked:
  a forge decides by rules of its own where an autolink ends (GFM's runs over "non-space
  non-``<`` characters" of the source, a backslash included), so no escape next to one could
  be trusted;
- no line starts a block: leading blanks go (four of them would start a code block), and a
  line that would start a heading, a quote, a list item, a setext underline, a thematic break
  or a table's delimiter row (``# ``, ``>``, ``- ``, ``+ ``, ``===``, ``---``, ``:--``,
  ``1. ``, ``1) ``) gets a backslash before its first mark (``0.93`` and ``-x`` start nothing
  and stay as they are), so it continues the paragraph or list item it is in, and the
  template's later headings stay headings;
- no one is notified and nothing is linked by reference: a WORD JOINER (U+2060, invisible)
  follows the ``@`` of every ``@name`` after a character that is not a letter, digit or ``_``
  (GitHub reads a mention after any such character, not only after a blank), the ``#`` of
  every ``#123`` (``owner/repo#123``, ``fixes #123``) and the ``-`` of ``GH-123``;
- nothing is hidden: control characters and the bidirectional controls that reorder what a
  reader sees (U+202E …) are shown as their code point (``U+202E``).

:func:`code` prints an identifier as a code span that its own backticks cannot close, and
:func:`plain` a pull request's title (no Markdown there: only mentions, references and
controls). What goes through here is redacted first (by the caller: an escape inside a token
would hide it from the redactor).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

NONE = "(none)"
JOINER = "\u2060"  # WORD JOINER: invisible; breaks a forge's @mention and #reference

# Where a forge reads a mention or an issue reference (GitHub: a mention after any character
# that is not a word character; a reference as #N, owner/repo#N or GH-N).
_QUIET = re.compile(
    r"(?<![A-Za-z0-9_])@(?=[A-Za-z0-9])|#(?=[0-9])|(?<![A-Za-z0-9_])GH-(?=[0-9])", re.I
)
# Inline markup, escaped wherever it stands (an "_" only where it could emphasise), and what
# starts an autolink.
_INLINE = re.compile(
    r"[\\`*\[<|~$]|(?<![^\W_])_|_(?![^\W_])|&(?=#?[0-9A-Za-z]{1,32};)|:(?=//)"
    r"|(?<=(?<![A-Za-z0-9])[Ww]{3})\."
)
# What starts a block at the beginning of a line (once the blanks before it are removed): a
# heading, a quote, a list item (bullet or number), a setext underline, a thematic break or a
# table's delimiter row (---, :--:, -|-).
_BLOCK_START = re.compile(
    r"#{1,6}(?=[ \t]|$)|>|[-+](?=[ \t]|$)|[-:](?=[-:| \t]*$)|=(?=[= \t]*$)"
    r"|[0-9]{1,9}(?=[.)](?:[ \t]|$))"
)
# Controls (C0 but tab and line feed, DEL, C1) and the bidirectional formatting characters.
_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """``text`` with its control and bidirectional formatting characters shown as ``U+XXXX``."""
    return _HIDDEN.sub(lambda m: f"U+{ord(m[0]):04X}", text)


def quiet(text: str) -> str:
    """``text`` with its ``@mentions`` and issue references made inert for a forge: a word
    joiner after the ``@``, the ``#`` or ``GH-``."""
    return _QUIET.sub(lambda m: m[0] + JOINER, text)


def _line(line: str) -> str:
    """One line of text, its blanks at both ends removed, as Markdown that starts no block."""
    line = line.strip()
    escaped = _INLINE.sub(lambda m: "\\" + m[0], quiet(line))
    start = _BLOCK_START.match(line)
    if start is None:
        return escaped
    if start[0].isdigit():  # "1." or "1)": the "." or ")" after the digits
        return f"{start[0]}\\{escaped[start.end() :]}"
    return "\\" + escaped


def inline(text: str) -> str:
    """``text`` as inline Markdown on one line (runs of blanks and line breaks become one
    space): it renders as written and starts no block."""
    return _line(visible(" ".join(text.split())))


def lines(text: str) -> list[str]:
    """``text`` as Markdown lines that continue the block they are put in (a paragraph, a
    list item): each renders as written, none starts a block; ``(none)`` when blank."""
    found = [_line(visible(line)) for line in text.strip().splitlines()]
    return found or [NONE]


def bullets(items: Sequence[str]) -> list[str]:
    """A Markdown list of ``items``, one item each (a multi-line item continues indented under
    its bullet); ``(none)`` when there are none."""
    if not items:
        return [NONE]
    out: list[str] = []
    for item in items:
        first, *rest = lines(item) if item.strip() else [""]
        out.append(f"- {first}".rstrip())
        out += [f"  {line}".rstrip() for line in rest]
    return out


def code(text: str) -> str:
    """``text`` on one line as a code span that no backtick in it can close (the fence is one
    backtick longer than its longest run), control characters shown; ``(none)`` when blank."""
    flat = visible(" ".join(text.split()))
    if not flat:
        return NONE
    fence = "`" * (max(map(len, re.findall("`+", flat)), default=0) + 1)
    pad = " " if flat[0] == "`" or flat[-1] == "`" else ""  # or the fence would grow
    return f"{fence}{pad}{flat}{pad}{fence}"


def code_list(items: Iterable[str]) -> list[str]:
    """A Markdown list of code spans; ``(none)`` when empty."""
    return [f"- {code(item)}" for item in items] or [NONE]


def plain(text: str) -> str:
    """A pull request's title: one line, control characters shown, mentions and references
    made inert (a title is no Markdown: nothing else is escaped)."""
    return quiet(visible(" ".join(text.split())))
