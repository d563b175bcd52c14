"""``clm-policy init DIR``: a new memory repository from memory_template/."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from clm_policy.errors import InputError
from clm_policy.memory.layout import MARKER
from clm_policy.resources import bundled_dir

IDENTITY = ("clm-policy", "clm-policy@localhost")


@dataclass(frozen=True)
class InitResult:
    path: Path
    created: bool
    commit: str | None


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)


def init_memory(directory: str | Path) -> InitResult:
    """Create a memory repository in ``directory``; an existing one is left as it is."""
    target = Path(directory)
    if (target / MARKER).is_file() and (target / ".git").exists():
        return InitResult(target, created=False, commit=None)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise InputError(
            f"{target}: exists and is not empty (and is not a memory repository); "
            "choose a new or empty folder"
        )
    template = bundled_dir("memory_template")
    shutil.copytree(template, target, dirs_exist_ok=True)
    steps = [("init", "-q", "-b", "main")]
    for args in steps:
        if _git(target, *args).returncode != 0:
            raise InputError(f"{target}: git init failed")
    # Commits are made by the tool; use its own identity where git has none configured.
    if _git(target, "var", "GIT_COMMITTER_IDENT").returncode != 0:
        _git(target, "config", "user.name", IDENTITY[0])
        _git(target, "config", "user.email", IDENTITY[1])
    from clm_policy.memory.gitwrite import MemoryRepo
    from clm_policy.memory.trailers import CommitMessage

    with MemoryRepo(target) as repo:
        repo.git("add", "-A")
        message = CommitMessage(
            "clm(init): memory repository",
            "Created by clm-policy init from memory_template/.",
            {"Clm-Event": "init"},
        )
        (repo.git_dir / "clm-commit-msg").write_text(message.render(), encoding="utf-8")
        repo.git("commit", "-q", "--no-verify", "-F", str(repo.git_dir / "clm-commit-msg"))
        commit = repo.head()
    return InitResult(target, created=True, commit=commit)
