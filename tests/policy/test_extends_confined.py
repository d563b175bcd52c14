"""``extends:`` (and a policy test's ``policy:``) stays inside the policy's repository — the
nearest folder above the file that holds ``.git`` — or, outside any repository, inside the
policy's own folder tree. A pull request's policy cannot reach a file on the runner: an
absolute path, a ``../`` past the root and a committed symbolic link that leads out are
refused with one message that says nothing of the target (whether it exists, what it holds).
Bundled names keep working; the person widens the reach with ``CLM_POLICY_EXTENDS_PATH``
(clm_policy/policy/sources.py, docs/policy.md "extends")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from clm_policy import PolicyError, load_policy
from clm_policy.base.errors import quote

from conftest import git

TEAM = "version: 1\nname: {name}\nextends: {extends}\n"
BASE = "version: 1\nname: base\nprofiles:\n  coding: {soft_compact: 100, hard_handoff: 200}\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """``work/repo`` (a git repository) with ``policies/``; beside it, outside the
    repository, a valid policy ``work/outside.yaml`` and a YAML secret ``work/hosts.yml``."""
    root = tmp_path / "work" / "repo"
    (root / "policies" / "sub").mkdir(parents=True)
    git(root, "init", "-q")
    (root / "policies" / "base.yaml").write_text(BASE)
    (tmp_path / "work" / "outside.yaml").write_text(BASE.replace("base", "outside"))
    (tmp_path / "work" / "hosts.yml").write_text("github.com:\n  oauth_token: gho_Zq8vT3nLw5\n")
    return root


def team(repo: Path, extends: str, name: str = "team.yaml") -> Path:
    path = repo / "policies" / name
    path.write_text(TEAM.format(name="team", extends=extends))
    return path


def refusal(path: Path, extends: str, root: Path) -> str:
    return (
        f"{path}:3:10: extends target {quote(extends)} is outside {root}, the policy's repository "
        "(CLM_POLICY_EXTENDS_PATH names folders it may also reach)"
    )


@pytest.mark.parametrize(
    "extends",
    [
        "/etc/passwd",
        "/etc/nothere.yaml",
        "../../outside.yaml",
        "../../hosts.yml",
        "../../nothere.yaml",
        "sub/../../../outside.yaml",
        "{work}/outside.yaml",
    ],
)
def test_a_target_outside_the_repository_is_refused_saying_nothing_of_it(
    repo: Path, extends: str
) -> None:
    extends = extends.format(work=repo.parent)
    path = team(repo, extends)
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    assert str(caught.value) == refusal(path, extends, repo)


def test_a_committed_link_that_leads_out_is_refused(repo: Path) -> None:
    (repo / "policies" / "parent.yaml").symlink_to(repo.parent / "outside.yaml")
    (repo / "policies" / "up").symlink_to(repo.parent)
    for extends in ("parent.yaml", "./up/outside.yaml"):
        path = team(repo, extends)
        with pytest.raises(PolicyError) as caught:
            load_policy(path)
        assert str(caught.value) == refusal(path, extends, repo)


def test_inside_the_repository_bundled_names_and_links_that_stay_in_work(repo: Path) -> None:
    (repo / "policies" / "sub" / "mid.yaml").write_text(
        TEAM.format(name="mid", extends="../base.yaml")
    )
    (repo / "policies" / "again.yaml").symlink_to("base.yaml")
    for extends in ("base.yaml", "./sub/../base.yaml", "sub/mid.yaml", "again.yaml", "default"):
        assert load_policy(team(repo, extends)).name == "team"
    # from a folder below the policies, up to the repository's root: inside
    (repo / "shared.yaml").write_text(BASE)
    assert load_policy(team(repo, "../shared.yaml")).name == "team"


def test_outside_a_repository_the_working_directory_or_the_policys_folder_is_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "p" / "sub").mkdir(parents=True)
    (tmp_path / "base.yaml").write_text(BASE)
    (tmp_path / "p" / "sub" / "b.yaml").write_text(BASE)
    path = tmp_path / "p" / "team.yaml"
    path.write_text(TEAM.format(name="team", extends="sub/b.yaml"))
    assert load_policy(path).name == "team"
    path.write_text(TEAM.format(name="team", extends="../base.yaml"))
    monkeypatch.chdir(tmp_path / "p" / "sub")  # not above the policy: its folder is the root
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    assert str(caught.value) == (
        f"{path}:3:10: extends target '../base.yaml' is outside {tmp_path / 'p'}, the policy's "
        "folder (CLM_POLICY_EXTENDS_PATH names folders it may also reach)"
    )
    monkeypatch.chdir(tmp_path)  # the project the person works in
    assert load_policy(path).name == "team"


def test_the_person_allows_more_with_the_environment(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = team(repo, "../../outside.yaml")
    monkeypatch.setenv("CLM_POLICY_EXTENDS_PATH", f"/nonexistent{os.pathsep}{repo.parent}")
    assert load_policy(path).name == "team"
    # the cache serves no policy the person no longer allows
    from clm_policy.policy.cache import load_policy_cached

    assert load_policy_cached(path).name == "team"
    monkeypatch.delenv("CLM_POLICY_EXTENDS_PATH")
    with pytest.raises(PolicyError) as caught:
        load_policy_cached(path)
    assert str(caught.value) == refusal(path, "../../outside.yaml", repo)


def clm(cwd: Path, *args: str) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CLM_POLICY_EXTENDS_PATH"}
    done = subprocess.run(
        [sys.executable, "-m", "clm_policy", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def test_lint_and_test_in_ci_cannot_probe_the_runner(repo: Path) -> None:
    """What a pull request's CI run prints for a target outside: the same line whether the
    file is there, is YAML holding a token, or is missing."""
    team(repo, "../../hosts.yml", "a.yaml")
    team(repo, "../../nothere.yaml", "b.yaml")
    team(repo, "/etc/passwd", "c.yaml")
    code, out, err = clm(repo, "lint", "policies/a.yaml", "policies/b.yaml", "policies/c.yaml")
    assert code == 1
    reason = f"is outside {repo}, the policy's repository (CLM_POLICY_EXTENDS_PATH names"
    assert out.splitlines() == [
        f"policies/{name}.yaml:3:10: error [extends] extends target {target!r} {reason} "
        "folders it may also reach)"
        for name, target in (
            ("a", "../../hosts.yml"),
            ("b", "../../nothere.yaml"),
            ("c", "/etc/passwd"),
        )
    ]
    assert "gho_" not in out + err
    (repo / "policies" / "t.test.yaml").write_text(
        "version: 1\npolicy: ../../hosts.yml\ncases:\n"
        "  - name: c\n    given: {tokens: {context_tokens: 5}}\n    expect: {action: continue}\n"
    )
    code, out, err = clm(repo, "test", "policies/t.test.yaml")
    assert code == 1
    assert (
        "ERROR policies/t.test.yaml:2:9: c: cannot load policy '../../hosts.yml': it is outside "
        f"{repo}, the policy's repository (CLM_POLICY_EXTENDS_PATH names folders it may also "
        "reach)"
    ) in out.splitlines()
    assert "gho_" not in out + err


def test_a_committed_link_in_a_searched_folder_is_not_read(repo: Path) -> None:
    """``lint policies`` and ``test policies`` search the folder: a link in it that leads to
    a file on the runner is refused (exit 2, one line naming the link), never parsed."""
    (repo / "policies" / "evil.yaml").symlink_to(repo.parent / "hosts.yml")
    code, out, err = clm(repo, "lint", "policies")
    reason = (
        f"it is outside {repo}, the policy's repository (CLM_POLICY_EXTENDS_PATH names folders "
        "it may also reach)"
    )
    assert (code, out, err) == (
        2,
        "",
        f"clm-policy: policies/evil.yaml: a link, not read: {reason}\n",
    )
    (repo / "policies" / "evil.yaml").unlink()
    (repo / "policies" / "evil.test.yaml").symlink_to(repo.parent / "hosts.yml")
    code, out, err = clm(repo, "test", "policies")
    assert (code, out) == (2, "")
    assert err == f"clm-policy: policies/evil.test.yaml: a link, not read: {reason}\n"
    # named on the command line, a file is the person's choice: read
    code, out, err = clm(repo, "lint", "policies/base.yaml", str(repo.parent / "outside.yaml"))
    assert (code, err) == (0, "clm-policy lint: 2 files, no problems\n")
