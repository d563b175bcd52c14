"""``--output FILE`` of ``lint``, ``test``, ``report`` and ``export``: checked before any work,
written atomically."""

from __future__ import annotations

from pathlib import Path

from clm_policy.base.atomicfile import replace
from clm_policy.base.errors import InputError, Location
from clm_policy.base.termsafe import echo, terminal_safe
from clm_policy.formats.textio import path_kind


def check_output(path: str | None) -> None:
    """Refuse an output path whose folder does not exist, or that is a folder, before
    anything is run or written (None, or ``-``: standard output)."""
    if path in (None, "-"):
        return
    if path_kind(Path(path).parent) != "folder":
        # the same words as a failed write, said before the run rather than after it
        raise InputError("cannot write the output: No such file or directory", Location(path))
    if path_kind(path) == "folder":  # (-o names the file the output goes to)
        raise InputError("is a folder: --output takes a file's path", Location(path))


def write_report(path: str | None, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file, so a reader never sees half
    (None: print it on standard output instead).

    A report file is shown as standard output is (``cat lint.txt`` in a CI log), so it passes
    the same printer (:func:`~clm_policy.base.termsafe.terminal_safe`); the machine formats
    (JSON, SARIF, JUnit XML, HTML, CSV) are built with nothing left for it to change."""
    if path is None:
        echo(text, nl=False)
        return
    try:
        replace(path, terminal_safe(text).encode("utf-8"))
    except OSError as exc:
        raise InputError(f"cannot write the output: {exc.strerror}", Location(path)) from None
