"""How a command's failure is told, and its exit code (README, "Exit codes"), for click's
commands and the quick paths alike (no click here: a quick path reports in click's path's very
words). With ``--format json`` an error is a JSON object on standard output.
"""

from __future__ import annotations

import os
import sys
from contextlib import suppress

from clm_policy.base.errors import (
    ClmError,
    Interrupted,
    OutputClosed,
    OutputFailed,
    UsageError,
    clipped_line,
)
from clm_policy.base.termsafe import echo, echo_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

EXIT_OK = 0
EXIT_INPUT = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130
EXIT_OUTPUT_CLOSED = 141


def report(args: Sequence[str], exc: BaseException, commands: Sequence[str]) -> int:
    """Tell what ``exc`` (raised while the command ``args`` ran) means and return the exit
    code: an interruption, a usage error, a :class:`ClmError` at its place, a closed pipe (no
    error), anything else an internal error. ``commands``: the command names (for the
    command's name in a usage error)."""
    if _interrupted(exc):
        return interrupt(args, exc)
    if isinstance(exc, (OutputClosed, BrokenPipeError)):
        return _output_closed(exc)
    if isinstance(exc, OutputFailed):
        _stdout_to_devnull()
        with suppress(OutputClosed, OSError):
            echo(f"clm-policy: {exc.message}", err=True)
        return EXIT_INPUT
    if isinstance(exc, UsageError):
        return fail(args, EXIT_INPUT, usage_line(command_path(args, commands), exc.message), exc)
    if isinstance(exc, ClmError):
        text = str(exc) if exc.location is not None else f"clm-policy: {exc}"
        shown = _excerpt(exc)
        return fail(args, EXIT_INPUT, f"{text}\n{shown}" if shown else text, exc)
    if os.environ.get("CLM_POLICY_DEBUG"):
        import traceback

        echo("".join(traceback.format_exception(exc)), err=True, nl=False)
    said = clipped_line(_redacted(str(exc)), 300)
    return fail(
        args,
        EXIT_INTERNAL,
        f"clm-policy: internal error: {type(exc).__name__}: {said} "
        "(this is a bug; rerun with CLM_POLICY_DEBUG=1 for the traceback)",
    )


def _excerpt(exc: ClmError) -> str | None:
    """The line ``exc`` is at, with its caret; not shown when it holds what looks like a secret
    (a file that was not what it was given as: ``--state ~/.git-credentials``): an error
    message must not put it in a terminal or a CI log."""
    if exc.excerpt is None:
        _quote_file(exc)
    if exc.excerpt is None:
        return None
    from clm_policy.memory.redact import redact_text  # (only an error with a line pays)

    if redact_text(exc.excerpt).total:
        return "  (the line is not shown: it looks like it holds a secret)"
    return exc.excerpt


EXCERPT_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")
"""The files an error's line is read back from: the kinds a person writes for clm-policy (a
policy, a test, a scenario, an experiment, a state, a project's ``.clm-policy.yaml``). Any
other file named by an error (one given in the wrong place) shows no line of its own."""


def _quote_file(exc: ClmError) -> None:
    """Give ``exc`` the line of its file it is at, read back from that file by the bounded
    reader (at most a test file's size; a larger one, or a name that is no regular file —
    ``-``, a bundled policy — shows no line): an error about a YAML file shows its line as a
    JSON one does."""
    where = exc.location
    if where is None or where.line <= 0 or not where.file.lower().endswith(EXCERPT_SUFFIXES):
        return
    from clm_policy.formats.textio import TEST_FILE_LIMIT, read_text

    try:
        text = read_text(where.file, limit=TEST_FILE_LIMIT, what="file")
    except ClmError:  # (the error says what it can without it)
        return
    exc.quoting(text)


def interrupt(args: Sequence[str], exc: BaseException, *, end_line: bool = False) -> int:
    """Ctrl-C: one line on standard error, ``clm-policy: interrupted``, with what the command
    left and how to go on (a run's saved session); with ``--format json`` the same as an error
    object on standard output too, so that a program reading it still gets JSON. Exit 130.
    ``end_line``: end the terminal's ``^C`` line first (click ends it for what it sees)."""
    left = exc.message if isinstance(exc, Interrupted) else None
    message = f"interrupted; {left}" if left else "interrupted"
    with suppress(OutputClosed):
        echo(("\n" if end_line else "") + f"clm-policy: {message}", err=True)
        if wants_json(args):
            echo_json({"error": {"code": EXIT_INTERRUPTED, "message": message}})
    return EXIT_INTERRUPTED


def _output_closed(exc: BaseException) -> int:
    """The command's reader went away (``| head``): what it left, if anything, said on
    standard error, and exit 141, as a shell reports a program a closed pipe ended."""
    _stdout_to_devnull()
    left = getattr(exc, "left", None)
    if left:
        with suppress(OutputClosed):  # (standard error may be gone too)
            echo(f"clm-policy: output closed; {left}", err=True)
    return EXIT_OUTPUT_CLOSED


def _stdout_to_devnull() -> None:
    """Standard output goes nowhere from now on: what Python would flush at its end (what a
    closed or full output did not take) says nothing, and fails nothing."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:  # (no standard output at all: nothing to flush)
        pass


def _interrupted(exc: BaseException | None) -> bool:
    """Whether ``exc`` is Ctrl-C, or an error it caused: Python 3.11 reports a
    ``KeyboardInterrupt`` raised while a class is being made (a module being imported when
    the interrupt came) as a ``RuntimeError`` ("Error calling __set_name__") caused by it."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, KeyboardInterrupt):
            return True
        exc, seen = exc.__cause__, seen + 1
    return False


def usage_line(command: str, message: str) -> str:
    """A usage error as one line: ``clm-policy CMD: message (try 'clm-policy CMD --help')``."""
    flat = " ".join(line.strip() for line in message.splitlines() if line.strip())
    return f"{command}: {flat} (try '{command} --help')"


def command_path(args: Sequence[str], commands: Sequence[str]) -> str:
    """The command ``args`` run (``clm-policy decide``, ``clm-policy hook codex``)."""
    words = ["clm-policy"]
    for arg in args:  # up to the first option or argument: no command's name starts with "-"
        named = (len(words) == 1 and arg in commands) or (
            words[1:] == ["hook"] and arg in ("claude-code", "codex")
        )
        if not named:
            break
        words.append(arg)
    return " ".join(words)


def wants_json(args: Sequence[str]) -> bool:
    """Whether the command line asks for ``--format json`` (parsed or not)."""
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg == "--format=json" or (arg == "--format" and args[i + 1 : i + 2] == ["json"]):
            return True
    return False


def fail(args: Sequence[str], code: int, text: str, error: ClmError | None = None) -> int:
    """Report an error: one line on standard error, or a JSON object with ``--format json``."""
    if not wants_json(args):
        echo(text, err=True)
        return code
    body: dict[str, object] = {"code": code, "message": text}
    if error is not None:
        body["message"] = error.message
        if error.location is not None:
            where = error.location
            body.update(file=where.file, line=where.line or None, col=where.col or None)
    echo_json({"error": body})
    return code


def warn_ignored() -> None:
    """One line on standard error for each project file whose memory or remote was ignored
    because the person has not trusted it (clm_policy.config.trust), once per command (the
    file is read again by the options after the first has said it)."""
    trust = sys.modules.get("clm_policy.config.trust")
    if trust is None:  # nothing read a file that needs trust: nothing was ignored
        return
    for found in trust.take_ignored():
        if found.notice not in _WARNED:
            _WARNED.add(found.notice)
            echo(f"clm-policy: {found.notice}", err=True)


_WARNED: set[str] = set()


def _redacted(text: str) -> str:
    """An unexpected error's words through the one redactor: they may quote anything the
    program held (a URL with its password, a token read from a file)."""
    try:
        from clm_policy.memory.redact import redact_text

        return redact_text(text).text
    except Exception:  # the redactor's own failure must not hide the error: say less
        return "(its message is not shown: it could not be checked for secrets)"
