"""Files of a memory repository's work tree, never anything outside it.

A memory repository is pushed and pulled by a team, so what it holds is untrusted: a committed
symbolic link (``sessions/s1 -> /home/me``, ``topics/x.md -> ~/.ssh/id_rsa``) must not make
clm-policy write, append to, delete or read a file elsewhere. Every access here walks the
path one component at a time from the repository's root with ``O_NOFOLLOW`` directory file
descriptors: a symbolic link anywhere on the way, or a component that is not what it should be
(a file where a folder belongs, a FIFO or device where a file belongs), is refused with a
:class:`ConfinementError` naming it. Opening each folder relative to the previous one also
means nothing can swap a folder for a link between a check and a write.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from clm_policy.base import atomicfile
from clm_policy.base.errors import InputError

MAX_READ = 16 * 1024 * 1024
"""Bytes clm-policy reads from one file of a memory repository (a topic, the index)."""

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_TEMP_PREFIX, _TEMP_SUFFIX = ".clm-", atomicfile.TEMP_SUFFIX


class ConfinementError(InputError):
    """A path of the memory repository leads outside it (a symbolic link) or is not a file."""


def _parts(rel: str) -> tuple[str, ...]:
    """The names of ``rel``'s components, as a POSIX path has them (``a//b/./c`` is a, b, c)."""
    parts = tuple(part for part in rel.split("/") if part and part != ".")
    if rel.startswith("/") or not parts or ".." in parts:
        raise ConfinementError(f"{rel!r} is not a path inside the memory repository")
    return parts


def _refuse(rel: str, upto: tuple[str, ...], verb: str, dir_fd: int, name: str) -> None:
    where = "/".join(upto)
    try:
        mode = os.lstat(name, dir_fd=dir_fd).st_mode
    except OSError:
        mode = 0
    if stat.S_ISLNK(mode):
        what = "is a symbolic link"
    elif len(upto) < len(_parts(rel)) and not stat.S_ISDIR(mode):
        what = "is not a folder"
    else:
        what = "is not a regular file"
    detail = f" ({where} {what})" if where != rel else f" ({what})"
    raise ConfinementError(
        f"memory repository: refusing to {verb} {rel}{detail}; "
        "clm-policy only uses files inside the repository"
    )


def _open_folder(fd: int, name: str, rel: str, upto: tuple[str, ...], verb: str) -> int | None:
    """``name`` inside the folder ``fd``, opened without following a link (None: missing)."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
    _refuse(rel, upto, verb, fd, name)
    raise AssertionError("unreachable")  # _refuse always raises


@contextmanager
def _folder(
    root: str | os.PathLike[str], rel: str, verb: str, *, create: bool
) -> Iterator[int | None]:
    """A file descriptor of ``rel``'s folder (None when it does not exist and ``create`` is
    false), reached from ``root`` without following a symbolic link."""
    parts = _parts(rel)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for i, name in enumerate(parts[:-1]):
            nxt = _open_folder(fd, name, rel, parts[: i + 1], verb)
            if nxt is None and create:
                # made by another writer meanwhile, or a dangling link (refused just below)
                with suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=fd)
                nxt = _open_folder(fd, name, rel, parts[: i + 1], verb)
            if nxt is None:
                break
            os.close(fd)
            fd = nxt
        else:
            yield fd
            return
        yield None
    finally:
        os.close(fd)


def _regular_leaf(fd: int, rel: str, verb: str) -> bool:
    """Whether the file exists; a link, folder or special file there is refused."""
    name = _parts(rel)[-1]
    try:
        mode = os.lstat(name, dir_fd=fd).st_mode
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(mode):
        _refuse(rel, _parts(rel), verb, fd, name)
    return True


def write(root: str | os.PathLike[str], rel: str, data: bytes) -> bool:
    """Replace ``rel`` with ``data`` atomically (a temporary file renamed into place).
    Whether ``rel`` was there before (else it is created)."""
    with _folder(root, rel, "write", create=True) as fd:
        assert fd is not None
        existed = _regular_leaf(fd, rel, "write")
        # No fsync: git reads the file into its object store right after, and that is what
        # a commit keeps; the work tree is rebuilt from it.
        atomicfile.replace(_parts(rel)[-1], data, dir_fd=fd, fsync=False, temp_prefix=_TEMP_PREFIX)
    return existed


def append(root: str | os.PathLike[str], rel: str, data: bytes) -> bool:
    """Add ``data`` to the end of ``rel`` (created when missing). Whether ``rel`` was there."""
    with _folder(root, rel, "append to", create=True) as fd:
        assert fd is not None
        existed = _regular_leaf(fd, rel, "append to")
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
        out = os.open(_parts(rel)[-1], flags | os.O_CLOEXEC, 0o666, dir_fd=fd)
        with os.fdopen(out, "ab") as fh:
            fh.write(data)
    return existed


def read(root: str | os.PathLike[str], rel: str, *, limit: int = MAX_READ) -> bytes | None:
    """The bytes of ``rel``, or None when it does not exist. Larger than ``limit``: refused."""
    with _folder(root, rel, "read", create=False) as fd:
        if fd is None or not _regular_leaf(fd, rel, "read"):
            return None
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        src = os.open(_parts(rel)[-1], flags, dir_fd=fd)
        with os.fdopen(src, "rb") as fh:
            data = fh.read(limit + 1)
    if len(data) > limit:
        raise ConfinementError(
            f"memory repository: refusing to read {rel} (larger than {limit // 1024 // 1024} MiB)"
        )
    return data


def unlink(root: str | os.PathLike[str], rel: str) -> None:
    """Remove ``rel`` if it exists (a link there is removed itself, never what it points to)."""
    with _folder(root, rel, "delete", create=False) as fd:
        if fd is None:
            return
        try:
            os.unlink(_parts(rel)[-1], dir_fd=fd)
        except FileNotFoundError:
            pass
        except IsADirectoryError:
            _refuse(rel, _parts(rel), "delete", fd, _parts(rel)[-1])


def remove_temporaries(root: str | os.PathLike[str], rel_file: str) -> None:
    """Remove what :func:`write` left next to ``rel_file`` when its writer died."""
    with _folder(root, rel_file, "clean up", create=False) as fd:
        if fd is None:
            return
        for entry in os.scandir(fd):
            name = entry.name
            if name.startswith(_TEMP_PREFIX) and name.endswith(_TEMP_SUFFIX):
                with suppress(FileNotFoundError, IsADirectoryError):
                    os.unlink(name, dir_fd=fd)
