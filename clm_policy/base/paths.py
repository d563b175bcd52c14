"""Paths as clm-policy shows them (the home folder as ``~``), where Claude Code and
clm-policy keep the user's files (``$CLAUDE_CONFIG_DIR``, the XDG base folders: every caller's
one way to them), and where a project ends, for what a file may reach (``extends:``, a test's
or a project's ``policy:``). Strings, not pathlib: the hooks call it.
"""

from __future__ import annotations

import os

from clm_policy.base.errors import PolicyError, quote
from clm_policy.base.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

CLAUDE_CONFIG_DIR = "CLAUDE_CONFIG_DIR"

XDG_DEFAULTS = {
    "XDG_CONFIG_HOME": ".config",  # the trust record
    "XDG_CACHE_HOME": ".cache",  # compiled policies, status-line digests
    "XDG_DATA_HOME": os.path.join(".local", "share"),  # projects' memory repositories
    "XDG_STATE_HOME": os.path.join(".local", "state"),  # the hook and status-line logs
}
"""The XDG base folders clm-policy uses, each with its place under the home folder when unset."""


def home_as_tilde(path: str) -> str:
    """``path`` with the home folder written ``~`` (``/home/me/notes.txt`` -> ``~/notes.txt``)."""
    home = os.path.expanduser("~")
    if not home or home == os.sep or not os.path.isabs(home):
        return path
    home = os.path.normpath(home)
    if path == home:
        return "~"
    if path.startswith(home + os.sep):
        return "~" + path[len(home) :]
    return path


def shown_path(path: str) -> str:
    """``path`` as a message names a path clm-policy found or made (a project's file, the
    project's memory): relative to the working folder when it is in it; else relative to it
    too when it stands right in a folder above it (``../.clm-policy.yaml`` from a project's
    subfolder, ``../../mem``) and that is shorter; else with the home folder written ``~``
    (a path the person typed is named as typed)."""
    absolute = os.path.abspath(path)
    try:
        here = os.getcwd()
    except OSError:  # (the working folder was removed)
        return home_as_tilde(absolute)
    if absolute.startswith(here.rstrip(os.sep) + os.sep):
        return absolute[len(here.rstrip(os.sep)) + 1 :]
    far = home_as_tilde(absolute)
    try:
        near = os.path.relpath(absolute, here)
    except ValueError:  # another drive (Windows)
        return far
    steps, _, rest = near.rpartition(os.pardir + os.sep)
    above = bool(steps + _) and not steps.replace(os.pardir + os.sep, "") and os.sep not in rest
    return near if above and len(near) < len(far) else far


def xdg_home(variable: str) -> str:
    """The XDG base folder ``$VARIABLE`` names (one of :data:`XDG_DEFAULTS`), else its default
    under the home folder (``XDG_STATE_HOME``: ``~/.local/state``). An empty or a relative
    value is ignored, as the XDG Base Directory specification asks: a relative folder would
    move with the working directory, and the trust record or the memory with it."""
    folder = os.environ.get(variable)
    if folder and os.path.isabs(folder):
        return folder
    return os.path.join(os.path.expanduser("~"), XDG_DEFAULTS[variable])


def claude_config_dir(env: Mapping[str, str] | None = None) -> str:
    """Claude Code's folder of the user's ``settings.json`` and ``projects/`` (transcripts):
    ``$CLAUDE_CONFIG_DIR`` when it is set and not empty, else ``~/.claude``; ``~`` expanded.
    ``env``: the environment to read (None: this process's)."""
    folder = (os.environ if env is None else env).get(CLAUDE_CONFIG_DIR)
    return os.path.expanduser(folder or os.path.join("~", ".claude"))


def claude_user_config(env: Mapping[str, str] | None = None) -> str:
    """Claude Code's user configuration, ``.claude.json`` (its ``mcpServers`` among the rest):
    in ``$CLAUDE_CONFIG_DIR`` when that is set, else in the home folder itself — not in
    :func:`claude_config_dir`'s ``~/.claude``."""
    folder = (os.environ if env is None else env).get(CLAUDE_CONFIG_DIR)
    return os.path.join(os.path.expanduser(folder or "~"), ".claude.json")


def repository_root(folder: str) -> str | None:
    """The repository ``folder`` is in: the nearest folder, ``folder`` itself or one above it,
    that holds ``.git`` (a folder, or the file of a worktree or submodule); None when none
    does. ``folder`` is taken as it is written (absolute, its links resolved by the caller
    where that matters)."""
    found = (here for here in folders_up(folder) if os.path.lexists(os.path.join(here, ".git")))
    return next(found, None)


def folders_up(folder: str | os.PathLike[str]) -> Iterator[str]:
    """``folder`` made absolute, then each folder above it up to the file system's root."""
    here = os.path.abspath(folder)
    while True:
        yield here
        parent = os.path.dirname(here)
        if parent == here:
            return
        here = parent


REACH_ENV = "CLM_POLICY_EXTENDS_PATH"
"""Folders (separated by ``os.pathsep``) that a policy named in a file (``extends:``, a
test's or a project's ``policy:``) may also be in: the person's own setting, never a file's."""


def allowed_folders() -> tuple[str, ...]:
    """The folders ``CLM_POLICY_EXTENDS_PATH`` names, real paths (``~`` expanded)."""
    named = os.environ.get(REACH_ENV, "").split(os.pathsep)
    return tuple(os.path.realpath(os.path.expanduser(p)) for p in named if p.strip())


def is_inside(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or below it (both absolute and normalised: plain
    string work, so resolve links first where a link could lead out)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


class Reach(Record):
    """Where references written in a file may lead (``extends:``, a test's or a project's
    ``policy:``): ``root`` (the first file's repository, or its folder: ``kind`` says which)
    and the folders the person allows. Real paths (links resolved)."""

    root: str
    kind: str
    allowed: tuple[str, ...]

    def check(self, target: str, ref: str, what: str | None, whose: str = "the policy's") -> None:
        """Refuse ``target`` (the path ``ref`` names) when its real path is outside; the
        refusal says ``extends target REF is outside ROOT, the policy's repository …``, or
        ``WHAT is outside …`` (``whose``: whose repository or folder the root is)."""
        real = os.path.realpath(target)
        if any(is_inside(real, folder) for folder in (self.root, *self.allowed)):
            return
        subject = what if what is not None else f"extends target {quote(ref)}"
        raise PolicyError(
            f"{subject} is outside {self.root}, {whose} {self.kind} "
            f"({REACH_ENV} names folders it may also reach)"
        )


def folder_reach(folder: str | os.PathLike[str]) -> Reach:
    """The reach of files in ``folder``: its repository; outside any, the working directory
    when ``folder`` is below it (the project the person works in: ``policies/tests/`` names
    ``../team.yaml``), else ``folder`` itself."""
    real = os.path.realpath(folder)
    root = repository_root(real)
    if root is not None:
        return Reach(root, "repository", allowed_folders())
    here = os.path.realpath(os.getcwd())
    return Reach(here if is_inside(real, here) else real, "folder", allowed_folders())
