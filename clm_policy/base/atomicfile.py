"""Replace a file atomically: the one implementation of temporary file, fsync and rename.

The bytes go to a new temporary file in the target's own folder (so the rename never crosses
a file system), are flushed to disk when asked, get their permissions, and the temporary file
is renamed over the target: a reader sees the old file or the new one, never half of either.
On any failure, an interrupt included, the temporary file is removed and the target is left
as it was. The temporary file is created ``O_EXCL | O_NOFOLLOW``: nothing planted under its
name is written through.

With ``dir_fd``, names are relative to that open folder and nothing is resolved above it:
the memory repository's confinement (clm_policy.memory.git.confine) walks to the folder without
following links and hands its descriptor here. Only ``os`` is imported: the status line and
the hooks write their caches through it (clm_policy.base.privatefiles).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # no pathlib or typing at run time
    from pathlib import Path

    StrPath = str | Path

TEMP_SUFFIX = ".tmp"
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_ATTEMPTS = 16  # fresh random names tried before giving up (a clash is 1 in 2**64)
_EEXIST = 17  # errno.EEXIST on Linux and macOS, without importing errno


def replace(
    path: StrPath,
    data: bytes,
    *,
    mode: int | None = None,
    fsync: bool = True,
    dir_fd: int | None = None,
    temp_prefix: str | None = None,
) -> None:
    """Write ``data`` as ``path``, atomically; :class:`OSError` as the file system reports it.

    ``mode``: the new file's permission bits, exactly (None: ``0o666`` less the umask).
    ``fsync``: flush the data to disk before the rename (a crash then leaves the old file or
    the new one, not an empty one). ``dir_fd``: ``path`` is a bare name inside that folder.
    ``temp_prefix``: how the temporary file's name starts (default ``.<name>.``); it ends in
    :data:`TEMP_SUFFIX`, so a cleaner can find the leftovers of a writer that died.
    """
    target = os.fspath(path)
    folder, name = os.path.split(target)
    if dir_fd is not None and folder:
        raise ValueError(f"with dir_fd, a bare name is expected, not {target!r}")
    prefix = f".{name}." if temp_prefix is None else temp_prefix
    fd, tmp = _create(folder, prefix, 0o666 if mode is None else mode, dir_fd)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if mode is not None:
                os.fchmod(fd, mode)  # the umask may have taken bits away
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:  # noqa: SIM105 - contextlib is not imported on the fast paths
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass  # gone already, or the folder went away: nothing left to clean
        raise


def _create(folder: str, prefix: str, mode: int, dir_fd: int | None) -> tuple[int, str]:
    """A new, empty temporary file next to the target: its descriptor and its name."""
    for _ in range(_ATTEMPTS):
        tmp = os.path.join(folder, f"{prefix}{os.urandom(8).hex()}{TEMP_SUFFIX}")
        try:
            return os.open(tmp, _FLAGS, mode, dir_fd=dir_fd), tmp
        except FileExistsError:
            continue
    raise FileExistsError(_EEXIST, os.strerror(_EEXIST), tmp)
