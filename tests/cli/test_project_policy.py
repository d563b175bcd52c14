"""`clm-policy lint` and `clm-policy test` without a path, in a project whose
`.clm-policy.yaml` names its policy: they check that policy (and its tests), and say so."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REPO, invoke

TEAM = "version: 1\nname: team\nextends: default\n"
BROKEN = "version: 1\nname: broken\nextends: default\nrules:\n  - id: x\n    when: tokens.contxt > 1\n    action: compact\n"
TEAM_TEST = """\
version: 1
policy: ../team.yaml
cases:
  - name: compacts past the soft limit
    given: {tokens: {context_tokens: 260000}}
    expect: {action: compact, trigger: soft_compact}
"""
BROKEN_TEST = TEAM_TEST.replace("../team.yaml", "../broken.yaml")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with policies/team.yaml configured, beside a broken policy and its test."""
    (tmp_path / "policies" / "tests").mkdir(parents=True)
    (tmp_path / "policies" / "team.yaml").write_text(TEAM)
    (tmp_path / "policies" / "broken.yaml").write_text(BROKEN)
    (tmp_path / "policies" / "tests" / "team.test.yaml").write_text(TEAM_TEST)
    (tmp_path / "policies" / "tests" / "broken.test.yaml").write_text(BROKEN_TEST)
    (tmp_path / ".clm-policy.yaml").write_text("version: 1\npolicy: policies/team.yaml\n")
    (tmp_path / ".git").mkdir()  # a repository: its configuration counts in src/ too
    (tmp_path / "src").mkdir()
    monkeypatch.chdir(tmp_path / "src")
    monkeypatch.delenv("CLM_POLICY_POLICY", raising=False)
    return tmp_path


def test_lint_checks_the_configured_policy(project: Path) -> None:
    done = invoke("lint")
    assert (done.exit_code, done.stdout) == (0, "")
    assert done.stderr == (
        f"clm-policy lint: the project's policy {project}/policies/team.yaml "
        f"({project}/.clm-policy.yaml:2:9)\n"
        "clm-policy lint: 1 file, no problems\n"
    )
    # a path given: that one, as always
    assert invoke("lint", str(project / "policies")).exit_code == 1


def test_test_runs_the_configured_policys_tests(project: Path) -> None:
    done = invoke("test")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert done.stderr == (
        f"clm-policy test: the project's policy {project}/policies/team.yaml "
        f"({project}/.clm-policy.yaml:2:9), tested by "
        f"{project}/policies/tests/team.test.yaml\n"
    )
    assert done.stdout.splitlines()[-1] == "1 passed, 0 failed, 0 skipped"


def test_a_policy_in_a_subfolder_finds_its_tests_in_the_folder_above(project: Path) -> None:
    (project / "policies" / "examples").mkdir()
    (project / "policies" / "team.yaml").rename(project / "policies" / "examples" / "team.yaml")
    test_file = project / "policies" / "tests" / "team.test.yaml"
    test_file.write_text(TEAM_TEST.replace("../team.yaml", "../examples/team.yaml"))
    (project / ".clm-policy.yaml").write_text("version: 1\npolicy: policies/examples/team.yaml\n")
    done = invoke("test")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert done.stderr.endswith(f"tested by {test_file}\n")


def test_a_configured_policy_without_tests_is_said_so(project: Path) -> None:
    (project / "policies" / "tests" / "team.test.yaml").unlink()
    done = invoke("test")
    assert (done.exit_code, done.stdout) == (2, "")
    assert done.stderr == (
        f"clm-policy: no test file names the project's policy {project}/policies/team.yaml as "
        f"its policy: (looked under {project}/policies and {project})\n"
    )


def test_a_bundled_policy_from_the_environment(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLM_POLICY_POLICY", "claude-code")
    done = invoke("test")
    assert done.exit_code == 0, done.stdout + done.stderr
    bundled = REPO / "policies"
    assert done.stderr == (
        f"clm-policy test: the project's policy {bundled}/claude-code.yaml (CLM_POLICY_POLICY), "
        f"tested by {bundled}/tests/claude-code.test.yaml\n"
    )
    linted = invoke("lint")
    assert linted.exit_code == 0
    assert linted.stderr.startswith(
        f"clm-policy lint: the project's policy {bundled}/claude-code.yaml (CLM_POLICY_POLICY)\n"
    )


def test_without_a_configuration_policies_is_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("CLM_POLICY_POLICY", raising=False)
    done = invoke("lint")
    assert done.exit_code == 0
    assert done.stderr.startswith("clm-policy lint: ")
    assert "the project's policy" not in done.stderr
