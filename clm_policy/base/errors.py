"""The project's error types.

Library code raises only these; the CLI maps them to exit codes (README, "Exit codes").
Every error that comes from a file carries a :class:`Location` so the message can start
with ``file:line:col``.
"""

from __future__ import annotations

from enum import StrEnum

from clm_policy.base.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:  # (the hook and decide import this module: no typing at run time)
    from typing import Self

QUOTE_LIMIT = 60
"""Characters of a user's value that a message quotes, at most (then an ellipsis)."""

PATH_LIMIT = 200
"""Characters of a path a message names, at most: its end, after an ellipsis (the file's name
is what tells it)."""


class Location(Record):
    """A 1-based position in a file (``line``/``col`` may be 0 when unknown)."""

    file: str
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        file = short_path(self.file)
        if self.line <= 0:
            return file
        if self.col <= 0:
            return f"{file}:{self.line}"
        return f"{file}:{self.line}:{self.col}"

    def shifted(self, lines: int = 0, cols: int = 0) -> Location:
        return Location(self.file, self.line + lines, self.col + cols)


def shorten(text: str, limit: int = QUOTE_LIMIT, *, end: bool = False) -> str:
    """``text`` cut to ``limit`` characters, ending in ``…`` when cut (for unquoted values);
    with ``end``, its last ``limit`` characters after ``…`` (a path: its file's name)."""
    if len(text) <= limit:
        return text
    return f"…{text[-limit:]}" if end else f"{text[:limit]}…"


def short_path(path: str) -> str:
    """``path`` as a message names it: whole, or its last :data:`PATH_LIMIT` characters after
    ``…`` (:func:`shorten`)."""
    return shorten(path, PATH_LIMIT, end=True)


def clipped_line(text: str, limit: int) -> str:
    """``text`` on one line (its whitespace runs as single spaces), cut to ``limit``
    characters, ending in ``…`` when cut."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(limit - 1, 0)].rstrip() + "…"


def plural(count: int, word: str) -> str:
    """``count`` and ``word``, plural unless the count is 1: ``1 session``, ``1,200 tasks``."""
    return f"{count:,} {word}" + ("" if count == 1 else "s")


def quote(value: object, limit: int = QUOTE_LIMIT) -> str:
    """``value`` as a message quotes it: its ``repr``, cut to about ``limit`` characters.

    Messages quote what a user wrote (a key, a value, a name) so that they can find it, never a
    whole document: a file that is not a policy at all (``extends: ~/.git-credentials``) must
    not end up in a terminal or a CI log. A cut string keeps its quotes and ends in ``…``.
    """
    if isinstance(value, str):
        shown = repr(value[: limit + 1])
        if len(value) <= limit and len(shown) <= limit + 2:
            return shown
        return f"{shown[: limit + 1]}…{shown[0]}"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 3 * limit:
        try:
            digits = str(value)
        except ValueError:  # past 4,300 digits, str() refuses
            return "an integer of more than 4300 digits"
        return f"{digits[:20]}… ({len(digits.lstrip('-'))} digits)"
    try:
        shown = _short_repr(value)
    except (ValueError, RecursionError):
        return f"<{type(value).__name__}>"
    return shorten(shown, limit)


EXCERPT_WIDTH = 100
"""Characters of a line an excerpt shows, at most (a longer line is cut around the column)."""


def excerpt(text: str, line: int, col: int, width: int = EXCERPT_WIDTH) -> str | None:
    """Line ``line`` of ``text`` and a caret under column ``col`` (both 1-based), each indented
    two spaces: what an error about a file a person edits shows under its ``file:line:col``.
    A line longer than ``width`` is cut around the column, ``…`` marking each cut (a minified
    document is one line: a megabyte of it must not reach the terminal). None when there is
    no such line, or it is blank."""
    start = _line_start(text, line)
    if start < 0:
        return None
    end = text.find("\n", start)
    shown = text[start : len(text) if end < 0 else end].rstrip("\r").replace("\t", " ")
    at = max(col - 1, 0)
    if line < 1 or at > len(shown) or not shown.strip():
        return None  # (an empty line, the end of the file: nothing to point at)
    first = max(0, min(at - width // 2, len(shown) - width))
    cut = shown[first : first + width]
    head = "…" if first else ""
    tail = "…" if first + width < len(shown) else ""
    return f"  {head}{cut}{tail}\n  {' ' * (len(head) + at - first)}^"


def _line_start(text: str, line: int) -> int:
    """Where 1-based ``line`` of ``text`` starts; -1 past its end. Newlines are counted a
    chunk at a time (a pretty-printed state of 24 MB has some 400,000 lines: one ``find``
    each cost 70 ms of an error's time), then found one by one in the chunk that holds it."""
    need, pos, size = line - 1, 0, len(text)
    end = 0
    while need > 0:
        if pos >= size:
            return -1
        end = min(pos + 65536, size)
        found = text.count("\n", pos, end)
        if found >= need:
            break
        need, pos = need - found, end
    for _ in range(need):
        pos = text.find("\n", pos, end) + 1
    return pos


def _short_repr(value: object) -> str:
    import reprlib  # only where a message quotes something other than a string

    shortened = reprlib.Repr()
    shortened.maxlevel, shortened.maxdict, shortened.maxlist, shortened.maxtuple = 2, 4, 4, 4
    shortened.maxstring = shortened.maxother = shortened.maxlong = QUOTE_LIMIT
    return shortened.repr(value)


class LoadCheck(StrEnum):
    """The lint checks whose problems loading finds (the loader must refuse such a file for
    ``decide`` too): an error names one of these, and ``clm-policy lint`` reports it under
    the check module whose ``ID`` it is (clm_policy.lint.checks.LOADING; a test holds the two
    equal). An error that names none is reported as ``policy-error``."""

    YAML_SYNTAX = "yaml-syntax"
    SCHEMA = "schema"
    EXTENDS = "extends"
    DUPLICATE_ID = "duplicate-id"
    EXPRESSION_SYNTAX = "expression-syntax"
    UNKNOWN_NAME = "unknown-name"
    THRESHOLD_ORDER = "threshold-order"


class ClmError(Exception):
    """Base of every error clm-policy raises on purpose; ``check``: the lint check that reports
    this kind of problem (:class:`LoadCheck`)."""

    DEFAULT_CHECK: LoadCheck | None = None  # the check of an error raised without one

    def __init__(
        self, message: str, location: Location | None = None, *, check: LoadCheck | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.location = location
        self.check = check or self.DEFAULT_CHECK
        self.excerpt: str | None = None
        """The line of the file the error is at, and a caret (:func:`excerpt`), when known."""

    def quoting(self, text: str) -> Self:
        """This error, showing the line of ``text`` (its file's) it is at; returns itself."""
        if self.location is not None and self.location.line > 0 and self.excerpt is None:
            self.excerpt = excerpt(text, self.location.line, self.location.col)
        return self

    def __str__(self) -> str:
        if self.location is None:
            return self.message
        return f"{self.location}: {self.message}"


class InputError(ClmError):
    """A file or value given to clm-policy cannot be used (missing, unreadable, malformed)."""


class UsageError(InputError):
    """A command line asks for what cannot be: no source of state or two of them, an option
    without the one it goes with. The CLI reports it as it reports click's usage errors: one
    line naming the command, exit 2."""


class PolicyError(InputError):
    """A policy file is invalid: YAML, schema, extends, or a semantic check."""


class ExpressionError(PolicyError):
    """A ``when:`` expression or a message template cannot be compiled."""

    DEFAULT_CHECK = LoadCheck.EXPRESSION_SYNTAX


class StateError(InputError):
    """A SessionState (or a value built into one) does not validate against the policy;
    ``path``: the offending field inside the state (``("signals", "x")``), when known."""

    def __init__(
        self,
        message: str,
        location: Location | None = None,
        path: tuple[str | int, ...] | None = None,
    ) -> None:
        super().__init__(message, location)
        self.path = path


class AgentError(ClmError):
    """The agent a loop drives failed (an endpoint that errs, times out or answers garbage):
    the loop commits the session so far, stopped :attr:`stop_reason`, and raises it again."""

    stop_reason = "agent_error"


class OutputClosed(ClmError):
    """The reader of the command's output went away (``clm-policy run | head``): the command
    stops there. A run commits its session so far, stopped :attr:`stop_reason`, resumable; the
    CLI says on standard error what was left and exits 141, as a shell reports a program a
    closed pipe ended."""

    stop_reason = "output_closed"

    def __init__(self, message: str, *, left: str | None = None) -> None:
        super().__init__(message)
        self.left = left
        """What the command left and how to go on (a run's saved session), when anything."""


class EndpointError(AgentError):
    """A chat-completions endpoint failed: an HTTP error status, no answer within the
    timeout, no connection, a body that is not JSON or lacks the reply. The message names the
    URL and what went wrong; never the key, never the body."""

    stop_reason = "endpoint_error"


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a command after it had written something: :attr:`message` says what it
    left and how to go on (a run: where its session is saved, and the resume command). A
    :class:`KeyboardInterrupt`, so whatever handles one still does; the CLI prints the message
    before its usual ``clm-policy: interrupted`` and exits 130."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class EvaluationError(ClmError):
    """An expression failed while it was evaluated against a state."""


class Sink:
    """Where a loader reports problems: raise the first one, or collect them all (lint)."""

    def __init__(self, collect: bool = False) -> None:
        self.collect = collect
        self.errors: list[ClmError] = []

    def report(self, error: ClmError) -> None:
        if not self.collect:
            raise error
        self.errors.append(error)


class OutputFailed(ClmError):
    """Standard output could not be written (a full disk, an I/O error; not a reader that
    went away: :class:`OutputClosed`): the command stops there, and the CLI says so on
    standard error and exits 2."""

    @classmethod
    def of(cls, exc: OSError) -> OutputFailed:
        return cls(f"cannot write standard output: {exc.strerror or exc}")
