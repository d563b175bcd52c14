"""docs/integrations.md tells the truth: its shell example runs with the real CLI, its Python
example runs, each printing what the doc says; its `run --agent openai` command runs against
a local endpoint; every environment variable the agent reads is in its table."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from test_openai_agent import answer, serve, work

from clm_policy.loop import openai_agent

from conftest import REPO, git, invoke

DOC = REPO / "docs" / "integrations.md"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(), flags=re.S)


def example(lang: str) -> tuple[str, str]:
    """The doc's ``lang`` example and the output it says it prints (the next text block)."""
    text = DOC.read_text()
    found = re.search(rf"```{lang}\n(.*?)```\s*\nprints\n\n```text\n(.*?)```", text, flags=re.S)
    assert found is not None, f"no {lang} example followed by its output"
    return found[1], found[2]


def test_the_shell_example_prints_what_the_doc_says(tmp_path: Path) -> None:
    script, expected = example("bash")
    bin_dir = str(Path(sys.executable).parent)  # clm-policy and python3 of this environment
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == expected


def test_the_python_example_prints_what_the_doc_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, expected = example("python")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(DOC), "exec"), {"__name__": "integrations_example"})
    assert capsys.readouterr().out == expected
    events = git(tmp_path / "clm-memory", "log", "--format=%s").splitlines()
    assert events == [
        "clm(handoff): my-agent-42 step 12, phase_done",
        "clm(compact): my-agent-42 step 12, soft_compact",
        "clm(init): memory repository",
    ]


def test_the_openai_run_example_runs_against_a_local_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (console,) = blocks("console")
    exported = dict(re.findall(r"^\$ export (\w+)=(\S+)", console, flags=re.M))
    assert set(exported) == {"OPENAI_API_KEY", "CLM_POLICY_OPENAI_MODEL"}
    (command,) = [line.removeprefix("$ ") for line in console.splitlines() if "run --agent" in line]
    program, *args = shlex.split(command, comments=True)
    assert program == "clm-policy"
    with serve() as endpoint:
        endpoint.script(*(answer(work(n)) for n in range(1, 30)), then=answer("TASK COMPLETE"))
        for name, value in endpoint.env().items():
            monkeypatch.setenv(name, value)
        monkeypatch.chdir(tmp_path)
        result = invoke(*args, "--format", "json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert (out["agent"], out["stopped_reason"], out["steps"]) == ("openai", "max_steps", 20)
    assert out["compact_count"] >= 1
    assert endpoint.requests[0]["body"]["messages"][1] == {
        "role": "user",
        "content": "Write a migration plan for the billing service",
    }


def test_the_table_names_every_variable_the_agent_reads() -> None:
    text = DOC.read_text()
    names = [
        openai_agent.ENV_MODEL,
        *openai_agent.ENV_KEYS,
        openai_agent.ENV_BASE_URL,
        openai_agent.ENV_TIMEOUT,
    ]
    table = [line for line in text.splitlines() if line.startswith("| `")]
    for name in names:
        assert any(f"`{name}`" in line for line in table), name
    assert f"default `{openai_agent.DEFAULT_BASE_URL}`" in text
    assert f"`{openai_agent.DEFAULT_DONE_MARKER}`" in text
    assert "**20 unless given**" in text
    from clm_policy.loop.runs import OPENAI_MAX_STEPS

    assert OPENAI_MAX_STEPS == 20
