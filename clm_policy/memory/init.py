"""``clm-policy init DIR``: a new memory repository from memory_template/.

The repository is built in a hidden folder next to DIR and renamed into place when its first
commit exists, so an interrupted init (Ctrl-C, a full disk) leaves either nothing or a complete
repository, never a folder that no command can use.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

from clm_policy.base.errors import InputError, short_path
from clm_policy.base.resources import bundled_dir
from clm_policy.memory.layout import MARKER, is_memory_repo

IDENTITY = ("clm-policy", "clm-policy@localhost")


@dataclass(frozen=True)
class InitResult:
    path: Path
    created: bool
    commit: str | None


def check_new(directory: str | Path) -> None:
    """Raise unless a memory repository can be created at ``directory`` (new or empty)."""
    target = Path(directory)
    if target.exists() and not target.is_dir():
        raise InputError(
            f"{short_path(str(target))}: exists and is not a folder; choose a new or empty folder"
        )
    if target.exists() and any(target.iterdir()):
        raise InputError(
            f"{short_path(str(target))}: exists and is not empty (and is not a memory repository); "
            "choose a new or empty folder"
        )


def check_target(directory: str | Path) -> bool:
    """Raise unless :func:`init_memory` can make ``directory`` a memory repository, or find
    one there (then True), nothing written: a command that writes other files first asks."""
    if not os.fspath(directory):  # (Path("") is the working folder)
        raise InputError("an empty folder name: name a new or empty folder")
    if is_memory_repo(Path(directory)):
        return True
    check_new(directory)
    return False


def init_memory(directory: str | Path) -> InitResult:
    """Create a memory repository in ``directory``; an existing one is left as it is."""
    target = Path(directory)
    parent = target.absolute().parent
    building = parent / f".{target.name}.clm-init-{secrets.token_hex(4)}"
    made: list[Path] = []  # the folders above it this init creates, the deepest first
    try:
        if check_target(directory):
            return InitResult(target, created=False, commit=None)
        made = [folder for folder in (parent, *parent.parents) if not folder.exists()]
        parent.mkdir(parents=True, exist_ok=True)
        building.mkdir()
    except OSError as exc:  # a file on the way, a name too long, no permission
        for folder in made:  # (nothing is left of an init that could not start)
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise InputError(
            f"{short_path(str(target))}: cannot create it: {_why(exc, parent)}"
        ) from None
    try:
        commit = _build(building)
        try:
            os.rename(building, target)  # replaces an empty folder; atomic
        except OSError:
            if is_memory_repo(target):  # another process made it meanwhile (two hooks, two
                return InitResult(target, created=False, commit=None)  # tool calls): it is
            check_new(target)  # someone filled it with something else: say so
            raise
    except OSError as exc:  # a folder not yours to write, a read-only or full file system
        raise InputError(
            f"{short_path(str(target))}: cannot create the memory repository: {exc.strerror or exc}"
        ) from None
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return InitResult(target, created=True, commit=commit)


def _why(exc: OSError, parent: Path) -> str:
    """What stopped a folder's creation, said of the folders a person named (not of the
    hidden one it is built in)."""
    if isinstance(exc, (FileExistsError, NotADirectoryError)):
        for above in (parent, *parent.parents):
            if above.exists() and not above.is_dir():
                return f"{above} is a file, not a folder"
    return exc.strerror or str(exc)


def _build(folder: Path) -> str:
    """Make the repository in the empty folder ``folder``: git's, the template, the first
    commit; its id."""
    from clm_policy.memory.git.run import run_git
    from clm_policy.memory.git.write import MemoryRepo
    from clm_policy.memory.trailers import CommitMessage

    if run_git(folder, ["init", "-q", "-b", "main"])[0] != 0:
        raise InputError(f"{folder.parent}: git init failed")
    # Commits are made by the tool; use its own identity where git has none configured.
    if run_git(folder, ["var", "GIT_COMMITTER_IDENT"])[0] != 0:
        run_git(folder, ["config", "user.name", IDENTITY[0]])
        run_git(folder, ["config", "user.email", IDENTITY[1]])
    template = bundled_dir("memory_template")
    files = {
        path.relative_to(template).as_posix(): path.read_bytes()
        for path in sorted(template.rglob("*"))
        if path.is_file()
    }
    (folder / MARKER).write_bytes(files[MARKER])
    with MemoryRepo(folder) as repo:
        message = CommitMessage(
            "clm(init): memory repository",
            "Created by clm-policy init from memory_template/.",
            {"Clm-Event": "init"},
        )
        return repo.commit(message, files)
