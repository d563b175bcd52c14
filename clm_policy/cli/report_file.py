"""``--output FILE`` of ``lint``, ``test``, ``report`` and ``export`` (and ``experiment
--html``): checked before any work, written atomically.

A file is replaced whole (a reader never sees half of it); through a symbolic link, the file
it points to is, and the link stays. What is not a file — ``/dev/null``, ``/dev/stdout``, a
FIFO — is written to, never replaced: renaming a new file over ``/dev/null`` would put a
regular file in its place, for every program on the machine (as root, it did)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from clm_policy.base.atomicfile import replace
from clm_policy.base.errors import InputError, Location
from clm_policy.base.termsafe import echo, terminal_safe
from clm_policy.formats.textio import path_kind


def check_output(path: str | None, option: str = "--output") -> None:
    """Refuse an output path (given as ``option``) whose folder does not exist, or that is a
    folder, before anything is run or written (None, or ``-``: standard output)."""
    if path in (None, "-"):
        return
    if path_kind(Path(path).parent) != "folder":
        # the same words as a failed write, said before the run rather than after it
        raise InputError("cannot write the output: No such file or directory", Location(path))
    if path_kind(path) == "folder":  # (-o names the file the output goes to)
        raise InputError(f"is a folder: {option} takes a file's path", Location(path))
    if path.endswith(("/", os.sep)):  # a folder not there yet: not a file named without the /
        raise InputError(
            f"names a folder (it ends in '/'): {option} takes a file's path", Location(path)
        )


def check_not_read(path: str | None, read: Iterable[str]) -> None:
    """Refuse an output path that is one of the files the run read (a policy, a parent it
    extends, a test file), before anything is written: the report would replace it."""
    if path in (None, "-") or path_kind(path) != "file":
        return
    real = os.path.realpath(path)
    if any(os.path.realpath(file) == real for file in read if not file.startswith("<")):
        raise InputError(
            "is a file this run read: --output would replace it with the report; name another file",
            Location(path),
        )


def write_report(path: str | None, text: str) -> None:
    """Write ``text`` to ``path`` atomically (None: standard output), through the terminal
    printer as standard output is (``cat lint.txt`` in a CI log); the machine formats (JSON,
    SARIF, JUnit XML, HTML, CSV) are built with nothing left for it to change."""
    if path is None:
        echo(text, nl=False)
        return
    data = terminal_safe(text).encode("utf-8")
    try:
        if path_kind(path) == "other":  # a device or a FIFO: written to, never replaced
            with open(path, "wb") as out:
                out.write(data)
        else:
            replace(os.path.realpath(path), data)  # (a link's file; the link stays)
    except OSError as exc:
        raise InputError(f"cannot write the output: {exc.strerror}", Location(path)) from None
