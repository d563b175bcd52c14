"""The ``clm-policy`` program's first lines: Ctrl-C is a quiet exit 130 from the start.

The first module the script and ``python -m clm_policy`` import: until the CLI is imported,
SIGINT ends the process at once with status 130 (nothing is written yet, and importing click
would otherwise end in a ``KeyboardInterrupt`` traceback); from then on it raises
``KeyboardInterrupt`` again, so that commands clean up, and
:func:`clm_policy.cli.main.run` turns it into exit 130.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal
    from collections.abc import Callable
    from typing import NoReturn
else:  # the C module itself: `signal` wraps it in enums, which costs start-up time
    import _signal as signal

EXIT_INTERRUPTED = 130
EXIT_OUTPUT_CLOSED = 141  # (clm_policy.cli.errors, not imported here: the quick paths)


def _exit_now(_signum: int, _frame: object) -> None:
    os.write(2, b"\nclm-policy: interrupted\n")
    os._exit(EXIT_INTERRUPTED)


# A SIGINT the parent chose to ignore (a background job of a script) stays ignored.
_IGNORED = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
if not _IGNORED:
    signal.signal(signal.SIGINT, _exit_now)


_PROGRAM = False  # set by program(): this process is the clm-policy program itself


def program() -> None:
    """The ``clm-policy`` script and ``python -m clm_policy``: :func:`main`, whose quick paths
    then end the process at once (:func:`_finish`)."""
    global _PROGRAM
    _PROGRAM = True
    main()


def _finish(code: int) -> NoReturn:
    """End a quick path with ``code``: its files are closed and its git processes waited
    for, so once its output is flushed the program skips Python's finalization
    (``os._exit``; benchmarks/README.md). A caller that runs :func:`main` in its own process
    (the import probes) gets ``SystemExit``."""
    if not _PROGRAM:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # as Python ends when it cannot flush its output
            code = 120
    os._exit(code)


def main() -> None:
    """Run the CLI and exit with a documented code."""
    # No pydantic plugin installed beside the program observes its models, and looking for
    # one reads every installed package's metadata. A value the person set is kept.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    if sys.argv[1:2] == ["statusline"]:
        _statusline()
    quick = _QUICK.get(tuple(sys.argv[1:2])) or _QUICK.get(tuple(sys.argv[1:]))
    if quick is not None:
        _quickly(*quick)
    from clm_policy.cli.main import run

    if not _IGNORED:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(run())


def _statusline() -> None:
    """``clm-policy statusline`` without click (Claude Code runs it on every refresh): one
    line, exit 0; it returns only for ``--help``, which click answers."""
    from clm_policy.agents.statusline import HELP, fast_main

    if not any(arg in HELP for arg in sys.argv[2:]):
        note_if_terminal("statusline", "Claude Code")
    line = fast_main(sys.argv[2:], sys.stdin.buffer if sys.stdin is not None else None)
    if line is None:
        return
    from clm_policy.base.termsafe import write_fd

    try:  # noqa: SIM105 (contextlib would cost import time here)
        write_fd(1, line, lines=False)  # one line, whatever a name in it holds
    except OSError:  # Claude Code stopped reading (a newer refresh replaced this one)
        pass
    _finish(0)


def _quickly(path: Callable[[], None], say: bool) -> None:
    """Run the quick ``path``, Ctrl-C from now on an exception its writes clean up after and
    exit 130 (``say``: with a line on standard error; a hook's agent reads none, a person who
    typed the hook's command in a terminal does). It returns when click should run the
    command instead."""
    if not _IGNORED:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        path()
    except KeyboardInterrupt:
        if say or os.isatty(0):  # after the ^C, as click does; with --format json JSON too
            os.write(2, b"\n")
            from clm_policy.cli import errors

            _finish(errors.report(sys.argv[1:], KeyboardInterrupt(), ()))
        sys.exit(EXIT_INTERRUPTED)


def _decide() -> None:
    """``clm-policy decide`` without click (see clm_policy.cli.fast.decide); returns when
    click should run the command instead."""
    from clm_policy.base.errors import ClmError
    from clm_policy.cli.fast.decide import answer

    args = sys.argv[2:]
    code = 0
    note_state_in(args, "decide")  # (before anything is read: a person waits for the state)
    try:
        text = answer(args)
        if text is None:
            return
        _answer(text)
    except ClmError as exc:
        from clm_policy.cli import errors

        code = errors.report(["decide", *args], exc, ("decide",))
    if "clm_policy.config.trust" in sys.modules:  # a file was read that needs trust
        from clm_policy.cli import errors

        errors.warn_ignored()  # as click's path does when it ends
    _finish(code)


def _log() -> None:
    """``clm-policy log`` with git started before the rest is imported (see
    clm_policy.cli.fast.log); returns when click should run the command instead."""
    from clm_policy.base.termsafe import write_fd
    from clm_policy.cli.fast.log import answer

    done = answer(sys.argv[2:])
    if done is None:
        return
    status, out, err = done
    if out:
        _answer(out)
    if err:
        write_fd(2, err)
    _finish(status)


def _answer(text: str) -> None:
    """Print a quick path's answer on standard output: a reader that went away (`| head`)
    ends the program with 141; an output that cannot be written (a full disk) with 2 and one
    line saying why, as click's path says it (:class:`~clm_policy.base.errors.OutputFailed`)."""
    from clm_policy.base.termsafe import write_fd

    try:
        written = write_fd(1, text)
    except OSError as exc:
        from clm_policy.base.errors import OutputFailed
        from clm_policy.cli import errors

        _finish(errors.report([], OutputFailed.of(exc), ()))
    if not written:
        _finish(EXIT_OUTPUT_CLOSED)


def _compact() -> None:
    """``clm-policy compact --state FILE`` without click (see clm_policy.cli.fast.compact);
    returns, having written and printed nothing, when click should run the command instead."""
    from clm_policy.cli.fast.compact import answer

    code = answer(sys.argv[2:], note_state_if_terminal)
    if code is not None:
        _finish(code)


_NOTED: list[str] = []  # the notes said: a quick path that hands over to click says it once


def note_if_terminal(command: str, sender: str, *, what: str | None = None) -> None:
    """A line on standard error when standard input is a terminal: ``command`` reads the JSON
    ``sender`` sends it (or ``what``), and a person who ran it by hand would otherwise wait in
    silence. Said once per process."""
    if os.isatty(0) and command not in _NOTED:
        _NOTED.append(command)
        from clm_policy.base.termsafe import write_fd

        write_fd(
            2,
            f"clm-policy {command}: reads {what or f'the JSON {sender} sends'} on standard "
            "input; type it and end it with Ctrl-D, or stop with Ctrl-C (clm-policy "
            f"{command.split(' --')[0]} --help)",
        )


def note_state_if_terminal(command: str) -> None:
    """:func:`note_if_terminal` for ``command --state -``: a person types the state."""
    note_if_terminal(f"{command} --state -", "", what="a SessionState JSON")


def note_state_in(args: list[str], command: str) -> None:
    """:func:`note_state_if_terminal` when ``args`` (a command line's options) read the state
    from standard input (``--state -``, ``-s -``, ``--state=-``)."""
    for i, arg in enumerate(args):
        if arg == "--":
            return
        if arg == "--state=-" or (arg in ("--state", "-s") and args[i + 1 : i + 2] == ["-"]):
            note_state_if_terminal(command)
            return


def _claude_code_engine() -> None:
    """``clm-policy hook claude-code --engine`` without click (the plugin runs it after every
    turn): one JSON line, exit 0."""
    try:
        from clm_policy.agents.hooks.engine import engine_main
        from clm_policy.base.termsafe import write_fd

        note_if_terminal("hook claude-code --engine", "Claude Code's plugin engine")
        write_fd(1, engine_main())
    except OSError:  # Claude Code stopped reading: nothing more to say
        pass
    _finish(0)


def _claude_code_hook() -> None:
    """``clm-policy hook claude-code`` (no options) without click: Claude Code runs it on every
    prompt, and it never fails the agent (a problem is exit 0 and a line in the hook log)."""
    try:
        from clm_policy.agents.hooks.call import MAX_INPUT
        from clm_policy.agents.hooks.claude_code import run_claude_hook
        from clm_policy.base.stdin import read_stdin

        note_if_terminal("hook claude-code", "Claude Code")
        reply = run_claude_hook(read_stdin(MAX_INPUT))
        if reply.stdout or reply.stderr:  # (a prompt that continues says nothing)
            from clm_policy.base.termsafe import write_fd

            if reply.stdout:
                write_fd(1, reply.stdout)
            if reply.stderr:
                write_fd(2, reply.stderr)
    except OSError:  # Claude Code stopped reading: nothing more to say
        _finish(0)
    _finish(reply.exit_code)


# The quick paths by their command line (its first word, or all of it), and whether an
# interrupt says so on standard error.
_QUICK: dict[tuple[str, ...], tuple[Callable[[], None], bool]] = {
    ("decide",): (_decide, True),
    ("log",): (_log, True),
    ("compact",): (_compact, True),
    ("hook", "claude-code"): (_claude_code_hook, False),
    ("hook", "claude-code", "--engine"): (_claude_code_engine, False),
}
