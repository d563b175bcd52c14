"""``--output FILE`` of ``lint`` and ``test``: checked before any work, written atomically."""

from __future__ import annotations

from pathlib import Path

from clm_policy.base.atomicfile import replace
from clm_policy.base.errors import InputError, Location
from clm_policy.formats.textio import path_kind


def check_output(path: str) -> None:
    """Refuse an output path whose folder does not exist, before anything is run or written."""
    if path_kind(Path(path).parent) != "folder":
        # the same words as a failed write, said before the run rather than after it
        raise InputError("cannot write the report: No such file or directory", Location(path))


def write_report(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file, so a reader never sees half."""
    try:
        replace(path, text.encode("utf-8"))
    except OSError as exc:
        raise InputError(f"cannot write the report: {exc.strerror}", Location(path)) from None
