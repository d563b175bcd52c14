"""Fixtures of the agents' end-to-end suite: the pinned binaries (or one clear skip line), a
sandbox per test, the scripted servers, and the drivers."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from .agents import Agent, find
from .anthropic import ClaudeScript
from .drivers import Claude, Codex
from .httpserve import RequestLog, serve
from .responses import CodexScript
from .sandbox import CLM_POLICY, Sandbox

INSTALL_HINT = "bash tests/agents_e2e/install.sh"


def why_not(name: str) -> str | None:
    """Why the pinned ``name`` cannot run here, or None."""
    agent = find(name)
    if agent.executable is None:
        return f"agents e2e: {agent.problem}; install with `{INSTALL_HINT}`"
    if not CLM_POLICY.exists():
        return f"agents e2e: no clm-policy script next to {CLM_POLICY.parent}"
    return None


def skip_module_unless(name: str) -> None:
    """Skip the calling test module, in one line, unless the pinned ``name`` is installed."""
    reason = why_not(name)
    if reason is not None:
        pytest.skip(reason, allow_module_level=True)


def _require(name: str) -> Agent:
    reason = why_not(name)
    if reason is not None:
        pytest.skip(reason)
    return find(name)


@pytest.fixture(scope="session")
def claude_agent() -> Agent:
    return _require("claude-code")


@pytest.fixture(scope="session")
def codex_agent() -> Agent:
    return _require("codex")


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    box = Sandbox(tmp_path / "e2e")
    yield box
    # keep a failed test's world for a look (pytest keeps the last few tmp_paths anyway);
    # the agents' big per-test caches go
    shutil.rmtree(box.xdg("cache"), ignore_errors=True)


@pytest.fixture
def claude_script() -> ClaudeScript:
    return ClaudeScript()


@pytest.fixture
def anthropic_server(claude_script: ClaudeScript, sandbox: Sandbox) -> Iterator[RequestLog]:
    with serve(claude_script, sandbox.root / "anthropic-requests.jsonl") as log:
        yield log


@pytest.fixture
def claude(claude_agent: Agent, sandbox: Sandbox, anthropic_server: RequestLog) -> Claude:
    assert claude_agent.executable is not None
    driver = Claude(sandbox, claude_agent.executable, anthropic_server)
    driver.setup_project()
    return driver


@pytest.fixture
def codex_script() -> CodexScript:
    return CodexScript()


@pytest.fixture
def responses_server(codex_script: CodexScript, sandbox: Sandbox) -> Iterator[RequestLog]:
    with serve(codex_script, sandbox.root / "responses-requests.jsonl") as log:
        yield log


@pytest.fixture
def codex(codex_agent: Agent, sandbox: Sandbox, responses_server: RequestLog) -> Codex:
    assert codex_agent.executable is not None
    driver = Codex(sandbox, codex_agent.executable, responses_server)
    driver.setup_project()
    return driver
