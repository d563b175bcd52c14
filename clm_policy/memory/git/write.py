"""The one way anything is written to a memory repository.

Git runs through :mod:`clm_policy.memory.git.run` (hooks and fsmonitor off, user values after
``--``); commits are made by git itself, not by GitPython (a cost at every start of a command
that only reads, and it would rewrite the branch ref without checking its old value, losing
commits when processes commit at once).

Every write holds an exclusive ``fcntl.flock`` on ``.git/clm-write.lock`` — it waits for its
turn, and the kernel releases it when a writer dies, so it can never go stale. Under the lock a
write (1) records the paths it is about to touch in ``.git/clm-write.journal``, (2) writes the
files (each atomically: temp file + ``os.replace``), (3) commits exactly those paths with
``git commit --only`` — git moves the branch with a ref transaction that checks the old
value — after a ``git add`` of the paths that did not exist yet (``--only`` takes only paths
git already knows), and (4) removes the journal. So a commit is one git process, two when it
creates a file (``git commit`` would start a third, its automatic maintenance, after every
commit: it is started only when git's own test says it has work). A writer killed at any
point leaves at most a journal, uncommitted files and git's own lock files; the next writer,
holding the lock, finds the journal, removes those git locks, resets the index and restores
the journaled paths from HEAD. HEAD only ever moves to a complete commit.

Commits to another branch (a handoff for a pull request) are built with plumbing in a private
index (``hash-object``, ``update-index``, ``write-tree``, ``commit-tree``) and published with
``git update-ref REF NEW OLD``, a compare-and-swap: the branch must not exist yet.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import time
from contextlib import contextmanager

from clm_policy.base.errors import InputError, short_path
from clm_policy.base.interrupts import uninterrupted
from clm_policy.base.paths import home_as_tilde
from clm_policy.memory.git import confine
from clm_policy.memory.git.run import (
    GitError,
    check_name,
    damaged,
    run_git,
    run_git_bytes,
    short,
    unborn,
)
from clm_policy.memory.layout import MARKER
from clm_policy.memory.trailers import CommitMessage

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

    # the redactor's rules are compiled when a commit is prepared, not when log or show start
    from clm_policy.memory.change import Change, Content, JsonDoc, JsonLines

LOCK = "clm-write.lock"
LOCK_NOTICE = 1.0
"""Seconds a write waits for another process's lock before a terminal is told it waits."""
JOURNAL = "clm-write.journal"

OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # SHA-1 or SHA-256
_BRANCH = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/-]*")  # what HEAD names is read only if so
_BATCH_HEADER = re.compile(rb"(?:[0-9a-f]{40}|[0-9a-f]{64}) ([a-z]+) ([0-9]+)")  # cat-file


class PushRejected(GitError):
    """The remote holds commits the branch does not, and they could not be rebased onto:
    ``advice`` says what a person does instead of pushing again."""

    def __init__(self, message: str, advice: str) -> None:
        super().__init__(message)
        self.advice = advice


class NothingToCommit(InputError):
    """Every file of a change is already what the last commit has: no commit is made (the
    memory repository holds no empty commits)."""


# A push rejected for one of these lost a race with another writer: fetch, rebase, retry.
_RETRY_PUSH = (
    "rejected",
    "fetch first",
    "non-fast-forward",
    "cannot lock ref",
    "failed to update ref",
)
# What git leaves in its directory while an operation is under way: its file, what it is, how
# a person ends it.
_UNDER_WAY = (
    ("MERGE_HEAD", "a merge", "merge --abort"),
    ("rebase-merge", "a rebase", "rebase --abort"),
    ("rebase-apply", "a rebase or git am", "rebase --abort"),
    ("CHERRY_PICK_HEAD", "a cherry-pick", "cherry-pick --abort"),
    ("REVERT_HEAD", "a revert", "revert --abort"),
)
_GC_LOOSE_IN_ONE_FOLDER = (6700 + 255) // 256  # git's gc.auto default, over 256 folders
_GC_PACKS = 50  # git's gc.autoPackLimit default


def check_path(path: str, verb: str = "write") -> str:
    """A repository-relative path clm-policy may use: no ``..``, not absolute, not in .git;
    normalized as a POSIX path is (``a//b/./c/`` is ``a/b/c``)."""
    parts = [part for part in path.split("/") if part and part != "."]
    if (
        not path
        or "\x00" in path
        or "\n" in path
        or path.startswith("/")
        or ".." in parts
        or not parts
        or parts[0].lower() == ".git"
    ):
        raise InputError(f"refusing to {verb} {path!r} in the memory repository")
    return "/".join(parts)


def find_git_dir(root: str) -> str | None:
    """The git directory of the work tree ``root``: ``root/.git``, or the folder a ``.git``
    file names (``gitdir: ...``, a linked work tree or a submodule); None when there is none.

    Only ``root`` itself is looked at, never a parent folder: a memory repository nested in
    another repository without a ``.git`` of its own is no memory repository."""
    dot_git = os.path.join(root, ".git")
    if os.path.isfile(dot_git):
        text = _stripped(dot_git, "utf-8")
        if not text.startswith("gitdir:"):
            return None
        dot_git = os.path.join(root, text.removeprefix("gitdir:").strip())
    if not os.path.isfile(os.path.join(dot_git, "HEAD")):
        return None
    if not os.path.isdir(os.path.join(dot_git, "objects")) and not os.path.isfile(
        os.path.join(dot_git, "commondir")
    ):
        return None  # a linked work tree's git directory keeps its objects in the common one
    return os.path.abspath(dot_git)


class MemoryRepo:
    """An open memory repository. Use as a context manager (nothing stays open: every git
    command is its own process, finished when it returns)."""

    def __init__(self, root: str | os.PathLike[str], *, lock_timeout: float = 120.0) -> None:
        where = os.fspath(root)
        shown = short_path(where)
        if os.path.exists(where) and not os.path.isdir(where):
            raise InputError(f"{shown}: is a file, not a memory repository (a folder)")
        if not os.path.isdir(where):
            raise InputError(
                f"{shown}: no such memory repository (create one: clm-policy init "
                f"{shown if shown == where else 'DIR'})"
            )
        try:
            os.stat(os.path.join(where, MARKER))
        except PermissionError as exc:  # (not "no .clm-memory": the folder cannot be read)
            raise InputError(f"{shown}: cannot read: {exc.strerror}") from None
        except OSError:
            pass  # (said below)
        if not os.path.isfile(os.path.join(where, MARKER)):
            raise InputError(
                f"{shown}: not a clm-policy memory repository (no {MARKER}; "
                f"create one with: clm-policy init DIR)"
            )
        git_dir = find_git_dir(where)
        if git_dir is None:
            raise InputError(f"{shown}: has {MARKER} but is not a git repository")
        self.root = os.path.abspath(where)  # (paths are strings: pathlib costs a compaction)
        self.shown = home_as_tilde(where)
        """The repository as messages name it: as it was given, the home folder as ``~``."""
        self.git_dir = git_dir
        self.lock_timeout = lock_timeout
        self._holding = 0  # how deep this object is in :meth:`locked` (0: not holding it)

    def __enter__(self) -> MemoryRepo:
        return self

    def __exit__(self, *exc: object) -> None:
        """Nothing to release."""

    def run(
        self, *args: str, env: Mapping[str, str] | None = None, stdin: bytes | None = None
    ) -> tuple[int, str, str]:
        """Run ``git ARGS`` in the repository (given ``stdin``): its status, stdout and
        stderr."""
        return run_git(self.root, args, env=env, stdin=stdin)

    def git(
        self,
        *args: str,
        env: Mapping[str, str] | None = None,
        check: bool = True,
        stdin: bytes | None = None,
    ) -> str:
        """Run ``git ARGS`` in the repository (given ``stdin``); its stdout without the final
        newline. A failure raises :class:`GitError` unless ``check`` is false."""
        status, out, err = self.run(*args, env=env, stdin=stdin)
        if check and status != 0:
            raise GitError(f"git {' '.join(args[:3])} failed: {short(err.strip() or out)}")
        return out

    def head(self) -> str | None:
        return self.git("rev-parse", "-q", "--verify", "HEAD^{commit}", check=False) or None

    def readable_head(self) -> str | None:
        """HEAD's commit; None when the branch has no commit yet. Raises :class:`GitError`
        when git cannot read it (a damaged repository is not an empty one)."""
        status, sha, err = self.run("rev-parse", "--verify", "HEAD^{commit}")
        if status == 0:
            return sha
        if unborn(self.root):
            return None
        raise damaged(self.root, err)

    def branch(self) -> str:
        """The checked-out branch: ``main`` when HEAD is ``refs/heads/main``. Read from the
        HEAD file (no process, as :meth:`_head_commit` reads the ref), else asked of git,
        which fails on a detached HEAD. (``symbolic-ref --short`` would say ``heads/main``
        where a tag is also named ``main``: not a branch name.)"""
        head = _stripped(os.path.join(self.git_dir, "HEAD"))
        name = head.removeprefix("ref: refs/heads/")
        if name != head and _BRANCH.fullmatch(name) and ".." not in name:
            return name
        return self.git("symbolic-ref", "HEAD").removeprefix("refs/heads/")

    def resolve_commit(self, rev: str) -> str | None:
        """The commit ``rev`` names (a hash, a branch, ``HEAD~2``), or None. Never an option."""
        check_name("revision", rev)
        args = ("rev-parse", "-q", "--verify", "--end-of-options", f"{rev}^{{commit}}")
        return self.git(*args, check=False) or None

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the write lock (waiting for it), recovering from a writer that died. Held
        already by this object, it is held on: a caller that chooses names from what is
        committed (a handoff's number) holds it from that choice through its commit."""
        if self._holding:
            self._holding += 1
            try:
                yield
            finally:
                self._holding -= 1
            return
        fd = os.open(os.path.join(self.git_dir, LOCK), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self._wait_for_lock(fd)
            self._holding = 1
            try:
                # a write is not torn apart by Ctrl-C: git (the terminal's process group gets
                # SIGINT) finishes the commit, and the interrupt comes once the lock is let go
                with uninterrupted():
                    self._recover()
                    yield
            finally:
                self._holding = 0
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _wait_for_lock(self, fd: int) -> None:
        """Wait for another process to release the write lock (``fd``), up to
        ``lock_timeout``; past :data:`LOCK_NOTICE` seconds a person at a terminal is told
        what the wait is, and that Ctrl-C ends it."""
        from clm_policy.base.progress import Waiting  # (a rare wait)

        text = (
            f"clm-policy: waiting for the write lock of {self.shown}: another process is "
            f"writing to it (Ctrl-C stops; at most {self.lock_timeout:g} s)"
        )
        with Waiting(text, notice_after=LOCK_NOTICE, first=0.002, longest=0.05) as wait:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return
                except BlockingIOError:
                    if wait.waited > self.lock_timeout:
                        raise InputError(
                            f"{self.shown}: another process has held the write lock for "
                            f"{self.lock_timeout:g} s; try again once it is done (a "
                            f"clm-policy command, or a hook of an agent's session)"
                        ) from None
                    wait.pause()

    def _recover(self) -> None:
        """Undo what a writer killed mid-write left behind (we hold the lock: it is dead)."""
        journal = os.path.join(self.git_dir, JOURNAL)
        if not os.path.exists(journal):
            return
        from pathlib import Path  # (only after a writer died)

        try:
            paths = [check_path(p) for p in json.loads(Path(journal).read_text())["paths"]]
        except (ValueError, KeyError, TypeError, InputError):
            paths = []
        git_dir = Path(self.git_dir)
        stale = [git_dir / "index.lock", git_dir / "HEAD.lock", *(git_dir / "refs").rglob("*.lock")]
        for lock in stale:
            lock.unlink(missing_ok=True)
        self._restore(paths)
        os.unlink(journal)

    def _restore(self, paths: list[str]) -> None:
        """Put ``paths`` back as HEAD has them, in the index and the work tree (removed when
        HEAD has none); nothing else of the index or the work tree is touched: what a person
        staged or changed beside them stays."""
        if not paths:
            return
        if self.head() is not None:
            self.git("reset", "-q", "--", *paths)
            tracked = set(self.git("ls-tree", "-r", "--name-only", "HEAD", "--", *paths).split())
            if tracked:
                self.git("checkout", "HEAD", "--", *sorted(tracked))
            untracked = [p for p in paths if p not in tracked]
        else:
            self.git("rm", "-q", "--cached", "--ignore-unmatch", "--", *paths)
            untracked = paths
        for path in paths:
            try:
                if path in untracked:
                    confine.unlink(self.root, path)
                confine.remove_temporaries(self.root, path)
            except confine.ConfinementError:
                continue  # never written through (refused before the journal): nothing to undo

    def _check_writable(self) -> None:
        """Refuse to commit on a detached HEAD (the commit would belong to no branch) or while a
        merge, rebase, cherry-pick or revert is under way (git would refuse, or the commit
        would end it): before anything is written."""
        for name, what, end in _UNDER_WAY:
            if os.path.exists(os.path.join(self.git_dir, name)):
                raise InputError(
                    f"{self.shown}: {what} is under way in the memory repository; finish or "
                    f"abort it first (git -C {self.shown} {end}), then try again"
                )
        head = _stripped(os.path.join(self.git_dir, "HEAD"))
        if head and not head.startswith("ref: ") and not OBJECT_ID.fullmatch(head):
            raise InputError(
                f"{self.shown}: its .git/HEAD names neither a branch nor a commit, so git cannot "
                f"read the repository (it may be damaged: git -C {self.shown} fsck checks it)"
            )
        if head and not head.startswith("ref: "):
            raise InputError(
                f"{self.shown}: HEAD is detached (no branch is checked out), so a commit would "
                f"belong to no branch; check one out first (git -C {self.shown} switch -, back "
                "to the branch you were on)"
            )

    def commit(
        self,
        message: CommitMessage,
        files: Change | Mapping[str, Content | JsonDoc] | None = None,
        appends: Mapping[str, Content | JsonLines] | None = None,
    ) -> str:
        """Write ``files`` (replacing) and ``appends`` (added to the end) and commit exactly
        those paths on the checked-out branch. Returns the new commit's id.

        Everything — contents, paths, the message — passes the change's redactor first, and
        a path that leads outside the repository is refused, before anything is written."""
        from clm_policy.memory.change import Change

        change = files if isinstance(files, Change) else Change(files, appends)
        ready = change.prepare(message, check_path)
        paths = sorted({*ready.files, *ready.appends})
        if not paths:
            raise InputError("nothing to commit")
        with self.locked():
            self._check_writable()
            journal = os.path.join(self.git_dir, JOURNAL)
            _write_durably(journal, json.dumps({"paths": paths, "pid": os.getpid()}).encode())
            created = set()
            for put, contents in ((confine.write, ready.files), (confine.append, ready.appends)):
                for path, data in contents.items():
                    if not put(self.root, path, data):  # it was not there: git must add it
                        created.add(path)
            # the message goes to git on its input: rewriting a message file at every commit
            # cost a flush of the file system (ext4 writes a truncated file out on close)
            text = ready.message.encode("utf-8")
            if created:
                self.git("add", "--", *sorted(created))
            status, _, err = self._commit_only(text, paths)
            if status != 0 and len(created) < len(paths):
                # A path that was there but that git does not know (a file someone left
                # untracked): `--only` refuses it. Stage every path and commit again.
                self.git("add", "--", *paths)
                status, _, err = self._commit_only(text, paths)
            # refused, and the paths are what HEAD has: an empty commit (git refuses it, and so
            # does clm-policy)
            refused = status != 0 and self.head() is not None
            if refused and self.run("diff", "--quiet", "HEAD", "--", *paths)[0] == 0:
                os.unlink(journal)  # the files are what HEAD has: nothing to undo
                raise NothingToCommit(
                    f"nothing to commit: {', '.join(paths[:3])}"
                    f"{' ...' if len(paths) > 3 else ''} unchanged since the last commit"
                )
            if status != 0:
                self._restore(paths)  # nothing of this change stays staged or written
                os.unlink(journal)
                raise GitError(f"git commit failed: {short(err.strip())}")
            sha = self._head_commit()
            os.unlink(journal)
        if self._maintenance_due():
            self.run("maintenance", "run", "--auto", "--quiet")
        return sha

    def _commit_only(self, message: bytes, paths: list[str]) -> tuple[int, str, str]:
        return self.run(
            # git commit would start `git maintenance run --auto` after every commit, a process
            # that nearly always finds nothing to do: _maintenance_due asks first
            *("-c", "maintenance.auto=false"),
            "commit",
            "-q",
            "--no-verify",
            "--cleanup=verbatim",
            *("-F", "-"),
            "--only",
            "--",
            *paths,
            stdin=message,
        )

    def _head_commit(self) -> str:
        """The commit HEAD names, right after our commit: read from the ref file git has just
        written (the files backend always writes a ref it updates as a loose file), else
        asked of git (a reftable repository, a layout this does not know)."""
        head = _stripped(os.path.join(self.git_dir, "HEAD"))
        ref = head.removeprefix("ref: ")
        parts = ref.split("/")
        if ref != head and parts[0] == "refs" and ".." not in parts and "" not in parts:
            head = _stripped(os.path.join(self._common_dir(), ref))
        if OBJECT_ID.fullmatch(head):
            return head
        return self.git("rev-parse", "--verify", "HEAD^{commit}")

    def _maintenance_due(self) -> bool:
        """Whether git's automatic maintenance would find work after a commit: git's own test
        with its default limits (gc.auto 6,700 loose objects, sampled as more than 27 in
        ``objects/17``; gc.autoPackLimit 50 packs). When it would, git runs it and decides
        with the repository's real configuration; when not, no process is started."""
        objects = os.path.join(self._common_dir(), "objects")
        loose = _count(os.path.join(objects, "17"), lambda name: len(name) in (38, 62))
        return loose > _GC_LOOSE_IN_ONE_FOLDER or (
            _count(os.path.join(objects, "pack"), lambda name: name.endswith(".pack")) > _GC_PACKS
        )

    def _common_dir(self) -> str:
        """Where the refs live: the git directory, or for a linked work tree the common one."""
        common = os.path.join(self.git_dir, "commondir")
        if not os.path.isfile(common):
            return self.git_dir
        return os.path.join(self.git_dir, _read_text(common, "utf-8").strip())

    def commit_to_branch(
        self,
        ref: str,
        message: CommitMessage,
        files: Change | Mapping[str, Content | JsonDoc],
        *,
        base: str = "HEAD",
    ) -> str:
        """Commit ``files`` on top of ``base`` as the new branch ``ref`` (which must not exist)
        without touching the working tree or the checked-out branch."""
        import tempfile
        from pathlib import Path

        from clm_policy.memory.change import Change, check_identifier

        change = files if isinstance(files, Change) else Change(files)
        if change.appends:
            raise InputError("a branch commit cannot append to files")
        full_ref = ref if ref.startswith("refs/") else f"refs/heads/{ref}"
        check_identifier("branch name", full_ref)
        if self.run("check-ref-format", full_ref)[0] != 0:
            raise InputError(f"invalid branch name {full_ref!r}")
        ready = change.prepare(message, check_path)
        paths = ready.files
        with self.locked():
            parent = self.git("rev-parse", "--verify", "--end-of-options", f"{base}^{{commit}}")
            index = Path(self.git_dir) / "clm-branch-index"
            env = {"GIT_INDEX_FILE": str(index)}
            try:
                self.git("read-tree", parent, env=env)
                with tempfile.TemporaryDirectory(dir=self.git_dir) as tmp:
                    names = [os.path.join(tmp, f"blob{i}") for i in range(len(paths))]
                    for name, content in zip(names, paths.values(), strict=True):
                        Path(name).write_bytes(content)
                    blobs = self.git("hash-object", "-w", "--", *names).split()
                entries: list[str] = []
                for path, blob in zip(paths, blobs, strict=True):
                    entries += ["--cacheinfo", f"100644,{blob},{path}"]
                self.git("update-index", "--add", *entries, env=env)
                tree = self.git("write-tree", env=env)
            finally:
                index.unlink(missing_ok=True)
            # the message on standard input, as commit takes it: no file left in .git
            text = ready.message.encode("utf-8")
            commit = self.git("commit-tree", tree, "-p", parent, "-F", "-", stdin=text)
            # compare-and-swap: the empty old value means "must not exist yet"
            self.git("update-ref", "-m", "clm-policy: handoff branch", full_ref, commit, "")
        return commit

    def show_file(self, path: str, rev: str = "HEAD") -> str | None:
        """The text of ``path`` in commit ``rev`` (from git's objects, not the work tree)."""
        commit = rev if rev == "HEAD" else self.resolve_commit(rev)
        if commit is None:
            return None
        out = self.git("cat-file", "blob", f"{commit}:{check_path(path, 'read')}", check=False)
        return out or None

    def show_files(self, names: Sequence[str]) -> list[str | None]:
        """The text of each blob ``names`` names (``REV:PATH``, or a blob's id), read by one
        ``git cat-file --batch``: as :meth:`show_file` gives it (decoded as UTF-8, a byte that
        is not replaced, without one final newline), None where there is no such blob (or it
        is empty). A name is never an option: it is a line of git's input."""
        if not names:
            return []
        if any("\n" in name or "\x00" in name or not name for name in names):
            raise InputError("an object name cannot be empty or hold a line break")
        request = "".join(f"{name}\n" for name in names).encode("utf-8")
        status, out, err = run_git_bytes(self.root, ["cat-file", "--batch"], stdin=request)
        if status != 0:
            raise GitError(f"git cat-file --batch failed: {short(err.strip())}")
        found: list[str | None] = []
        at = 0
        for _ in names:
            end = out.find(b"\n", at)
            if end < 0:
                raise GitError("git cat-file --batch answered fewer objects than it was asked")
            header = _BATCH_HEADER.fullmatch(out, at, end)
            at = end + 1
            if header is None:  # "<name> missing" (or ambiguous): no such object
                found.append(None)
                continue
            size = int(header[2])
            data, at = out[at : at + size], at + size + 1  # the content, then a line feed
            text = data.decode("utf-8", "replace").removesuffix("\n")
            found.append(text if header[1] == b"blob" and text else None)
        return found

    def read_file(self, path: str) -> str | None:
        """The text of ``path`` in the work tree, never through a symbolic link."""
        data = confine.read(self.root, check_path(path, "read"))
        return None if data is None else data.decode("utf-8", "replace")

    def blobs(self, *folders: str, rev: str = "HEAD") -> list[tuple[str, str, int]]:
        """The entries under ``folders`` (or these files) at ``rev``, a commit's id or HEAD, by
        path: each path, object and size in bytes (-1 for what is not a blob: a submodule)
        (one ``git ls-tree``)."""
        out = self.git("ls-tree", "-r", "-l", "-z", rev, "--", *folders)
        found = []
        for entry in out.split("\0"):
            info, tab, path = entry.partition("\t")
            fields = info.split()
            if tab and len(fields) == 4:
                blob = fields[1] == "blob" and fields[3].isdigit()
                found.append((path, fields[2], int(fields[3]) if blob else -1))
        return sorted(found)

    def changed_paths(self, rev: str) -> list[str]:
        commit = self.resolve_commit(rev)
        if commit is None:
            raise GitError(f"no commit named {rev!r}")
        out = self.git("show", "--no-renames", "--name-only", "--format=", commit, "--")
        return [line for line in out.splitlines() if line]

    def push(self, remote: str, ref: str, *, attempts: int = 5) -> int:
        """Push ``ref`` to ``remote`` (neither may look like an option); the attempts it took.

        Several clones push to one remote; a push that loses the race is rejected. The branch
        is then fetched and rebased under the write lock (so no local commit races the rebase)
        and pushed again. A rebase that conflicts is aborted and reported, a branch that is not
        checked out is left for a person to rebase, and nothing is ever forced."""
        from clm_policy.base.credentials import mask_credentials

        check_name("remote", remote)
        check_name("ref", ref)
        branch = ref.removeprefix("refs/heads/")
        shown = mask_credentials(remote)  # a message never repeats a token in the remote's URL
        for attempt in range(1, attempts + 1):
            status, _, err = self.run(
                "push", "--porcelain", "--no-verify", "--", remote, f"{ref}:refs/heads/{branch}"
            )
            if status == 0:
                return attempt
            if not any(sign in err for sign in _RETRY_PUSH):
                raise GitError(f"git push {shown} {branch} failed: {short(err)}")
            with self.locked():
                self.git("fetch", "-q", "--", remote, branch)
                current = self.git("symbolic-ref", "-q", "--short", "HEAD", check=False)
                if current != branch:
                    raise PushRejected(
                        f"push {branch}: the remote's {branch} is another commit (it is not "
                        "checked out here, so it is not rebased)",
                        f"see what the remote holds (git -C {self.shown} fetch -- {shown} "
                        f"{branch}, then git -C {self.shown} log FETCH_HEAD) and push this one "
                        f"under a name of its own: git -C {self.shown} push -- {shown} "
                        f"{branch}:{branch}-2",
                    )
                status, out, err = self.run("rebase", "-q", "FETCH_HEAD")
                if status != 0:
                    self.git("rebase", "--abort", check=False)
                    said = [line for line in out.splitlines() if line.startswith("CONFLICT")]
                    said = said or [line for line in err.splitlines() if line[:5] != "hint:"]
                    raise PushRejected(
                        f"push {branch}: rebasing onto {shown}/{branch} conflicts "
                        f"({short(' '.join(said))}); the rebase was undone",
                        self._update_first(shown, branch),
                    )
            time.sleep(0.05 * attempt)
        raise PushRejected(
            f"push {branch} to {shown}: still rejected after {attempts} attempts",
            self._update_first(shown, branch),
        )

    def _update_first(self, remote: str, branch: str) -> str:
        return (
            f"bring it up to date first (git -C {self.shown} pull --rebase -- {remote} {branch}, "
            f"resolving what conflicts), then push it: git -C {self.shown} push -- {remote} "
            f"{branch}"
        )


def _read_text(path: str, encoding: str) -> str:
    """The text of ``path`` (decoded from bytes: a text file would look its codec up, and
    importing ``encodings.ascii`` costs a commit more than reading HEAD does)."""
    with open(path, "rb") as fh:
        return fh.read().decode(encoding)


def _stripped(path: str, encoding: str = "ascii") -> str:
    """The text of ``path`` without the blanks around it; "" when it cannot be read or
    decoded."""
    try:
        return _read_text(path, encoding).strip()
    except (OSError, ValueError):  # UnicodeDecodeError is a ValueError
        return ""


def _count(folder: str, wanted: Callable[[str], bool]) -> int:
    """How many entries of ``folder`` have a name ``wanted`` (0 when it cannot be read)."""
    try:
        return sum(1 for entry in os.scandir(folder) if wanted(entry.name))
    except OSError:
        return 0


def _write_durably(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
