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
        self.node = True  # a node may start here
        self.node_at = 0  # where the node being read started (a key, once ':' follows it)
        # skipping the lines of a block scalar indented past this column
        self.scalar_col: int | None = None

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
        while pos < n:
            pos, more = self._line_start(pos)
            # -- the rest of the line (a quoted scalar or a flow collection may run past it)
            while more and pos < n:
                ch = text[pos]
                if ch == "\n":
                    pos += 1
                    break
                if ch in _SPACE:
                    pos += 1
                    continue
                if self.node and not self.flow:
                    self.node_at = pos
                pos = self._token(pos, ch)

    def _line_start(self, pos: int) -> tuple[int, bool]:
        """Read the start of the line at ``pos``: where its content starts, and whether there
        is any to read (not a blank line, a comment, a directive or a block scalar's text)."""
        text, n = self.text, len(self.text)
        start = pos
        while pos < n and text[pos] == " ":
            pos += 1
        col = pos - start
        eol = text.find("\n", pos)
        eol = n if eol < 0 else eol
        marker = col == 0 and _MARKER.match(text, pos) is not None
        blank = pos == eol or text[pos] == "\r"
        if self.scalar_col is not None and not marker and (blank or col > self.scalar_col):
            return eol + 1, False  # a block scalar's text
        self.scalar_col = None
        if blank or text[pos] == "#":
            return eol + 1, False
        if not self.flow:
            while self.blocks and self.blocks[-1][0] > col:
                self.blocks.pop()
            self.node, self.node_at = True, pos
            if marker:
                self.blocks.clear()
                pos += 3
            elif col == 0 and text.startswith("%", pos):
                return eol + 1, False  # a directive
        return pos, True

    def _token(self, pos: int, ch: str) -> int:
        """Read the token that starts with ``ch`` at ``pos``; where the next one may start."""
        text, n = self.text, len(self.text)
        if ch == "#" and (pos == 0 or text[pos - 1] in " \t\n"):
            pos = text.find("\n", pos)
            return n if pos < 0 else pos
        node, flow = self.node, self.flow
        self.node = True
        if ch in "[{" and (node or flow):
            flow.append(ch)
            self.deeper(pos)
        elif flow and ch in "]}":
            flow.pop()
            self.node = False
        elif flow and ch == ",":
            if flow[-1] == "p":
                flow[-1] = "["
        elif ch == ":" or (ch in "-?" and node and (pos + 1 == n or text[pos + 1] in " \t\r\n")):
            # a mapping value (also right after a quoted key: "key":value), a block sequence
            # entry or a complex key
            if not flow:
                at = self.node_at if ch == ":" else pos
                self.block(self.column(at), "seq" if ch == "-" else "map", at)
            elif ch in ":?" and flow[-1] == "[":
                flow[-1] = "p"
                self.deeper(pos)
        else:
            self.node = node and ch in "&!"
            return self._scalar_or_property(pos, ch, node)
        return pos + 1

    def _scalar_or_property(self, pos: int, ch: str, node: bool) -> int:
        """Skip a scalar (block, quoted or plain) or an anchor, tag or alias at ``pos``; where
        the next token may start."""
        text, n = self.text, len(self.text)
        if node and ch in "|>" and not self.flow:
            self.scalar_col = self.blocks[-1][0] if self.blocks else -1
            pos = text.find("\n", pos)
            return n if pos < 0 else pos
        if node and ch in "\"'":
            match = (_DOUBLE if ch == '"' else _SINGLE).match(text, pos)
            return match.end() if match is not None else n
        if node and ch in "&!*":
            match = _PROPERTY.match(text, pos)
            return match.end() if match is not None else pos + 1
        end = (_FLOW_PLAIN_END if self.flow else _BLOCK_PLAIN_END).search(text, pos + 1)
        return end.start() if end is not None else n


def check_depth(text: str, file: str, limit: int = MAX_DEPTH) -> None:
    """Raise an :class:`InputError` (check ``yaml-syntax``) if ``text`` nests deeper than
    ``limit`` levels, at the first place it does."""
    _Scan(text, file, limit).run()
