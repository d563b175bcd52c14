"""How a file an agent touched is named in everything clm-policy commits or shows.

Agents record absolute paths (Claude Code's ``file_path``, a shell's ``cd``): committed as
they are, a handoff would name the machine's folders (``/home/me/src/shop/calc.py``), differ
between two checkouts of the same project, and tell the next session less than ``calc.py``.
One rule, :func:`relative_to_project`, in one place: a path inside the project is relative to
it; a path outside stays absolute, with the home folder written ``~``. Plain string work (no
pathlib, no file system access): the hooks call it on every snapshot.

Where a project ends, for what it may reach (``extends:``, its ``.clm-policy.yaml``):
:func:`repository_root`, the nearest folder that holds ``.git``, and :func:`is_inside`.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator


def relative_to_project(path: str, project: str | None) -> str:
    """``path`` as committed: relative to ``project`` (the session's folder) when it lies
    inside it, else absolute with the home folder as ``~``. A relative ``path`` is already
    relative to the project and is only normalised; ``project`` None or relative changes
    nothing but the home folder. Idempotent: applying it twice gives the same text."""
    text = path.strip()
    if not text or text.startswith("~"):
        return text
    if not os.path.isabs(text):
        normal = os.path.normpath(text)
        return text if normal.startswith("..") else normal
    absolute = os.path.normpath(text)
    if project and os.path.isabs(project):
        root = os.path.normpath(project)
        if absolute == root:
            return "."
        prefix = root if root.endswith(os.sep) else root + os.sep
        if absolute.startswith(prefix):
            return absolute[len(prefix) :]
    return home_as_tilde(absolute)


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


def is_inside(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or below it (both absolute and normalised: plain
    string work, so resolve links first where a link could lead out)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)
