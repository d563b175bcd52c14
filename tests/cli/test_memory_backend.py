"""``run --memory-backend``: chosen by the flag, the environment or the project's
``memory.backend``; Mem0's model only from the environment; checked before anything is
written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clm_policy.memory.mem0store import available

from conftest import NEEDS_MEM0, git, invoke


@NEEDS_MEM0
def test_a_hybrid_run_seeds_from_mem0_and_keeps_git_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLM_POLICY_MEM0_BASE_URL", "offline")
    memory = tmp_path / "mem"
    result = invoke(
        "run",
        "--memory",
        str(memory),
        "--memory-backend",
        "hybrid",
        "--continue-after-handoff",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["memory_backend"], data["memory_failures"]) == ("hybrid", [])
    assert data["sessions"] == ["demo", "demo-2"]
    assert (memory / ".git" / "clm-policy" / "mem0" / "qdrant").is_dir()
    assert git(memory, "status", "--porcelain") == ""
    handoff = git(memory, "log", "--format=%s", "--grep=^clm(handoff)")
    assert handoff == "clm(handoff): demo step 43, phase_boundary\n"


def test_mem0_without_a_model_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    result = invoke("run", "--memory", str(memory), "--memory-backend", "mem0")
    assert result.exit_code == 2
    if available():
        assert result.stderr.startswith(
            "clm-policy: the mem0 memory backend needs a model: set CLM_POLICY_MEM0_BASE_URL"
        )
    else:
        assert result.stderr == (
            "clm-policy: --memory-backend mem0 needs Mem0: pip install 'clm-policy[mem0]'\n"
        )
    assert not memory.exists()


def test_the_project_file_and_the_environment_choose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".clm-policy.yaml").write_text("version: 1\nmemory.backend: hybird\n")
    result = invoke("run", "--memory", str(tmp_path / "mem"))
    assert (result.exit_code, result.stderr) == (
        2,
        "clm-policy: memory.backend: 'hybird' is no memory backend; did you mean 'hybrid'? "
        "(one of file, mem0, hybrid)\n",
    )
    monkeypatch.setenv("CLM_POLICY_MEMORY_BACKEND", "file")  # the person's word wins
    result = invoke("run", "--memory", str(tmp_path / "mem"), "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["memory_backend"] == "file"
