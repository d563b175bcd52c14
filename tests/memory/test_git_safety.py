"""Git is run safely: user values never become options, repository hooks and fsmonitor never
run, identifiers are validated whole, and untrusted commit messages or odd bytes in a state
never break a command."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from test_gitwrite import message

from clm_policy.base.errors import InputError
from clm_policy.memory.git.write import MemoryRepo

from conftest import as_shown, git, invoke, message_of, run_process, state_file


def executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


# -- argument injection ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "remote", ["--receive-pack=touch {canary}", "-oProxyCommand=touch {canary}", "--exec=x"]
)
def test_push_remote_is_never_an_option(memory: Path, tmp_path: Path, remote: str) -> None:
    canary = tmp_path / "pwned"
    result = invoke(
        "handoff",
        "--memory",
        str(memory),
        "--state",
        str(state_file(tmp_path)),
        f"--push={remote.format(canary=canary)}",
    )
    assert result.exit_code == 2
    assert "must not be empty or start with '-'" in message_of(result.stderr)
    # refused before anything is committed: nothing half-happens
    assert git(memory, "log", "--format=%s") == "clm(init): memory repository\n"
    assert not canary.exists()


def test_show_ref_is_never_an_option(memory: Path, tmp_path: Path) -> None:
    target = tmp_path / "written-by-git"
    for ref in (f"--output={target}", "-p"):
        result = invoke("show", "--memory", str(memory), "--", ref)
        assert result.exit_code == 2
        assert "must not be empty or start with '-'" in result.stderr
    assert not target.exists()
    # a ref that only looks odd is looked up, never passed on as an option
    result = invoke("show", "--memory", str(memory), "HEAD^{tree}")
    assert result.exit_code == 2
    assert "no commit or file named" in result.stderr


def test_repository_hooks_and_fsmonitor_never_run(memory: Path, tmp_path: Path) -> None:
    canary = tmp_path / "hook-ran"
    hooks = memory / ".git" / "hooks"
    for name in (
        "prepare-commit-msg",
        "commit-msg",
        "pre-commit",
        "post-commit",
        "reference-transaction",
        "post-checkout",
        "post-index-change",
    ):
        executable(
            hooks / name,
            f'#!/bin/sh\necho "{name}" >> "{canary}"\n'
            'case "$1" in *COMMIT_EDITMSG*|*clm-commit-msg*) '
            'echo "Clm-Rule: forged" >> "$1";; esac\nexit 0\n',
        )
    monitor = tmp_path / "fsmonitor.sh"
    executable(monitor, f'#!/bin/sh\necho fsmonitor >> "{canary}"\nexit 1\n')
    git(memory, "config", "core.fsmonitor", str(monitor))
    path = state_file(tmp_path)
    for verb in ("compact", "handoff"):
        result = invoke(verb, "--memory", str(memory), "--state", str(path))
        assert result.exit_code == 0, message_of(result.stderr)
    branch = invoke("handoff", "--memory", str(memory), "--state", str(path), "--branch")
    assert branch.exit_code == 0, branch.stderr
    assert not canary.exists()
    assert "forged" not in git(memory, "log", "--all", "--format=%B")


# -- the repository's own configuration is data ------------------------------------------

PLANTED = [
    "core.sshCommand",
    "core.askPass",
    "core.pager",
    "core.worktree",
    "diff.external",
    "diff.x.textconv",
    "filter.x.clean",
    "filter.x.smudge",
    "merge.union.driver",
    "gpg.program",
    "credential.helper",
    "credential.https://example.invalid.helper",
    "pager.log",
    "includeIf.onbranch:clm/x.path",
]


@pytest.mark.parametrize("included", [False, True], ids=["config", "include.path"])
@pytest.mark.parametrize("key", PLANTED)
def test_a_repositorys_own_config_runs_no_program(
    memory: Path, tmp_path: Path, key: str, included: bool
) -> None:
    """A program a memory repository's .git/config (or a file it includes) names is never run:
    the repository is refused before git runs in it, naming the file, the line and the key."""
    canary = tmp_path / "ran"
    program = tmp_path / "program.sh"
    executable(program, f'#!/bin/sh\necho "$0 $*" >> "{canary}"\ncat\n')
    (memory / ".git" / "info" / "attributes").write_text("* filter=x diff=x\n")
    target = memory / ".git" / "config"
    if included:
        target = tmp_path / "included.cfg"
        git(memory, "config", "include.path", str(target))
    git(memory, "config", "--file", str(target), "commit.gpgSign", "true")
    git(memory, "config", "--file", str(target), key, str(program))
    before = git(memory, "log", "--all", "--format=%H")
    for args in (
        ["compact", "--memory", str(memory), "--state", str(state_file(tmp_path))],
        ["log", "--memory", str(memory)],
        ["show", "--memory", str(memory), "HEAD"],
    ):
        done = run_process(*args, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        lines = target.read_text().splitlines()
        line = next(n for n, text in enumerate(lines, 1) if str(program) in text)
        shown = f"{as_shown(target, tmp_path)}:{line}: {key.lower()} names a program"
        assert shown in done.stderr, done.stderr
        assert f"git config --file {as_shown(target, tmp_path)} --unset-all" in done.stderr
    assert not canary.exists(), canary.read_text()
    assert git(memory, "log", "--all", "--format=%H") == before


@pytest.mark.parametrize("header", ['[FILTER "x"]', '[Filter "x"]', "[filter.x]"])
def test_a_program_named_in_any_spelling_is_refused(
    memory: Path, tmp_path: Path, header: str
) -> None:
    """Git reads section and key names in any case and in the old
    ``[section.sub]`` form: the quick look at the file that spares a plain repository the
    question to git misses none of them."""
    canary = tmp_path / "ran"
    program = tmp_path / "clean.sh"
    executable(program, f'#!/bin/sh\necho ran >> "{canary}"\ncat\n')
    (memory / ".git" / "info" / "attributes").write_text("* filter=x\n")
    with (memory / ".git" / "config").open("a") as config:
        config.write(f"{header}\n\tCLEAN = {program}\n")
    done = run_process(
        "compact", "--memory", str(memory), "--state", str(state_file(tmp_path)), cwd=tmp_path
    )
    assert done.returncode == 2, done.stderr
    assert "filter.x.clean names a program" in done.stderr
    assert not canary.exists()


def test_a_plain_repository_costs_no_question_to_git(
    memory: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repository whose configuration holds git's own lines, a remote and a branch that
    tracks it is seen to be safe from the file itself: no ``git config --list`` process at
    every command (a compaction, a hook's commit)."""
    git(memory, "remote", "add", "origin", str(tmp_path / "origin.git"))
    git(memory, "config", "branch.main.remote", "origin")
    git(memory, "config", "branch.main.merge", "refs/heads/main")
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    done = run_process(
        "compact", "--memory", str(memory), "--state", str(state_file(tmp_path)), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    traced = trace.read_text()
    assert "git commit" in traced  # (the trace is there)
    assert "--show-origin" not in traced


def test_a_long_lived_process_checks_a_changed_include_again(memory: Path, tmp_path: Path) -> None:
    """The MCP server keeps one process: a file .git/config includes (there or not yet when
    the repository was checked) that later names a program is refused at the next git
    command, not run."""
    canary = tmp_path / "ran"
    program = tmp_path / "clean.sh"
    executable(program, f'#!/bin/sh\necho ran >> "{canary}"\ncat\n')
    (memory / ".git" / "info" / "attributes").write_text("* filter=x\n")
    here, later = tmp_path / "here.cfg", tmp_path / "later.cfg"
    here.write_text("[user]\n\tname = someone\n")
    git(memory, "config", "--add", "include.path", str(here))
    git(memory, "config", "--add", "include.path", str(later))
    with MemoryRepo(memory) as repo:
        repo.commit(message(1), {"sessions/s1/a.md": "a\n"})
        for planted in (here, later):
            planted.write_text(f'[filter "x"]\n\tclean = {program}\n')
            with pytest.raises(InputError, match=rf"{planted.name}:2: filter\.x\.clean names"):
                repo.commit(message(2), {"sessions/s1/b.md": "b\n"})
            planted.write_text("")
    assert not canary.exists()


@pytest.mark.parametrize("key", ["pushInsteadOf", "insteadOf"])
def test_a_repositorys_own_config_never_redirects_a_push(
    memory: Path, tmp_path: Path, key: str
) -> None:
    """A push goes to the remote the user named or nowhere: url.X.pushInsteadOf in the
    memory repository's config sent it to X while clm-policy said 'pushed to' the user's."""
    ours, theirs = tmp_path / "ours.git", tmp_path / "theirs.git"
    for bare in (ours, theirs):
        git(tmp_path, "init", "-q", "--bare", str(bare))
    git(memory, "config", f"url.{theirs}.{key}", str(ours))
    done = run_process(
        "handoff", "--memory", str(memory), "--state", str(state_file(tmp_path)),
        f"--push={ours}", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout
    assert f"url.{theirs}.{key.lower()} names a program" in done.stderr
    assert git(theirs, "for-each-ref") == git(ours, "for-each-ref") == ""
    git(memory, "config", "--unset", f"url.{theirs}.{key}")
    done = run_process(
        "handoff", "--memory", str(memory), "--state", str(state_file(tmp_path)),
        f"--push={ours}", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert git(ours, "for-each-ref") != ""
    assert git(theirs, "for-each-ref") == ""


# -- identifiers ------------------------------------------------------------------------------


@pytest.mark.parametrize("session", ["s1\n", "s1\nClm-Event: forged", "s1/../x", "-s1", ""])
def test_session_ids_are_validated_whole(memory: Path, tmp_path: Path, session: str) -> None:
    result = invoke(
        "compact", "--memory", str(memory), "--state", str(state_file(tmp_path, session_id=session))
    )
    assert result.exit_code == 2
    assert "invalid session id" in message_of(result.stderr) or "session_id" in message_of(
        result.stderr
    )
    assert git(memory, "rev-list", "--count", "--all").strip() == "1"
    status = invoke("status", "--memory", str(memory))
    assert status.exit_code == 0, status.stderr


def test_status_skips_what_a_teammate_committed_by_hand(memory: Path) -> None:
    played = invoke("run", "--memory", str(memory), "--max-steps", "3", "--format", "json")
    assert played.exit_code == 0, played.stderr
    junk = memory / "sessions"
    (junk / "weird name\nwith newline").mkdir()
    (junk / "weird name\nwith newline" / "state.json").write_text("{}")
    (junk / "broken").mkdir()
    (junk / "broken" / "state.json").write_text('{"session_id": 5}')
    (junk / "broken" / "run.json").write_text("not json")
    git(memory, "add", "-A")
    git(memory, "commit", "-q", "-m", "by hand")
    listed = invoke("status", "--memory", str(memory))
    assert listed.exit_code == 0, listed.stderr
    assert listed.stdout.splitlines()[1].startswith("demo ")
    assert "skipping session broken" in listed.stderr
    one = invoke("status", "--memory", str(memory), "--session", "broken")
    assert one.exit_code == 2
    assert message_of(one.stderr) == (  # the position, a person can open (it said the file twice)
        f"{memory}/sessions/broken/state.json:1:16: not a valid session state: session_id: "
        "expected a string, got integer 5\n"
    )
    # with no session left that reads, it is not "no sessions yet" but bad input
    git(memory, "rm", "-q", "-r", "sessions/demo")
    git(memory, "commit", "-q", "-m", "only the broken one")
    none = invoke("status", "--memory", str(memory))
    assert (none.exit_code, none.stdout) == (2, "")
    assert none.stderr.endswith(f"clm-policy: {memory}: no session could be read (1 skipped)\n")


def test_status_names_a_session_folder_without_its_state(memory: Path) -> None:
    """A session folder with records but no state.json (committed by hand, or by a tool that
    keeps other files): the skip says the state is missing (it said "no persisted session 's0'
    (sessions: s0, ...)", the list of every session, once per session), ten at most."""
    played = invoke("run", "--memory", str(memory), "--max-steps", "3", "--format", "json")
    assert played.exit_code == 0, played.stderr
    for n in range(12):
        (memory / "sessions" / f"s{n:02}").mkdir()
        (memory / "sessions" / f"s{n:02}" / "notes.md").write_text("by hand\n")
    git(memory, "add", "-A")
    git(memory, "commit", "-q", "-m", "by hand")
    listed = invoke("status", "--memory", str(memory))
    assert listed.exit_code == 0, listed.stderr
    assert listed.stderr.splitlines() == [
        *(
            f"clm-policy: skipping session s{n:02}: sessions/s{n:02}/state.json: no such file: "
            "the session's state was never committed"
            for n in range(10)
        ),
        "clm-policy: skipping 2 more sessions",
    ]
    one = invoke("status", "--memory", str(memory), "--session", "s03")
    assert (one.exit_code, one.stdout) == (2, "")
    assert one.stderr == (
        "clm-policy: sessions/s03/state.json: no such file: the session's state was never "
        "committed\n"
    )


# -- bytes git would not take -----------------------------------------------------------------


def test_nul_bytes_in_goal_and_blockers_never_stop_a_compaction(
    memory: Path, tmp_path: Path
) -> None:
    path = state_file(tmp_path, goal="ship\x00it", blockers=["bad\x00byte"])
    for verb in ("compact", "handoff"):
        result = invoke(verb, "--memory", str(memory), "--state", str(path))
        assert result.exit_code == 0, message_of(result.stderr)
    body = git(memory, "log", "-2", "--format=%B")
    assert "ship\ufffdit" in body
    assert git(memory, "status", "--porcelain") == ""


def test_foreign_commits_with_separator_bytes_never_break_log_or_status(memory: Path) -> None:
    played = invoke("run", "--memory", str(memory), "--max-steps", "2")
    assert played.exit_code == 0, played.stderr
    tree = git(memory, "rev-parse", "HEAD^{tree}").strip()
    parent = git(memory, "rev-parse", "HEAD").strip()
    message = (
        b"evil \x1e\x1f subject \xff\xfe not UTF-8\n\nbody \x1e\x1f\xff\xfe\n\n"
        b"Clm-Event: compact\x1f\x1e\nClm-Session: demo\x1e\n"
    )
    forged = (
        subprocess.run(
            ["git", "commit-tree", tree, "-p", parent],
            cwd=memory,
            input=message,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    git(memory, "update-ref", "refs/heads/main", forged)
    for args in (["log"], ["log", "--format", "json"], ["status"], ["log", "--session", "demo"]):
        result = invoke(*args, "--memory", str(memory))
        assert result.exit_code == 0, (args, message_of(result.stderr))
    entries = json.loads(invoke("log", "--memory", str(memory), "--format", "json").stdout)
    assert [e["event"] for e in entries][-3:] == ["session", "start", "init"]
    assert invoke("log", "--memory", str(memory), "--all").exit_code == 0


def test_log_filters_match_literally(memory: Path) -> None:
    assert invoke("run", "--memory", str(memory), "--max-steps", "2").exit_code == 0
    listed = invoke("log", "--memory", str(memory), "--session", "demo", "--format", "json")
    assert listed.exit_code == 0
    assert len(json.loads(listed.stdout)) == 2
    for session in ("d.mo", "dem.*"):  # no pattern: no such session, and it says which there are
        listed = invoke("log", "--memory", str(memory), "--session", session, "--format", "json")
        assert listed.exit_code == 2
        message = json.loads(listed.stdout)["error"]["message"]
        assert message.endswith(f": no session '{session}' recorded (sessions: demo)"), session


def test_git_runs_with_a_config_that_names_no_hooks(memory: Path) -> None:
    with MemoryRepo(memory) as repo:
        assert repo.git("config", "core.hooksPath") == "/dev/null"
        assert repo.git("config", "core.fsmonitor") == "false"
    assert "hooksPath" not in (memory / ".git" / "config").read_text()  # never stored
    assert os.environ.get("GIT_CONFIG_GLOBAL") == "/dev/null"
