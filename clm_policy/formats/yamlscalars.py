"""What a YAML scalar means: YAML 1.2's core schema, as ruamel.yaml resolves it.

A plain (unquoted) scalar is a boolean, a number, null, or a string; ``yes``/``on`` are
strings, and timestamps stay strings (files are data with JSON semantics). The patterns are
ruamel's own YAML 1.2 implicit resolvers (``ruamel.yaml.resolver.implicit_resolvers``), in its
order; :mod:`.yamlbuild`, which reads libyaml's events through ruamel, resolves with them.
"""

from __future__ import annotations

from ruamel.yaml.resolver import implicit_resolvers

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Matcher = Callable[[str], object]

CORE = "tag:yaml.org,2002:"
KINDS = ("bool", "float", "int", "null", "timestamp")
"""The kinds a plain scalar may be read as, besides a string."""


def _by_first() -> dict[str, list[tuple[str, Matcher]]]:
    """ruamel's YAML 1.2 resolvers of :data:`KINDS` by the first character of the scalar they
    may match ("" is the first character of the empty scalar); the first that matches wins."""
    table: dict[str, list[tuple[str, Matcher]]] = {}
    for versions, tag, regexp, first in implicit_resolvers:
        kind = tag.removeprefix(CORE)
        if (1, 2) in versions and kind in KINDS:
            for ch in first:
                table.setdefault(ch, []).append((kind, regexp.match))
    return table


_BY_FIRST = _by_first()


def _int(text: str) -> int:
    digits = text.replace("_", "")
    sign = -1 if digits.startswith("-") else 1
    digits = digits.lstrip("+-")
    for prefix, base in (("0b", 2), ("0o", 8), ("0x", 16)):
        if digits.startswith(prefix):
            return sign * int(digits[2:], base)
    return sign * int(digits)


def _float(text: str) -> float:
    digits = text.replace("_", "").lower()
    if digits.lstrip("+-") == ".inf":
        return float(digits.replace(".inf", "inf"))
    if digits == ".nan":
        return float("nan")
    return float(digits)


def convert(kind: str, value: str) -> Any:
    """``value`` read as a scalar of ``kind``; ValueError when it is not one (and for an
    integer of more digits than Python reads)."""
    if kind in ("str", "timestamp"):
        return value
    if kind == "null":
        if value in ("", "~", "null", "Null", "NULL"):
            return None
    elif kind == "bool":
        if value in ("true", "True", "TRUE", "false", "False", "FALSE"):
            return value.lower() == "true"
    elif kind == "int":
        return _int(value)
    elif kind == "float":
        return _float(value)
    raise ValueError(kind)


def plain_value(value: str) -> Any:
    """The value of an untagged plain scalar (ValueError: an integer too long to read)."""
    for kind, match in _BY_FIRST.get(value[:1], ()):
        if match(value):
            return convert(kind, value)
    return value
