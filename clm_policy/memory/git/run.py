"""The one place clm-policy runs git.

Every git command — the write path's, ``init``'s, a push — goes through :func:`run_git` (or
:func:`start_git`, which it uses, for a caller that works while git runs), which
puts :data:`SAFE_CONFIG` before it: no repository hook runs (a ``prepare-commit-msg`` hook
could rewrite the audit trailers, a ``reference-transaction`` hook watch every write), no
fsmonitor command runs, and no ``ext::`` remote can start a program. The settings are given
per command and never stored. A repository's own configuration is data: one that names a
program git would run or a place a push or a fetch would go instead (:func:`check_config`)
is refused before git runs in it. Values a person or a file supplies go after ``--`` (or
``--end-of-options``); :func:`check_name` refuses a remote, ref or revision that git would
read as an option.
"""

from __future__ import annotations

import os
import subprocess

from clm_policy.base.credentials import mask_credentials
from clm_policy.base.errors import ClmError, InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from os import PathLike

SAFE_CONFIG = (
    *("-c", "core.hooksPath=/dev/null"),
    *("-c", "core.fsmonitor=false"),
    *("-c", "protocol.ext.allow=never"),
)
"""Options before every git command clm-policy runs (docs/security.md)."""


_ENV = {
    "GIT_TERMINAL_PROMPT": "0",  # a push never waits for a password nobody will type
    # Output read through a pipe is written in full buffers, not flushed after each commit
    # (a long `git log` is read faster: benchmarks/bench_memory.py)
    "GIT_FLUSH": "0",
}


class GitError(ClmError):
    """A git command failed."""


def run_git(
    cwd: str | PathLike[str],
    args: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
) -> tuple[int, str, str]:
    """``git ARGS`` in ``cwd`` given ``stdin`` (none: an empty input): its status, stdout
    (without the final newline) and stderr.

    Output is decoded as UTF-8, a byte that is not (a foreign commit message) replaced."""
    status, stdout, stderr = run_git_bytes(cwd, args, env=env, stdin=stdin)
    return status, stdout.decode("utf-8", "replace").removesuffix("\n"), stderr


def run_git_bytes(
    cwd: str | PathLike[str],
    args: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
) -> tuple[int, bytes, str]:
    """``git ARGS`` in ``cwd`` given ``stdin`` (none: an empty input): its status, stdout as
    bytes (``cat-file --batch``: sizes are counted in bytes) and stderr."""
    with start_git(cwd, args, env=env, stdin=stdin is not None) as proc:
        stdout, stderr = proc.communicate(stdin)
    return proc.returncode, stdout, stderr.decode("utf-8", "replace")


def start_git(
    cwd: str | PathLike[str],
    args: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    stdin: bool = False,
) -> subprocess.Popen[bytes]:
    """``git ARGS`` in ``cwd``, started (with :data:`SAFE_CONFIG`) and left running, its
    output piped (its input too, with ``stdin``): for a caller with other work to do while
    git works (``log``)."""
    if any("\x00" in arg for arg in args):
        raise InputError("a value with a NUL byte cannot be passed to git")
    check_config(cwd)
    return _popen(cwd, args, env=env, stdin=stdin)


def _popen(
    cwd: str | PathLike[str], args: Sequence[str], *, env: Mapping[str, str] | None, stdin: bool
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        ["git", *SAFE_CONFIG, *args],
        cwd=cwd,
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **_ENV, **(env or {})},
    )


UNSAFE_KEYS = frozenset(
    {
        *("core.sshcommand", "core.gitproxy", "core.askpass", "core.editor", "core.pager"),
        *("core.worktree", "core.alternaterefscommand", "diff.external", "sequence.editor"),
        *("gpg.program", "http.proxy", "http.sslverify", "http.sslcainfo", "http.sslcapath"),
    }
)
"""Settings of a repository's own configuration that would run a program or send git
elsewhere (a push, a proxy, a work tree outside), refused with :data:`UNSAFE_PATTERN`."""

UNSAFE_PATTERN = (
    r"(filter\..*\.(clean|smudge|process)|diff\..*\.(command|textconv)|merge\..*\.driver"
    r"|gpg\..*\.program|credential\.(.*\.)?helper|pager\..*|url\..*\.(push)?insteadof"
    r"|remote\..*\.(pushurl|receivepack|uploadpack|vcs|proxy)|http\..*\.(proxy|sslverify)"
    # a file included only on some branch: what it sets is not what was checked on this one
    r"|includeif\.onbranch:.*)"
)

_CHECKED: dict[str, tuple[tuple[str, tuple[int, int, int] | None], ...]] = {}
"""Repositories whose configuration :func:`check_config` found safe, with each file it was
read from or could include then (its identity, size and time; ``None``: not there): a
long-lived process (the MCP server) checks again when one of them changes."""


def check_config(cwd: str | PathLike[str]) -> None:
    """Refuse to run git in ``cwd`` when the configuration of the repository there (its
    ``.git/config``, a file it includes, ``config.worktree``) sets one of the settings
    :data:`UNSAFE_KEYS` and :data:`UNSAFE_PATTERN` name. Those come from you only (your
    ``~/.gitconfig``, the system's, the environment); a repository's own is data."""
    folder = os.fspath(cwd)
    known = _CHECKED.get(folder)
    if known is not None and all(_stamp(path) == stamp for path, stamp in known):
        return
    plain = _plain_config(folder)
    if plain is not None:  # (git's own few lines, a remote's, a branch's: no need to ask git)
        _CHECKED[folder] = ((plain, _stamp(plain)),)
        return
    args = ["config", "--list", "--show-scope", "--show-origin", "-z"]
    with _popen(folder, args, env=None, stdin=False) as proc:
        out = proc.communicate()[0]
    if proc.returncode != 0:
        return  # no configuration to read: the command itself says what is wrong
    records = out.decode("utf-8", "replace").split("\x00")
    files = {os.path.join(folder, ".git", "config")}
    for scope, origin, entry in zip(records[::3], records[1::3], records[2::3], strict=False):
        if scope not in ("local", "worktree"):
            continue
        key, _, value = entry.partition("\n")
        path = os.path.join(folder, origin.removeprefix("file:"))  # (an absolute one stays)
        if _unsafe(key):
            raise _refusal(folder, path, key)
        files.add(path)
        if key == "include.path" or (key.startswith("includeif.") and key.endswith(".path")):
            files.add(os.path.join(os.path.dirname(path), os.path.expanduser(value)))
    _CHECKED[folder] = tuple((path, _stamp(path)) for path in sorted(files))


SCREEN = (
    rb"\[\s*(?:include|filter|diff|merge|gpg|credential|url|pager|sequence|http)"
    rb"|sshcommand|gitproxy|askpass|editor|pager|worktree|alternaterefs|program|helper"
    rb"|insteadof|pushurl|receivepack|uploadpack|vcs|proxy|ssl"
)
"""Words of which a repository's configuration that sets none of the refused settings holds
none (lower-cased): a section that can hold one, a key's own name. A file without any is safe
as it is; one with any is read by git (:func:`check_config`), which also follows includes."""
SCREEN_BYTES = 64 * 1024


def _plain_config(folder: str) -> str | None:
    """``folder``'s ``.git/config`` when :data:`SCREEN`'s words are all absent from it — safe
    without asking git (a subprocess at every command); None when git must read it (a word
    is there, an include may be, the file is large, or it is not where a repository made by
    ``git init`` keeps it)."""
    import re

    path = os.path.join(folder, ".git", "config")
    try:
        with open(path, "rb") as file:
            data = file.read(SCREEN_BYTES + 1)
    except OSError:
        return None
    if len(data) > SCREEN_BYTES or re.search(SCREEN, data.lower()):
        return None
    return path


def _stamp(path: str) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns)


def _unsafe(key: str) -> bool:
    import re

    return key in UNSAFE_KEYS or re.fullmatch(UNSAFE_PATTERN, key) is not None


def _refusal(folder: str, path: str, key: str) -> InputError:
    """The error naming the setting ``key`` at its line of the file ``path``."""
    from clm_policy.base.errors import Location
    from clm_policy.base.paths import shown_path

    shown = shown_path(path)
    return InputError(
        f"{key} names a program git would run or a place it would send to, which a "
        f"repository's own configuration cannot choose (yours, ~/.gitconfig, can), so "
        f"clm-policy does not run git in {shown_path(folder)}: remove it with "
        f"git config --file {shown} --unset-all {key}",
        Location(shown, _line_of(path, key)),
    )


def _line_of(path: str, key: str) -> int:
    """The line of the file ``path`` that sets ``key`` (0 when it cannot be told)."""
    import re

    section, _, name = key.rpartition(".")
    current = ""
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            lines = file.read(1 << 20).splitlines()
    except OSError:
        return 0
    for number, line in enumerate(lines, 1):
        header = re.match(r'\s*\[\s*([^\]\s"]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]', line)
        if header:
            head, sub = header.group(1), header.group(2)
            current = head.lower() + ("" if sub is None else "." + sub.replace('\\"', '"'))
            line = line[header.end() :]
        words = re.match(r"\s*([A-Za-z][A-Za-z0-9-]*)\s*(=|$|[#;])", line)
        if words and current == section and words.group(1).lower() == name:
            return number
    return 0


def unborn(root: str) -> bool:
    """Whether HEAD at ``root`` names a branch that has no commit yet (a new repository)."""
    if run_git(root, ["rev-parse", "-q", "--verify", "HEAD"])[0] == 0:
        return False
    return run_git(root, ["symbolic-ref", "-q", "HEAD"])[0] == 0


def damaged(root: str, err: str) -> GitError:
    """The error to raise when git cannot read the history of the repository at ``root``
    (``err``: git's words), which is not an empty history; the repository named from the
    working folder or with ``~``, as the other messages name it."""
    from clm_policy.base.paths import shown_path

    shown = shown_path(root)
    return GitError(
        f"{shown}: git cannot read the history: {short(err.strip()) or 'git failed'} "
        f"(the repository may be damaged: git -C {shown} fsck checks it)"
    )


def check_name(kind: str, value: str) -> str:
    """A remote, ref or revision given by a person: never an option (``--receive-pack=...``)."""
    if not value or value.startswith("-") or any(c in value for c in "\x00\n\r"):
        raise InputError(
            f"invalid {kind} {mask_credentials(value)!r}: it must not be empty or start with '-'"
        )
    return value


def short(text: str, limit: int = 300) -> str:
    """git's output for a message: one line, at most ``limit`` characters, the credentials of
    a URL in it masked (before the cut: half a token is still a secret)."""
    flat = mask_credentials(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
