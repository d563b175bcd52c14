"""Reading text files with errors that name the file (kept free of heavy imports)."""

from __future__ import annotations

from pathlib import Path

from clm_policy.errors import InputError, Location


def read_text(path: Path, display: str | None = None) -> str:
    """Read a UTF-8 file; a missing, unreadable or non-UTF-8 file is an :class:`InputError`."""
    shown = display or str(path)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such file", Location(shown)) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file", Location(shown)) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start})", Location(shown)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", Location(shown)) from None
