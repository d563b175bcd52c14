"""Files read without ever blocking, and files in a directory private to this user: what the
caches (compiled policies, status-line digests) read and write.

:func:`read_regular` reads a file named by data (a transcript, a settings file, a policy a
cache entry names): it is opened without blocking and read only when it is a regular file, so
a FIFO in its place (which a plain ``open`` waits on for a writer, for ever) or a device
(``/dev/zero``: endless bytes) is no file, not a hang.

A cache directory may be shared, restored from a CI cache or planted; what is read from it must
be the user's own. A directory counts when it is a real directory (not a symlink), owned by
this user, that no one else may write; an entry when it is such a regular file, opened without
following a link. Writes create the directory ``0700`` and the entry ``0600``, atomically
(clm_policy.base.atomicfile). Cheap to import: the status line uses it on every refresh.
"""

from __future__ import annotations

import os
import stat

from clm_policy.base.atomicfile import replace

TYPE_CHECKING = False
if TYPE_CHECKING:  # no pathlib at run time: the status line does without it
    from pathlib import Path

    StrPath = str | Path


def cache_dir() -> str | None:
    """The directory of clm-policy's caches; None when ``CLM_POLICY_NO_CACHE`` turns caching
    off. ``CLM_POLICY_CACHE_DIR`` moves it from ``$XDG_CACHE_HOME/clm-policy``."""
    if os.environ.get("CLM_POLICY_NO_CACHE"):
        return None
    explicit = os.environ.get("CLM_POLICY_CACHE_DIR")
    if explicit:
        return explicit
    # here, not at the top: this module imports nothing beyond os (tests/base/test_atomicfile.py)
    from clm_policy.base.paths import xdg_home

    return os.path.join(xdg_home("XDG_CACHE_HOME"), "clm-policy")


def is_private(st: os.stat_result) -> bool:
    """Owned by this user, and no one else may write it."""
    return st.st_uid == os.geteuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def others_may_write(st: os.stat_result) -> str | None:
    """Who else could have written a file, from its status: ``owned by another user (uid
    N)``, ``writable by others``, ``writable by its group (gid N)``; None when only this user
    can. A group-writable file whose group is this user's own private group (one named after
    the user, with no other member: Debian's and Ubuntu's user private groups, under whose
    umask 002 git checks files out 664) is writable by this user alone."""
    if st.st_uid != os.geteuid():
        return f"owned by another user (uid {st.st_uid})"
    if st.st_mode & stat.S_IWOTH:
        return "writable by others"
    if st.st_mode & stat.S_IWGRP and not _private_group(st.st_gid):
        return f"writable by its group (gid {st.st_gid})"
    return None


def _private_group(gid: int) -> bool:
    try:
        import grp
        import pwd

        group = grp.getgrgid(gid)
        user = pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):
        return False
    return group.gr_name == user and set(group.gr_mem) <= {user}


def private_dir(directory: StrPath) -> bool:
    """Whether ``directory`` is a real directory (not a symlink) private to this user."""
    try:
        st = os.lstat(directory)
    except (OSError, ValueError):
        return False
    return stat.S_ISDIR(st.st_mode) and is_private(st)


def read_regular(
    path: StrPath, limit: int = -1, *, last: bool = False, private: bool = False
) -> bytes | None:
    """The bytes of the regular file at ``path``: at most ``limit`` + 1 of them (all when
    ``limit`` is negative), or with ``last`` its last ``limit``. None when it is missing, not
    a regular file, or cannot be read; with ``private``, also when it is a symlink, someone
    else's or writable by others (:func:`is_private`)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (os.O_NOFOLLOW if private else 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError):  # ValueError: a NUL byte in the name
        return None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or (private and not is_private(st)):
        os.close(fd)  # (checked before a file object is made: a folder opens, fdopen raises)
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            if last:
                fh.seek(max(0, st.st_size - limit))
                return fh.read(limit)
            return fh.read(limit + 1 if limit >= 0 else -1)
    except OSError:
        return None


def read_private(entry: StrPath, limit: int) -> bytes | None:
    """:func:`read_regular` of a private file (``private=True``)."""
    return read_regular(entry, limit, private=True)


def write_private(directory: StrPath, name: str, text: str) -> bool:
    """Write ``text`` as ``directory/name`` (atomically, ``0600``), creating ``directory``
    ``0700``; nothing is written into a directory that is not private. Best effort: returns
    whether it wrote, never raises."""
    try:
        # a parent made here is private too (the cache directory, for its sessions/ folder)
        os.makedirs(os.path.dirname(os.path.abspath(directory)), mode=0o700, exist_ok=True)
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            pass  # checked below, whoever made it
        else:
            os.chmod(directory, 0o700)  # whatever the umask
        if not private_dir(directory):
            return False
        # a cache: no fsync (a torn entry after a crash is refused when read, and rebuilt)
        replace(os.path.join(directory, name), text.encode("utf-8"), mode=0o600, fsync=False)
    except Exception:
        return False
    return True
