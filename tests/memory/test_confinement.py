"""A memory repository is pulled from a team: symbolic links committed into it must never make
clm-policy write, append to, delete or read anything outside it.

Each test commits a link the way a teammate's push would bring it, runs the command that used
to follow it, and checks that it is refused by name, that nothing outside changed and that
nothing outside was read.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from clm_policy.memory.git import confine
from clm_policy.memory.git.write import JOURNAL, MemoryRepo
from clm_policy.memory.store import GitMemoryStore
from clm_policy.memory.trailers import CommitMessage

from conftest import git, invoke, state_file

OUTSIDE_SECRET = "outside-canary-Zq8Wx2Ec4Rv6Tb8Y"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the memory repository, with a file that must stay unread."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "state.json").write_text(json.dumps({"note": OUTSIDE_SECRET}))
    (folder / "decisions.jsonl").write_text(f'{{"note": "{OUTSIDE_SECRET}"}}\n')
    (folder / "x.md").write_text(f"---\nkey: x\n---\n\n{OUTSIDE_SECRET}\n")
    return folder


def fingerprint(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def commit_link(memory: Path, link: str, target: Path) -> None:
    """Commit ``link`` -> ``target`` as a teammate's push would bring it."""
    path = memory / link
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file() and not path.is_symlink():
        git(memory, "rm", "-q", "--", link)
    os.symlink(target, path)
    git(memory, "add", "--", link)
    git(memory, "commit", "-q", "-m", f"link {link}")


def session_state(tmp_path: Path, **extra: object) -> Path:
    return state_file(
        tmp_path, messages=[{"role": "assistant", "content": "done with part 1"}], **extra
    )


def nothing_leaked(memory: Path, *outputs: str) -> None:
    history = git(memory, "log", "-p", "--all", "--format=%B")
    assert OUTSIDE_SECRET not in history
    for text in outputs:
        assert OUTSIDE_SECRET not in text


@pytest.mark.parametrize("verb", ["compact", "handoff"])
def test_session_folder_linked_outside(
    memory: Path, outside: Path, tmp_path: Path, verb: str
) -> None:
    commit_link(memory, "sessions/s1", outside)
    before, head = fingerprint(outside), git(memory, "rev-parse", "HEAD")
    result = invoke(verb, "--memory", str(memory), "--state", str(session_state(tmp_path)))
    assert result.exit_code == 2, result.stderr
    assert "refusing to write sessions/s1/" in result.stderr
    assert "(sessions/s1 is a symbolic link)" in result.stderr
    assert fingerprint(outside) == before
    assert git(memory, "rev-parse", "HEAD") == head
    nothing_leaked(memory, result.stdout, result.stderr)


def test_manifests_folder_linked_outside(memory: Path, outside: Path, tmp_path: Path) -> None:
    git(memory, "rm", "-q", "-r", "--", "manifests")
    commit_link(memory, "manifests", outside)
    before = fingerprint(outside)
    result = invoke("handoff", "--memory", str(memory), "--state", str(session_state(tmp_path)))
    assert result.exit_code == 2
    assert "(manifests is a symbolic link)" in result.stderr
    assert fingerprint(outside) == before


def test_state_file_linked_outside(memory: Path, outside: Path, tmp_path: Path) -> None:
    commit_link(memory, "sessions/s1/state.json", outside / "state.json")
    before = fingerprint(outside)
    result = invoke("compact", "--memory", str(memory), "--state", str(session_state(tmp_path)))
    assert result.exit_code == 2
    assert "refusing to write sessions/s1/state.json (is a symbolic link)" in result.stderr
    assert fingerprint(outside) == before


def test_decision_log_linked_outside_is_never_appended_to(
    memory: Path, outside: Path, tmp_path: Path
) -> None:
    played = invoke("run", "--memory", str(memory), "--max-steps", "2", "--format", "json")
    assert played.exit_code == 0, played.stderr
    commit_link(memory, "sessions/demo/decisions.jsonl", outside / "decisions.jsonl")
    before = fingerprint(outside)
    resumed = invoke("run", "--memory", str(memory), "--resume", "demo", "--max-steps", "2")
    assert resumed.exit_code == 2, resumed.stderr
    assert "append to sessions/demo/decisions.jsonl (is a symbolic link)" in resumed.stderr
    assert fingerprint(outside) == before
    nothing_leaked(memory, resumed.stdout, resumed.stderr)


def test_topic_linked_outside_never_reaches_a_seed(
    memory: Path, outside: Path, tmp_path: Path
) -> None:
    commit_link(memory, "topics/x.md", outside / "x.md")
    result = invoke(
        "handoff",
        "--memory",
        str(memory),
        "--state",
        str(session_state(tmp_path, memory_keys=["x"])),
        "--format",
        "json",
    )
    assert result.exit_code == 2
    assert "refusing to read topics/x.md (is a symbolic link)" in result.stdout
    nothing_leaked(memory, result.stdout, result.stderr)
    with MemoryRepo(memory) as repo:
        store = GitMemoryStore(repo)
        with pytest.raises(confine.ConfinementError, match=r"read topics/x\.md"):
            store.read("x")
        # git grep does not look into links: the topic is never found, so never read
        assert store.search("outside") == []
        assert store.search(OUTSIDE_SECRET) == []


def test_index_linked_outside_is_neither_read_nor_written(memory: Path, outside: Path) -> None:
    commit_link(memory, "MEMORY.md", outside / "x.md")
    before = fingerprint(outside)
    with MemoryRepo(memory) as repo, pytest.raises(confine.ConfinementError, match=r"MEMORY\.md"):
        GitMemoryStore(repo).write("notes", "hello")
    assert fingerprint(outside) == before


def test_recovery_never_deletes_through_a_link(memory: Path, outside: Path) -> None:
    commit_link(memory, "sessions/s1", outside)
    (outside / ".clm-abc.tmp").write_text("someone else's file that looks like our temp file")
    # what a writer that died would have journaled, had it been allowed to write there
    (memory / ".git" / JOURNAL).write_text(
        json.dumps({"paths": ["sessions/s1/state.json", "sessions/s1/new.md"]})
    )
    before = fingerprint(outside)
    with MemoryRepo(memory) as repo:
        repo.commit(CommitMessage("clm(x): y", "", {"Clm-Event": "memory"}), {"a.md": "x\n"})
    assert fingerprint(outside) == before
    assert not (memory / ".git" / JOURNAL).exists()


def test_dangling_and_nested_links_are_refused(memory: Path, tmp_path: Path) -> None:
    commit_link(memory, "sessions/gone", tmp_path / "does-not-exist")
    with MemoryRepo(memory) as repo, pytest.raises(confine.ConfinementError, match="gone"):
        repo.commit(CommitMessage("x"), {"sessions/gone/a.md": "x"})
    assert not (tmp_path / "does-not-exist").exists()
    # a link to a folder inside the repository is refused too: only real folders are used
    commit_link(memory, "sessions/alias", memory / "topics")
    with MemoryRepo(memory) as repo, pytest.raises(confine.ConfinementError, match="alias"):
        repo.commit(CommitMessage("x"), {"sessions/alias/a.md": "x"})
    assert not (memory / "topics" / "a.md").exists()


def test_a_file_where_a_folder_belongs_is_refused(memory: Path) -> None:
    (memory / "sessions" / "s1").write_text("not a folder")
    with MemoryRepo(memory) as repo:
        with pytest.raises(confine.ConfinementError, match=r"sessions/s1 is not a folder"):
            repo.commit(CommitMessage("x"), {"sessions/s1/a.md": "x"})
        with pytest.raises(confine.ConfinementError, match=r"read sessions/s1/a.md"):
            repo.read_file("sessions/s1/a.md")


def test_confined_primitives(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    assert confine.write(root, "a/b/c.md", b"one") is False  # created
    assert confine.append(root, "a/b/c.md", b" two") is True  # was there
    assert confine.read(root, "a/b/c.md") == b"one two"
    assert confine.write(root, "a/b/c.md", b"one two") is True
    assert confine.append(root, "a/b/d.md", b"new") is False
    assert confine.read(root, "a/missing/c.md") is None
    confine.unlink(root, "a/b/c.md")
    assert confine.read(root, "a/b/c.md") is None
    os.mkfifo(root / "a" / "fifo")
    with pytest.raises(confine.ConfinementError, match="is not a regular file"):
        confine.read(root, "a/fifo")
    with pytest.raises(confine.ConfinementError, match="is not a regular file"):
        confine.append(root, "a/fifo", b"x")
    (root / "big").write_bytes(b"x" * 2048)
    with pytest.raises(confine.ConfinementError, match="larger than"):
        confine.read(root, "big", limit=1024)
    with pytest.raises(confine.ConfinementError, match="not a path inside"):
        confine.write(root, "../escape", b"x")
    assert not (tmp_path / "escape").exists()


def test_paths_are_split_and_checked_as_posix_paths_are() -> None:
    """The write path splits and checks its paths as strings (pathlib costs a compaction
    its import): what PurePosixPath gives, component for component, on generated paths."""
    import random
    from collections.abc import Callable
    from pathlib import PurePosixPath

    from clm_policy.base.errors import InputError
    from clm_policy.memory.git.write import check_path

    def expected_parts(rel: str) -> tuple[str, ...] | None:
        pure = PurePosixPath(rel)
        return None if pure.is_absolute() or not pure.parts or ".." in pure.parts else pure.parts

    def expected_path(path: str) -> str | None:
        pure = PurePosixPath(path)
        bad = not path or "\x00" in path or "\n" in path or expected_parts(path) is None
        return None if bad or pure.parts[0].lower() == ".git" else pure.as_posix()

    def outcome(function: Callable[[str], object], text: str) -> object:
        try:
            return function(text)
        except InputError:
            return None

    pieces = [
        "a",
        "b.md",
        ".",
        "..",
        "/",
        "//",
        ".git",
        ".GIT",
        "\\",
        " ",
        "\n",
        "\x00",
        "...",
        ".a",
    ]
    rng = random.Random(3)
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(7)))
        assert outcome(confine._parts, text) == expected_parts(text), repr(text)
        assert outcome(check_path, text) == expected_path(text), repr(text)
