"""The project configuration (.clm-policy.yaml): found upward, overridden by flags and the
environment, its errors at file:line:col; `init --claude-code` writes it and the project's
memory repository outside the work tree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clm_policy.base.errors import InputError, quote
from clm_policy.config.project import ProjectConfig, load_config, memory_path, read_config, setting

from conftest import as_shown, git, invoke, message_of

CONFIG = "version: 1\npolicy: claude-code   # the bundled one\nprofile: research\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "shop"
    (root / "src" / "deep").mkdir(parents=True)
    (root / ".git").mkdir()  # a repository: its .clm-policy.yaml counts in every folder below
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    for name in ("CLM_POLICY_POLICY", "CLM_POLICY_PROFILE", "CLM_POLICY_MEMORY"):
        monkeypatch.delenv(name, raising=False)
    return root


def test_found_from_a_subfolder_and_resolved(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / ".clm-policy.yaml").write_text(CONFIG + "memory: ../shared-memory\n")
    monkeypatch.chdir(project / "src" / "deep")
    assert invoke("trust").exit_code == 0  # another memory: the person trusts the file
    config = load_config()
    assert config.path == str(project / ".clm-policy.yaml")
    assert (setting("policy", None, config), setting("profile", None, config)) == (
        "claude-code",
        "research",
    )
    assert memory_path(None, config) == str(project / ".." / "shared-memory")
    # flags, then the environment, win
    assert setting("profile", "coding", config) == "coding"
    monkeypatch.setenv("CLM_POLICY_PROFILE", "tool_heavy")
    assert setting("profile", None, config) == "tool_heavy"
    assert memory_path("elsewhere", config) == "elsewhere"


def test_a_configured_project_keeps_memory_outside_its_tree(project: Path, tmp_path: Path) -> None:
    (project / ".clm-policy.yaml").write_text(CONFIG)
    config = load_config(project)
    chosen = Path(memory_path(None, config))
    assert chosen.parent.parent == tmp_path / "data" / "clm-policy" / "projects"
    assert chosen.parent.name.startswith("shop-")
    assert project not in chosen.parents
    # another project of the same name gets another repository
    other = tmp_path / "other" / "shop"
    other.mkdir(parents=True)
    (other / ".clm-policy.yaml").write_text(CONFIG)
    assert memory_path(None, load_config(other)) != str(chosen)
    # no configuration: ./clm-memory, as before
    assert memory_path(None, ProjectConfig(None, tmp_path, tmp_path)) == "clm-memory"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("version: 1\npolcy: x\n", "2:1: unknown key 'polcy'; did you mean 'policy'?"),
        ("version: 1\npolicy: a\npolicy: b\n", "3:1: duplicate key 'policy'"),
        ("version: 1\n  policy: a\n", "2:1: expected `key: value` lines (a flat mapping)"),
        ("version: 2\n", "unsupported version '2' (expected 1)"),
        ("policy: [a, b]\n", "1:9: expected a plain or quoted string, got '[a, b]'"),
        ("just text\n", "1:1: expected `key: value`"),
    ],
)
def test_errors_are_located(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / ".clm-policy.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read_config(path)
    assert str(caught.value).startswith(str(path))
    assert message in str(caught.value)


def test_quotes_and_comments(tmp_path: Path) -> None:
    path = tmp_path / ".clm-policy.yaml"
    path.write_text("# top\nversion: 1\npolicy: 'team #1.yaml'  # a comment\nremote: \"origin\"\n")
    assert read_config(path)[0] == {"version": "1", "policy": "team #1.yaml", "remote": "origin"}


def test_commands_use_it(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / ".clm-policy.yaml").write_text(CONFIG)
    monkeypatch.chdir(project / "src")
    out = json.loads(
        invoke("decide", "--tokens", "140000", "--window", "200000", "--format", "json").stdout
    )
    # claude-code, research: compact at 65% of the 200K window
    assert (out["policy"], out["profile"], out["action"]) == ("claude-code", "research", "compact")
    flag = json.loads(
        invoke("decide", "-p", "default", "--tokens", "140000", "--format", "json").stdout
    )
    assert (flag["policy"], flag["action"]) == ("default", "continue")
    (project / ".clm-policy.yaml").write_text("version: 1\npolcy: x\n")
    broken = invoke("decide", "--tokens", "5")
    assert broken.exit_code == 2
    assert "unknown key 'polcy'" in broken.stderr


def test_init_claude_code(project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(project)
    made = invoke("init", "--claude-code")
    assert made.exit_code == 0, made.stderr
    assert made.stdout.splitlines()[0] == (
        f"wrote {as_shown(project / '.clm-policy.yaml')} (policy claude-code, profile coding)"
    )
    assert read_config(project / ".clm-policy.yaml")[0] == {
        "version": "1",
        "policy": "claude-code",
        "profile": "coding",
    }
    memory = Path(memory_path(None, load_config(project)))
    assert git(memory, "log", "--format=%s") == "clm(init): memory repository\n"
    assert not (project / "clm-memory").exists()
    again = invoke("init", "--claude-code")
    assert again.exit_code == 0
    assert "already there; nothing changed" in again.stdout
    assert invoke("status").exit_code == 0  # finds the project's memory on its own
    assert invoke("init").exit_code == 2  # neither DIR nor --claude-code


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("nosuch", "no bundled policy named 'nosuch' (bundled: claude-code, default)"),
        (
            "policies/team.yaml",
            "no policy file 'policies/team.yaml' (a path is relative to this file's folder)",
        ),
    ],
)
def test_a_policy_that_is_not_there_is_an_error_where_the_file_names_it(
    project: Path, monkeypatch: pytest.MonkeyPatch, value: str, message: str
) -> None:
    config = project / ".clm-policy.yaml"
    config.write_text(f"version: 1\n# the team's\npolicy: {value}\nprofile: coding\n")
    monkeypatch.chdir(project / "src")
    expected = f"{config}:3:9: {message}\n"
    for args in (["decide", "--tokens", "5"], ["decide", "--tokens", "5", "--explain"]):
        done = invoke(*args)
        assert (done.exit_code, done.stdout, message_of(done.stderr)) == (2, "", expected)
    # a flag or the environment that names another policy: the file's value is not used
    assert invoke("decide", "--tokens", "5", "-p", "default").exit_code == 0
    monkeypatch.setenv("CLM_POLICY_POLICY", "claude-code")
    assert invoke("decide", "--tokens", "5", "--window", "200000").exit_code == 0


def test_a_policy_file_next_to_the_configuration_is_found_from_a_subfolder(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "team.yaml").write_text("version: 1\nname: team\nextends: default\n")
    (project / ".clm-policy.yaml").write_text("version: 1\npolicy: team.yaml\n")
    monkeypatch.chdir(project / "src")
    done = invoke("decide", "--tokens", "5", "--format", "json")
    assert json.loads(done.stdout)["policy"] == "team"


@pytest.mark.parametrize("how", ["absolute", "up", "link"])
def test_a_policy_outside_the_project_is_refused_unread(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """A cloned project's file may not have `lint` print a file of the machine (its first
    line quoted as a schema error): its `policy:` stays in the project's repository, as
    `extends:` does, unless the person's own CLM_POLICY_EXTENDS_PATH names the folder."""
    secrets = tmp_path / "home" / ".config" / "app"
    secrets.mkdir(parents=True)
    (secrets / "s1.yml").write_text("version: hunter2-SuperSecretPassw0rd123\n")
    (project / "link.yml").symlink_to(secrets / "s1.yml")
    value = {"absolute": str(secrets / "s1.yml"), "up": "../home/.config/app/s1.yml"}.get(
        how, "link.yml"
    )
    config = project / ".clm-policy.yaml"
    config.write_text(f"version: 1\npolicy: {value}\n")
    monkeypatch.chdir(project)
    expected = (
        f"{config}:2:9: policy {quote(value)} is outside {project}, the project's repository "
        "(CLM_POLICY_EXTENDS_PATH names folders it may also reach)\n"
    )
    for args in (["lint"], ["test"], ["decide", "--tokens", "5"]):
        done = invoke(*args)
        assert (done.exit_code, message_of(done.stderr)) == (2, expected), args
        assert "hunter2" not in done.stdout + done.stderr
    monkeypatch.setenv("CLM_POLICY_EXTENDS_PATH", str(secrets))
    assert "hunter2" in invoke("lint").stdout  # the person's own word: it is read
