"""Documents that carry their schema version, readers that take the previous one, and
``clm-policy migrate`` — on a memory repository the previous clm-policy really wrote
(tests/fixtures/memory-v1/memory-v1.bundle, made by make.sh beside it from main at e21464f:
the demo run, a handoff by hand and one on its own branch)."""

from __future__ import annotations

import json
from contextlib import suppress
from pathlib import Path

import pytest

from clm_policy.agents.hooks.claude_code import run_claude_hook
from clm_policy.agents.hooks.shared import log_path
from clm_policy.base.errors import InputError
from clm_policy.models.shapes.manifest import read_manifest, validate_manifest
from clm_policy.models.versions import (
    MANIFEST,
    MANIFEST_VERSION,
    STATE,
    STATE_VERSION,
    UPGRADES,
    added,
    upgrade,
)

from conftest import FIXTURES, git, invoke

BUNDLE = FIXTURES / "memory-v1" / "memory-v1.bundle"
DEMO_MANIFEST = "manifests/20261201T075219Z_demo.json"
PARSER_MANIFEST = "manifests/20261201T075220Z_parser-1.json"
DOCUMENTS = [
    DEMO_MANIFEST,
    PARSER_MANIFEST,
    "sessions/demo/state.json",
    "sessions/parser-1/state.json",
]
NOTE = (
    "schema version 1, read as version 2 (clm-policy migrate rewrites the repository's documents)"
)
MANIFEST_NOTE = (
    "schema version 1, read as version 3 (clm-policy migrate rewrites the repository's documents)"
)


@pytest.fixture
def old(tmp_path: Path) -> Path:
    """A clone of the version-1 repository, its handoff branch as a local branch too."""
    target = tmp_path / "old"
    git(tmp_path, "clone", "-q", str(BUNDLE), str(target))
    git(target, "branch", "-q", "clm/handoff/parser-1-2", "origin/clm/handoff/parser-1-2")
    return target


def _empty(value: object) -> bool:
    """A default of an added field: empty, false, or an object of empty values (the
    record)."""
    if isinstance(value, dict):
        return all(_empty(v) for v in value.values())
    return value is False or value in ([], None, "")


def show(repo: Path, path: str, rev: str = "HEAD") -> dict[str, object]:
    data: dict[str, object] = json.loads(git(repo, "show", f"{rev}:{path}"))
    return data


def test_the_fixture_is_the_previous_format(old: Path) -> None:
    for path in DOCUMENTS:
        assert "schema_version" not in show(old, path)
    with pytest.raises(InputError, match="missing required field 'schema_version'"):
        validate_manifest(show(old, PARSER_MANIFEST))


def test_readers_take_version_1_and_say_so_in_one_line(old: Path) -> None:
    status = invoke("status", "--memory", str(old))
    assert status.exit_code == 0, status.stderr
    assert status.stderr.splitlines() == [
        f"clm-policy: sessions/demo/state.json: {NOTE}",
        f"clm-policy: sessions/parser-1/state.json: {NOTE}",
    ]
    assert "parser-1" in status.stdout
    shown = invoke("show", "--memory", str(old), PARSER_MANIFEST)
    assert shown.exit_code == 0
    assert shown.stderr == f"clm-policy: {PARSER_MANIFEST}: {MANIFEST_NOTE}\n"
    assert json.loads(shown.stdout) == show(old, PARSER_MANIFEST)  # shown as it is written
    manifest, read = read_manifest(show(old, PARSER_MANIFEST), source=PARSER_MANIFEST)
    assert (manifest.schema_version, read.found, read.upgraded) == (3, 1, True)
    assert manifest.goal == "Make the CSV parser keep quoted commas"


def test_a_hook_seeds_from_a_version_1_manifest_and_logs_the_upgrade(
    old: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".clm-policy.yaml").write_text("version: 1\npolicy: claude-code\n")
    event = {
        "hook_event_name": "SessionStart",
        "source": "startup",
        "session_id": "fresh-1",
        "transcript_path": str(tmp_path / "none.jsonl"),
        "cwd": str(project),
    }
    monkeypatch.setenv("CLM_POLICY_MEMORY", str(old))
    reply = run_claude_hook(json.dumps(event).encode())
    context = json.loads(reply.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Make the CSV parser keep quoted commas" in context
    assert "its agent wrote no handoff" in context  # a version-1 manifest has no words
    logged = log_path().read_text().splitlines()
    # the newest handoff nobody took: the one on its own branch
    branch = PARSER_MANIFEST.replace(".json", "-2.json")
    assert [line.split(" ", 1)[1] for line in logged] == [f"{branch}: {MANIFEST_NOTE}"]


def test_migrate_rewrites_every_old_document_in_one_commit_and_is_idempotent(old: Path) -> None:
    before = {path: show(old, path) for path in DOCUMENTS}
    head = git(old, "rev-parse", "HEAD")

    dry = invoke("migrate", "--memory", str(old), "--dry-run")
    assert dry.exit_code == 0, dry.stderr
    assert dry.stdout.splitlines() == [
        *(
            f"{path}: version 1 -> {3 if path.startswith('manifests/') else 2}"
            for path in DOCUMENTS
        ),
        "dry run: 4 of 4 documents would be rewritten",
    ]
    assert git(old, "rev-parse", "HEAD") == head

    done = invoke("migrate", "--memory", str(old))
    assert done.exit_code == 0, done.stderr
    commit = git(old, "rev-parse", "HEAD").strip()
    assert done.stdout.splitlines()[-1] == f"migrated 4 of 4 documents: commit {commit[:12]}"
    assert git(old, "rev-list", "--count", f"{head.strip()}..HEAD") == "1\n"
    assert git(old, "log", "-1", "--format=%s") == (
        "clm(migrate): 2 manifests to version 3, 2 states to version 2\n"
    )
    assert "Clm-Event: migrate\nClm-Redactions: 0\nClm-Migrated: 4\n" in git(
        old, "log", "-1", "--format=%(trailers:only,unfold)"
    )
    assert sorted(git(old, "show", "--name-only", "--format=", "HEAD").split()) == DOCUMENTS
    for path in DOCUMENTS:
        after = show(old, path)
        assert after["schema_version"] == (3 if path.startswith("manifests/") else 2)
        # what it held is kept; what the current version adds holds its empty default
        assert {k: v for k, v in after.items() if k in before[path]} == before[path]
        added = {k: v for k, v in after.items() if k not in before[path] and k != "schema_version"}
        assert all(_empty(v) for v in added.values()), added
    validate_manifest(show(old, PARSER_MANIFEST))
    # the branch's handoff is its pull request's: left as written (readers upgrade it)
    assert "schema_version" not in show(old, PARSER_MANIFEST, "clm/handoff/parser-1-2")
    assert git(old, "status", "--porcelain") == ""

    again = invoke("migrate", "--memory", str(old))
    assert (again.exit_code, again.stdout) == (
        0,
        f"{old}: all 4 documents are current; nothing to migrate\n",
    )
    assert git(old, "rev-parse", "HEAD").strip() == commit
    status = invoke("status", "--memory", str(old))
    assert status.stderr == ""
    assert invoke("log", "--memory", str(old), "--event", "migrate").exit_code == 0


def test_a_document_migrate_cannot_read_stops_it_before_anything_is_written(
    old: Path,
) -> None:
    broken = json.dumps({**show(old, DEMO_MANIFEST), "status": "sideways"})
    (old / DEMO_MANIFEST).write_text(broken)
    (old / "sessions/demo/state.json").write_text('{"schema_version": 7, "session_id": "demo"}')
    git(old, "commit", "-qam", "hand edits")
    head = git(old, "rev-parse", "HEAD")
    result = invoke("migrate", "--memory", str(old))
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "clm-policy: cannot migrate; nothing was written:",
        f"  {DEMO_MANIFEST}: handoff manifest: status: input should be "
        "'in_progress', 'blocked', 'partial_complete' or 'completed'",
        "  sessions/demo/state.json: schema version 7 is newer than "
        "this clm-policy reads (up to 2): upgrade clm-policy",
    ]
    assert git(old, "rev-parse", "HEAD") == head


def test_a_repository_without_a_commit_has_nothing_to_migrate(tmp_path: Path) -> None:
    """A memory folder whose git repository has no commit yet: nothing to migrate, exit 0 (it
    was git's "fatal: Not a valid object name HEAD", exit 2); an empty manifest is named as
    one (it was "not readable")."""
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q")
    (fresh / ".clm-memory").write_text("")
    result = invoke("migrate", "--memory", str(fresh))
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == f"{fresh}: no documents yet; nothing to migrate\n"
    (fresh / "manifests").mkdir()
    (fresh / "manifests" / "x.json").write_text("")
    git(fresh, "add", "-A")
    git(fresh, "commit", "-qm", "by hand")
    empty = invoke("migrate", "--memory", str(fresh))
    assert (empty.exit_code, empty.stderr) == (
        2,
        "clm-policy: cannot migrate; nothing was written:\n"
        "  manifests/x.json: an empty file, not a JSON object\n",
    )


def test_two_migrates_at_once_leave_one_commit_and_both_succeed(old: Path) -> None:
    """Both read the old documents, then wait for the write lock another writer holds: the
    one that commits second finds them current (it was "nothing to commit", exit 2)."""
    import fcntl
    import os
    import subprocess
    import sys
    import time

    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc to see a process wait for the lock")
    lock = old / ".git" / "clm-write.lock"
    holder = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(holder, fcntl.LOCK_EX)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "clm_policy", "migrate", "--memory", str(old)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        deadline = time.monotonic() + 60
        waiting: set[int] = set()
        while len(waiting) < 2 and time.monotonic() < deadline:  # each has the lock open
            for proc in procs:
                with suppress(OSError):  # (a descriptor that closed while it was read)
                    fds = Path(f"/proc/{proc.pid}/fd")
                    if any(os.readlink(fd) == str(lock) for fd in fds.iterdir()):
                        waiting.add(proc.pid)
            time.sleep(0.01)
        assert len(waiting) == 2
    finally:
        os.close(holder)  # (the lock goes with it)
    done = [proc.communicate(timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], done
    said = sorted(out.splitlines()[-1].split(":")[0] for out, _ in done)
    assert said == [str(old), "migrated 4 of 4 documents"]
    subjects = git(old, "log", "--format=%s").splitlines()
    assert [s for s in subjects if s.startswith("clm(migrate):")] == subjects[:1]


def test_new_documents_carry_the_current_version(memory: Path, tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    state.write_text(json.dumps({"session_id": "s1", "tokens": {"context_tokens": 400000}}))
    out = invoke("handoff", "--memory", str(memory), "--state", str(state), "--format", "json")
    assert out.exit_code == 0, out.stderr
    path = json.loads(out.stdout)["manifest_path"]
    assert show(memory, path)["schema_version"] == MANIFEST_VERSION == 3
    assert show(memory, "sessions/s1/state.json")["schema_version"] == STATE_VERSION == 2


# -- the table


def test_each_kind_is_current_at_its_tables_length_plus_one() -> None:
    assert (len(UPGRADES[MANIFEST]) + 1, len(UPGRADES[STATE]) + 1) == (
        MANIFEST_VERSION,
        STATE_VERSION,
    )
    read = upgrade(STATE, {"session_id": "s"}, "x.json")
    assert (read.found, read.upgraded, read.data) == (
        1,
        True,
        {"session_id": "s", "schema_version": 2},
    )
    read = upgrade(STATE, {"schema_version": 2, "session_id": "s"}, "x.json")
    assert (read.found, read.upgraded) == (2, False)


def test_a_new_field_is_one_line_of_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(UPGRADES, MANIFEST, (*UPGRADES[MANIFEST], added(done=[])))
    read = upgrade(MANIFEST, {"goal": "g"}, "m.json")
    assert read.data == {"goal": "g", "schema_version": 4, "done": []}
    read = upgrade(MANIFEST, {"goal": "g", "schema_version": 3}, "m.json")
    assert (read.found, read.data) == (3, {"goal": "g", "schema_version": 4, "done": []})


@pytest.mark.parametrize(
    ("version", "message"),
    [
        (
            4,
            "m.json: schema version 4 is newer than this clm-policy reads (up to 3): upgrade clm-policy",
        ),
        (0, "m.json: schema_version must be a whole number from 1, got 0"),
        ("2", "m.json: schema_version must be a whole number from 1, got '2'"),
        (True, "m.json: schema_version must be a whole number from 1, got True"),
    ],
)
def test_a_version_it_cannot_read_is_refused(version: object, message: str) -> None:
    with pytest.raises(InputError) as caught:
        upgrade(MANIFEST, {"schema_version": version}, "m.json")
    assert str(caught.value) == message


# -- what migrate reads: bounded, and shown terminal-safe (issue 26) ---------------------------

PEAK = r"""
import json, resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(json.dumps({"code": done.returncode, "stdout": done.stdout, "stderr": done.stderr,
                  "peak_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


def _commit_blob(repo: Path, path: str, content_file: Path) -> None:
    """Commit the file ``content_file`` as ``path`` without reading it into this process."""
    blob = git(repo, "hash-object", "-w", str(content_file)).strip()
    git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    git(repo, "commit", "-qm", f"add {path}")
    git(repo, "checkout", "-q", "--", ".")


def test_a_200_mib_manifest_is_refused_without_being_read(old: Path, tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as fh:
        fh.write(b'{"goal": "')
        fh.truncate(200 * 1024 * 1024)  # 200 MiB, most of it NUL bytes (git compresses them)
    _commit_blob(old, "manifests/big.json", big)
    big.unlink()
    head = git(old, "rev-parse", "HEAD")
    import subprocess
    import sys

    done = json.loads(
        subprocess.run(
            [
                sys.executable,
                "-c",
                PEAK,
                sys.executable,
                "-m",
                "clm_policy",
                "migrate",
                "--memory",
                str(old),
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=600,
        ).stdout
    )
    assert (done["code"], done["stdout"]) == (2, "")
    assert done["stderr"].splitlines() == [
        "clm-policy: cannot migrate; nothing was written:",
        "  manifests/big.json: too large for a manifest (more than 16 MiB): not read",
    ]
    assert done["peak_mib"] < 120  # not read whole (it took 3.3 GB)
    assert git(old, "rev-parse", "HEAD") == head


def test_a_deeply_nested_manifest_is_exit_2(old: Path) -> None:
    (old / "manifests" / "deep.json").write_text('{"goal": ' + "[" * 100_000 + "]" * 100_000 + "}")
    git(old, "add", "manifests/deep.json")
    git(old, "commit", "-qm", "deep")
    result = invoke("migrate", "--memory", str(old))
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.splitlines() == [
        "clm-policy: cannot migrate; nothing was written:",
        "  manifests/deep.json:1:73: nested more than 64 levels deep",
    ]


HOSTILE = "evil\x1b]0;pwn\x07\u202e"


def test_file_names_are_shown_and_committed_terminal_safe(old: Path) -> None:
    name = f"manifests/{HOSTILE}.json"
    (old / name).write_text(json.dumps(show(old, DEMO_MANIFEST)))
    git(old, "add", "--", name)
    git(old, "commit", "-qm", "a hostile name")
    shown = "manifests/evil\\x1b]0;pwn\\x07\\u202e.json"
    dry = invoke("migrate", "--memory", str(old), "--dry-run")
    assert dry.exit_code == 0, dry.stderr
    assert f"{shown}: version 1 -> 3" in dry.stdout.splitlines()
    done = invoke("migrate", "--memory", str(old))
    assert done.exit_code == 0, done.stderr
    message = git(old, "log", "-1", "--format=%B")
    assert not any(c in message for c in "\x1b\x07\u202e")
    assert f"{shown}: 1 -> 3" in message.splitlines()
    # a name holding a line break, and a broken document: each problem on one line
    (old / "manifests" / "a\nb.json").write_text("{}")
    (old / name).write_text("[1, 2")
    git(old, "add", "-A")
    git(old, "commit", "-qm", "broken")
    failed = invoke("migrate", "--memory", str(old))
    assert (failed.exit_code, failed.stdout) == (2, "")
    assert failed.stderr.splitlines() == [
        "clm-policy: cannot migrate; nothing was written:",
        "  manifests/a\\nb.json: refusing to read 'manifests/a\\nb.json' in the memory repository",
        f"  {shown}:1:6: invalid JSON: Expecting ',' delimiter",
    ]
