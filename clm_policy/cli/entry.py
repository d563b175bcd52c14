"""The ``clm-policy`` program's first lines: Ctrl-C is a quiet exit 130 from the start.

Importing the command line (click, and what a command needs) takes tens of milliseconds; a
Ctrl-C in that time would end in a ``KeyboardInterrupt`` traceback. So until the CLI is
imported, SIGINT ends the process at once with status 130 (nothing has been written yet);
from then on it raises ``KeyboardInterrupt`` again, so that commands clean up, and
:func:`clm_policy.cli.main.run` turns it into exit 130 without a traceback.
"""

from __future__ import annotations

import os
import signal
import sys

EXIT_INTERRUPTED = 130


def _exit_now(_signum: int, _frame: object) -> None:
    os.write(2, b"\nclm-policy: interrupted\n")
    os._exit(EXIT_INTERRUPTED)


signal.signal(signal.SIGINT, _exit_now)


def main() -> None:
    """Run the CLI and exit with a documented code."""
    from clm_policy.cli.main import run

    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(run())
