"""The git write path, with real git and real processes: nothing lost under concurrency,
nothing partial after a crash, pushes that never force, trailers git can parse."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from clm_policy.base.errors import InputError
from clm_policy.memory.git.run import GitError
from clm_policy.memory.git.write import JOURNAL, MemoryRepo, NothingToCommit
from clm_policy.memory.init import init_memory
from clm_policy.memory.trailers import CommitMessage, event_subject

from conftest import empty_commits, git


def message(n: int, session: str = "s1") -> CommitMessage:
    return CommitMessage(
        event_subject("compact", session, n, "soft_compact"),
        f"Goal: ship it\nNext safe action: run the tests ({n})",
        {
            "Clm-Event": "compact",
            "Clm-Session": session,
            "Clm-Step": str(n),
            "Clm-Rule": "soft_compact",
            "Clm-Context-Tokens": "260000",
            "Clm-Redactions": "0",
        },
    )


def test_init_is_idempotent_and_refuses_other_folders(tmp_path: Path) -> None:
    first = init_memory(tmp_path / "m")
    assert first.created
    assert first.commit is not None
    again = init_memory(tmp_path / "m")
    assert (again.created, again.commit) == (False, None)
    assert git(tmp_path / "m", "rev-list", "--count", "HEAD").strip() == "1"
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == [
        ".clm-memory",
        ".git",
        ".gitattributes",
        "MEMORY.md",
        "README.md",
        "manifests",
        "sessions",
        "topics",
    ]
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "file").write_text("x")
    with pytest.raises(InputError, match="exists and is not empty"):
        init_memory(tmp_path / "other")


def test_not_a_memory_repo(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such memory repository"):
        MemoryRepo(tmp_path / "nope")
    git(tmp_path, "init", "-q")
    with pytest.raises(InputError, match=r"not a clm-policy memory repository \(no .clm-memory"):
        MemoryRepo(tmp_path)


def test_commit_message_trailers_parse_with_git(memory: Path) -> None:
    with MemoryRepo(memory) as repo:
        sha = repo.commit(message(7), {"sessions/s1/compactions/000007.md": "# summary\n"})
    body = git(memory, "log", "-1", "--format=%B", sha)
    assert body.startswith("clm(compact): s1 step 7, soft_compact\n\nGoal: ship it\n")
    parsed = subprocess.run(
        ["git", "interpret-trailers", "--parse"],
        input=body,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert parsed == (
        "Clm-Event: compact\nClm-Session: s1\nClm-Step: 7\nClm-Rule: soft_compact\n"
        "Clm-Context-Tokens: 260000\nClm-Redactions: 0\n"
    )
    assert git(memory, "status", "--porcelain") == ""


def test_a_log_started_early_reads_what_read_log_reads(memory: Path) -> None:
    """compact starts the log that asks whether a position is committed already, and reads
    it later (memory/audit PendingLog): the same entries as read_log, and the same answer."""
    from clm_policy.memory.audit import PendingLog, committed_at, read_log

    with MemoryRepo(memory) as repo:
        for n, session in [(3, "s1"), (4, "s2"), (5, "s1"), (6, "s2")]:
            repo.commit(message(n, session), {f"sessions/{session}/c{n}.md": f"{n}\n"})
        for filters in [
            {"session": "s1", "event": "compact", "limit": 1},
            {"session": "s2"},
            {"event": "compact", "limit": 3},
            {"session": "nobody", "event": "compact", "limit": 1},
        ]:
            started = PendingLog(repo, **filters)
            early = [e.as_dict() for e in started.entries()]
            assert early == [e.as_dict() for e in read_log(repo, **filters)], filters
        newest = PendingLog(repo, session="s1", event="compact", limit=1).entries()
        assert [e.trailers["Clm-Step"] for e in newest] == ["5"]
        assert committed_at(newest, 5, 260000) == newest[0].commit
        assert committed_at(newest, 5, 1000) is None
        assert committed_at(newest, 4, 260000) is None
        assert committed_at([], 5, 260000) is None


def test_values_with_newlines_stay_one_trailer(memory: Path) -> None:
    odd = CommitMessage("clm(x): y", "", {"Clm-Event": "compact", "Clm-Rule": "a\nb: c"})
    with MemoryRepo(memory) as repo:
        sha = repo.commit(odd, {"a.md": "x"})
    parsed = git(memory, "log", "-1", "--format=%(trailers:only,unfold)", sha)
    assert parsed.strip("\n") == "Clm-Event: compact\nClm-Rule: a b: c\nClm-Redactions: 0"


def test_only_the_given_paths_are_committed(memory: Path) -> None:
    (memory / "topics" / "scratch.md").write_text("user's own edit, not ours to commit\n")
    with MemoryRepo(memory) as repo:
        sha = repo.commit(
            message(1),
            {"sessions/s1/state.json": "{}"},
            {"sessions/s1/decisions.jsonl": '{"step": 1}\n'},
        )
        assert repo.changed_paths(sha) == ["sessions/s1/decisions.jsonl", "sessions/s1/state.json"]
        repo.commit(message(2), appends={"sessions/s1/decisions.jsonl": '{"step": 2}\n'})
    assert git(memory, "show", "HEAD:sessions/s1/decisions.jsonl") == '{"step": 1}\n{"step": 2}\n'
    assert git(memory, "status", "--porcelain") == "?? topics/scratch.md\n"


def test_a_change_that_changes_nothing_is_not_committed(memory: Path) -> None:
    files = {"sessions/s1/state.json": '{"step": 1}\n', "sessions/s1/a.md": "A\n"}
    with MemoryRepo(memory) as repo:
        first = repo.commit(message(1), files)
        with pytest.raises(NothingToCommit) as info:
            repo.commit(message(2), files)
        assert repo.head() == first
        assert not (Path(repo.git_dir) / JOURNAL).exists()
    assert info.value.message == (
        "nothing to commit: sessions/s1/a.md, sessions/s1/state.json unchanged since the last "
        "commit"
    )
    assert git(memory, "status", "--porcelain") == ""
    assert empty_commits(memory) == []


@pytest.mark.parametrize("path", ["../escape", "/etc/passwd", ".git/config", ""])
def test_paths_outside_the_repo_are_refused(memory: Path, path: str) -> None:
    with MemoryRepo(memory) as repo, pytest.raises(InputError, match="refusing to write"):
        repo.commit(message(1), {path: "x"})


def test_branch_commit_is_compare_and_swap(memory: Path) -> None:
    with MemoryRepo(memory) as repo:
        head = repo.head()
        sha = repo.commit_to_branch("clm/handoff/s1-1", message(3), {"manifests/m.json": "{}"})
        assert repo.head() == head  # the checked-out branch did not move
        assert git(memory, "rev-parse", "clm/handoff/s1-1^").strip() == head
        assert git(memory, "show", f"{sha}:manifests/m.json") == "{}"
        with pytest.raises(GitError, match="update-ref"):
            repo.commit_to_branch("clm/handoff/s1-1", message(4), {"manifests/n.json": "{}"})
    assert git(memory, "status", "--porcelain") == ""


WRITER = textwrap.dedent("""
    import sys
    from clm_policy.memory.git.write import MemoryRepo
    from clm_policy.memory.trailers import CommitMessage
    root, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with MemoryRepo(root) as repo:
        for i in range(count):
            msg = CommitMessage(f"clm(compact): {name} step {i}", "",
                                {"Clm-Event": "compact", "Clm-Session": name, "Clm-Step": str(i)})
            repo.commit(msg, {f"sessions/{name}/compactions/{i:06d}.md": f"# {name} {i}\\n" * 50},
                        {f"sessions/{name}/decisions.jsonl": f'{{"step": {i}}}\\n',
                         "sessions/all.jsonl": f'{{"writer": "{name}", "step": {i}}}\\n'})
""")


def test_concurrent_writers_lose_nothing(memory: Path) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(memory), f"w{n}", "25"],
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(8)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    assert git(memory, "rev-list", "--count", "HEAD").strip() == "201"  # 200 + init
    subjects = git(memory, "log", "--format=%s").splitlines()
    assert sorted(s for s in subjects if "step" in s) == sorted(
        f"clm(compact): w{n} step {i}" for n in range(8) for i in range(25)
    )
    lines = git(memory, "show", "HEAD:sessions/all.jsonl").splitlines()
    assert len(lines) == 200
    assert len(set(lines)) == 200
    subprocess.run(["git", "fsck", "--strict"], cwd=memory, check=True, capture_output=True)
    assert git(memory, "status", "--porcelain") == ""


CRASHER = textwrap.dedent("""
    import sys
    from clm_policy.memory.git.write import MemoryRepo
    from clm_policy.memory.trailers import CommitMessage
    root, trial = sys.argv[1], sys.argv[2]
    big = "x" * 200_000
    with MemoryRepo(root) as repo:
        for i in range(1000):
            manifest = '{"trial": %s, "i": %d, "pad": "%s"}' % (trial, i, big)
            repo.commit(CommitMessage(f"clm(handoff): t{trial} step {i}", "",
                                      {"Clm-Event": "handoff", "Clm-Session": f"t{trial}"}),
                        {f"manifests/t{trial}_{i:04d}.json": manifest,
                         "sessions/crash/state.json": manifest},
                        {"sessions/crash/decisions.jsonl": '{"i": %d}\\n' % i})
            if i == 0:
                print("committed", flush=True)  # the parent kills only after this
""")


def test_killed_writers_leave_a_consistent_repo(memory: Path) -> None:
    rng = random.Random(20261129)
    for trial in range(20):
        proc = subprocess.Popen(
            [sys.executable, "-c", CRASHER, str(memory), str(trial)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert proc.stdout is not None
        # killed at a random moment after its first commit, however slow the machine is
        assert proc.stdout.readline() == "committed\n"
        time.sleep(rng.random() * 0.2)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        # every manifest at HEAD is complete JSON; the repo is sound
        for name in git(memory, "ls-tree", "--name-only", "HEAD", "manifests/").split():
            if name.endswith(".json"):
                json.loads(git(memory, "show", f"HEAD:{name}"))
        json.loads(git(memory, "show", "HEAD:sessions/crash/state.json") or "{}")
        subprocess.run(["git", "fsck"], cwd=memory, check=True, capture_output=True)
        # the next write succeeds and leaves nothing of the dead writer behind
        with MemoryRepo(memory) as repo:
            repo.commit(message(trial, "after"), {f"sessions/after/{trial}.md": "ok\\n"})
        assert not (memory / ".git" / JOURNAL).exists()
        assert not (memory / ".git" / "index.lock").exists()
        assert git(memory, "status", "--porcelain", "--untracked-files=all") == ""
    commits = int(git(memory, "rev-list", "--count", "HEAD"))
    assert commits >= 41  # init + 20 "after" + at least one crashed writer's commit per trial


def test_recovery_from_a_dead_writer_by_hand(memory: Path) -> None:
    # what a writer killed between writing files and committing leaves behind
    (memory / ".git" / JOURNAL).write_text(
        json.dumps({"paths": ["manifests/half.json", "MEMORY.md"]})
    )
    (memory / "manifests" / "half.json").write_text('{"goal": "trunc')
    (memory / "MEMORY.md").write_text("garbage")
    (memory / ".git" / "index.lock").write_text("")
    with MemoryRepo(memory) as repo:
        repo.commit(message(1), {"sessions/s1/ok.md": "fine\n"})
    assert not (memory / "manifests" / "half.json").exists()
    assert (memory / "MEMORY.md").read_text().startswith("# Memory")
    assert git(memory, "status", "--porcelain") == ""


PUSHER = textwrap.dedent("""
    import sys
    from clm_policy.memory.git.write import MemoryRepo
    from clm_policy.memory.trailers import CommitMessage
    root, name = sys.argv[1], sys.argv[2]
    with MemoryRepo(root) as repo:
        for i in range(5):
            repo.commit(CommitMessage(f"clm(compact): {name} step {i}", "",
                                      {"Clm-Event": "compact", "Clm-Session": name}),
                        {f"sessions/{name}/compactions/{i:06d}.md": "x\\n"},
                        {"sessions/shared.jsonl": f'{{"{name}": {i}}}\\n'})
            repo.push("origin", "refs/heads/main", attempts=20)
""")


def test_three_clones_pushing_at_once_lose_nothing(memory: Path, tmp_path: Path) -> None:
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(memory), str(bare))
    clones = []
    for n in range(3):
        clone = tmp_path / f"clone{n}"
        git(tmp_path, "clone", "-q", str(bare), str(clone))
        clones.append(clone)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", PUSHER, str(c), f"c{n}"], stderr=subprocess.PIPE, text=True
        )
        for n, c in enumerate(clones)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    subjects = git(bare, "log", "--format=%s", "main").splitlines()
    assert sorted(s for s in subjects if "step" in s) == sorted(
        f"clm(compact): c{n} step {i}" for n in range(3) for i in range(5)
    )
    assert len(git(bare, "show", "main:sessions/shared.jsonl").splitlines()) == 15
    subprocess.run(["git", "fsck"], cwd=bare, check=True, capture_output=True)


def test_a_branch_commit_leaves_no_file_in_the_git_folder(memory: Path) -> None:
    """The message goes to ``git commit-tree`` on standard input, and the index it builds is
    removed: nothing of the commit stays behind in ``.git`` (a message file did, once)."""
    before = {p.name for p in (memory / ".git").iterdir()}
    with MemoryRepo(memory) as repo:
        sha = repo.commit_to_branch("clm/handoff/s1-1", message(3), {"manifests/m.json": "{}"})
    assert not (memory / ".git" / "clm-branch-msg").exists()
    assert {p.name for p in (memory / ".git").iterdir()} - before <= {"logs", "ORIG_HEAD"}
    body = git(memory, "cat-file", "commit", sha).split("\n\n", 1)[1]
    assert body.startswith(event_subject("compact", "s1", 3, "soft_compact") + "\n\nGoal: ship it")
    assert "Clm-Session: s1\n" in body  # word for word, trailers and all


def test_push_never_forces_a_diverged_branch(memory: Path, tmp_path: Path) -> None:
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(memory), str(bare))
    with MemoryRepo(memory) as repo:
        repo.git("remote", "add", "origin", str(bare))
        repo.commit_to_branch("clm/handoff/s1-1", message(1), {"manifests/a.json": "{}"})
        assert repo.push("origin", "refs/heads/clm/handoff/s1-1") == 1
        repo.git("branch", "-f", "other", "HEAD")
        repo.commit_to_branch("clm/handoff/s1-2", message(2), {"manifests/b.json": "{}"})
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    git(other, "checkout", "-q", "-b", "clm/handoff/s1-2")
    (other / "x").write_text("theirs")
    git(other, "add", "x")
    git(other, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "theirs")
    git(other, "push", "-q", "origin", "clm/handoff/s1-2")
    with (
        MemoryRepo(memory) as repo,
        pytest.raises(GitError, match=r"is another commit \(it is not checked out here"),
    ):
        repo.push("origin", "refs/heads/clm/handoff/s1-2")
    assert git(bare, "log", "-1", "--format=%s", "clm/handoff/s1-2").strip() == "theirs"


def test_lock_waits_then_times_out(memory: Path) -> None:
    import fcntl

    fd = os.open(memory / ".git" / "clm-write.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with (
            MemoryRepo(memory, lock_timeout=0.3) as repo,
            pytest.raises(InputError, match="held the write lock"),
        ):
            repo.commit(message(1), {"a.md": "x"})
    finally:
        os.close(fd)
    with MemoryRepo(memory) as repo:
        repo.commit(message(1), {"a.md": "x"})


def git_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The git commands the write path runs from now on (the command, after any ``-c``)."""
    import clm_policy.memory.git.write as gitwrite

    calls: list[str] = []
    real = gitwrite.run_git

    def counting(cwd: Path, args: list[str], **kwargs: object) -> tuple[int, str, str]:
        rest = list(args)
        while rest[0] == "-c":
            rest = rest[2:]
        calls.append(rest[0])
        return real(cwd, args, **kwargs)

    monkeypatch.setattr(gitwrite, "run_git", counting)
    return calls


def test_a_commit_is_one_git_process_two_when_it_creates_a_file(
    memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MemoryRepo(memory) as repo:
        calls = git_calls(monkeypatch)
        first = repo.commit(message(1), {"sessions/s1/state.json": "{}"})
        assert calls == ["add", "commit"]  # a new file: git commit --only takes known paths
        calls.clear()
        second = repo.commit(
            message(2), {"sessions/s1/state.json": '{"a": 1}'}, {"MEMORY.md": "more\n"}
        )
        assert calls == ["commit"]
    assert git(memory, "rev-parse", "HEAD").strip() == second
    assert git(memory, "rev-parse", "HEAD^").strip() == first
    assert git(memory, "status", "--porcelain") == ""


def test_git_maintenance_runs_only_when_git_would_find_work(
    memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hashlib

    # 28 loose objects in objects/17: git's auto gc samples that folder (27 at gc.auto 6700)
    blobs, n = [], 0
    while len(blobs) < 28:
        data = f"blob content {n}\n".encode()
        if hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest().startswith("17"):
            blobs.append(data)
        n += 1
    git(memory, "config", "gc.autoDetach", "false")  # no gc left running in the background
    calls = git_calls(monkeypatch)
    with MemoryRepo(memory) as repo:
        repo.commit(message(1), {"sessions/s1/a.md": "x\n"})
        assert "maintenance" not in calls
        for i, data in enumerate(blobs):
            (memory / f"blob{i}").write_bytes(data)
        names = [f"blob{i}" for i in range(len(blobs))]
        git(memory, "hash-object", "-w", "--", *names)
        for name in names:
            (memory / name).unlink()
        calls.clear()
        repo.commit(message(2), {"sessions/s1/a.md": "y\n"})
        assert calls == ["commit", "maintenance"]
    assert git(memory, "status", "--porcelain") == ""


def test_a_file_left_untracked_is_staged_when_commit_refuses_it(
    memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (memory / "topics" / "mine.md").write_text("someone's own file, never added\n")
    with MemoryRepo(memory) as repo:
        calls = git_calls(monkeypatch)
        sha = repo.commit(message(1), {"topics/mine.md": "ours now\n"})
        assert calls == ["commit", "add", "commit"]
    assert git(memory, "show", f"{sha}:topics/mine.md") == "ours now\n"
    assert git(memory, "status", "--porcelain") == ""


def test_a_failed_commit_is_reported_and_undone_at_once(memory: Path) -> None:
    git(memory, "config", "user.useConfigOnly", "true")
    with MemoryRepo(memory) as repo:
        head = repo.head()
        env = {"GIT_AUTHOR_NAME": "", "GIT_AUTHOR_EMAIL": "", "GIT_COMMITTER_EMAIL": ""}
        with pytest.MonkeyPatch.context() as patch:
            for name, value in env.items():
                patch.setenv(name, value)
            with pytest.raises(GitError, match=r"^git commit failed: "):
                repo.commit(message(1), {"sessions/s1/state.json": "{}", "MEMORY.md": "new\n"})
        assert repo.head() == head
        assert not (memory / ".git" / JOURNAL).exists()
        assert not (memory / "sessions" / "s1" / "state.json").exists()
        assert (memory / "MEMORY.md").read_text().startswith("# Memory")
        assert git(memory, "status", "--porcelain") == ""
        repo.commit(message(2), {"sessions/s1/other.md": "x\n"})
    assert git(memory, "status", "--porcelain") == ""


def test_what_a_person_staged_survives_a_failed_commit_and_a_dead_writer(
    memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failed commit (here: signing that fails, as the person's own configuration asks) and
    the recovery from a writer that died put back only their own paths: a file the person
    staged stays staged."""
    (memory / "notes.md").write_text("mine\n")
    git(memory, "add", "notes.md")
    settings = {"commit.gpgsign": "true", "gpg.program": "false"}
    monkeypatch.setenv("GIT_CONFIG_COUNT", str(len(settings)))
    for number, (key, value) in enumerate(settings.items()):
        monkeypatch.setenv(f"GIT_CONFIG_KEY_{number}", key)
        monkeypatch.setenv(f"GIT_CONFIG_VALUE_{number}", value)
    with MemoryRepo(memory) as repo:
        with pytest.raises(GitError, match=r"^git commit failed: "):
            repo.commit(message(1), {"sessions/s1/a.md": "x\n"})
        assert git(memory, "status", "--porcelain") == "A  notes.md\n"
        monkeypatch.delenv("GIT_CONFIG_COUNT")
        (memory / ".git" / JOURNAL).write_text(json.dumps({"paths": ["sessions/s1/b.md"]}))
        (memory / "sessions" / "s1").mkdir(parents=True, exist_ok=True)
        (memory / "sessions" / "s1" / "b.md").write_text("half")
        repo.commit(message(2), {"sessions/s1/a.md": "x\n"})
    assert git(memory, "status", "--porcelain") == "A  notes.md\n"
    assert git(memory, "show", "--name-only", "--format=", "HEAD") == "sessions/s1/a.md\n"


def _merge_conflict(memory: Path) -> None:
    git(memory, "checkout", "-q", "-b", "other")
    (memory / "f").write_text("a\n")
    git(memory, "add", "f")
    git(memory, "commit", "-q", "-m", "a")
    git(memory, "checkout", "-q", "main")
    (memory / "f").write_text("b\n")
    git(memory, "add", "f")
    git(memory, "commit", "-q", "-m", "b")
    subprocess.run(["git", "-C", str(memory), "merge", "-q", "other"], capture_output=True)
    assert (memory / ".git" / "MERGE_HEAD").exists()


@pytest.mark.parametrize("situation", ["merge", "detached HEAD"])
def test_no_commit_on_a_detached_head_or_during_a_merge(memory: Path, situation: str) -> None:
    if situation == "merge":
        _merge_conflict(memory)
        expected = r"a merge is under way in the memory repository; finish or abort it first \("
    else:
        git(memory, "checkout", "-q", "--detach")
        expected = r"HEAD is detached \(no branch is checked out\)"
    before = git(memory, "status", "--porcelain")
    head = git(memory, "rev-parse", "HEAD")
    with MemoryRepo(memory) as repo, pytest.raises(InputError, match=expected):
        repo.commit(message(1), {"sessions/s1/a.md": "x\n"})
    assert not (memory / "sessions" / "s1" / "a.md").exists()
    assert git(memory, "status", "--porcelain") == before
    assert git(memory, "rev-parse", "HEAD") == head
    assert (memory / ".git" / "MERGE_HEAD").exists() == (situation == "merge")


@pytest.mark.parametrize("layout", ["packed-refs", "linked work tree"])
def test_the_commit_id_comes_from_the_ref_git_wrote(
    memory: Path, tmp_path: Path, layout: str
) -> None:
    root = memory
    if layout == "packed-refs":
        git(memory, "pack-refs", "--all")
        assert not (memory / ".git" / "refs" / "heads" / "main").exists()
    elif layout == "linked work tree":
        root = tmp_path / "linked"
        git(memory, "worktree", "add", "-q", "-b", "other", str(root))
        assert (root / ".git").is_file()
    with MemoryRepo(root) as repo:
        sha = repo.commit(message(1), {"sessions/s1/a.md": "x\n"})
        again = repo.commit(message(2), {"sessions/s1/a.md": "y\n"})
    assert git(root, "rev-parse", "HEAD").strip() == again
    assert git(root, "rev-parse", "HEAD^").strip() == sha
    assert git(root, "status", "--porcelain") == ""


def test_sha256_repository(tmp_path: Path) -> None:
    root = tmp_path / "m256"
    git(tmp_path, "init", "-q", "--object-format=sha256", str(root))
    (root / ".clm-memory").write_text("")
    with MemoryRepo(root) as repo:
        sha = repo.commit(message(1), {"a.md": "x\n"})
    assert len(sha) == 64
    assert git(root, "rev-parse", "HEAD").strip() == sha


def test_a_marker_without_git_is_no_repository(tmp_path: Path) -> None:
    (tmp_path / "outer").mkdir()
    git(tmp_path / "outer", "init", "-q")
    inner = tmp_path / "outer" / "inner"
    inner.mkdir()
    (inner / ".clm-memory").write_text("")  # inside another repository, no .git of its own
    with pytest.raises(InputError, match=r"has .clm-memory but is not a git repository"):
        MemoryRepo(inner)
    (inner / ".git").write_text("not a gitdir line\n")
    with pytest.raises(InputError, match=r"has .clm-memory but is not a git repository"):
        MemoryRepo(inner)


def _blob(memory: Path, data: bytes) -> str:
    done = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"], cwd=memory, input=data, capture_output=True
    )
    return done.stdout.decode().strip()


def test_show_files_reads_many_blobs_in_one_git_process_as_show_file_reads_each(
    memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import clm_policy.memory.git.write as gitwrite

    with MemoryRepo(memory) as repo:
        first = repo.commit(message(1), {"a.md": "one\n", "b b.md": "two\n\nthree\n\n"})
        repo.commit(message(2), {"a.md": "changed"})
        odd = _blob(memory, b"caf\xe9 \xff\nsecond line\n")  # not UTF-8: replaced
        empty = _blob(memory, b"")
        names = [
            "HEAD:a.md",
            f"{first}:a.md",
            "HEAD:b b.md",  # a space in a path: the whole line is the name
            odd,
            empty,  # empty: None, as show_file has it
            "HEAD:nothing.md",  # missing
            "HEAD",  # a commit, not a blob
            "0" * 40,  # no such object
        ]
        expected = [
            "changed",
            "one",
            "two\n\nthree\n",
            "caf\ufffd \ufffd\nsecond line",
            None,
            None,
            None,
            None,
        ]
        started: list[str] = []
        real = gitwrite.run_git_bytes

        def counting(cwd: Path, args: list[str], **kwargs: object) -> tuple[int, bytes, str]:
            started.append(" ".join(args))
            return real(cwd, args, **kwargs)

        monkeypatch.setattr(gitwrite, "run_git_bytes", counting)
        assert repo.show_files(names) == expected
        assert started == ["cat-file --batch"]
        monkeypatch.undo()
        assert [repo.show_file("a.md"), repo.show_file("a.md", first)] == expected[:2]
        assert repo.show_file("b b.md") == expected[2]
        assert repo.show_files([]) == []


@pytest.mark.parametrize("name", ["HEAD:a\nHEAD:b", "", "HEAD:a\x00"])
def test_show_files_refuses_a_name_that_is_not_one_line(memory: Path, name: str) -> None:
    with (
        MemoryRepo(memory) as repo,
        pytest.raises(InputError, match=r"^an object name cannot be empty or hold a line break$"),
    ):
        repo.show_files(["HEAD:MEMORY.md", name])


def test_the_branch_is_read_from_head_without_a_process(
    memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git(memory, "checkout", "-q", "-b", "team/memory")
    git(memory, "tag", "team/memory")  # git symbolic-ref --short would say "heads/team/memory"
    with MemoryRepo(memory) as repo:
        calls = git_calls(monkeypatch)
        assert repo.branch() == "team/memory"
        assert calls == []
        git(memory, "checkout", "-q", "--detach")
        with pytest.raises(GitError, match=r"^git symbolic-ref HEAD failed: fatal: ref HEAD"):
            repo.branch()
        assert calls == ["symbolic-ref"]


def test_a_filtered_log_with_a_limit_stops_near_the_newest_entries(memory: Path) -> None:
    """A session's newest compaction (what compact asks before it commits) is found without
    walking the whole history: git stops after a margin over the limit, and the entries are
    the same as an unlimited walk's first ones."""
    from clm_policy.memory.audit import log_args, read_log

    with MemoryRepo(memory) as repo:
        for n in range(1, 30):
            repo.commit(message(n, "s1"), {f"sessions/s1/c{n}.md": f"{n}\n"})
        filters = {"session": "s1", "event": "compact"}
        args = log_args("n", **filters, limit=1)
        assert "--max-count=12" in args
        newest = read_log(repo, **filters, limit=1)
        assert [e.trailers["Clm-Step"] for e in newest] == ["29"]
        five = read_log(repo, **filters, limit=5)
        assert [e.as_dict() for e in five] == [e.as_dict() for e in read_log(repo, **filters)][:5]


def test_a_log_of_several_events_is_the_entries_of_each(memory: Path) -> None:
    """``event`` may name several events (SessionStart reads its project's handoffs and the
    start records that took them with one ``git log``): the entries of any of them, newest
    first, read from the repository's folder as from the open repository; with a session
    too, git filters by the session and the events are filtered as they are read."""
    from clm_policy.memory.audit import log_args, read_log

    def event_message(event: str, n: int, session: str) -> CommitMessage:
        trailers = {"Clm-Event": event, "Clm-Session": session, "Clm-Step": str(n)}
        return CommitMessage(event_subject(event, session, n, "r"), "", trailers)

    with MemoryRepo(memory) as repo:
        for n, event, session in [
            (1, "handoff", "s1"),
            (2, "compact", "s1"),
            (3, "start", "s2"),
            (4, "handoff", "s2"),
            (5, "summary", "s2"),
        ]:
            repo.commit(event_message(event, n, session), {f"sessions/{session}/e{n}": "x\n"})
        both = ("start", "handoff")
        assert [(e.event, e.trailers["Clm-Step"]) for e in read_log(str(memory), event=both)] == [
            ("handoff", "4"),
            ("start", "3"),
            ("handoff", "1"),
        ]
        assert "--all-match" not in log_args("n", event=both)
        of_s2 = read_log(repo, session="s2", event=both)
        assert [(e.event, e.trailers["Clm-Step"]) for e in of_s2] == [
            ("handoff", "4"),
            ("start", "3"),
        ]
        assert log_args("n", session="s2", event=both)[2:] == [
            "--grep=^Clm-Session: s2$",
            "HEAD",
            "--",
        ]


def test_a_head_that_names_nothing_is_said_to_be_damaged_not_detached(memory: Path) -> None:
    """A .git/HEAD holding neither a branch nor a commit (garbage): nothing written, and the
    error says the repository may be damaged (it said HEAD was detached, with a switch that
    cannot work)."""
    (memory / ".git" / "HEAD").write_text("garbage\n")
    expected = (
        f"{memory}: its .git/HEAD names neither a branch nor a commit, so git cannot read the "
        f"repository (it may be damaged: git -C {memory} fsck checks it)"
    )
    with MemoryRepo(memory) as repo, pytest.raises(InputError) as raised:
        repo.commit(message(1), {"sessions/s1/a.md": "x\n"})
    assert str(raised.value) == expected
    assert not (memory / "sessions" / "s1" / "a.md").exists()
