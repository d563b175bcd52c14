"""Saving what the real binaries produced as fixtures, with this machine's paths normalised.

Off unless ``CLM_E2E_CAPTURE=1`` (tests/agents_e2e/regenerate_fixtures.sh sets it): then the
tests write under ``tests/fixtures/real/<agent>-<version>/``. Paths are rewritten so that the
files are the same on every machine: the sandbox's root becomes ``/e2e`` (so the home is
``/e2e/home``, the project ``/e2e/project``; Claude Code's folder name for the project,
``-e2e-project``), this checkout's virtual environment ``/venv``, the checkout ``/repo``, the
scripted server ``http://127.0.0.1:PORT``.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from .agents import REPO, pins
from .sandbox import Sandbox

FIXTURES = REPO / "tests" / "fixtures" / "real"
ENABLED = os.environ.get("CLM_E2E_CAPTURE") == "1"


def folder(agent: str) -> Path:
    """Where this run saves what ``agent`` produced: ``tests/fixtures/real/<agent>-<version>``
    of the pinned version."""
    return FIXTURES / f"{agent}-{pins()[agent]['version']}"


def normaliser(sandbox: Sandbox, server_url: str | None = None) -> list[tuple[str, str]]:
    root = str(sandbox.root)
    venv = str(Path(sys.executable).parent.parent)
    pairs = [
        (root, "/e2e"),
        (re.sub(r"[^A-Za-z0-9]", "-", root), "-e2e"),
        (venv, "/venv"),
        (str(REPO), "/repo"),
    ]
    if server_url:
        pairs.append((server_url, "http://127.0.0.1:PORT"))
    return pairs


def normalise(text: str, pairs: list[tuple[str, str]]) -> str:
    for old, new in pairs:
        text = text.replace(old, new)
        # the same path inside JSON strings on the way (a backslash never appears in them)
    return text


def save(agent: str, name: str, content: Any, pairs: list[tuple[str, str]]) -> None:
    """Write ``content`` (text, or a JSON value) as ``<folder>/<name>`` when capturing."""
    if not ENABLED:
        return
    target = folder(agent) / name
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        text = content
    else:
        text = json.dumps(content, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
    target.write_text(normalise(text, pairs), encoding="utf-8")


def save_file(agent: str, name: str, source: Path, pairs: list[tuple[str, str]]) -> None:
    if ENABLED:
        save(agent, name, source.read_text(encoding="utf-8"), pairs)


def save_hook_inputs(
    agent: str, inputs: list[dict[str, Any]], pairs: list[tuple[str, str]]
) -> None:
    """One file per event and variant (``SessionStart-compact.json``, ``PreCompact-auto.json``,
    ``PostToolUse-Bash.json``): the first input of each seen."""
    if not ENABLED:
        return
    seen: set[str] = set()
    for value in inputs:
        event = str(value.get("hook_event_name"))
        variant = value.get("source") or value.get("trigger") or value.get("tool_name")
        if event == "SessionEnd":
            variant = value.get("reason")
        if event == "Stop" and value.get("stop_hook_active"):
            variant = "active"
        if value.get("agent_id") and event not in ("SubagentStart", "SubagentStop"):
            variant = f"{variant}-subagent" if variant else "subagent"
        name = f"{event}-{variant}" if variant else event
        if name in seen:
            continue
        seen.add(name)
        save(agent, f"hook-inputs/{name}.json", value, pairs)
