"""``clm-policy hook claude-code``, ``hook codex`` and ``mcp``: a command line that asks for
two things, or for half of one, is a usage error that names it (exit 2, nothing written, no
hook call answered); the help names the events the commands install."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from clm_policy.agents.hooks import claude_code, codex
from clm_policy.agents.hooks.claude_settings import snippet

from conftest import as_shown, invoke, run_process

CLAUDE = "hook claude-code"


@pytest.mark.parametrize(
    ("command", "args", "message"),
    [
        (CLAUDE, ["--install", "--user", "--project"], "--project and --user do not go together"),
        (CLAUDE, ["--user"], "--user goes with --install or --uninstall"),
        (CLAUDE, ["--project"], "--project goes with --install or --uninstall"),
        (CLAUDE, ["--force"], "--force goes with --install"),
        (CLAUDE, ["--print-settings", "--user"], "--user goes with --install or --uninstall"),
        (CLAUDE, ["--plugin"], "--plugin goes with --install or --uninstall"),
        (CLAUDE, ["--plugin", "--print-settings"], "--plugin goes with --install or --uninstall"),
        (
            CLAUDE,
            ["--print-settings", "--install"],
            "--print-settings and --install do not go together",
        ),
        (CLAUDE, ["--install", "--engine"], "--install and --engine do not go together"),
        (CLAUDE, ["--engine", "--force"], "--force goes with --install"),
        (
            CLAUDE,
            ["--install", "--plugin", "--force"],
            "--force replaces a settings file's status line: not with --plugin",
        ),
        (
            CLAUDE,
            ["--install", "--policy", "claude-code"],
            "--policy is for answering a hook call: it does not go with --install",
        ),
        (
            CLAUDE,
            ["--engine", "--memory", "mem"],
            "--memory is for answering a hook call: it does not go with --engine",
        ),
        (
            "hook codex",
            ["--print-settings", "--profile", "coding"],
            "--profile is for answering a hook call: it does not go with --print-settings",
        ),
        ("mcp", ["--install", "--user", "--project"], "--project and --user do not go together"),
        ("mcp", ["--user"], "--user goes with --install or --uninstall"),
        ("mcp", ["--install", "--uninstall"], "--install and --uninstall do not go together"),
    ],
)
def test_flags_that_do_not_go_together_are_a_usage_error(
    command: str, args: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke(*command.split(), *args, stdin="")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith(f"clm-policy {command}: {message}")
    assert result.stderr.endswith(f" (try 'clm-policy {command} --help')\n")
    home = Path(os.environ["HOME"])
    written = [tmp_path / ".claude", tmp_path / ".clm-policy.yaml", tmp_path / ".mcp.json"]
    written += [home / ".claude", home / ".claude.json"]
    assert [path for path in written if path.exists()] == []


def test_as_a_process_both_scopes_are_refused(tmp_path: Path) -> None:
    proc = run_process(*CLAUDE.split(), "--install", "--user", "--project", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        "clm-policy hook claude-code: --project and --user do not go together: give one "
        "(try 'clm-policy hook claude-code --help')\n"
    )
    assert not (tmp_path / ".claude").exists()


def test_the_flags_that_go_together_still_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    home = Path(os.environ["HOME"])
    result = invoke(*CLAUDE.split(), "--install", "--user", "--force")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[0] == f"wrote {as_shown(home / '.claude' / 'settings.json')}"
    result = invoke(*CLAUDE.split(), "--install", "--project", "--force")
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / ".claude" / "settings.json").is_file()
    printed = invoke(*CLAUDE.split(), "--print-settings")
    assert printed.exit_code == 0
    assert json.loads(printed.stdout)["hooks"].keys() == claude_code.EVENTS.keys()
    printed = invoke("hook", "codex", "--print-settings")
    assert printed.exit_code == 0
    assert json.loads(printed.stdout)["hooks"].keys() == codex.EVENTS.keys()


@pytest.mark.parametrize(
    ("command", "agent", "events", "installed"),
    [
        ("claude-code", "Claude Code", claude_code.EVENTS, snippet("clm-policy")["hooks"]),
        ("codex", "Codex", codex.EVENTS, codex.settings_snippet("clm-policy")["hooks"]),
    ],
)
def test_the_help_names_the_events_that_are_installed(
    command: str, agent: str, events: dict[str, object], installed: dict[str, object]
) -> None:
    """The help lists the events of the agent's table, the ones --install / --print-settings
    install (once ``hook codex --help`` left SubagentStop out)."""
    assert list(installed) == list(events)
    *first, last = events
    listed = f"{agent} runs this for {', '.join(first)} and {last} ("
    result = invoke("hook", command, "--help")
    assert result.exit_code == 0
    assert listed in " ".join(result.stdout.split())
