"""A reader for the YAML people write by hand, without libyaml or ruamel: exactly what
:mod:`.yamlbuild` builds, or nothing.

Importing ruamel (which the libyaml extension needs) costs a process more than reading a
policy does; the first hook after a policy changed must compile it. So :func:`quick_read`
reads the common shapes of a hand-written file itself — block mappings and sequences (a
sequence may sit at its key's indentation), one-line flow mappings and sequences,
plain, single- and double-quoted scalars on one line (no escapes), ``|`` and ``>`` block
scalars with or without a chomping indicator, comments and blank lines — and gives the same
data and marks (:data:`~clm_policy.formats.yamlbuild.Marks`) as libyaml's events do.

Anything else it declines (returns None) rather than guess: tabs, carriage returns, a byte
order mark, characters YAML or Python does not print, directives and document markers,
anchors, aliases, tags, merge keys, complex (``?``) and quoted keys, a key that is not a
string, a duplicate key, an empty value, a multi-line plain or quoted scalar, an escape in a
double-quoted one, a flow collection over several lines, a block scalar with an indentation
indicator, a leading blank line or a more indented line where folding would keep it, deep
nesting — and every syntax error. The caller then parses with libyaml (:mod:`.yamlbuild`),
which reads all of YAML and says what is wrong where. A test holds the two equal on every file
of the project and on thousands of generated and mutated documents.
"""

from __future__ import annotations

import re

from clm_policy.formats.yamlscalars import plain_value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Marks = tuple[int, int, Any]

MAX_NESTING = 24  # deeper than any policy; libyaml reads (and refuses) the rest
_KEY_LIMIT = 1000  # libyaml's simple keys are at most 1024 characters
# characters YAML reads as something else than text where a plain scalar would start
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
# what is not printable ASCII or a line break: looked at one by one (_odd_character)
_NOT_ASCII = re.compile("[^\n\x20-\x7e]")
_YAML_BREAKS = frozenset("\x85\u2028\u2029\ufeff")


class _Declined(Exception):
    """Not a document this reader is sure of: libyaml reads it."""


def quick_read(text: str) -> tuple[Any, Marks] | None:
    """The data and marks of the one YAML document ``text`` is, as :mod:`.yamlbuild` builds
    them, when it is written in the shapes this module reads; else None."""
    for match in _NOT_ASCII.finditer(text):
        char = match.group()
        if char in _YAML_BREAKS or not char.isprintable() or ord(char) <= 0x9F:
            return None
    try:
        return _Reader(text).document()
    except (_Declined, ValueError, IndexError, RecursionError):
        return None  # (ValueError: an integer too long for Python; IndexError: cannot be)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _no_comment_after(rest: str) -> None:
    """What follows a complete value on its line must be nothing, or a comment after a space."""
    tail = rest.lstrip(" ")
    if tail and not (tail.startswith("#") and len(tail) < len(rest)):
        raise _Declined


def _key_end(content: str) -> int:
    """Where the ``:`` that ends a block mapping's plain key is in ``content`` (-1: none)."""
    if not content or content[0] in _INDICATORS:
        return -1
    colon = content.find(":")
    while colon != -1 and colon + 1 < len(content) and content[colon + 1] != " ":
        colon = content.find(":", colon + 1)
    if colon <= 0 or " #" in content[:colon]:
        return -1
    return colon


def _signed(text: str) -> bool:
    """A plain scalar may start with ``-`` when a character that is no space or flow
    indicator follows (``-1``, ``-x``)."""
    return text[0] == "-" and text[1:2] not in ("", " ", ",", "[", "]", "{", "}")


def _quoted(line: str, p: int) -> tuple[str, int]:
    """The quoted scalar starting at ``line[p]`` (on this line, no escapes) and where it ends."""
    quote = line[p]
    if quote == '"':
        end = line.find('"', p + 1)
        if end == -1 or "\\" in line[p + 1 : end]:
            raise _Declined
        return line[p + 1 : end], end + 1
    parts = []
    q = p + 1
    while True:
        end = line.find("'", q)
        if end == -1:
            raise _Declined
        parts.append(line[q:end])
        if line[end + 1 : end + 2] != "'":
            return "'".join(parts), end + 1
        q = end + 2


class _Reader:
    """One pass over the lines, a method per kind of node; every doubt is :class:`_Declined`."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.ends_with_break = text.endswith("\n")
        if self.ends_with_break:
            self.lines.pop()  # (what follows the last line break is no line)
        self.i = 0  # the next line not read yet
        self.depth = 0

    def _next(self) -> int | None:
        """The index of the next line with content (not blank, not a comment), from
        :attr:`i` on (which it moves there); None at the end."""
        lines = self.lines
        while self.i < len(lines):
            stripped = lines[self.i].lstrip(" ")
            if stripped and stripped[0] != "#":
                return self.i
            self.i += 1
        return None

    def document(self) -> tuple[Any, Marks]:
        for line in self.lines:
            if line.startswith(("%", "---", "...")) or "\t" in line or "\r" in line:
                raise _Declined
        first = self._next()
        if first is None or _indent(self.lines[first]):
            raise _Declined  # empty, or the document's top is indented
        found = self._block(first, 0)
        if self._next() is not None:
            raise _Declined
        return found

    def _block(self, index: int, col: int) -> tuple[Any, Marks]:
        """The block collection whose first line is ``index``, its content at ``col``."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise _Declined
        content = self.lines[index][col:]
        if content == "-" or content.startswith("- "):
            found = self._sequence(index, col)
        elif _key_end(content) > 0:
            found = self._mapping(index, col, content)
        else:
            raise _Declined  # a scalar on a line of its own: its folding is libyaml's
        self.depth -= 1
        return found

    def _mapping(self, index: int, col: int, content: str) -> tuple[Any, Marks]:
        """A block mapping whose first key is ``content``, at column ``col`` of line
        ``index`` (the line may begin with a sequence's ``- ``); the others start lines."""
        data: dict[str, Any] = {}
        marks: dict[str, Any] = {}
        start = (index + 1, col + 1)
        while True:
            colon = _key_end(content)
            text = content[:colon].rstrip(" ")
            if colon <= 0 or not text or len(text) > _KEY_LIMIT:
                raise _Declined
            key = plain_value(text)
            if key.__class__ is not str or key == "<<" or key in data:
                raise _Declined  # not a string, a merge, a duplicate: libyaml's to read
            value, where = self._value(index, col + colon + 1, content[colon + 1 :], col)
            data[key] = value
            marks[key] = (index + 1, col + 1, where)
            following = self._next()
            if following is None:
                break
            indent = _indent(self.lines[following])
            if indent < col:
                break
            if indent > col:
                raise _Declined
            index, content = following, self.lines[following][col:]
        return data, (*start, marks)

    def _sequence(self, index: int, col: int) -> tuple[Any, Marks]:
        """A block sequence whose first ``-`` is at column ``col`` of line ``index``."""
        items: list[Any] = []
        marks: list[Any] = []
        start = (index + 1, col + 1)
        while True:
            rest = self.lines[index][col + 1 :]
            item = rest.lstrip(" ")
            at = col + 1 + len(rest) - len(item)
            if not item or item[0] == "#":
                value, where = self._below(index, col)
            elif item == "-" or item.startswith("- "):
                raise _Declined  # a sequence in a sequence on one line
            elif item[0] not in "{[\"'|>" and _key_end(item) > 0:
                self.depth += 1
                if self.depth > MAX_NESTING:
                    raise _Declined
                value, where = self._mapping(index, at, item)
                self.depth -= 1
            else:
                value, where = self._inline(index, at, item, col)
            items.append(value)
            marks.append(where)
            following = self._next()
            if following is None:
                break
            indent = _indent(self.lines[following])
            if indent < col:
                break
            if indent > col:
                raise _Declined
            content = self.lines[following][col:]
            if content != "-" and not content.startswith("- "):
                break  # the next key of the mapping this sequence is the value of
            index = following
        return items, (*start, marks)

    def _value(self, index: int, col: int, rest: str, parent: int) -> tuple[Any, Marks]:
        """The value of a key whose ``:`` ends before column ``col`` of line ``index``;
        ``rest`` is the line from there, ``parent`` the key's column."""
        value = rest.lstrip(" ")  # (rest is empty, or a space follows the key's ':')
        if not value or value[0] == "#":
            return self._below(index, parent, indentless=True)
        return self._inline(index, col + len(rest) - len(value), value, parent)

    def _below(self, index: int, parent: int, *, indentless: bool = False) -> tuple[Any, Marks]:
        """A collection that starts on a line after ``index``, more indented than
        ``parent`` (a key's sequence may be as indented as the key)."""
        self.i = index + 1
        following = self._next()
        if following is None:
            raise _Declined  # an empty value: libyaml says where it puts it
        indent = _indent(self.lines[following])
        if indent > parent:
            return self._block(following, indent)
        content = self.lines[following][indent:]
        if indentless and indent == parent and (content == "-" or content.startswith("- ")):
            return self._block(following, indent)
        raise _Declined

    def _inline(self, index: int, col: int, text: str, parent: int) -> tuple[Any, Marks]:
        """A value that starts at column ``col`` of line ``index`` (``text``: the line from
        there) in a collection whose entries start at column ``parent``."""
        line = self.lines[index]
        first = text[0]
        if first in "|>":
            return self._block_scalar(index, col, text, parent)
        if first in "{[":
            value, where, end = self._flow(index, col)
            _no_comment_after(line[end:])
        elif first in "\"'":
            value, end = _quoted(line, col)
            where = (index + 1, col + 1, first)
            _no_comment_after(line[end:])
        else:
            if first in _INDICATORS and not _signed(text):
                raise _Declined
            cut = text.find(" #")
            plain = (text if cut == -1 else text[:cut]).rstrip(" ")
            if ": " in plain or plain.endswith(":"):
                raise _Declined
            value, where = plain_value(plain), (index + 1, col + 1, "")
        self.i = index + 1
        following = self._next()
        if following is not None and _indent(self.lines[following]) > parent:
            raise _Declined  # a scalar that goes on, or what cannot follow a value
        return value, where

    def _flow(self, index: int, col: int) -> tuple[Any, Marks, int]:
        """A one-line flow mapping or sequence at column ``col`` of line ``index``, and the
        column after it."""
        line = self.lines[index]
        mapping = line[col] == "{"
        close = "}" if mapping else "]"
        data: Any = {} if mapping else []
        marks: Any = {} if mapping else []
        p = col + 1
        while line[p : p + 1] == " ":
            p += 1
        if line[p : p + 1] == close:
            return data, (index + 1, col + 1, marks), p + 1
        while True:
            if mapping:
                key_at = p
                key, where, p = self._flow_scalar(index, p, key=True)
                if key.__class__ is not str or key == "<<" or key in data or where[2]:
                    raise _Declined
                p += 1  # the ':' (followed by a space: _flow_scalar saw to it)
                while line[p : p + 1] == " ":
                    p += 1
                value, where, p = self._flow_scalar(index, p)
                data[key] = value
                marks[key] = (index + 1, key_at + 1, where)
            else:
                value, where, p = self._flow_scalar(index, p)
                data.append(value)
                marks.append(where)
            while line[p : p + 1] == " ":
                p += 1
            found = line[p : p + 1]
            if found == close:
                return data, (index + 1, col + 1, marks), p + 1
            if found != ",":
                raise _Declined
            p += 1
            while line[p : p + 1] == " ":
                p += 1
            if line[p : p + 1] in (close, ",", ""):
                raise _Declined

    def _flow_scalar(self, index: int, p: int, *, key: bool = False) -> tuple[Any, Marks, int]:
        """A scalar in a flow collection at column ``p``, and where it ends (a key: at its
        ``:``, which a space follows)."""
        line = self.lines[index]
        first = line[p : p + 1]
        if first in ('"', "'"):
            value, end = _quoted(line, p)
            if key:
                raise _Declined
            return value, (index + 1, p + 1, first), end
        if first in ("{", "[") and not key:
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise _Declined
            nested = self._flow(index, p)
            self.depth -= 1
            return nested
        if not first or (first in _INDICATORS and not _signed(line[p:])):
            raise _Declined
        q = p
        while q < len(line) and line[q] not in ",[]{}:":
            if line[q] == "#" and line[q - 1] == " ":
                raise _Declined
            q += 1
        found = line[q : q + 1]
        if found in ("[", "{") or (found == ":") != key:
            raise _Declined
        if key and line[q + 1 : q + 2] != " ":
            raise _Declined
        text = line[p:q].rstrip(" ")
        return plain_value(text), (index + 1, p + 1, ""), q

    def _block_scalar(self, index: int, col: int, header: str, parent: int) -> tuple[Any, Marks]:
        """A ``|`` or ``>`` block scalar whose indicator is at column ``col`` of line
        ``index``; its lines are more indented than ``parent``."""
        style = header[0]
        chomp = header[1:2] if header[1:2] in ("-", "+") else ""
        _no_comment_after(header[1 + len(chomp) :])
        lines = self.lines
        first = index + 1
        if first >= len(lines) or not lines[first].strip(" "):
            raise _Declined  # no content, or a blank line first
        indent = _indent(lines[first])
        if indent <= parent:
            raise _Declined  # an empty scalar
        body: list[str] = []
        end = first
        while end < len(lines):
            line = lines[end]
            if not line.strip(" "):
                if len(line) > indent:
                    raise _Declined  # spaces that are content of a line otherwise blank
                body.append("")
            elif _indent(line) < indent:
                break
            else:
                if style == ">" and _indent(line) > indent:
                    raise _Declined  # a more indented line, which folding keeps apart
                body.append(line[indent:])
            end += 1
        trailing = 0
        while body and not body[-1]:
            body.pop()
            trailing += 1
        if end == len(lines) and not self.ends_with_break:
            raise _Declined  # no line break after the last line
        if style == "|":
            text = "\n".join(body)
        else:
            text = body[0]
            blanks = 0
            for line in body[1:]:
                if not line:
                    blanks += 1
                    continue
                text += "\n" * blanks if blanks else " "
                text += line
                blanks = 0
        if chomp == "":
            text += "\n"
        elif chomp == "+":
            text += "\n" * (1 + trailing)
        self.i = end
        return text, (index + 1, col + 1, style)
