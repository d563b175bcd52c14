"""Lone surrogates in JSON text: ``"\\ud800"`` is valid JSON and no Unicode character.

A surrogate code point (U+D800-U+DFFF) stands for half of a UTF-16 pair; JSON may write one
alone as an escape, Python's ``json`` decodes it into a string no UTF-8 can encode, and every
later step that writes the text — git, a file, a terminal — fails on it, after work has begun.
So input is refused where it comes in (a state, a hook's input, an MCP request) when its text
holds such an escape. A pair (``"\\ud83d\\ude00"``, an emoji) is one character and passes.

The escapes are found in the raw text, without decoding it: only a ``\\u`` that is not itself
escaped (an even number of backslashes before it) is an escape. Cheap when there is none (one
``in`` test); linear otherwise. No imports: the hooks call it on every prompt.
"""

from __future__ import annotations

_HEX = frozenset("0123456789abcdefABCDEF")


def _escape_value(text: str, at: int) -> int | None:
    """The code unit of the ``\\uXXXX`` escape at ``at``, or None if there is none."""
    digits = text[at + 2 : at + 6]
    if text[at : at + 2] != "\\u" or len(digits) != 4 or not _HEX.issuperset(digits):
        return None
    return int(digits, 16)


def lone_surrogate(text: str) -> tuple[int, str] | None:
    """Where ``text`` (raw JSON) has its first surrogate escape that is not half of a pair:
    the offset of its backslash and the escape as written (``\\ud800``); None if there is
    none."""
    at = text.find("\\u")
    while at >= 0:
        before = at
        while before > 0 and text[before - 1] == "\\":
            before -= 1
        if (at - before) % 2 == 0:  # not itself escaped: an escape
            value = _escape_value(text, at)
            if value is not None and 0xD800 <= value <= 0xDFFF:
                low = _escape_value(text, at + 6) if value <= 0xDBFF else None
                if low is None or not 0xDC00 <= low <= 0xDFFF:
                    return at, text[at : at + 6]
                at = text.find("\\u", at + 12)
                continue
        at = text.find("\\u", at + 2)
    return None
