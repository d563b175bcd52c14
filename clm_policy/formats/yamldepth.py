"""A linear scan of YAML text for how deeply it nests: where it passes :data:`MAX_DEPTH`.

No policy, test file or scenario nests more than a few levels, so anything deeper is refused,
at the line and column where it crosses the limit. :mod:`.yamlbuild` stops building
at that depth and asks :func:`check_depth` where to report it (and reports it before any other
problem of the text, since a parser's error may be caused by the nesting); ruamel's
pure-Python parser (used only without libyaml) is quadratic in the nesting of flow
collections, so there the scan runs before the parser sees the text.

A level is a block mapping or sequence (told apart by the column its keys or ``- `` entries
start at) or an open ``[`` or ``{``.
Quoted scalars, block scalars (``|``, ``>``), plain scalars and comments are skipped as the
YAML scanner would skip them, so a bracket inside text (``when: max([a, b]) > 1``,
``because: "[x"``) is not counted.
"""

from __future__ import annotations

import re

from clm_policy.base.errors import InputError, LoadCheck, Location

MAX_DEPTH = 64

_DOUBLE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.S)  # may span lines; unclosed: to the end
_SINGLE = re.compile(r"'[^']*(?:''[^']*)*'?")
_PROPERTY = re.compile(r"[&!*][^ \t\r\n,\[\]{}]*")  # an anchor, a tag or an alias
# where a plain scalar stops: at a value indicator, a comment or the end of the line (block),
# and also at a flow indicator (flow)
_BLOCK_PLAIN_END = re.compile(r":(?=[ \t\r\n]|\Z)|[ \t]#|\n")
_FLOW_PLAIN_END = re.compile(r":(?=[ \t\r\n,\[\]{}]|\Z)|[ \t]#|[,\[\]{}\n]")
_MARKER = re.compile(r"(?:---|\.\.\.)(?=[ \t\r\n]|\Z)")
_SPACE = " \t\r"


class _Scan:
    def __init__(self, text: str, file: str, limit: int) -> None:
        self.text = text
        self.file = file
        self.limit = limit
        # the open block collections: (column, "map" or "seq"); a sequence may share its
        # mapping's column ("key:" then "- item" below it, not indented)
        self.blocks: list[tuple[int, str]] = []
        # the open '[' and '{'; a '[' whose entry is a "key: value" pair (a mapping of its
        # own, one level deeper) is marked 'p' until the next ','
        self.flow: list[str] = []

    def column(self, pos: int) -> int:
        return pos - (self.text.rfind("\n", 0, pos) + 1)

    def block(self, col: int, kind: str, pos: int) -> None:
        """A block collection of ``kind`` has an entry at ``col``: the same one, or a new one."""
        blocks = self.blocks
        if kind == "map" and blocks[-2:] == [(col, "map"), (col, "seq")]:
            blocks.pop()  # the unindented sequence of this mapping's value ends
        if not blocks or blocks[-1] != (col, kind):
            blocks.append((col, kind))
            self.deeper(pos)

    def deeper(self, pos: int) -> None:
        if len(self.blocks) + len(self.flow) + self.flow.count("p") > self.limit:
            text = self.text
            raise InputError(
                f"nested more than {self.limit} levels deep",
                Location(self.file, text.count("\n", 0, pos) + 1, self.column(pos) + 1),
                check=LoadCheck.YAML_SYNTAX,
            )

    def run(self) -> None:
        text, n = self.text, len(self.text)
        pos = 0
        node = True  # a node may start here
        node_at = 0  # where the node being read started (a key, once ':' follows it)
        scalar_col: int | None = None  # skipping the lines of a block scalar indented past this
        while pos < n:
            # -- the start of a line
            start = pos
            while pos < n and text[pos] == " ":
                pos += 1
            col = pos - start
            eol = text.find("\n", pos)
            eol = n if eol < 0 else eol
            marker = col == 0 and _MARKER.match(text, pos) is not None
            blank = pos == eol or text[pos] == "\r"
            if scalar_col is not None and not marker and (blank or col > scalar_col):
                pos = eol + 1  # a block scalar's text
                continue
            scalar_col = None
            if blank or text[pos] == "#":
                pos = eol + 1
                continue
            if not self.flow:
                while self.blocks and self.blocks[-1][0] > col:
                    self.blocks.pop()
                node, node_at = True, pos
                if marker:
                    self.blocks.clear()
                    pos += 3
                elif col == 0 and text.startswith("%", pos):
                    pos = eol + 1  # a directive
                    continue
            # -- the rest of the line (a quoted scalar or a flow collection may run past it)
            while pos < n:
                ch = text[pos]
                if ch == "\n":
                    pos += 1
                    break
                if ch in _SPACE:
                    pos += 1
                    continue
                if node and not self.flow:
                    node_at = pos
                if ch == "#" and (pos == 0 or text[pos - 1] in " \t\n"):
                    pos = text.find("\n", pos)
                    pos = n if pos < 0 else pos
                elif ch in "[{" and (node or self.flow):
                    self.flow.append(ch)
                    self.deeper(pos)
                    pos += 1
                    node = True
                elif self.flow and ch in "]}":
                    self.flow.pop()
                    pos += 1
                    node = False
                elif self.flow and ch == ",":
                    if self.flow[-1] == "p":
                        self.flow[-1] = "["
                    pos += 1
                    node = True
                elif ch == ":" or (
                    ch in "-?" and node and (pos + 1 == n or text[pos + 1] in " \t\r\n")
                ):
                    # a mapping value (also right after a quoted key: "key":value), a block
                    # sequence entry or a complex key
                    if not self.flow:
                        kind = "seq" if ch == "-" else "map"
                        at = node_at if ch == ":" else pos
                        self.block(self.column(at), kind, at)
                    elif ch in ":?" and self.flow[-1] == "[":
                        self.flow[-1] = "p"
                        self.deeper(pos)
                    pos += 1
                    node = True
                elif node and ch in "|>" and not self.flow:
                    scalar_col = self.blocks[-1][0] if self.blocks else -1
                    pos = text.find("\n", pos)
                    pos = n if pos < 0 else pos
                    node = False
                elif node and ch in "\"'":
                    match = (_DOUBLE if ch == '"' else _SINGLE).match(text, pos)
                    pos = match.end() if match is not None else n
                    node = False
                elif node and ch in "&!*":
                    match = _PROPERTY.match(text, pos)
                    pos = match.end() if match is not None else pos + 1
                    node = ch != "*"
                else:
                    end = (_FLOW_PLAIN_END if self.flow else _BLOCK_PLAIN_END).search(text, pos + 1)
                    pos = end.start() if end is not None else n
                    node = False


def check_depth(text: str, file: str, limit: int = MAX_DEPTH) -> None:
    """Raise an :class:`InputError` (check ``yaml-syntax``) if ``text`` nests deeper than
    ``limit`` levels, at the first place it does."""
    _Scan(text, file, limit).run()
