"""What a YAML scalar means: YAML 1.2's core schema, as ruamel.yaml resolves it.

A plain (unquoted) scalar is a boolean, a number, null, or a string; ``yes``/``on`` are
strings, and timestamps stay strings (files are data with JSON semantics). :data:`RESOLVERS`
are ruamel's own YAML 1.2 implicit resolvers (a test holds them equal to
``ruamel.yaml.resolver.implicit_resolvers``), kept here so that a YAML file can be read without
importing ruamel (:mod:`.yamlquick`); :mod:`.yamlbuild`, which reads libyaml's events through
ruamel, resolves with the same table.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CORE = "tag:yaml.org,2002:"
KINDS = ("bool", "float", "int", "null", "timestamp")
"""The kinds a plain scalar may be read as, besides a string."""

# (kind, verbose pattern, first characters): ruamel's implicit resolvers for YAML 1.2, in its
# order (the first that matches wins); "" is the first character of the empty scalar
RESOLVERS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("bool", "^(?:true|True|TRUE|false|False|FALSE)$", tuple("tTfF")),
    (
        "float",
        """^(?:
         [-+]?(?:[0-9][0-9_]*)\\.[0-9_]*(?:[eE][-+]?[0-9]+)?
        |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
        |[-+]?\\.[0-9_]+(?:[eE][-+][0-9]+)?
        |[-+]?\\.(?:inf|Inf|INF)
        |\\.(?:nan|NaN|NAN))$""",
        tuple("-+0123456789."),
    ),
    (
        "int",
        """^(?:[-+]?0b[0-1_]+
        |[-+]?0o?[0-7_]+
        |[-+]?[0-9_]+
        |[-+]?0x[0-9a-fA-F_]+)$""",
        tuple("-+0123456789"),
    ),
    (
        "null",
        """^(?: ~
        |null|Null|NULL
        | )$""",
        ("~", "n", "N", ""),
    ),
    (
        "timestamp",
        """^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
        |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
        (?:[Tt]|[ \\t]+)[0-9][0-9]?
        :[0-9][0-9] :[0-9][0-9] (?:\\.[0-9]*)?
        (?:[ \\t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""",
        tuple("0123456789"),
    ),
)


def _by_first() -> dict[str, list[tuple[str, re.Pattern[str]]]]:
    table: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
    for kind, pattern, first in RESOLVERS:
        compiled = re.compile(pattern, re.X)
        for ch in first:
            table.setdefault(ch, []).append((kind, compiled))
    return table


_BY_FIRST = _by_first()
"""The resolvers by the first character of the scalar they may match."""


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
    for kind, regexp in _BY_FIRST.get(value[:1], ()):
        if regexp.match(value):
            return convert(kind, value)
    return value
