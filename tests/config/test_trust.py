"""Trusting a project's .clm-policy.yaml (issue 16): `memory` (other than the project's
default) and `remote` count only once the person trusts the file as it is; `clm-policy trust`
records it, `--list` and `--revoke` show and forget; commands warn when they ignore a setting;
the user's own flags and environment need no trust."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from clm_policy.config.project import (
    load_config,
    memory_path,
    project_memory,
    setting,
)
from clm_policy.config.trust import IgnoredSettings, store_path, take_ignored

from conftest import REPO, as_shown, invoke, message_of

BASE = "version: 1\npolicy: claude-code\nprofile: coding\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    (root / ".clm-policy.yaml").write_text(BASE + "memory: ../shared-memory\nremote: origin\n")
    monkeypatch.chdir(root)
    return root


def digest(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_untrusted_memory_and_remote_are_ignored_and_noted(project: Path) -> None:
    config = load_config(project)
    assert memory_path(None, config) == project_memory(project)
    assert setting("remote", None, config) is None
    assert setting("policy", None, config) == "claude-code"  # chosen freely
    (found,) = take_ignored()
    assert (found.path, found.keys, found.changed) == (config.path, ("memory", "remote"), False)
    assert take_ignored() == []  # said once


def test_the_projects_default_memory_needs_no_trust(project: Path) -> None:
    (project / ".clm-policy.yaml").write_text(BASE + f"memory: {project_memory(project)}\n")
    config = load_config(project)
    assert memory_path(None, config) == project_memory(project)
    assert take_ignored() == []


def test_flags_and_environment_need_no_trust(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = load_config(project)
    assert memory_path("mine", config) == "mine"
    monkeypatch.setenv("CLM_POLICY_REMOTE", "upstream")
    assert setting("remote", None, config) == "upstream"
    assert take_ignored() == []


def test_trust_then_change_then_revoke(project: Path) -> None:
    path = project / ".clm-policy.yaml"
    done = invoke("trust")
    assert (done.exit_code, message_of(done.stderr)) == (0, "")
    assert done.stdout == (
        f"trusted {as_shown(path)} (sha256 {digest(path)[:12]})\n"
        f"  memory  {as_shown(project.parent / 'shared-memory')}\n"  # not .../project/../
        "  remote  origin\n"
    )
    config = load_config(project)
    assert memory_path(None, config) == str(project / ".." / "shared-memory")
    assert setting("remote", None, config) == "origin"
    assert take_ignored() == []
    # the record: private, the path and the content's SHA-256
    mode = os.stat(store_path()).st_mode
    assert stat.S_IMODE(mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(store_path())).st_mode) == 0o700
    listed = invoke("trust", "--list")
    (line,) = listed.stdout.splitlines()
    assert line.startswith("trusted    20")
    assert line.endswith(f"Z  {path}")
    # a changed file is untrusted again
    path.write_text(path.read_text().replace("origin", "theirs"))
    config = load_config(project)
    assert setting("remote", None, config) is None
    (found,) = take_ignored()
    assert found.changed
    (line,) = invoke("trust", "--list").stdout.splitlines()
    assert line.startswith("changed    20")
    assert line.endswith(f"{path}  (not trusted as it is now: clm-policy trust {path})")
    # revoked
    assert invoke("trust", "--revoke").stdout == f"revoked trust in {as_shown(path)}\n"
    assert invoke("trust", "--revoke", str(path)).stdout == (
        f"{as_shown(path)} was not trusted; nothing changed\n"
    )
    assert invoke("trust", "--list").stdout == (
        "no trusted configuration files (clm-policy trust PATH trusts one)\n"
    )


def test_a_file_that_is_gone_is_listed_and_revoked(project: Path) -> None:
    path = project / ".clm-policy.yaml"
    assert invoke("trust", str(project)).exit_code == 0  # a folder: its configuration
    path.unlink()
    (line,) = invoke("trust", "--list").stdout.splitlines()
    assert line.startswith("missing ")
    assert line.endswith(str(path))
    assert invoke("trust", "--revoke", str(path)).stdout == f"revoked trust in {as_shown(path)}\n"


def test_a_file_with_neither_memory_nor_remote(project: Path) -> None:
    path = project / ".clm-policy.yaml"
    path.write_text(BASE)
    assert invoke("trust", str(path)).stdout == (
        f"trusted {as_shown(path)} (sha256 {digest(path)[:12]})\n"
        "  it names no memory other than the project's default and no remote\n"
    )


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("nosuch/.clm-policy.yaml", None, "{path}: no such file"),
        (
            ".clm-policy.yaml",
            "version: 1\nmemry: /elsewhere\n",
            "{path}:2:1: unknown key 'memry'; did you mean 'memory'? (known: version, policy, "
            "profile, memory, remote, memory.backend)",
        ),
        (".clm-policy.yaml", "remote: 'a\x1bb'\n", "{path}:1:11: unprintable character U+001B in a value"),
        ("other.yaml", "version: 1\n", "{path}: not a .clm-policy.yaml (clm-policy reads only files of that name)"),
    ],
    ids=["missing", "not-a-config", "control-character", "another-name"],
)  # fmt: skip
def test_bad_input(tmp_path: Path, name: str, text: str | None, message: str) -> None:
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    done = invoke("trust", str(path))
    assert (done.exit_code, done.stdout) == (2, "")
    assert message_of(done.stderr) == message.format(path=path) + "\n"
    assert not os.path.exists(store_path())


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        ("nothere.yaml", "no policy file 'nothere.yaml' (a path is relative to this file's folder)"),
        ("nosuch", "no bundled policy named 'nosuch' (bundled: {bundled})"),
        ("../../outside.yaml", "policy '../../outside.yaml' is outside {folder}, the project's folder (CLM_POLICY_EXTENDS_PATH names folders it may also reach)"),
    ],
    ids=["missing-file", "unknown-bundled-name", "out-of-reach"],
)  # fmt: skip
def test_a_file_whose_policy_is_not_there_is_not_trusted(
    tmp_path: Path, policy: str, message: str
) -> None:
    from clm_policy.base.resources import bundled_policy_names

    folder = tmp_path / "shop"
    folder.mkdir()
    path = folder / ".clm-policy.yaml"
    path.write_text(f"version: 1\npolicy: {policy}\nremote: origin\n")
    done = invoke("trust", str(path))
    assert (done.exit_code, done.stdout) == (2, "")
    shown = message.format(bundled=", ".join(bundled_policy_names()), folder=folder)
    assert message_of(done.stderr) == f"{path}:2:9: {shown}\n"
    assert not os.path.exists(store_path())


def test_no_config_in_effect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    done = invoke("trust")
    assert (done.exit_code, message_of(done.stderr)) == (
        2,
        f"clm-policy: no .clm-policy.yaml in {tmp_path} or a folder above it\n",
    )
    usage = invoke("trust", "--list", "--revoke")
    assert usage.exit_code == 2


def test_a_record_that_is_not_private_trusts_nothing(project: Path) -> None:
    assert invoke("trust").exit_code == 0
    os.chmod(store_path(), 0o666)
    config = load_config(project)
    assert setting("remote", None, config) is None
    (found,) = take_ignored()
    assert not found.changed  # nothing is known about it
    listed = invoke("trust", "--list")
    assert listed.exit_code == 2
    assert listed.stderr == (
        f"{store_path()}: not a private file of yours (a folder, a symbolic link, another "
        "user's, or writable by others): nothing in it is trusted; remove it and trust again\n"
    )


def test_a_record_that_is_a_folder_trusts_nothing_and_is_no_internal_error(
    project: Path,
) -> None:
    """A folder where the record belongs: the hooks' settings trust nothing and `trust` says
    what is wrong (exit 2); it was an internal error (IsADirectoryError), exit 3."""
    os.makedirs(store_path())
    assert setting("remote", None, load_config(project)) is None
    take_ignored()
    for args in (["trust"], ["trust", "--list"]):
        refused = invoke(*args)
        assert (refused.exit_code, refused.stdout) == (2, "")
        assert refused.stderr.startswith(f"{store_path()}: not a private file of yours (a folder")


def test_commands_warn_once_and_use_the_default(project: Path) -> None:
    path = project / ".clm-policy.yaml"
    done = invoke("status")
    assert message_of(done.stderr).splitlines()[0] == (
        f"clm-policy: ignored memory in {path}: you have not trusted this file (the "
        f"project's default memory is used). To use it: clm-policy trust {path}"
    )
    assert message_of(done.stderr).count("clm-policy trust") == 1
    assert invoke("init", "--claude-code").exit_code == 0
    assert os.path.isdir(os.path.join(project_memory(project), ".git"))
    assert not (project.parent / "shared-memory").exists()


def test_init_with_a_remote_trusts_the_file_it_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    made = invoke("init", "--claude-code", "--remote", "origin")
    assert made.exit_code == 0, made.stderr
    assert made.stdout.splitlines()[1] == (
        "trusted it to push handoffs to origin (clm-policy trust --list)"
    )
    assert setting("remote", None, load_config(tmp_path)) == "origin"


def test_the_docs_show_the_notice_as_it_is() -> None:
    text = (REPO / "docs" / "claude-code.md").read_text()
    shown = IgnoredSettings("/home/me/src/shop/.clm-policy.yaml", "", ("memory", "remote"), False)
    assert f"\nclm-policy: {shown.notice}\n" in text
