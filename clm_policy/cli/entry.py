"""The ``clm-policy`` program's first lines: Ctrl-C is a quiet exit 130 from the start.

Importing the command line (click, and what a command needs) takes tens of milliseconds; a
Ctrl-C in that time would end in a ``KeyboardInterrupt`` traceback. This module is the first
one the ``clm-policy`` script and ``python -m clm_policy`` import (the package itself imports
nothing), so from here on until the CLI is imported, SIGINT ends the process at once with
status 130 (nothing has been written yet); from then on it raises ``KeyboardInterrupt``
again, so that commands clean up, and :func:`clm_policy.cli.main.run` turns it into exit 130
without a traceback. What happens in the few milliseconds before (the interpreter starting)
is Python's own.
"""

from __future__ import annotations

import os
import signal
import sys

EXIT_INTERRUPTED = 130


def _exit_now(_signum: int, _frame: object) -> None:
    os.write(2, b"\nclm-policy: interrupted\n")
    os._exit(EXIT_INTERRUPTED)


# A SIGINT the parent chose to ignore (a background job of a script) stays ignored.
_IGNORED = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
if not _IGNORED:
    signal.signal(signal.SIGINT, _exit_now)


def main() -> None:
    """Run the CLI and exit with a documented code."""
    from clm_policy.cli.main import run

    if not _IGNORED:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(run())
