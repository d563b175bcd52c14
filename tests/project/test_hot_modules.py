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

from clm_policy.memory.init import init_memory

from conftest import REPO, state_file
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


def warm_hook(root: Path, transcript: Path) -> set[str]:
    """The modules a prompt the policy lets continue loads (:func:`project`'s project)."""
    prompt = {
        "session_id": SESSION,
        "cwd": str(root),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "go on",
        "transcript_path": str(transcript),
    }
    return loaded("hook", ["hook", "claude-code"], json.dumps(prompt), root)


def _module(name: str) -> bool:
    """A module of its own (a file), not a package's ``__init__``."""
    return (REPO / (name.replace(".", "/") + ".py")).is_file()


def test_the_hot_path_loads_the_modules_the_architecture_names(tmp_path: Path) -> None:
    root, transcript = project(tmp_path)
    hook = warm_hook(root, transcript)
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


# Modules a quick path loads that the probes below do not run: the Codex hook (every event),
# the plugin engine's call (every turn), a session's start with nothing to hand and the first
# hook after a policy change (tests/agents/test_claude_hooks.py probes both), the quick
# decide's Codex and OpenAI chat transcripts, and the quick paths' error branches.
ALSO_QUICK = {
    "clm_policy.agents.hooks.codex",
    "clm_policy.agents.hooks.engine",
    "clm_policy.agents.hooks.start",
    "clm_policy.cli.errors",
    "clm_policy.cli.outcomes",
    "clm_policy.formats.jsonio",
    "clm_policy.formats.yamlio",
    "clm_policy.formats.yamlscalars",
    "clm_policy.models.state_io",
    "clm_policy.policy.compile",
    "clm_policy.policy.load",
    "clm_policy.transcripts.codex",
    "clm_policy.transcripts.openai_chat",
}
# the packages every path loads, and the generator (its start-up rules are in the text it
# writes: the generated modules are on the hot path)
ALWAYS = {
    "clm_policy.__init__",
    "clm_policy.models.__init__",
    "clm_policy.transcripts.__init__",
    "clm_policy.models.generate",
    "clm_policy.models.manifest",
}


def _start_up_rules(path: Path) -> list[str]:
    """The start-up rules a module follows: ``TYPE_CHECKING = False``, a ``Record`` class."""
    text = path.read_text(encoding="utf-8")
    rules = ["TYPE_CHECKING = False"] if re.search(r"^TYPE_CHECKING = False$", text, re.M) else []
    if re.search(r"^class \w+\(Record\)", text, re.M):
        rules.append("a Record class")
    return rules


def test_outside_the_quick_paths_python_is_ordinary(tmp_path: Path) -> None:
    """A module no quick path loads uses ``typing``'s TYPE_CHECKING and ``dataclasses``, not
    the start-up rules (docs/architecture.md, "The hot path and its rules")."""
    root, transcript = project(tmp_path)
    quick = warm_hook(root, transcript)
    example = str(REPO / "docs" / "examples" / "session-state.json")
    plain = tmp_path / "plain"  # no project file: the quick decide answers
    plain.mkdir()
    quick |= loaded("decide", ["decide", "--tokens", "260000"], "", plain)
    quick |= loaded("decide", ["decide", "--state", example], "", plain)
    memory = init_memory(tmp_path / "mem").path
    state = state_file(tmp_path, messages=[{"role": "user", "content": "go"}])
    compact = ["compact", "--memory", str(memory), "--state", str(state)]
    quick |= loaded("compact", compact, "", plain)
    quick |= loaded("log", ["log", "--memory", str(memory), "--format", "json"], "", plain)
    quick |= documented() | ALSO_QUICK
    assert "clm_policy.cli.fast.compact" in quick  # the probes ran what they claim
    ordinary = {}
    for path in sorted((REPO / "clm_policy").rglob("*.py")):
        name = ".".join(path.relative_to(REPO).with_suffix("").parts)
        rules = [] if name in quick or name in ALWAYS else _start_up_rules(path)
        if rules:
            ordinary[name] = rules
    assert ordinary == {}
