"""Memory topics in a real git repository: write, read, search, keys, the index; and the
init / log / show commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clm_policy.base.errors import InputError
from clm_policy.memory.git.write import MemoryRepo
from clm_policy.memory.store import GitMemoryStore

from conftest import git, invoke


def test_write_read_search_list(memory: Path) -> None:
    with MemoryRepo(memory) as repo:
        store = GitMemoryStore(repo)
        store.write(
            "decisions/auth", "Use JWT with 15m expiry.\nRefresh tokens rotate.", tags=["security"]
        )
        store.write("build/ci", "CI runs pytest and ruff; JWT tests are slow.")
        store.write("notes", "Nothing about tokens here.")
        assert store.read("decisions/auth") == "Use JWT with 15m expiry.\nRefresh tokens rotate."
        assert store.read("missing") is None
        assert store.list_keys() == ["build/ci", "decisions/auth", "notes"]
        hits = store.search("jwt")
        assert [h.key for h in hits] == ["build/ci", "decisions/auth"] or [h.key for h in hits] == [
            "decisions/auth",
            "build/ci",
        ]
        assert store.search("JWT with 15m")[0].tags == ("security",)
        assert store.search("no such words") == []
        assert store.search("   ") == []
    index = (memory / "MEMORY.md").read_text()
    assert "- [decisions/auth](topics/decisions/auth.md) — Use JWT with 15m expiry." in index
    assert "- [build/ci](topics/build/ci.md)" in index
    topic = (memory / "topics" / "decisions" / "auth.md").read_text()
    assert topic.startswith('---\nkey: decisions/auth\ntags: ["security"]\nupdated_at: ')
    log = git(memory, "log", "--format=%s|%(trailers:key=Clm-Key,valueonly)", "-1").strip()
    assert log == "clm(memory): notes|notes"
    assert git(memory, "status", "--porcelain") == ""


def _greps(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    import clm_policy.memory.git.write as gitwrite

    started: list[list[str]] = []
    real = gitwrite.run_git

    def counting(cwd: Path, args: list[str], **kwargs: object) -> tuple[int, str, str]:
        if "grep" in args:
            started.append(list(args[list(args).index("grep") :]))
        return real(cwd, args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(gitwrite, "run_git", counting)
    return started


def test_a_seed_searches_the_goal_s_words_only_when_a_topic_holds_one(
    memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MemoryRepo(memory) as repo:
        store = GitMemoryStore(repo)
        store.write("billing/api", "The public INVOICE api of billing never changes.")
        store.write("ops", "Deploys go through the invoice queue; billing is frozen on Fridays.")
        store.write("other", "Nothing to see.")
        greps = _greps(monkeypatch)
        # no topic holds "Refactor", "module" or "payroll": one git grep, not three
        assert store.seed([], "Refactor module payroll") == []
        # (the words on git's input, one a line)
        assert greps == [["grep", "-q", "-I", "-i", "-F", "-f", "-", "HEAD", "--", "topics/"]]
        greps.clear()
        # one does: each word searched as before, in order, the most hits first
        seed = store.seed([], "Refactor invoice billing", limit=3)
        assert [key for key, _ in seed] == ["billing/api", "ops"]
        # whether any holds one, then a search of each word
        assert [g[1] for g in greps] == ["-q", "-I", "-I", "-I"]
        greps.clear()
        # the named topics fill the seed: nothing is searched
        assert [k for k, _ in store.seed(["other"], "Refactor invoice", limit=1)] == ["other"]
        assert greps == []


def test_rewrite_keeps_other_index_lines(memory: Path) -> None:
    with MemoryRepo(memory) as repo:
        store = GitMemoryStore(repo)
        store.write("a", "first A")
        store.write("b", "first B")
        store.write("a", "second A")
    index = (memory / "MEMORY.md").read_text().splitlines()
    assert index[-2:] == ["- [a](topics/a.md) — second A", "- [b](topics/b.md) — first B"]


@pytest.mark.parametrize("key", ["../x", "/abs", "a/../b", "a b", "a//b", "", "a.md", "é"])
def test_invalid_keys(memory: Path, key: str) -> None:
    with MemoryRepo(memory) as repo, pytest.raises(InputError, match="invalid memory key"):
        GitMemoryStore(repo).write(key, "x")
    assert git(memory, "rev-list", "--count", "HEAD").strip() == "1"


def test_topic_content_is_redacted(memory: Path) -> None:
    key = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    with MemoryRepo(memory) as repo:
        store = GitMemoryStore(repo)
        store.write("creds", f"the deploy token is {key}")
        assert store.read("creds") == "the deploy token is [REDACTED:github-pat]"
    patch = git(memory, "log", "-p", "--all")
    assert key not in patch
    assert "Clm-Redactions: 1" in git(memory, "log", "-1", "--format=%B")


def test_cli_init_log_show(tmp_path: Path) -> None:
    target = tmp_path / "clm-memory"
    made = invoke("init", str(target))
    assert made.exit_code == 0, made.stderr
    assert made.stdout.startswith(f"created memory repository {target} (commit ")
    again = invoke("init", str(target))
    assert again.stdout == f"{target}: already a clm-policy memory repository; nothing changed\n"
    listed = invoke("log", "--memory", str(target), "--format", "json")
    (entry,) = json.loads(listed.stdout)
    assert (entry["event"], entry["subject"]) == ("init", "clm(init): memory repository")
    missing = invoke("log", "--memory", str(tmp_path / "nope"))
    assert missing.exit_code == 2
    assert "no such memory repository" in missing.stderr
    shown = invoke("show", "--memory", str(target), entry["commit"])  # every kind of commit
    assert shown.exit_code == 0, shown.stderr
    assert shown.stdout.startswith(f"# README.md @ {entry['commit'][:12]}\n\n# clm-policy memory\n")
    readme = invoke("show", "--memory", str(target), "README.md")
    assert readme.exit_code == 0
    assert readme.stdout.startswith("# clm-policy memory\n")
    nothing = invoke("show", "--memory", str(target), "sessions/x/handoffs/001.md")
    assert nothing.exit_code == 2
    assert nothing.stderr.endswith("no file sessions/x/handoffs/001.md on any branch\n")


def test_show_says_what_a_path_is(memory: Path) -> None:
    """An empty file is shown empty (it was "no file ... on any branch"), a folder names its
    files, a file past 16 MiB is named and not read (it was printed whole), a file at the
    top that is no Markdown is a file (it was "no commit or file named")."""
    (memory / "topics" / "empty.md").write_text("")
    with (memory / "topics" / "huge.md").open("w") as huge:
        huge.truncate(16 * 1024 * 1024 + 1)  # (a sparse file: nothing is written)
    (memory / "notes.txt").write_text("plain text\n")
    git(memory, "add", "-A")
    git(memory, "commit", "-q", "-m", "by hand")
    head = git(memory, "rev-parse", "HEAD").strip()
    empty = invoke("show", "--memory", str(memory), "topics/empty.md")
    assert (empty.exit_code, empty.stdout, empty.stderr) == (0, "\n", "")
    folder = invoke("show", "--memory", str(memory), "topics")
    assert (folder.exit_code, folder.stdout) == (2, "")
    assert folder.stderr == (
        f"clm-policy: {memory}: topics is a folder; show one of its files: .gitkeep, empty.md, huge.md\n"
    )
    huge_file = invoke("show", "--memory", str(memory), "topics/huge.md")
    assert (huge_file.exit_code, huge_file.stdout) == (2, "")
    assert huge_file.stderr == (
        f"clm-policy: {memory}: topics/huge.md is larger than 16 MiB: not shown (git -C {memory} "
        "show HEAD:topics/huge.md reads it)\n"
    )
    commit = invoke("show", "--memory", str(memory), "HEAD")  # the commit: the same, said inline
    assert commit.exit_code == 0, commit.stderr
    assert commit.stdout == (
        f"# topics/empty.md @ {head[:12]}\n\n\n"
        f"# topics/huge.md @ {head[:12]}\n\n"
        f"{memory}: topics/huge.md is larger than 16 MiB: not shown (git -C {memory} show "
        f"{head[:12]}:topics/huge.md reads it)\n"
    )
    plain = invoke("show", "--memory", str(memory), "notes.txt")
    assert (plain.exit_code, plain.stdout) == (0, "plain text\n")


def test_log_text(memory: Path) -> None:
    from clm_policy.memory.trailers import CommitMessage

    with MemoryRepo(memory) as repo:
        repo.commit(
            CommitMessage(
                "clm(compact): s1 step 3, soft_compact",
                trailers={"Clm-Event": "compact", "Clm-Session": "s1", "Clm-Rule": "soft_compact"},
            ),
            {"sessions/s1/a.md": "x\n"},
        )
        repo.commit(
            CommitMessage(
                "clm(handoff): s1 step 9",
                trailers={"Clm-Event": "handoff", "Clm-Manifest": "manifests/m.json"},
            ),
            {"manifests/m.json": "{}\n"},
        )
    heads = git(memory, "log", "--format=%H %aI").splitlines()
    (c3, d3), (c2, d2), (c1, d1) = (line.split() for line in heads)
    listed = invoke("log", "--memory", str(memory))
    assert listed.exit_code == 0, listed.stderr
    assert listed.stdout == (
        f"{c3[:12]}  {d3}  clm(handoff): s1 step 9\n"
        "              redactions=0\n"
        "              manifest manifests/m.json\n"
        f"{c2[:12]}  {d2}  clm(compact): s1 step 3, soft_compact\n"
        "              rule=soft_compact  redactions=0\n"
        f"{c1[:12]}  {d1}  clm(init): memory repository\n"
        "              redactions=0\n"
    )
    none = invoke("log", "--memory", str(memory), "--event", "signal")
    assert (none.exit_code, none.stdout, none.stderr) == (0, "", "no matching commits\n")
    # a session with no trace at all is a typo: bad input, as `status` and `report` say
    nobody = invoke("log", "--memory", str(memory), "--session", "nobody")
    assert (nobody.exit_code, nobody.stdout) == (2, "")
    assert nobody.stderr == f"clm-policy: {memory}: no session 'nobody' recorded (sessions: s1)\n"


def test_a_word_longer_than_a_command_line_argument_is_no_error(
    memory: Path, tmp_path: Path
) -> None:
    """A search, and a handoff whose goal is one word of 100,000 characters (a paste): git
    reads the patterns on its input, so a handoff is committed (as an argument it was an
    internal error, exit 3: "Argument list too long"); a word git cannot match (its
    case-insensitive pattern too large) finds nothing."""
    word = "ü" * 1000
    with MemoryRepo(memory) as repo:
        store = GitMemoryStore(repo)
        store.write("long", f"the word: {word}")
        assert [e.key for e in store.search(word)] == ["long"]
        assert store.seed([], f"{word} and more")[0][0] == "long"
        assert store.search("ü" * 100_000) == []
        assert store.seed([], "x" * 200_000) == []
    state = tmp_path / "long.json"
    state.write_text(json.dumps({"session_id": "s1", "goal": "ü" * 100_000, "step_index": 1}))
    done = invoke("handoff", "--memory", str(memory), "--state", str(state))
    assert (done.exit_code, done.stderr) == (0, "")
