"""A project's .clm-policy.yaml counts in the project alone (issue 26): the nearest one from the
working folder up to the project's root — the folder holding ``.git``, or the working folder
outside any repository — and one above the root only when the person trusts it; a file that
another user owns, or that others may write, is refused with one line (a command exits 2, a
hook exits 0 with one line in its log); the default memory is keyed to the project, so two
projects below one folder never share it (clm_policy/config/project.py)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from clm_policy.base.errors import InputError
from clm_policy.base.privatefiles import others_may_write
from clm_policy.config.project import find_config, load_config, memory_path, project_memory
from clm_policy.config.trust import take_ignored

from conftest import git, invoke

PARENT = "version: 1\npolicy: default\nprofile: research\n"
OWN = "version: 1\npolicy: claude-code\nprofile: coding\n"


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    """``shared/`` holding a .clm-policy.yaml anyone may write, and two projects below it
    (git repositories, no configuration of their own)."""
    folder = tmp_path / "shared"
    for name in ("a", "b"):
        (folder / name / "src").mkdir(parents=True)
        git(folder / name, "init", "-q")
    config = folder / ".clm-policy.yaml"
    config.write_text(PARENT)
    config.chmod(0o666)
    return folder


def test_a_file_above_the_repository_does_not_count(shared: Path) -> None:
    for start in (shared / "a", shared / "a" / "src"):
        assert find_config(start) is None
        config = load_config(start)
        assert (config.path, config.project) == (None, str(shared / "a"))
    (notice,) = {n.notice for n in take_ignored()}
    assert notice == (
        f"ignored {shared / '.clm-policy.yaml'}: it is above the project {shared / 'a'} and you "
        f"have not trusted it. To use it for the projects below it: clm-policy trust "
        f"{shared / '.clm-policy.yaml'}"
    )


def test_two_projects_never_share_the_default_memory(shared: Path) -> None:
    (shared / ".clm-policy.yaml").chmod(0o644)
    trusted = invoke("trust", str(shared / ".clm-policy.yaml"))
    assert trusted.exit_code == 0, trusted.stderr
    a, b = load_config(shared / "a" / "src"), load_config(shared / "b")
    assert a.path == b.path == str(shared / ".clm-policy.yaml")  # trusted: it counts
    assert (a.values["profile"], a.project, b.project) == (
        "research",
        str(shared / "a"),
        str(shared / "b"),
    )
    assert memory_path(None, a) == project_memory(shared / "a")
    assert memory_path(None, b) == project_memory(shared / "b")
    assert memory_path(None, a) != memory_path(None, b)


def test_the_projects_own_file_counts_from_any_folder_inside(shared: Path) -> None:
    own = shared / "a" / ".clm-policy.yaml"
    own.write_text(OWN)
    own.chmod(0o644)
    for start in (shared / "a", shared / "a" / "src"):
        config = load_config(start)
        assert (config.path, config.project) == (str(own), str(shared / "a"))
        assert memory_path(None, config) == project_memory(shared / "a")


def test_outside_a_repository_the_working_folder_is_the_project(tmp_path: Path) -> None:
    (tmp_path / "p" / "sub").mkdir(parents=True)
    (tmp_path / "p" / ".clm-policy.yaml").write_text(OWN)
    assert find_config(tmp_path / "p") == str(tmp_path / "p" / ".clm-policy.yaml")
    assert find_config(tmp_path / "p" / "sub") is None


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        (0o666, "writable by others"),
        (0o646, "writable by others"),
    ],
)
def test_a_file_others_may_write_is_refused_by_commands_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: int, reason: str
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    git(project, "init", "-q")
    config = project / ".clm-policy.yaml"
    config.write_text(OWN)
    config.chmod(mode)
    monkeypatch.chdir(project)
    result = invoke("decide", "--tokens", "1000")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        f"{config}: not read: {reason} (a project's configuration must be a file only you "
        "can write)\n"
    )
    with pytest.raises(InputError):
        load_config(project)


def test_a_hook_logs_one_line_and_exits_0(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    git(project, "init", "-q")
    config = project / ".clm-policy.yaml"
    config.write_text(OWN)
    config.chmod(0o666)
    state = tmp_path / "state"
    event = {
        "hook_event_name": "UserPromptSubmit",
        "cwd": str(project),
        "session_id": "s1",
        "prompt": "hi",
        "transcript_path": str(tmp_path / "none.jsonl"),
    }
    env = {**os.environ, "XDG_STATE_HOME": str(state)}
    done = subprocess.run(
        [sys.executable, "-m", "clm_policy", "hook", "claude-code"],
        input=json.dumps(event).encode(),
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    log = (state / "clm-policy" / "hook.log").read_text().splitlines()
    assert len(log) == 1
    assert log[0].endswith(
        f" claude-code: UserPromptSubmit: InputError: {config}: not read: writable by others "
        "(a project's configuration must be a file only you can write)"
    )


def _stat(uid: int, gid: int, mode: int) -> os.stat_result:
    return os.stat_result((stat.S_IFREG | mode, 1, 1, 1, uid, gid, 10, 0, 0, 0))


def test_who_may_write_a_file() -> None:
    me, my_group = os.geteuid(), os.getegid()
    assert others_may_write(_stat(me, my_group, 0o644)) is None
    assert (
        others_may_write(_stat(me + 1, my_group, 0o644)) == f"owned by another user (uid {me + 1})"
    )
    assert others_may_write(_stat(me, my_group, 0o602)) == "writable by others"
    # writable by a group of others; a private group of the user's own (Debian's umask 002) is
    # no one else
    foreign = 65534 if my_group != 65534 else 65533
    assert others_may_write(_stat(me, foreign, 0o664)) == f"writable by its group (gid {foreign})"


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_a_file_another_user_owns_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    git(project, "init", "-q")
    config = project / ".clm-policy.yaml"
    config.write_text(OWN)
    os.chown(config, 65534, 65534)
    config.chmod(0o644)
    monkeypatch.chdir(project)
    result = invoke("decide", "--tokens", "1000")
    assert (result.exit_code, result.stderr) == (
        2,
        f"{config}: not read: owned by another user (uid 65534) (a project's configuration "
        "must be a file only you can write)\n",
    )


@pytest.mark.parametrize("command", [["decide", "--tokens", "5"], ["status"]])
def test_a_command_says_once_that_it_ignored_a_file_above(shared: Path, command: list[str]) -> None:
    """`decide` (its quick path) said nothing of the file it ignored; `status` said it twice
    (the options read the file again after the memory's had said it)."""
    from conftest import run_process

    done = run_process(*command, cwd=shared / "a")
    notice = f"clm-policy: ignored {shared / '.clm-policy.yaml'}: it is above the project"
    assert done.stderr.count(notice) == 1, done.stderr
