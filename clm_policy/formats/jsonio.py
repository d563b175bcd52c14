"""Strict JSON with positions: how clm-policy reads a SessionState (``decide --state``).

Python's ``json`` accepts what JSON does not (``NaN``, ``Infinity``) and what no Unicode text
holds (a lone surrogate, ``"\\ud800"``), keeps the last of two equal keys, raises a
``RecursionError`` some thousand levels deep and a bare ``ValueError`` on an integer of more
than 4,300 digits; pydantic's JSON parser, too, keeps duplicate keys.
:func:`parse_json` refuses all of these, each as an :class:`~clm_policy.base.errors.InputError`
at its ``file:line:col``; :func:`check_depth` refuses a document nested more than
:data:`MAX_DEPTH` levels. A caller runs it when validation fails: a document deeper than its
model is never valid, so a valid one need not pay for the walk.

Positions cost nothing on the way in: the text is parsed by ``json`` (C), and only when
something is wrong is it scanned again, once, to find where — :func:`_first_problem` for the
problems above, :class:`JsonDocument` for a path that fails validation (both linear).
"""

from __future__ import annotations

import json
import math
import re
import sys

from clm_policy.base.errors import InputError, Location, quote

TYPE_CHECKING = False
if TYPE_CHECKING:  # decide --state parses here on every call: no typing or dataclasses
    from collections.abc import Callable, Sequence
    from typing import Any, NoReturn

MAX_DEPTH = 64
"""Nesting levels a document may have (a SessionState needs three)."""

PathKey = str | int
_WS = r"[ \t\n\r]*"
_SEPARATOR = r"[ \t\n\r]*,?[ \t\n\r]*"
# the tokens the problem scan needs: strings (skipped whole), structure, and numbers and
# names (to catch NaN, Infinity and numbers out of range); anything else is skipped. A '"'
# that starts no complete string ends the scan (past what json parsed: nothing to find there).
# Compiled on first use, by re's own cache.
_STRING = r'"[^"\\]*+(?:\\.[^"\\]*+)*+"'
_TOKEN = _STRING + r'|[\[\]{}:,"]|-?[0-9][0-9.eE+-]*+|-?Infinity|NaN'


# the C scanner behind json.loads: (value, end) of the JSON value at an offset
_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


class _Refused(ValueError):
    """Raised from a ``json`` hook: the scan then finds the first problem, and where."""


def _no_constant(name: str) -> NoReturn:
    raise _Refused(name)


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _Refused(text)
    return number


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Refused("duplicate key")
    return out


def parse_json(text: str, file: str) -> Any:
    """The JSON value of ``text``; anything JSON or clm-policy does not allow is an
    :class:`InputError` at the line and column where it is written (a lone surrogate too:
    :mod:`clm_policy.base.surrogates`), showing that line (:meth:`InputError.quoting`)."""
    try:
        return _parse(text, file)
    except InputError as exc:
        raise exc.quoting(text) from None


def _parse(text: str, file: str) -> Any:
    if "\\u" in text:
        from clm_policy.base.surrogates import lone_surrogate

        found = lone_surrogate(text)
        if found is not None:
            offset, escape = found
            raise InputError(
                f"a lone surrogate ({escape}) in a string: not Unicode text",
                _at(text, offset, file),
            )
    try:
        data = json.loads(
            text, object_pairs_hook=_unique, parse_constant=_no_constant, parse_float=_finite
        )
    except json.JSONDecodeError as exc:
        said = exc.msg
        if said.startswith("Unexpected UTF-8 BOM"):  # (its advice is to Python programmers)
            said = "a byte-order mark (U+FEFF) before it: save the file without one"
        raise InputError(f"invalid JSON: {said}", Location(file, exc.lineno, exc.colno)) from None
    except (ValueError, RecursionError):  # a hook refused, or too deep, or too many digits
        problem = _first_problem(text, file)
        raise problem or InputError("invalid JSON", Location(file, 1, 1)) from None
    return data


def check_depth(data: Any, text: str, file: str) -> None:
    """Refuse ``data`` (parsed from ``text``) if it nests more than :data:`MAX_DEPTH` levels,
    at the bracket that goes one level too deep."""
    level = [data] if isinstance(data, dict | list) else []
    depth = 0
    while level:
        depth += 1
        if depth > MAX_DEPTH:
            raise (
                _first_problem(text, file)
                or InputError(f"nested more than {MAX_DEPTH} levels deep", Location(file, 1, 1))
            ).quoting(text)
        level = [
            item
            for value in level
            for item in (value.values() if isinstance(value, dict) else value)
            if isinstance(item, dict | list)
        ]


def _first_problem(text: str, file: str) -> InputError | None:
    """The first place ``text`` nests too deeply, repeats a key, holds a NaN or an infinity or
    a number out of range."""
    digits = sys.get_int_max_str_digits()  # 0: no limit
    stack: list[set[str] | None] = []  # per open container: the keys seen (objects only)
    expect_key = False
    for match in re.finditer(_TOKEN, text):
        token = match.group()
        start = match.start()
        first = token[0]
        if token == '"':
            return None
        if first in "[{":
            stack.append(set() if first == "{" else None)
            expect_key = first == "{"
            if len(stack) > MAX_DEPTH:
                return InputError(
                    f"nested more than {MAX_DEPTH} levels deep", _at(text, start, file)
                )
        elif first in "]}":
            if stack:
                stack.pop()
            expect_key = False
        elif first == ",":
            expect_key = bool(stack) and stack[-1] is not None
        elif first == ":":
            expect_key = False
        elif first == '"':
            keys = stack[-1] if stack else None
            if expect_key and keys is not None:
                try:
                    key = json.loads(token)
                except ValueError:
                    continue
                if key in keys:
                    return InputError(f"duplicate key {quote(key)}", _at(text, start, file))
                keys.add(key)
        elif token in ("NaN", "Infinity", "-Infinity"):
            return InputError(f"{token} is not a JSON number", _at(text, start, file))
        elif any(c in token for c in ".eE"):
            try:
                number = float(token)
            except ValueError:
                continue
            if not math.isfinite(number):
                return InputError(
                    f"number out of range: {quote(token)} is beyond a float's range",
                    _at(text, start, file),
                )
        elif digits and len(token.lstrip("-")) > digits:
            return InputError(
                f"number out of range: an integer of {len(token.lstrip('-'))} digits "
                f"(at most {digits})",
                _at(text, start, file),
            )
    return None


def _at(text: str, offset: int, file: str) -> Location:
    line = text.count("\n", 0, offset) + 1
    return Location(file, line, offset - text.rfind("\n", 0, offset))


def _skip(text: str, pos: int) -> int:
    """The offset of the first character at or after ``pos`` that is not white space."""
    match = re.compile(_WS).match(text, pos)
    return match.end() if match is not None else pos


class _Container:
    """The members of one object or array read so far, and where reading resumes."""

    __slots__ = ("at_value", "done", "items", "members", "pos")

    def __init__(self, pos: int) -> None:
        self.at_value = False  # an object's: reading stopped at a value, not past it
        self.members: dict[PathKey, tuple[int, int]] = {}  # (key offset, value offset)
        self.items: list[int] = []  # an array's: each item's offset
        self.pos = pos
        self.done = False


class JsonDocument:
    """A JSON text parsed without error, that can say where a path into it is written: it
    reads down the path only, skipping each value it passes with the C scanner, and reads no
    container twice."""

    def __init__(self, file: str, text: str, root: Any) -> None:
        self.file = file
        self.text = text
        self.root = root
        self._containers: dict[int, _Container] = {}
        self._lines: list[int] | None = None
        self._calls = 0

    def location(self, path: Sequence[PathKey], *, key: bool = False) -> Location:
        """Where the value at ``path`` starts (its key when ``key``); a path that runs past
        the document gives the deepest value it reached, as ``YamlDocument.location`` does."""
        offset = _skip(self.text, 0)
        for i, step in enumerate(path):
            found = self._member(offset, step)
            if found is None:
                break
            key_offset, offset = found
            if key and i == len(path) - 1:
                offset = key_offset
        return self._located(offset)

    def _member(self, offset: int, step: PathKey) -> tuple[int, int] | None:
        """(key offset, value offset) of ``step`` in the object or array at ``offset``."""
        text = self.text
        opener = text[offset : offset + 1]
        if opener not in ("{", "["):
            return None
        box = self._containers.get(offset)
        if box is None:
            box = self._containers[offset] = _Container(_skip(text, offset + 1))
        scan, separator = _SCAN, re.compile(_SEPARATOR).match
        if opener == "[":
            return self._item(box, step, text)
        # locals in the loop, written back at the end
        pos, members, end, done = box.pos, box.members, len(text), box.done
        if step in members:
            return members[step]
        if box.at_value:  # the last call stopped at the value it wanted: skip it now
            _, pos = scan(text, pos)
            pos = separator(text, pos).end()  # type: ignore[union-attr]  # it always matches
        at_value = False
        while not done:
            if pos >= end or text[pos] == "}":
                done = True
                break
            key_at = pos
            name, pos = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]
            pos = _skip(text, _skip(text, pos) + 1)  # past the ':'
            members[name] = (key_at, pos)
            if name == step:  # found: its value (a state's messages, say) is not read past
                at_value = True
                break
            _, pos = scan(text, pos)  # skip the value, in C
            pos = separator(text, pos).end()  # type: ignore[union-attr]  # it always matches
        box.pos, box.done, box.at_value = pos, done, at_value
        return members.get(step)

    @staticmethod
    def _item(box: _Container, step: PathKey, text: str) -> tuple[int, int] | None:
        """(offset, offset) of item ``step`` of the array ``box`` reads: the items' offsets
        in a list, the loop as short as it can be (a state may hold 40,000 messages, and the
        bad one may be the last)."""
        if type(step) is not int or step < 0:
            return None
        offsets = box.items
        if step >= len(offsets) and not box.done:
            scan, separator, append = _SCAN, re.compile(_SEPARATOR).match, offsets.append
            pos, end, count = box.pos, len(text), len(offsets)
            while count <= step:
                if pos >= end or text[pos] == "]":
                    box.done = True
                    break
                append(pos)
                _, pos = scan(text, pos)  # skip the value, in C
                pos = separator(text, pos).end()  # type: ignore[union-attr]  # always matches
                count += 1
            box.pos = pos
        return (offsets[step], offsets[step]) if step < len(offsets) else None

    def _located(self, offset: int) -> Location:
        text = self.text
        self._calls += 1
        if self._calls <= 8:  # a few: count; many (a validation error per message): index
            return _at(text, offset, self.file)
        if self._lines is None:
            self._lines = [m.start() for m in re.finditer("\n", text)]
        import bisect

        line = bisect.bisect_left(self._lines, offset)
        start = self._lines[line - 1] + 1 if line else 0
        return Location(self.file, line + 1, offset - start + 1)
