"""The modules the per-prompt paths load are the ones docs/architecture.md names.

Those few modules keep the start-up rules (no ``typing``, ``dataclasses`` or ``pathlib`` at
run time); everywhere else ordinary Python is used. So the list is held equal to what a warm
hook (a prompt the policy lets continue) and the status line (its digest fresh) load, each in
a fresh interpreter: a module that joins the path is named there (and keeps the rules), one
that leaves it is struck off.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import REPO
from probes import probe_cli

SESSION = "3f6d2b1a-8c4e-4f7a-9b2d-1e5c7a9d0f42"


def documented() -> set[str]:
    """The modules the hot path's list in docs/architecture.md names, as dotted names."""
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"<!-- hot modules -->\n(.*?)<!-- end of hot modules -->", text, re.S)
    found: set[str] = set()
    for line in block.replace("\n  ", " ").splitlines():
        names = re.findall(r"`([^`]+)`", line)
        folder = names[0] if names and names[0].endswith("/") else ""
        for name in names:
            if name.endswith(".py"):
                found.add("clm_policy." + (folder + name).removesuffix(".py").replace("/", "."))
    return found


def project(tmp_path: Path) -> tuple[Path, Path]:
    """A project on the bundled claude-code policy, and a Claude Code transcript far below its
    thresholds (the policy says continue)."""
    root = tmp_path / "shop"
    root.mkdir()
    (root / ".git").mkdir()
    (root / ".clm-policy.yaml").write_text("version: 1\npolicy: claude-code\nprofile: coding\n")
    usage = {"input_tokens": 30_000, "cache_read_input_tokens": 0, "output_tokens": 20}
    lines = [
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "sessionId": SESSION,
            "message": {"role": "user", "content": "Fix the CSV parser."},
        },
        {
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "sessionId": SESSION,
            "isSidechain": False,
            "message": {
                "id": "m1",
                "role": "assistant",
                "model": "claude-sonnet-4-6",
                "content": [{"type": "text", "text": "Looking at it."}],
                "usage": usage,
            },
        },
    ]
    path = root / "t.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return root, path


def loaded(entry: str, args: list[str], stdin: str, cwd: Path) -> set[str]:
    done = probe_cli(entry, args, stdin=stdin, cwd=cwd, runs=2)  # the first run fills caches
    assert done.loaded == [], done.loaded  # the probes' own rule, held here too
    return {m for m in done.new if m.startswith("clm_policy.") and _module(m)}


def _module(name: str) -> bool:
    """A module of its own (a file), not a package's ``__init__``."""
    return (REPO / (name.replace(".", "/") + ".py")).is_file()


def test_the_hot_path_loads_the_modules_the_architecture_names(tmp_path: Path) -> None:
    root, transcript = project(tmp_path)
    prompt = {
        "session_id": SESSION,
        "cwd": str(root),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "go on",
        "transcript_path": str(transcript),
    }
    hook = loaded("hook", ["hook", "claude-code"], json.dumps(prompt), root)
    status = {
        "session_id": SESSION,
        "cwd": str(root),
        "workspace": {"current_dir": str(root), "project_dir": str(root)},
        "model": {"id": "claude-sonnet-4-6", "display_name": "Sonnet"},
        "context_window": {
            "total_input_tokens": 30_000,
            "total_output_tokens": 20,
            "context_window_size": 200_000,
            "current_usage": {
                "input_tokens": 30_000,
                "output_tokens": 20,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        },
    }
    line = loaded("statusline", ["statusline"], json.dumps(status), root)
    assert "clm_policy.agents.hooks.claude_code" in hook  # the probes ran what they claim
    assert "clm_policy.agents.statusline" in line
    assert hook | line == documented()


def test_the_list_is_read_as_written() -> None:
    names = documented()
    assert {"clm_policy.base.record", "clm_policy.models.state", "clm_policy.cli.entry"} <= names
    assert "clm_policy.agents.hooks.shared" in names  # a folder's path is kept in its items
    assert all(_module(name) for name in names)
