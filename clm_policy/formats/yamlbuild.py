"""Plain data and the position of every node, built from libyaml's parse events in one pass.

libyaml (``ruamel.yaml.clib``) parses; this module turns its events into plain Python data
(dict, list, str, int, float, bool, None) and, alongside, a tree of *marks*: the 1-based line
and column of every mapping key, every value and every sequence item (see :data:`Marks`).
Without the extension (not CPython) ruamel's pure-Python parser gives the same events.

Scalars resolve as YAML 1.2 (core schema), with ruamel's own patterns (:mod:`.yamlscalars`):
``yes``/``on`` are strings, and timestamps stay strings (files are data with JSON semantics).
Mapping keys must be strings. Merge keys (``<<: *base``) work, and a merged value keeps the
marks of where it is written. Aliases share the anchored data; their expansion is bounded
(:data:`MAX_NODES`), so an alias bomb is an error, not a hang, and so is an alias inside the
node it names. Building keeps an explicit stack (no recursion) and stops where nesting passes
:data:`~clm_policy.formats.yamldepth.MAX_DEPTH` levels, reported where :mod:`.yamldepth`
places it.

One sequence of the top-level mapping may be *streamed* (:meth:`Builder.items`): its items are
handed out one at a time as they are read, never held together, so that a file of 30,000
policy test cases is read in constant memory (unless the sequence carries an anchor: then it
is built whole, for the aliases that may name it).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator
from typing import Any

from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from ruamel.yaml.reader import ReaderError

from clm_policy.base.errors import QUOTE_LIMIT, InputError, LoadCheck, Location, quote, shorten
from clm_policy.formats.yamldepth import MAX_DEPTH, check_depth
from clm_policy.formats.yamlscalars import CORE, KINDS
from clm_policy.formats.yamlscalars import convert as _convert
from clm_policy.formats.yamlscalars import plain_value as _plain

# (line, column, sub), 1-based: ``sub`` is a scalar's style ("" plain, "'", '"', "|", ">"),
# a mapping's ``{key: (key line, key column, marks of the value)}`` or a sequence's
# ``[marks of each item]``.
Marks = tuple[int, int, Any]

MAX_NODES = 200_000  # nodes aliases may add; a policy has a few hundred in all

_MERGE = object()  # the key of a merge (a plain ``<<``)
_NO_KEY = object()  # a mapping waiting for its next key
_MISSING = object()
_MAP, _SEQ = CORE + "map", CORE + "seq"
_PLAIN: dict[str, Any] = {}  # plain scalars already resolved (keys, mostly); bounded


class _Frame:
    """A mapping or sequence being built: its data, its marks and, for a mapping, the key
    whose value comes next."""

    __slots__ = (
        "anchor",
        "col",
        "data",
        "key",
        "key_at",
        "line",
        "mapping",
        "marks",
        "merges",
        "start",
    )

    def __init__(self, mapping: bool, line: int, col: int, anchor: str | None, start: int) -> None:
        self.mapping = mapping
        self.data: Any = {} if mapping else []
        self.marks: Any = {} if mapping else []
        self.line = line
        self.col = col
        self.anchor = anchor
        self.start = start  # the node count when it opened (for the size of an anchored node)
        self.key: object = _NO_KEY
        self.key_at: tuple[int, int] = (0, 0)
        self.merges: list[tuple[dict[str, Any], dict[str, Any]]] | None = None


try:
    _CPARSER: Callable[[str], Any] | None = importlib.import_module("_ruamel_yaml").CParser
except ImportError:  # pragma: no cover - ruamel.yaml.clib is installed on CPython
    _CPARSER = None


class Builder:
    """Builds one YAML document of ``text`` from its parse events.

    :meth:`build` reads it all (``root`` and ``marks`` hold the result); :meth:`items` reads
    it streaming the sequence under the top-level key ``stream``. Every problem is an
    :class:`InputError` (check ``yaml-syntax``) at ``file:line:col``.
    """

    def __init__(self, text: str, file: str, stream: str | None = None) -> None:
        self.text = text
        self.file = file
        self.stream = stream
        self.root: Any = None
        self.marks: Marks | None = None
        self.top: _Frame | None = None  # the top-level mapping, while it is read
        self.streamed = False  # the streamed sequence has begun
        self.late = False  # a top-level entry came after it began
        # name -> (data, marks, size once expanded, complete)
        self.anchors: dict[str, tuple[Any, Marks, int, bool]] = {}
        self.documents = 0

    def build(self) -> None:
        for _ in self.items():
            raise AssertionError("nothing streams without a key")  # pragma: no cover

    def items(self) -> Iterator[tuple[Any, Marks]]:
        """Read the document; yield each item of the streamed sequence as it is complete."""
        if _CPARSER is None:  # pragma: no cover - exercised by tests with the extension hidden
            from ruamel.yaml import YAML

            check_depth(self.text, self.file)  # the pure scanner is quadratic in the depth
            source = iter(YAML(typ="safe", pure=True).parse(self.text)).__next__
            dispose: Callable[[], None] = lambda: None  # noqa: E731
        else:
            parser = _CPARSER(self.text)
            source, dispose = parser.get_event, parser.dispose
        try:
            yield from self._run(source)
        except (MarkedYAMLError, ReaderError, YAMLError) as exc:
            raise self._deep_first(self._syntax_error(exc)) from None
        except InputError as exc:
            raise self._deep_first(exc) from None
        finally:
            dispose()

    def _error(self, message: str, line: int, col: int) -> InputError:
        return InputError(message, Location(self.file, line, col), check=LoadCheck.YAML_SYNTAX)

    def _run(self, next_event: Callable[[], Any]) -> Iterator[tuple[Any, Marks]]:
        # One loop over the events, with the common cases (a plain scalar as a mapping's key
        # or value) inline: this is where a big file spends its time.
        stack: list[_Frame] = []
        frame: _Frame | None = None
        plain_cache = _PLAIN
        streaming: _Frame | None = None  # the frame of the streamed sequence
        nodes = 0  # nodes written so far, plus those aliases added (sizes of anchored nodes)
        expanded = 0  # nodes aliases added
        no_key, missing = _NO_KEY, _MISSING
        while True:
            event = next_event()
            cls = event.__class__
            written: str | None = None  # a key's text as written, for messages
            if cls is ScalarEvent:
                mark = event.start_mark
                line, col = mark.line + 1, mark.column + 1
                nodes += 1
                style = event.style or ""
                tag = event.ctag
                text = event.value
                if tag is not None and str(tag) != "!":
                    value: Any = self._tagged(str(tag), text, line, col)
                else:
                    written = text
                    value = text if style else plain_cache.get(text, missing)
                    if value is missing:
                        value = self._plain(text, line, col)
                marks: Marks = (line, col, style)
                if event.anchor is not None:
                    self.anchors[event.anchor] = (value, marks, 1, True)
                # a plain key or a value of a mapping, the common cases
                if frame is not None and frame.mapping:
                    key = frame.key
                    if key is no_key:
                        if value.__class__ is str and value not in frame.marks and value != "<<":
                            frame.key = value
                            frame.key_at = (line, col)
                            if self.streamed and not stack:
                                self.late = True
                            continue
                    elif key is not _MERGE:
                        frame.key = no_key
                        frame.data[key] = value
                        frame.marks[key] = (*frame.key_at, marks)
                        continue
            elif cls is MappingStartEvent or cls is SequenceStartEvent:
                nodes += 1
                new = self._open(event, cls is MappingStartEvent, frame, len(stack), nodes)
                if frame is not None:
                    stack.append(frame)
                    if self._streams(frame, new):
                        streaming = new
                frame = new
                continue
            elif cls is MappingEndEvent or cls is SequenceEndEvent:
                value, marks = self._close(frame, nodes)
                if frame is streaming:
                    streaming = None
                frame = stack.pop() if stack else None
            elif cls is AliasEvent:
                value, marks, size = self._alias(event, expanded)
                expanded += size
                nodes += size
            elif cls is DocumentStartEvent:
                self._begin_document(event)
                continue
            elif cls is StreamEndEvent:
                return
            else:  # StreamStart, DocumentEnd
                continue
            # a node is complete: its value and marks go to the collection being built
            if frame is None:
                self.root, self.marks = value, marks
            elif frame is streaming:
                yield value, marks
            else:
                self._place(frame, value, marks, written, top=not stack)

    def _open(
        self,
        event: MappingStartEvent | SequenceStartEvent,
        mapping: bool,
        parent: _Frame | None,
        depth: int,
        nodes: int,
    ) -> _Frame:
        """The frame a mapping or sequence that starts at ``event`` is built in."""
        mark = event.start_mark
        line, col = mark.line + 1, mark.column + 1
        tag = event.ctag
        if tag is not None and str(tag) not in ("!", _MAP if mapping else _SEQ):
            raise self._error(f"unsupported YAML tag {quote(str(tag))}", line, col)
        if parent is not None and parent.mapping and parent.key is _NO_KEY:
            raise self._error("a key must be a string, not a mapping or a list", line, col)
        if depth >= MAX_DEPTH:
            raise self._error(f"nested more than {MAX_DEPTH} levels deep", line, col)
        new = _Frame(mapping, line, col, event.anchor, nodes)
        if new.anchor is not None:  # named now: an alias inside it is a cycle
            self.anchors[new.anchor] = (new.data, (line, col, new.marks), 0, False)
        if parent is None and mapping:
            self.top = new
        return new

    def _streams(self, parent: _Frame, new: _Frame) -> bool:
        """Whether ``new`` is the sequence to stream, the one under the top-level key
        :attr:`stream` (an anchored sequence is built whole: an alias may name it later)."""
        if parent is self.top and not new.mapping and parent.key == self.stream:
            self.streamed = new.anchor is None
            return self.streamed
        return False

    def _close(self, done: _Frame | None, nodes: int) -> tuple[Any, Marks]:
        """The value and marks of the collection ``done`` builds, merges applied."""
        assert done is not None
        if done.merges:
            for data, merged in done.merges:
                for key, item in data.items():
                    if key not in done.data:
                        done.data[key] = item
                        done.marks[key] = merged[key]
        value, marks = done.data, (done.line, done.col, done.marks)
        if done.anchor is not None:
            self.anchors[done.anchor] = (value, marks, nodes - done.start + 1, True)
        return value, marks

    def _alias(self, event: AliasEvent, expanded: int) -> tuple[Any, Marks, int]:
        """The anchored value an alias names, its marks and its size in nodes; an alias
        inside its own node, or one that expands the document past :data:`MAX_NODES`, is an
        error (``expanded``: the nodes aliases added so far)."""
        mark = event.start_mark
        line, col = mark.line + 1, mark.column + 1
        name = event.anchor
        if name not in self.anchors:
            raise self._error(f"YAML syntax error: found undefined alias {quote(name)}", line, col)
        value, marks, size, complete = self.anchors[name]
        if not complete:
            raise self._error("an alias refers to a node that contains it", line, col)
        if expanded + size > MAX_NODES:
            message = f"document too large: aliases expand it by more than {MAX_NODES} nodes"
            raise self._error(message, 1, 1)
        return value, marks, size

    def _begin_document(self, event: DocumentStartEvent) -> None:
        """A stream holds one document; a second one is an error."""
        self.documents += 1
        if self.documents == 1:
            return
        mark = event.start_mark
        raise self._error(
            "YAML syntax error: but found another document (expected a single document in the "
            "stream)",
            mark.line + 1,
            mark.column + 1,
        )

    def _place(
        self, frame: _Frame, value: Any, marks: Marks, written: str | None, *, top: bool
    ) -> None:
        """Put a complete node into the collection ``frame`` builds (``top``: the top-level
        one), beyond the common cases ``_run`` handles inline."""
        if not frame.mapping:
            frame.data.append(value)
            frame.marks.append(marks)
        elif frame.key is _NO_KEY:
            self._key(frame, value, marks, written)
            if self.streamed and top:
                self.late = True
        else:
            key = frame.key
            frame.key = _NO_KEY
            if key is _MERGE:
                self._merge(frame, value, marks)
            else:
                frame.data[key] = value
                frame.marks[key] = (*frame.key_at, marks)

    def _key(self, frame: _Frame, value: Any, marks: Marks, written: str | None) -> None:
        """Take ``value`` as the next key of ``frame`` (the uncommon cases: see ``_run``)."""
        line, col = marks[0], marks[1]
        if value == "<<" and written == "<<" and marks[2] == "":  # plain: a merge
            frame.key = _MERGE
        elif value.__class__ is not str:
            if isinstance(value, dict | list):  # an alias to a collection
                raise self._error("a key must be a string, not a mapping or a list", line, col)
            shown = quote(written if written is not None else str(value))
            raise self._error(f"a key must be a string, got {shown}", line, col)
        elif value in frame.marks:
            first = frame.marks[value][0]
            raise self._error(f"duplicate key {quote(value)} (first at line {first})", line, col)
        else:
            frame.key = value
        frame.key_at = (line, col)

    def _merge(self, frame: _Frame, value: Any, marks: Marks) -> None:
        sources = zip(value, marks[2], strict=True) if isinstance(value, list) else [(value, marks)]
        for data, where in sources:
            if not isinstance(data, dict):
                raise self._error("'<<' merges mappings only", where[0], where[1])
            frame.merges = frame.merges or []
            frame.merges.append((data, where[2]))

    def _plain(self, text: str, line: int, col: int) -> Any:
        """The value of the plain scalar ``text``, kept for the next time it is read when it
        is short and not a number (keys and words repeat; numbers mostly do not)."""
        try:
            value = _plain(text)
        except ValueError:
            raise self._error(
                f"YAML syntax error: integer too long ({len(text)} digits)", line, col
            ) from None
        if len(text) <= 40 and value.__class__ not in (int, float):
            if len(_PLAIN) > 20_000:
                _PLAIN.clear()
            _PLAIN[text] = value
        return value

    def _tagged(self, tag: str, text: str, line: int, col: int) -> Any:
        kind = tag.removeprefix(CORE)
        if kind == tag or kind not in ("str", *KINDS):
            raise self._error(f"unsupported YAML tag {quote(tag)}", line, col)
        try:
            return _convert(kind, text)
        except ValueError:
            raise self._error(f"cannot read {quote(text)} as a YAML {kind}", line, col) from None

    def _deep_first(self, error: InputError) -> InputError:
        """Nesting too deep is reported first, where the depth scan places it, whatever else
        is wrong (the scan counts as the parser nests; a parser error may come from the depth)."""
        try:
            check_depth(self.text, self.file)
        except InputError as deep:
            return deep
        return error

    def _syntax_error(self, exc: YAMLError) -> InputError:
        if isinstance(exc, MarkedYAMLError):
            mark = exc.problem_mark or exc.context_mark
            line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
            problem = _problem(exc.problem or exc.context or "invalid YAML")
            if exc.context and exc.problem:
                began = exc.context_mark
                since = ""
                if began is not None and began.line + 1 != line:  # say where, it is elsewhere
                    since = f" that starts at {began.line + 1}:{began.column + 1}"
                problem = f"{problem} ({_problem(exc.context)}{since})"
            lines = self.text.splitlines()
            written = lines[line - 1] if 0 < line <= len(lines) else ""
            return self._error(
                f"YAML syntax error: {problem}{_hint(problem, written, col)}", line, col
            )
        if isinstance(exc, ReaderError):  # a character YAML does not allow (a control character)
            position = exc.position
            if _CPARSER is not None:  # libyaml counts bytes of the UTF-8 text
                position = len(self.text.encode()[:position].decode(errors="ignore"))
            before = self.text[:position]
            char = chr(exc.character) if isinstance(exc.character, int) else exc.character
            return self._error(
                f"YAML syntax error: {_problem(exc.reason)} ({char!r})",
                before.count("\n") + 1,
                position - before.rfind("\n"),
            )
        return self._error(f"YAML error: {_problem(exc)}", 1, 1)


_HINTS = (
    (
        "mapping values are not allowed",
        "; a ': ' inside a value: quote the value, or indent this key as the keys above it",
    ),
    ("did not find expected '-'", "; is this line indented as the items above it?"),
    (
        "did not find expected key",
        "; is this line indented as the keys above it, and is every quote above it closed?",
    ),
    (
        "found unexpected ':'",
        "; a value that starts with '{' or '[' is a YAML mapping or list: quote it",
    ),
    ("while scanning a quoted scalar", "; a quote is never closed"),
)
"""What a person most likely meant, by libyaml's problem: the mistakes of someone new to YAML."""


def _hint(problem: str, written: str, col: int) -> str:
    """The hint for a syntax error at ``col`` of the line ``written``, given libyaml's
    ``problem``: a tab where the line is indented, a value that starts with a quote and goes
    on after it closes (an expression such as ``"a" == status``), else :data:`_HINTS`."""
    if written[col - 1 : col] == "\t":
        return "; it is a tab: YAML indents with spaces only"
    key_end = written.find(": ", 0, col - 1)
    start = len(written) - len(written[key_end + 2 :].lstrip()) if key_end >= 0 else -1
    quote_char = written[start : start + 1] if start >= 0 else ""
    if quote_char in ("'", '"') and -1 < written.find(quote_char, start + 1) < col - 1:
        return (
            "; a value that starts with a quote ends where the quote closes: write the whole "
            "value inside quotes of the other kind"
        )
    return next((hint for found, hint in _HINTS if found in problem), "")


_QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")


def _problem(text: object) -> str:
    """One line of a parser's message, each quoted part of it cut short (a message quotes
    the offending token, which may be a whole line of someone's file)."""

    def cut(match: re.Match[str]) -> str:
        inner = match.group(1) if match.group(1) is not None else match.group(2)
        return match.group(0) if len(inner) <= QUOTE_LIMIT else quote(inner)

    flat = _QUOTED.sub(cut, " ".join(str(text).split()))
    return shorten(flat, 4 * QUOTE_LIMIT)
