"""``json.loads`` without importing ``json``: what a hook reads on every prompt.

Importing :mod:`json` imports :mod:`re` (its decoder matches whitespace and numbers with
regular expressions) and both cost a process that answers a prompt in ~30 ms about 2.5 ms. The
parsing itself is C either way: :func:`loads` calls the very scanner ``json.loads`` calls
(``_json.make_scanner``, set up as ``json``'s default decoder sets it up: strict strings,
``NaN`` and ``Infinity`` read as floats) and skips the whitespace around the document itself.
Whatever it is not sure of — a document with anything wrong in it, bytes that may not be
UTF-8 (a byte order mark, UTF-16 or UTF-32, which ``json`` detects), an interpreter without
``_json`` — goes to ``json.loads``, which then gives its own answer or its own error. A test
holds the two equal on valid and broken documents.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_WHITESPACE = " \t\n\r"  # JSON's four


class _Decoder:
    """The settings ``_json``'s scanner reads, as ``json.JSONDecoder()`` has them."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float  # the C scanner's own float and int parsing: no call per number
    parse_int = int
    parse_constant = {
        "-Infinity": float("-inf"),
        "Infinity": float("inf"),
        "NaN": float("nan"),
    }.__getitem__


def _scanner() -> Callable[[str, int], tuple[Any, int]] | None:
    try:
        from _json import make_scanner
    except ImportError:  # another interpreter: json's own path
        return None
    # (typeshed says the scanner is made from another scanner; it reads these attributes)
    scan: Callable[[str, int], tuple[Any, int]] = make_scanner(_Decoder())  # type: ignore[arg-type]
    return scan


_SCAN = _scanner()


def loads(data: str | bytes) -> Any:
    """The value of the JSON document ``data``, as ``json.loads(data)`` returns it; its
    ``JSONDecodeError`` (a ``ValueError``) when ``data`` is not JSON."""
    text = data if isinstance(data, str) else _utf8(data)
    if text is not None and _SCAN is not None:
        start = len(text) - len(text.lstrip(_WHITESPACE))
        try:
            value, end = _SCAN(text, start)
        except (StopIteration, ValueError, SystemError):
            # not JSON: json says why (the scanner raises json.decoder's error only when that
            # module is loaded; before, it fails with a SystemError)
            pass
        else:
            if end == len(text) or not text[end:].strip(_WHITESPACE):
                return value
    import json

    return json.loads(data)


def _utf8(data: bytes) -> str | None:
    """``data`` decoded as ``json.loads`` decodes it when it starts as JSON in UTF-8 does: with
    ``{``, ``[``, ``"`` or whitespace and then no NUL (UTF-16 and UTF-32 would have one); None
    for anything else, left to ``json``."""
    if not data[:1] or data[0] not in b'{["\t\n\r ' or (len(data) > 1 and not data[1]):
        return None
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None
