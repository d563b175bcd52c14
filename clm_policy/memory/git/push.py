"""Pushing a memory repository's branch: fetch, rebase and retry when rejected; never force.

Several clones push to one remote; a push that loses the race is rejected. The branch is then
fetched and rebased under the write lock (so no local commit races the rebase) and pushed
again. A rebase that conflicts is aborted and reported, a branch that is not checked out is
left for a person to rebase, and nothing is ever forced.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from clm_policy.base.credentials import mask_credentials
from clm_policy.memory.git.run import GitError, check_name, short

if TYPE_CHECKING:
    from contextlib import AbstractContextManager
    from typing import Protocol

    class Repository(Protocol):
        """What a push needs of a memory repository (clm_policy.memory.git.write.MemoryRepo):
        git run in it, and its write lock."""

        def run(self, *args: str) -> tuple[int, str, str]: ...

        def git(self, *args: str, check: bool = True) -> str: ...

        def locked(self) -> AbstractContextManager[None]: ...


# A push rejected for one of these lost a race with another writer: fetch, rebase, retry.
_RETRY_PUSH = (
    "rejected",
    "fetch first",
    "non-fast-forward",
    "cannot lock ref",
    "failed to update ref",
)


def push(repo: Repository, remote: str, ref: str, *, attempts: int = 5) -> int:
    """Push ``ref`` to ``remote`` (neither may look like an option); the attempts it took."""
    check_name("remote", remote)
    check_name("ref", ref)
    branch = ref.removeprefix("refs/heads/")
    shown = mask_credentials(remote)  # a message never repeats a token in the remote's URL
    for attempt in range(1, attempts + 1):
        status, _, err = repo.run(
            "push", "--porcelain", "--no-verify", "--", remote, f"{ref}:refs/heads/{branch}"
        )
        if status == 0:
            return attempt
        if not any(sign in err for sign in _RETRY_PUSH):
            raise GitError(f"git push {shown} {branch} failed: {short(err)}")
        with repo.locked():
            repo.git("fetch", "-q", "--", remote, branch)
            current = repo.git("symbolic-ref", "-q", "--short", "HEAD", check=False)
            if current != branch:
                raise GitError(
                    f"push {branch}: the remote moved on; rebase it by hand (it is not checked out)"
                )
            status, _, err = repo.run("rebase", "-q", "FETCH_HEAD")
            if status != 0:
                repo.git("rebase", "--abort", check=False)
                raise GitError(
                    f"push {branch}: rebasing onto {shown}/{branch} conflicts; resolve by "
                    f"hand ({short(err)})"
                )
        time.sleep(0.05 * attempt)
    raise GitError(f"push {branch} to {shown}: still rejected after {attempts} attempts")
