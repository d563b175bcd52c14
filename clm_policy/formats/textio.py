"""Reading input text with bounds, and errors that name the file (kept free of heavy imports).

Every file clm-policy reads as input — policies, test files, scenarios, states — goes through
:func:`read_text` (standard input's bytes through :func:`decode`): it must be a regular file
(a directory, a FIFO or a device such as ``/dev/zero`` is refused before a byte is read), no
larger than the limit for its kind (the read stops one byte past it), and UTF-8 text without
NUL bytes. The limits are documented in docs/policy.md and docs/state.md.
"""

from __future__ import annotations

import os
import stat

from clm_policy.base.errors import InputError, Location

TYPE_CHECKING = False
if TYPE_CHECKING:  # no pathlib or typing at run time: the per-prompt commands read files too
    from collections.abc import Callable, Iterator

    StrPath = str | os.PathLike[str]

MiB = 1024 * 1024
POLICY_LIMIT = 1 * MiB  # the bundled policies are about 2 KB
SCENARIO_LIMIT = 1 * MiB  # read by the same YAML layer as policies
TEST_FILE_LIMIT = 16 * MiB  # 10,000 generated cases are about 2.6 MB (benchmarks/bench_test.py)
STATE_LIMIT = 64 * MiB  # a state carries the session's messages


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def with_article(what: str) -> str:
    """``what`` with its article: "a policy", "an experiment", "an int"."""
    return f"{'an' if what[:1].lower() in 'aeio' else 'a'} {what}"


TEST_SUFFIXES = (".test.yaml", ".test.yml")
"""How a policy test file's name ends: what ``test`` runs, and what ``lint`` and ``resolve``
leave to it."""


# Folders of other tools' installed code: the YAML in them is a package's, never the project's.
_VENDORED = frozenset({"node_modules", "bower_components", "site-packages", "__pycache__"})


def _searched(root: str, name: str) -> bool:
    if name.startswith(".") or name in _VENDORED:
        return False
    return not os.path.isfile(os.path.join(root, name, "pyvenv.cfg"))  # a virtual environment


def visible_files(folder: StrPath) -> Iterator[str]:
    """The files below ``folder``, hidden folders and files (a name starting with ``.``:
    ``.git``, ``.venv``, ``.clm-policy.yaml``) and other tools' installed packages
    (``node_modules``, a virtual environment) left out: what ``lint`` and ``test`` search."""
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if _searched(root, d))
        yield from (os.path.join(root, f) for f in sorted(files) if not f.startswith("."))


def path_kind(path: StrPath) -> str:
    """``file`` (a regular file), ``folder``, ``other`` (a FIFO, a device, a socket) or
    ``missing`` — also for a path the system cannot look up (too long, a NUL byte in it)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return "missing"
    if stat.S_ISREG(mode):
        return "file"
    return "folder" if stat.S_ISDIR(mode) else "other"


def check_file(path: StrPath, display: str, limit: int, what: str) -> None:
    """Refuse ``path`` unless it is a regular file of at most ``limit`` bytes.

    For callers that must vet a file before something else reads it whole (the policy cache
    hashes a policy's bytes before parsing it). A missing file passes: reading it says so.
    """
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return
    _check_stat(info, display, limit, what)


def _check_stat(info: os.stat_result, shown: str, limit: int, what: str) -> None:
    if not stat.S_ISREG(info.st_mode):
        kind = _kind(info.st_mode)
        raise InputError(f"is {kind}, not {with_article(what)} file", Location(shown))
    if info.st_size > limit:
        raise InputError(_too_large(what, limit), Location(shown))


def _too_large(what: str, limit: int) -> str:
    size = f"{limit // MiB} MiB" if limit % MiB == 0 else f"{limit} bytes"
    return f"too large for {with_article(what)} file (more than {size})"


def read_text(path: StrPath, display: str | None = None, *, limit: int, what: str) -> str:
    """The text of a UTF-8 file of at most ``limit`` bytes; any problem is an
    :class:`InputError`. ``what`` names the kind of file in messages ("policy", "state")."""
    shown = display or str(path)
    return decode(read_bytes(path, shown, limit=limit, what=what), shown, limit, what)


def read_bytes(
    path: StrPath,
    display: str | None = None,
    *,
    limit: int,
    what: str,
    check: Callable[[os.stat_result], str | None] | None = None,
) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, opened without blocking (a FIFO
    with no writer would hang a plain ``open``). ``check``: given the status of the file
    opened (the very file read, not one its name led to before), a reason to refuse it or
    None (``not read: <reason>``)."""
    shown = display or str(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except (FileNotFoundError, ValueError):  # ValueError: a NUL byte in the name
        raise InputError("no such file", Location(shown)) from None
    except IsADirectoryError:
        said = f"is a directory, not {with_article(what)} file"
        raise InputError(said, Location(shown)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", Location(shown)) from None
    try:
        status = os.fstat(fd)
        _check_stat(status, shown, limit, what)
        refused = check(status) if check is not None else None
        if refused is not None:
            raise InputError(f"not read: {refused}", Location(shown))
    except InputError:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as fh:
        try:
            data = fh.read(limit + 1)
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror}", Location(shown)) from None
    if len(data) > limit:
        raise InputError(_too_large(what, limit), Location(shown))
    return data


def decode(data: bytes, shown: str, limit: int, what: str) -> str:
    """``data`` as text: refused when over ``limit`` bytes, binary (a NUL byte) or not UTF-8."""
    if len(data) > limit:
        raise InputError(_too_large(what, limit), Location(shown))
    nul = data.find(b"\0")
    if nul >= 0:
        raise InputError("binary file (a NUL byte), not text", _at(data, nul, shown))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x})", _at(data, exc.start, shown)
        ) from None


def _at(data: bytes, offset: int, shown: str) -> Location:
    """The line and column (in characters) of byte ``offset``; the bytes before it are UTF-8
    up to the first bad one, and a column counts the characters that decode."""
    start = data.rfind(b"\n", 0, offset) + 1
    col = len(data[start:offset].decode("utf-8", errors="replace")) + 1
    return Location(shown, data.count(b"\n", 0, offset) + 1, col)
