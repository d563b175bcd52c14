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

A CI log obeys text too. A GitHub Actions runner reads every line a step prints: a line that
starts with ``::`` (after blanks) is a workflow command — ``::warning::…`` makes an
annotation, ``::stop-commands::TOKEN`` silences every later command, ``::add-mask::`` hides
text — and so is ``##[warning]…`` anywhere in a line (the runner's older syntax; Azure
Pipelines reads ``##vso[…]``). A policy's test case named ``"case\\n::warning::X"`` would
speak to the runner. So the printer also escapes the first ``:`` of a ``::`` at a line's start
(``\\u003a:warning::X``) and the first ``#`` of ``##[`` and ``##vso[``; the one workflow
command line that passes is one built by :func:`workflow_command` (``lint`` and ``test
--format github``), which the printer knows by a mark no input can hold: a random string made
for the process, dropped as the line is printed. A command line therefore passes the printer
once; printed again, it is text like any other.

An unsafe character is not dropped but shown as an escape, the way Python writes it
(``\\x1b``, ``\\r``, ``\\u202e``), so a person sees that something was there. A backslash is
left as it is: the text is for reading, not for reading back. Machine formats stay exact
data — each escapes the same characters in its own syntax (``form``): JSON and YAML as
``\\u001b`` (inside a string or a double-quoted scalar, the only place they can occur), XML
and HTML as ``&#x1b;`` (characters XML cannot carry at all, C0 controls and surrogates, in
the text form) — so the printer finds nothing left to change in them.

Cheap to import (``os`` and ``sys``; ``re`` only for a text that is neither one printable line
nor ASCII, or that holds ``::`` or ``##``) and cheap to run: the status line and the hooks
print through it on every refresh and every prompt, ``log`` 10,000 commits at once.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

_SET = "\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
"""The unsafe characters but a newline and a tab (see the module docstring)."""
_PATTERNS: dict[bool, re.Pattern[str]] = {}
_COMMANDS: dict[bool, re.Pattern[str]] = {}
"""A workflow command's opening, by ``lines``: ``::`` at a line's start (or the text's, for
one line), after blanks (the runner trims them) and perhaps our mark; ``##[``, ``##vso[``."""
_MARK = "\x00clm-command-" + os.urandom(12).hex() + "\x00"
"""What marks a line :func:`workflow_command` built (NUL-delimited: should the mark ever
miss the printer, it shows as ``\\x00``, never as a command)."""
# The same for ASCII text, by ``lines``: C0 controls but tab (and newline) and DEL.
_ASCII_UNSAFE = {
    True: bytes([*range(0x09), *range(0x0B, 0x20), 0x7F]),
    False: bytes([*range(0x09), *range(0x0A, 0x20), 0x7F]),
}


def terminal_safe(text: str, *, lines: bool = True, form: str = "text") -> str:
    """``text`` with every unsafe character escaped and URL credentials masked (see the
    module docstring). ``lines``: a newline may stay (False: one line, ``\\n`` shown);
    ``form``: ``text`` for people, or the syntax of a machine format the text is in (``json``,
    ``yaml``, ``xml``). Safe text comes back as it is, and the result of one call is safe."""
    if "@" in text and "://" in text:  # ("@" first: one character is found the fastest)
        from clm_policy.base.credentials import mask_credentials

        text = mask_credentials(text)
    if "::" in text or "##" in text:  # a CI runner's workflow command, perhaps
        text = _no_commands(text, lines, form)
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


def one_line(text: object) -> str:
    """``str(text)`` made terminal-safe on one line (a newline shown as ``\\n``), so that no
    line of what someone else wrote starts a line of its own in a report or a CI log."""
    return terminal_safe(str(text), lines=False)


def _no_commands(text: str, lines: bool, form: str) -> str:
    """``text`` with each workflow command's opening escaped, but for a marked line's."""
    pattern = _COMMANDS.get(lines)
    if pattern is None:
        import re

        start = "(?m)^" if lines else "^"  # (one line: a newline is shown, no line starts)
        pattern = _COMMANDS[lines] = re.compile(
            f"{start}([^\\S\\n]*)({re.escape(_MARK)})?:(?=:)|#(?=#(?:\\[|(?i:vso)\\[))"
        )
    # the escape keeps the data of every form: JSON printed as text (`\\u0023#[` is `##[`)
    escape = _xml if form == "xml" else _json

    def one(match: re.Match[str]) -> str:
        if match.group() == "#":
            return escape(0x23)
        blanks = match.group(1)
        return f"{blanks}:" if match.group(2) else blanks + escape(0x3A)

    return pattern.sub(one, text)


def workflow_command(command: str, message: str, **properties: str | int) -> str:
    """A GitHub Actions workflow command (``::error file=F,line=3,title=T::message``, a
    line), with GitHub's own escapes (as @actions/core's: ``%``, CR and LF in the message,
    ``:`` and ``,`` too in a property, so no value ends it or starts a command of its own),
    terminal-safe, and marked for the printer to let through (the module docstring)."""
    props = ",".join(
        f"{key}={escape_data(str(value)).replace(':', '%3A').replace(',', '%2C')}"
        for key, value in properties.items()
    )
    return f"{_MARK}::{command}{' ' if props else ''}{props}::{escape_data(message)}\n"


def escape_data(value: str) -> str:
    """``value`` as a workflow command's message, on one line and terminal-safe."""
    escaped = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return terminal_safe(escaped, lines=False)


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
    data = terminal_safe(text, lines=lines) + ("\n" if nl else "")
    try:
        # In pieces that fit the stream's buffer, each flushed: a text stream drops what a
        # closed pipe did not take of one large write without a word (Python's text layer
        # ignores the short count), so `export | head` ended 0, not 141.
        for at in range(0, len(data) or 1, _PIECE):
            stream.write(data[at : at + _PIECE])
            stream.flush()
    except BrokenPipeError:  # its reader went away (`| head`): the command stops there
        from clm_policy.base.errors import OutputClosed

        raise OutputClosed(f"standard {'error' if err else 'output'} was closed") from None
    except OSError as exc:  # a full disk (`> /dev/full`), a file system that failed
        if err:
            return  # (nowhere left to say it)
        from clm_policy.base.errors import OutputFailed

        raise OutputFailed.of(exc) from None


_PIECE = 1024
"""Characters :func:`echo` writes at a time: at most 4 KiB of UTF-8, within the smallest
buffer Python gives a standard stream (a pipe's block size)."""


def echo_json(data: object) -> None:
    """Print ``data`` as JSON indented by two: every command's ``--format json``."""
    import json

    echo(json.dumps(data, indent=2))


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
