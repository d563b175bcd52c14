"""The CI integration files are well-formed and name commands that exist."""

from __future__ import annotations

import re

from ruamel.yaml import YAML

from conftest import REPO, invoke


def test_pre_commit_hooks() -> None:
    hooks = YAML(typ="safe").load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert [h["id"] for h in hooks] == ["clm-policy-lint", "clm-policy-test"]
    for hook in hooks:
        assert hook["language"] == "python"
        assert hook["entry"].startswith("clm-policy ")
        re.compile(hook["files"])
        verb = hook["entry"].split()[1]
        assert invoke(verb, "--help").exit_code == 0


def test_ci_doc_workflow_is_yaml_and_uses_real_options() -> None:
    text = (REPO / "docs" / "ci.md").read_text()
    (workflow,) = re.findall(r"```yaml\n(# \.github/workflows.*?)```", text, flags=re.S)
    jobs = YAML(typ="safe").load(workflow)["jobs"]
    commands = [s["run"] for s in jobs["policies"]["steps"] if "run" in s]
    for command in commands:
        if not command.startswith("clm-policy"):
            continue
        args = command.split()[1:]
        help_text = invoke(args[0], "--help").stdout
        for option in (a for a in args if a.startswith("--")):
            assert option in help_text, (command, option)
