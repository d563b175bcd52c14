"""Text for a terminal, a status bar or a log: the one printer every output passes.

What clm-policy shows comes from files and programs it does not control — a policy's file
name, a memory repository's commits, an agent's transcript, git's messages. A control
character in it is a command to the terminal that shows it: ``ESC ] 0 ;`` sets the window
title, ``ESC ] 52 ;`` writes the clipboard, ``ESC ] 8 ;;`` makes a link, a carriage return
overwrites the line, a bidi override (U+202E) shows text in another order than it is. So
nothing reaches standard output, standard error, a report file, the status line, a hook's
messages or a log before :func:`terminal_safe` has:

- escaped each **unsafe character**: C0 controls (U+0000-U+001F, except a tab, and except a
  newline where the output has lines), DEL and C1 controls (U+007F-U+009F), the line and
  paragraph separators (U+2028, U+2029), the bidi embeddings, overrides and isolates
  (U+202A-U+202E, U+2066-U+2069) and lone surrogates (a file name's undecodable bytes); and
- masked the credentials of any URL in it (:func:`clm_policy.base.credentials.mask_credentials`:
  ``https://***@host/...``).

An unsafe character is not dropped but shown as an escape, the way Python writes it
(``\\x1b``, ``\\r``, ``\\u202e``), so a person sees that something was there. A backslash is
left as it is: the text is for reading, not for reading back. Machine formats stay exact
data — each escapes the same characters in its own syntax (``form``): JSON and YAML as
``\\u001b`` (inside a string or a double-quoted scalar, the only place they can occur), XML
and HTML as ``&#x1b;`` (characters XML cannot carry at all, C0 controls and surrogates, in
the text form) — so the printer finds nothing left to change in them.

Cheap to import (``os`` and ``sys``; ``re`` only for a text that is neither one printable line
nor ASCII) and cheap to run: the status line and the hooks print through it on every refresh
and every prompt, ``log`` 10,000 commits at once.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

FORMS = ("text", "json", "yaml", "xml")
"""How an unsafe character is written, by the medium it is written in."""

_SET = "\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
"""The unsafe characters but a newline and a tab (see the module docstring)."""
_PATTERNS: dict[bool, re.Pattern[str]] = {}
# The same for ASCII text, by ``lines``: C0 controls but tab (and newline) and DEL.
_ASCII_UNSAFE = {
    True: bytes([*range(0x09), *range(0x0B, 0x20), 0x7F]),
    False: bytes([*range(0x09), *range(0x0A, 0x20), 0x7F]),
}


def terminal_safe(text: str, *, lines: bool = True, form: str = "text") -> str:
    """``text`` with every unsafe character escaped and URL credentials masked (see the
    module docstring). ``lines``: a newline may stay (False: one line, ``\\n`` shown);
    ``form``: ``text`` for people, or the syntax of a machine format the text is in
    (:data:`FORMS`). Safe text comes back as it is, and the result of one call is safe."""
    if "@" in text and "://" in text:  # ("@" first: one character is found the fastest)
        from clm_policy.base.credentials import mask_credentials

        text = mask_credentials(text)
    if text.isprintable():  # one line of printable text (the status line): at once
        return text
    if text.isascii():  # a command's output, often: C0 and DEL are all it could hold
        data = text.encode("ascii")
        if len(data.translate(None, _ASCII_UNSAFE[lines])) == len(data):
            return text  # (bytes.translate: several times faster than the expression)
    pattern = _PATTERNS.get(lines)
    if pattern is None:
        import re

        pattern = _PATTERNS[lines] = re.compile(f"[{_SET}{'' if lines else chr(10)}]")
    escape = _ESCAPES[form]
    return pattern.sub(lambda m: escape(ord(m.group())), text)


def _text(code: int) -> str:
    if code == 0x0A:
        return "\\n"
    if code == 0x0D:
        return "\\r"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _json(code: int) -> str:
    return f"\\u{code:04x}"


def _xml(code: int) -> str:
    # C0 controls but tab, newline and carriage return, and surrogates: XML 1.0 cannot carry
    # them, not even as a reference
    if (code < 0x20 and code not in (0x09, 0x0A, 0x0D)) or 0xD800 <= code < 0xE000:
        return _text(code)
    return f"&#x{code:x};"


_ESCAPES = {"text": _text, "json": _json, "yaml": _json, "xml": _xml}


def echo(text: str = "", *, err: bool = False, nl: bool = True, lines: bool = True) -> None:
    """Print ``text`` (made :func:`terminal_safe`) to standard output, or standard error with
    ``err``; the command line's one printer (click's tests capture ``sys.stdout``)."""
    stream = sys.stderr if err else sys.stdout
    if stream is None:  # pythonw, or a daemon without standard streams
        return
    stream.write(terminal_safe(text, lines=lines) + ("\n" if nl else ""))
    stream.flush()


def write_fd(fd: int, text: str, *, nl: bool = True, lines: bool = True) -> bool:
    """Write ``text`` (made :func:`terminal_safe`, UTF-8) and a newline to file descriptor
    ``fd`` — the quick paths' printer, below Python's text streams; False when the reader has
    gone."""
    data = (terminal_safe(text, lines=lines) + ("\n" if nl else "")).encode()
    try:
        while data:
            data = data[os.write(fd, data) :]
    except BrokenPipeError:
        return False
    return True
