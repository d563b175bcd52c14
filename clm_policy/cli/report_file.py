"""``--output FILE`` of ``lint`` and ``test``: checked before any work, written atomically."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from clm_policy.errors import InputError, Location
from clm_policy.textio import path_kind


def check_output(path: str) -> None:
    """Refuse an output path whose folder does not exist, before anything is run or written."""
    if path_kind(Path(path).parent) != "folder":
        # the same words as a failed write, said before the run rather than after it
        raise InputError("cannot write the report: No such file or directory", Location(path))


def write_report(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file, so a reader never sees half."""
    target = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise InputError(f"cannot write the report: {exc.strerror}", Location(path)) from None
