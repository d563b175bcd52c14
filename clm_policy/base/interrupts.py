"""Ctrl-C held while something must not be torn apart: a commit and the files it commits, an
agent's step and the state it changes.

A terminal's Ctrl-C sends SIGINT to the whole foreground process group: to clm-policy and to
the git it is running. :func:`uninterrupted` blocks SIGINT in the calling thread, and a
blocked signal stays blocked in the processes started meanwhile (a mask is inherited across
fork and exec), so git finishes; the interrupt is delivered when the block ends.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator


@contextmanager
def uninterrupted() -> Iterator[None]:
    """Hold Ctrl-C until the block is done, then raise ``KeyboardInterrupt`` as usual.

    SIGINT is blocked (the mask is inherited by the git processes the block starts). Only the
    main thread can receive SIGINT; elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
