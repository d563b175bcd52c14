"""The one place clm-policy runs git.

Every git command — the write path's, ``init``'s, a push — goes through :func:`run_git` (or
:func:`start_git`, which it uses, for a caller that works while git runs), which
puts :data:`SAFE_CONFIG` before it: no repository hook runs (a ``prepare-commit-msg`` hook
could rewrite the audit trailers, a ``reference-transaction`` hook watch every write), no
fsmonitor command runs, and no ``ext::`` remote can start a program. The settings are given
per command and never stored. Values a person or a file supplies go after ``--`` (or
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
    return subprocess.Popen(
        ["git", *SAFE_CONFIG, *args],
        cwd=cwd,
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **_ENV, **(env or {})},
    )


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
