"""The one YAML reading layer (plain data, every node's line and column) and the YAML writer.

Everything that reads YAML — policies, policy test files, scenarios, lint — goes through
:func:`parse_yaml` / :func:`load_yaml` (or :class:`YamlStream` for a file too big to hold), so a
syntax error, a duplicate key, nesting too deep, a bad merge key, an alias bomb, a file too
large, binary or not UTF-8 reads the same everywhere, as ``file:line:col: message`` (check
``yaml-syntax``). libyaml parses (through ruamel) and :mod:`.yamlbuild` builds the data and
every node's position from its events.

A file is parsed once per process: :func:`load_yaml` keeps the documents it parsed, by name
and text (a policy chain names the bundled default again and again). Documents are shared:
nothing may change their data.

:func:`dump_yaml` writes YAML with ruamel's round-trip emitter (block style, as a person
would), the one place a round-trip library is needed.
"""

from __future__ import annotations

import functools
import gc
from collections import OrderedDict
from contextlib import contextmanager

from clm_policy.base.errors import InputError, LoadCheck, Location
from clm_policy.base.record import Record
from clm_policy.formats.textio import POLICY_LIMIT, read_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from pathlib import Path
    from typing import Any

    from clm_policy.formats.yamlbuild import Marks

PathKey = str | int


class YamlDocument(Record):
    """A parsed YAML file (or a part of one): plain data (``root``) and where each node is.

    ``marks`` are the positions of ``root`` and everything in it (see
    :data:`clm_policy.formats.yamlbuild.Marks`); None for an empty document.
    """

    file: str
    text: str
    root: Any
    marks: Marks | None = None
    HASHABLE = False

    def _marks_at(self, path: Sequence[PathKey]) -> tuple[Marks | None, tuple[int, int] | None]:
        """The marks of the deepest node ``path`` reaches, and the position of the last key
        of ``path`` when it reached the end."""
        marks = self.marks
        key_at: tuple[int, int] | None = None
        for step in path:
            if marks is None:
                return None, None
            sub = marks[2]
            if sub.__class__ is dict:
                entry = sub.get(step)
                if entry is None:
                    return marks, None
                key_at, marks = (entry[0], entry[1]), entry[2]
            elif sub.__class__ is list and step.__class__ is int and 0 <= step < len(sub):
                marks = sub[step]
                key_at = (marks[0], marks[1])
            else:
                return marks, None
        return marks, key_at

    def location(self, path: Sequence[PathKey], *, key: bool = False) -> Location:
        """Where the node at ``path`` starts (its key when ``key``; an item's key is the item);
        past the tree, the deepest node it reached: where a missing field belongs."""
        marks, key_at = self._marks_at(path)
        if marks is None:
            return Location(self.file, 1, 1)
        if key and key_at is not None:
            return Location(self.file, *key_at)
        return Location(self.file, marks[0], marks[1])

    def node(self, path: Sequence[PathKey]) -> Any:
        node = self.root
        for step in path:
            node = node[step]
        return node

    def style(self, path: Sequence[PathKey]) -> str | None:
        """The style of the scalar at ``path``: "" plain, "'", '"', "|" or ">"; None if none."""
        marks, key_at = self._marks_at(path)
        if marks is None or (path and key_at is None):
            return None
        return marks[2] if isinstance(marks[2], str) else None

    def sub(self, path: Sequence[PathKey]) -> YamlDocument:
        """The part of this document at ``path``, as a document of its own (same file)."""
        marks, key_at = self._marks_at(path)
        if path and key_at is None:
            marks = None
        return YamlDocument(self.file, self.text, self.node(path), marks)


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many new objects: it would walk the
    growing tree again and again, and parsed data holds no reference cycles that need it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse_yaml(text: str, file: str) -> YamlDocument:
    """Parse ``text`` (one document); every problem is an :class:`InputError` (``yaml-syntax``)."""
    from clm_policy.formats.yamlbuild import Builder

    builder = Builder(text, file)
    with paused_gc():
        builder.build()
    return YamlDocument(file, text, builder.root, builder.marks)


_EMPTY = "empty file: expected a YAML mapping"


def read_yaml_text(path: Path, shown: str, *, limit: int, what: str) -> str:
    """The text of a YAML file. A file that cannot be read as text (too large, binary, not
    UTF-8, not a regular file) is reported like a syntax error (check ``yaml-syntax``):
    nothing else can be checked in it."""
    try:
        return read_text(path, shown, limit=limit, what=what)
    except InputError as exc:
        raise InputError(exc.message, exc.location, check=LoadCheck.YAML_SYNTAX) from None


_PARSED: OrderedDict[tuple[str, str], YamlDocument] = OrderedDict()
_PARSED_KEPT = 256  # documents kept: a team's policies and their parents


def load_yaml(
    path: Path, display: str | None = None, *, limit: int = POLICY_LIMIT, what: str = "policy"
) -> YamlDocument:
    """Read and parse one YAML file (once per process); an empty file is an error."""
    shown = display or str(path)
    text = read_yaml_text(path, shown, limit=limit, what=what)
    key = (shown, text)
    doc = _PARSED.get(key)
    if doc is None:
        doc = parse_yaml(text, shown)
        if doc.root is None:
            raise InputError(_EMPTY, Location(shown, 1, 1), check=LoadCheck.SCHEMA)
        _PARSED[key] = doc
        if len(_PARSED) > _PARSED_KEPT:
            _PARSED.popitem(last=False)
    else:
        _PARSED.move_to_end(key)
    return doc


class YamlStream:
    """A document whose top level is a mapping, read with the items of the sequence under
    ``key`` handed out one at a time (:meth:`items`), never all held at once.

    While items are read, :attr:`header` is the top-level mapping read so far (without the
    items); once :meth:`items` is exhausted it is the whole document, ``key`` an empty list.
    :attr:`late` tells whether a top-level key came after the sequence began. When the top
    level is no mapping, or ``key`` holds no sequence (or an anchored one, or an alias),
    nothing streams: :attr:`header` is the whole document.
    """

    def __init__(self, text: str, file: str, key: str) -> None:
        from clm_policy.formats.yamlbuild import Builder

        self._builder = Builder(text, file, stream=key)
        self.file = file
        self.text = text

    def items(self) -> Iterator[YamlDocument]:
        file, text = self.file, self.text
        for root, marks in self._builder.items():
            yield YamlDocument(file, text, root, marks)
        if self._builder.root is None:
            raise InputError(_EMPTY, Location(file, 1, 1), check=LoadCheck.SCHEMA)

    @property
    def header(self) -> YamlDocument:
        top = self._builder.top
        if self._builder.marks is not None or top is None:
            return YamlDocument(self.file, self.text, self._builder.root, self._builder.marks)
        return YamlDocument(self.file, self.text, top.data, (top.line, top.col, top.marks))

    @property
    def late(self) -> bool:
        return self._builder.late


def scalar_text_start(doc: YamlDocument, path: Sequence[PathKey]) -> tuple[Location, int]:
    """Where the content of a scalar starts (after an opening quote; on the line after a
    ``|``/``>``), so that a column inside an expression maps back to the file, and the column
    (1-based) later lines of a block scalar start at (0 for flow scalars)."""
    loc = doc.location(path)
    style = doc.style(path)
    if style in ("'", '"'):
        return loc.shifted(cols=1), 0
    if style in ("|", ">"):
        lines = doc.text.splitlines()
        nxt = loc.line  # 0-based index of the line after the indicator
        while nxt < len(lines) and not lines[nxt].strip():
            nxt += 1
        if nxt < len(lines):
            indent = len(lines[nxt]) - len(lines[nxt].lstrip(" "))
            return Location(loc.file, nxt + 1, indent + 1), indent + 1
    return loc, 0


_ESCAPE_WIDTH = {"x": 4, "u": 6, "U": 10}
"""Characters written for an escape of a double-quoted scalar that takes digits (else 2)."""


def scalar_moves(
    doc: YamlDocument, path: Sequence[PathKey], value: str, start: Location
) -> tuple[tuple[int, int, int, int], ...]:
    """Where each line of a quoted or plain scalar's ``value`` and its text as written start
    to run in step again: ``(line, col, file_line, file_col)``, 1-based, in order; empty when
    they run in step throughout (or the scalar is a block, or is not ``value``). ``start`` is
    where its text starts (:func:`scalar_text_start`).

    The value is libyaml's; this only matches it against the text, character by character,
    over what writing it added: an escape (``\\"``, ``\\u00e9``), a doubled quote (``''``), the
    spaces and line breaks of lines folded into one (clm_policy.policy.expr.SourceSpan)."""
    style = doc.style(path)
    if style not in ("", "'", '"') or not isinstance(value, str):
        return ()
    lines = _lines(doc.text)
    row, col = start.line - 1, start.col - 1
    if (
        row < len(lines)
        and "\n" not in value
        and not (style == '"' and "\\" in value)
        and not (style == "'" and "'" in value)
        and lines[row].startswith(value, col)
    ):
        return ()  # written as it reads, on its line (most expressions): nothing to match
    moves: list[tuple[int, int, int, int]] = []
    line, at = 1, 1
    for char in value:
        found = _written_at(style, lines, row, col, char)
        if found is None:
            return ()  # not the value after all: its columns are left as they were
        row, col, width = found
        if (
            not moves
            or moves[-1][0] != line
            or moves[-1][2:] != (row + 1, col + 1 - at + moves[-1][1])
        ):
            moves.append((line, at, row + 1, col + 1))
        row, col = _step(lines, row, col + width)
        line, at = (line + 1, 1) if char == "\n" else (line, at + 1)
    return () if moves == [(1, 1, start.line, start.col)] else tuple(moves)


@functools.lru_cache(maxsize=4)
def _lines(text: str) -> list[str]:
    """``text``'s lines, ends kept: split once for all the scalars of a file."""
    return text.splitlines(keepends=True)


def _written_at(
    style: str, lines: list[str], row: int, col: int, char: str
) -> tuple[int, int, int] | None:
    """Where (row, col, 0-based) and in how many characters ``char`` of a scalar's value is
    written, from ``row``/``col`` on; None when what is written there is not it."""
    while row < len(lines) and col < len(lines[row]):
        text = lines[row]
        width = _written_width(style, text, col, char)
        if width:
            return row, col, width
        if style == '"' and text[col] == "\\":
            col += 2  # an escaped line break writes nothing
        elif text[col].isspace():
            col += 1  # folded away
        else:
            return None
        row, col = _step(lines, row, col)
    return None


def _step(lines: list[str], row: int, col: int) -> tuple[int, int]:
    """``row``/``col``, or the next line's start when ``col`` is past its line."""
    return (row + 1, 0) if row < len(lines) and col >= len(lines[row]) else (row, col)


def _written_width(style: str, text: str, col: int, char: str) -> int:
    """How many characters of ``text`` from ``col`` write ``char`` of a scalar's value (0:
    none; they are folded away, or are not ``char``)."""
    written = text[col]
    if style == '"' and written == "\\":
        following = text[col + 1 : col + 2]
        return 0 if following in ("", "\r", "\n") else _ESCAPE_WIDTH.get(following, 2)
    if style == "'" and char == "'" and text.startswith("''", col):
        return 2
    if written == char or (char == " " and written in "\r\n"):  # a break folded to a space
        return 1
    return 0


def scalar_source(doc: YamlDocument, path: Sequence[PathKey]) -> str | None:
    """A folded (``>``) scalar's lines as written, joined by newlines; None for other styles."""
    if doc.style(path) != ">":
        return None
    start, indent = scalar_text_start(doc, path)
    lines = doc.text.splitlines()[start.line - 1 :]
    out: list[str] = []
    for line in lines:
        if line.strip() and len(line) - len(line.lstrip(" ")) < indent - 1:
            break
        out.append(line[indent - 1 :])
    return "\n".join(out).rstrip()


def dump_yaml(data: Any) -> str:
    """Render data as block-style YAML, terminal-safe and still the same data: a string that
    holds a character :func:`~clm_policy.base.termsafe.terminal_safe` escapes is written
    double-quoted, where YAML has escapes for it (ruamel's own for controls, ``\\u202e`` for
    the rest); in a comment, the escape is only text."""
    import io

    from ruamel.yaml import YAML

    from clm_policy.base.termsafe import terminal_safe

    yaml = YAML(typ="rt")
    yaml.default_flow_style = False
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 100
    out = io.StringIO()
    yaml.dump(_quoted(data), out)
    return terminal_safe(out.getvalue(), form="yaml")


def _quoted(value: Any) -> Any:
    """``value`` with each string :func:`terminal_safe` would change double-quoted (a map's
    values in place, so comments stay; a map rebuilt only when a key needs it)."""
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    from clm_policy.base.termsafe import terminal_safe

    if isinstance(value, str):
        unsafe = terminal_safe(value, form="yaml") != value
        return DoubleQuotedScalarString(value) if unsafe else value
    if isinstance(value, list):
        for i, item in enumerate(value):
            value[i] = _quoted(item)
        return value
    if isinstance(value, dict):
        if all(_quoted(k) is k for k in value):
            for k in value:
                value[k] = _quoted(value[k])
            return value
        rebuilt = CommentedMap((_quoted(k), _quoted(v)) for k, v in value.items())
        if isinstance(value, CommentedMap):
            value.copy_attributes(rebuilt)
        return rebuilt
    return value
