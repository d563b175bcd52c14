"""The real CLI: exact output of each format (golden files), --state from stdin, exit codes.

Set CLM_UPDATE_GOLDEN=1 to rewrite the golden files after an intended change, then review the
diff like any other change.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from clm_policy import __version__
from clm_policy.policy.engine import Policy

from conftest import POLICIES, REPO, golden, invoke, run_process

OPTION_B = str(POLICIES / "examples" / "option_b.yaml")


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("decide_compact.txt", ["decide", "--tokens", "260000"]),
        ("decide_compact.json", ["decide", "--tokens", "260000", "--format", "json"]),
        (
            "decide_explain.txt",
            [
                "decide",
                "--tokens",
                "260000",
                "--step",
                "7",
                "--last-compact-step",
                "5",
                "--explain",
            ],
        ),
        ("decide_explain.json", ["decide", "--tokens", "360000", "--explain", "--format", "json"]),
        (
            "decide_blocked.txt",
            [
                "decide",
                "-p",
                "option_b.yaml",
                "--tokens",
                "50000",
                "--signal",
                "degradation=true",
                "--signal",
                "open_subagent_calls=2",
                "--signal",
                "missing_artifacts=todo,worklog",
                "--explain",
            ],
        ),
        (
            "decide_forced.json",
            [
                "decide",
                "-p",
                "option_b.yaml",
                "--tokens",
                "50000",
                "--signal",
                "degradation=true",
                "--force",
                "--format",
                "json",
            ],
        ),
        ("resolve_default.yaml", ["resolve", "default"]),
    ],
)
def test_golden_output(monkeypatch: pytest.MonkeyPatch, name: str, args: list[str]) -> None:
    monkeypatch.chdir(POLICIES / "examples")  # relative paths in output stay stable
    result = invoke(*args)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    golden(name, result.stdout)


def test_json_has_the_documented_keys() -> None:
    out = json.loads(invoke("decide", "-t", "100", "--format", "json").stdout)
    assert list(out) == [
        "action",
        "trigger",
        "rationale",
        "proposed",
        "blocked_by",
        "warnings",
        "overridden",
        "forced",
        "policy",
        "profile",
        "context_tokens",
        "context_window",
        "window_source",
    ]
    assert (out["action"], out["trigger"], out["context_tokens"]) == ("continue", None, 100)


def test_state_from_stdin_and_file(tmp_path: Path) -> None:
    state = {
        "session_id": "s1",
        "step_index": 12,
        "last_compact_step": 3,
        "profile": "research",
        "tokens": {"context_tokens": 290000, "input_tokens": 5_000_000},
    }
    text = json.dumps(state)
    from_stdin = invoke("decide", "--state", "-", "--format", "json", stdin=text)
    assert from_stdin.exit_code == 0, from_stdin.stderr
    out = json.loads(from_stdin.stdout)
    assert (out["action"], out["trigger"], out["profile"]) == (
        "compact",
        "soft_compact",
        "research",
    )
    path = tmp_path / "state.json"
    path.write_text(text)
    from_file = invoke(
        "decide", "--state", str(path), "--profile", "exploration", "--format", "json"
    )
    assert json.loads(from_file.stdout)["action"] == "continue"


def test_window_shortcut_and_status() -> None:
    out = json.loads(
        invoke(
            "decide",
            "-t",
            "1000",
            "--window",
            "200000",
            "--status",
            "phase_boundary",
            "--format",
            "json",
        ).stdout
    )
    assert (out["action"], out["trigger"]) == ("handoff", "phase_boundary")
    assert (out["context_window"], out["window_source"]) == (200000, "state")


CODEX_ROLLOUT = str(REPO / "tests" / "fixtures" / "transcripts" / "codex_rollout.jsonl")
WINDOWED = '{"session_id": "s1", "tokens": {"context_tokens": 50000, "context_window": 200000}}'


@pytest.mark.parametrize(
    ("args", "stdin", "window"),
    [
        (
            ["--tokens", "50000", "--window", "200000"],
            None,
            "of 200000 (25%, window from --window)",
        ),
        (["--state", "STATE"], None, "of 200000 (25%, window from the state file)"),
        (["--state", "-"], WINDOWED, "of 200000 (25%, window from the state on standard input)"),
        (["--transcript", CODEX_ROLLOUT], None, "of 258400 (35%, window from the transcript)"),
        (
            ["--tokens", "50000", "-p", OPTION_B],
            None,
            "of 200000 (25%, window from profile coding)",
        ),
    ],
)
@pytest.mark.parametrize("explain", [False, True])
def test_decide_names_where_the_window_came_from(
    tmp_path: Path, args: list[str], stdin: str | None, window: str, explain: bool
) -> None:
    """``window from state`` was said of every window a state held, --window's and a
    transcript's included: the text names the source the command line gave (the JSON's
    ``window_source`` stays ``state``). Both paths: the quick one and click's (--explain)."""
    state = tmp_path / "s.json"
    state.write_text(WINDOWED)
    args = [str(state) if a == "STATE" else a for a in args]
    done = run_process("decide", *args, *(["--explain"] if explain else []), stdin=stdin)
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("context:")]
    assert line.endswith(window), line


def test_decide_names_a_persisted_sessions_window(tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    assert invoke("init", str(memory)).exit_code == 0
    state = tmp_path / "s.json"
    state.write_text(WINDOWED.replace('"s1"', '"demo"'))
    assert invoke("compact", "-m", str(memory), "-s", str(state)).exit_code == 0
    done = invoke("decide", "-m", str(memory), "--session", "demo")
    assert done.exit_code == 0, done.stderr
    assert "of 200000 (0%, window from the session's state)\n" in done.stdout


def test_schema_command() -> None:
    both = invoke("schema", "--list", "policy")  # the name was left out without a word
    assert (both.exit_code, both.stdout) == (2, "")
    assert both.stderr == (
        "clm-policy schema: --list takes no NAME: give one or the other "
        "(try 'clm-policy schema --help')\n"
    )
    listed = invoke("schema", "--list")
    assert listed.stdout == (
        "experiment\nhandoff-manifest\npolicy\npolicy-test\nscenario\nsession-state\n"
    )
    for name in (
        "experiment",
        "handoff-manifest",
        "policy",
        "policy-test",
        "scenario",
        "session-state",
    ):
        shown = invoke("schema", name)
        assert shown.exit_code == 0
        assert shown.stdout == (REPO / "schemas" / f"{name}.schema.json").read_text()


def test_version_and_help() -> None:
    assert invoke("--version").stdout == f"clm-policy, version {__version__}\n"
    top = invoke("--help")
    assert top.exit_code == 0
    assert "clm-policy decide --tokens 260000 --explain" in top.stdout
    assert "Exit codes: 0 ok, 1 problems found (lint, test, replay --fail-on-change), 2" in (
        top.stdout
    )
    sub = invoke("decide", "--help")
    assert (
        "cat session.json | clm-policy decide --state - --policy policies/examples/team.yaml"
        in sub.stdout
    )


def test_every_command_s_help_shows_an_example_and_its_exit_codes() -> None:
    """A newcomer reads ``clm-policy CMD --help``: a command line to copy, and what its exit
    codes mean (most said nothing of them; CI has to trust them)."""
    from test_options import commands

    from clm_policy.cli.main import cli

    for name, _ in commands(cli):
        shown = invoke(*name.split(), "--help")
        assert shown.exit_code == 0, name
        assert f"clm-policy {name}" in shown.stdout.split("Options:")[0], name
        assert re.search(r"^  Exit codes?: ", shown.stdout, flags=re.M), name


def test_the_top_help_s_examples_run_in_a_new_user_s_folder(tmp_path: Path) -> None:
    """What ``clm-policy --help`` offers to try, without a file of its own, runs where a
    user who installed clm-policy stands: ``resolve policies/default.yaml`` needed a checkout
    of the repository."""
    top = invoke("--help").stdout
    tried = top.split("Try:")[1].split("Exit codes")[0]
    lines = [line.split("#")[0].split() for line in tried.splitlines() if "clm-policy" in line]
    runnable = [words[1:] for words in lines if words[1] in ("decide", "resolve", "schema")]
    assert ["resolve", "claude-code"] in runnable
    for args in runnable:
        done = run_process(*args, cwd=tmp_path)
        assert (args, done.returncode, done.stderr) == (args, 0, ""), args


def test_every_group_s_help_says_its_exit_codes() -> None:
    """`clm-policy hook --help` listed no exit codes where its subcommands did: a group's
    help says them too."""
    import click

    from clm_policy.cli.main import cli

    ctx = click.Context(cli)
    groups = [
        name
        for name in cli.list_commands(ctx)
        if isinstance(cli.get_command(ctx, name), click.Group)
    ]
    assert "hook" in groups
    for name in groups:
        shown = run_process(name, "--help")
        assert shown.returncode == 0, name
        assert re.search(r"^  Exit codes?\b", shown.stdout, flags=re.M), name


def help_examples(command: str) -> list[list[str]]:
    """The command lines of ``clm-policy COMMAND --help``'s examples, as words (comments out)."""
    shown = invoke(command, "--help").stdout
    block = shown.split("Examples:\n")[1].split("\n\n")[0]
    return [shlex.split(line, comments=True) for line in block.splitlines()]


@pytest.mark.parametrize("command", ["run", "signal"])
def test_the_help_s_examples_run_in_sequence_in_a_new_folder(command: str, tmp_path: Path) -> None:
    """A reader types the examples one after the other: `run --resume demo --max-steps 10`
    came right after `clm-policy run`, whose demo had ended (nothing to resume, exit 2).
    Those that need a file of the reader's own or a model's endpoint are left out."""
    ran = 0
    for words in help_examples(command):
        assert words[0] == "clm-policy", words
        if "my-scenario.yaml" in words or "openai" in words:
            continue
        done = run_process(*words[1:], cwd=tmp_path)
        assert (words, done.returncode, done.stderr) == (words, 0, ""), words
        ran += 1
    assert ran >= 2


def test_internal_error_has_its_own_exit_code(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_: object, **__: object) -> None:
        raise RuntimeError("kaboom")

    monkeypatch.setattr(Policy, "decide", boom)
    result = invoke("decide", "-t", "1")
    assert result.exit_code == 3
    assert result.stderr == (
        "clm-policy: internal error: RuntimeError: kaboom (this is a bug; "
        "rerun with CLM_POLICY_DEBUG=1 for the traceback)\n"
    )


def test_an_internal_errors_words_pass_the_redactor(monkeypatch: pytest.MonkeyPatch) -> None:
    """An unexpected error may quote what the program held: a remote with its password, a
    token read from a file. It reaches the terminal redacted (the printer masks a URL's
    credentials itself), as everything else does."""
    secret = "ghp_Xk93mQz7LpA8rT2vN5bW1cY6dE4fG0hJ9iK3"

    def boom(*_: object, **__: object) -> None:
        raise RuntimeError(f"push to https://bob:Xk93mQz7Lp@host.example/m.git with {secret}")

    monkeypatch.setattr(Policy, "decide", boom)
    result = invoke("decide", "-t", "1")
    assert result.exit_code == 3
    assert result.stderr == (
        "clm-policy: internal error: RuntimeError: push to https://***@host.example/m.git "
        "with [REDACTED:github-pat] (this is a bug; rerun with "
        "CLM_POLICY_DEBUG=1 for the traceback)\n"
    )


def test_as_a_process() -> None:
    proc = run_process("decide", "--tokens", "360000", "--profile", "research", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert (out["action"], out["trigger"]) == ("compact", "soft_compact")
    proc = run_process("decide", "--tokens", "400000", "--profile", "research")
    assert proc.stdout.splitlines()[:2] == ["action:    handoff", "trigger:   hard_handoff"]


def test_the_command_list_is_the_commands_own_help() -> None:
    """`clm-policy --help` lists the commands without importing them, as click would."""
    import importlib

    import click

    from clm_policy.cli.main import COMMANDS, SUMMARIES, shorten_help

    assert set(SUMMARIES) == set(COMMANDS)
    for name, target in COMMANDS.items():
        module, _, attr = target.partition(":")
        command = getattr(importlib.import_module(module), attr)
        assert isinstance(command, click.Command)
        for limit in (45, 60, 84, 200):
            assert shorten_help(SUMMARIES[name], limit) == command.get_short_help_str(limit)


def test_help_imports_no_command(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from clm_policy.cli.main import run\n"
        "run(['--help'])\n"
        "sys.stderr.write(repr(sorted(m for m in sys.modules if m.startswith('clm_policy.cli.')"
        " and m not in ('clm_policy.cli.main', 'clm_policy.cli.errors'))))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert "Commands:" in proc.stdout
    assert proc.stderr == "[]"


def test_help_shows_the_set_up_commands_and_they_run(tmp_path: Path) -> None:
    """`clm-policy --help` names the commands that set a project up for Claude Code and
    Codex, and each runs as written in a new project."""
    import os
    import re

    text = invoke("--help").stdout
    block = text.split("Set up a project")[1].split("\n\n")[0]
    commands = [line.split("  #")[0].strip() for line in block.splitlines()[1:]]
    assert commands == [
        "clm-policy init --claude-code",
        "clm-policy hook claude-code --install --project",
        "clm-policy init --codex",
        "clm-policy hook codex --install --project",
    ]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    for command in commands:
        done = subprocess.run(
            command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, (command, done.stderr)
    assert (tmp_path / ".clm-policy.yaml").is_file()
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert re.search(
        r"clm-policy hook claude-code$", settings["hooks"]["Stop"][0]["hooks"][0]["command"]
    )
    hooks = json.loads((tmp_path / ".codex" / "hooks.json").read_text())
    assert list(hooks) == ["hooks"]


def test_explain_says_what_a_rule_not_reached_would_have_said() -> None:
    shown = invoke("decide", "--tokens", "260000", "--explain").stdout.splitlines()
    rules = [line.split("  <bundled>")[0] for line in shown if " -> " in line]
    assert rules == [
        "  phase_boundary -> handoff: false  [no]",
        "  hard_handoff -> handoff: false  [no]",
        "  soft_compact -> compact: true  [DECIDED]",
        "  degradation -> compact: would be false  [not reached]",
        "  otherwise -> continue",
    ]


def test_decide_help_s_option_b_example_shows_its_guard() -> None:
    # the example is there for its guard: once its figures stayed below the soft limit and it
    # decided continue, with no guard in sight

    shown = invoke("decide", "--help").stdout
    assert "  --step N " in shown
    found = re.search(r"clm-policy decide -p policies/examples/option_b\.yaml (.+?\n.+?)\n", shown)
    assert found is not None
    args = shlex.split(found[1].replace("\\\n", " "))
    assert args[:2] == ["--tokens", "330000"]
    result = invoke("decide", "-p", OPTION_B, *args)
    assert result.exit_code == 0, result.stderr
    assert "compact blocked by open_subagents" in result.stdout


def test_resolve_takes_the_projects_policy_and_says_what_it_cannot_take(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without POLICY, the project's policy (it printed the bundled default whatever the
    project named); a folder or a test file is named as what it is, not as a missing
    bundled policy."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".clm-policy.yaml").write_text("version: 1\npolicy: claude-code\n")
    (tmp_path / "a.test.yaml").write_text("version: 1\npolicy: default\ncases: []\n")
    done = invoke("resolve")
    assert done.exit_code == 0
    assert done.stdout.startswith(
        "# Resolved policy (extends merged): <bundled>/claude-code.yaml <- <bundled>/default.yaml\n"
    )
    assert (invoke("resolve", ".").exit_code, invoke("resolve", ".").stderr) == (
        2,
        "clm-policy: .: is a folder: resolve takes one policy file, or a bundled name\n",
    )
    assert invoke("resolve", "a.test.yaml").stderr == (
        "clm-policy: a.test.yaml: is a policy test file: resolve the policy its `policy:` names\n"
    )


@pytest.mark.parametrize(
    "args",
    [
        ["lint", "-o", "-", str(REPO / "docs" / "examples" / "draft-policy.yaml")],
        ["test", "--output", "-", str(REPO / "policies" / "tests" / "option_c.test.yaml")],
    ],
    ids=["lint", "test"],
)
def test_output_dash_is_standard_output(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`-o -` wrote a file named `-`."""
    monkeypatch.chdir(tmp_path)
    done = invoke(*args)
    plain = invoke(*[a for a in args if a not in ("-o", "--output", "-")])
    assert (done.exit_code, done.stdout) == (plain.exit_code, plain.stdout)
    assert done.stdout.strip()
    assert list(tmp_path.iterdir()) == []


def test_handoff_help_and_readme_say_where_the_seed_is_printed(tmp_path: Path) -> None:
    """The text output gives the seed's size and --format json the seed: the help and the
    README said the command prints the seed."""
    from clm_policy.memory.init import init_memory

    memory = init_memory(tmp_path / "mem").path
    state = REPO / "docs" / "examples" / "session-state.json"
    text = invoke("handoff", "-m", str(memory), "-s", str(state))
    assert "characters for the next session (--format json prints it)" in text.stdout
    later = tmp_path / "later.json"  # a step later (at the same step nothing new is committed)
    later.write_text(json.dumps({**json.loads(state.read_text()), "step_index": 43}))
    seed = json.loads(
        invoke("handoff", "-m", str(memory), "-s", str(later), "--format", "json").stdout
    )
    assert seed["seed"]
    said = " ".join(invoke("handoff", "--help").stdout.split())
    assert "its size is printed, the seed itself with --format json" in said
    readme = " ".join((REPO / "README.md").read_text().split())
    assert "(its size in the text output; `--format json` prints it)" in readme


def test_trust_from_a_subfolder_names_the_file_relative_to_it(tmp_path: Path) -> None:
    """`cd shop/sub && clm-policy trust` named the configuration it found above by its
    absolute path: it is named from the working folder, as paths inside it are, when that
    is shorter (the memory it names too); the list, of every project, stays absolute."""
    shop = tmp_path / "deep" / "folders" / "to" / "shop"
    (shop / "sub").mkdir(parents=True)
    (shop / ".git").mkdir()  # a repository: its configuration counts in its subfolders
    (shop / ".clm-policy.yaml").write_text("version: 1\npolicy: claude-code\nmemory: ../mem\n")
    done = run_process("trust", cwd=shop / "sub")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:2] == [
        f"trusted ../.clm-policy.yaml (sha256 {done.stdout.split('sha256 ')[1][:12]})",
        "  memory  ../../mem",
    ]
    listed = run_process("trust", "--list", cwd=shop / "sub")
    assert str(shop / ".clm-policy.yaml") in listed.stdout
    revoked = run_process("trust", "--revoke", cwd=shop / "sub")
    assert (revoked.returncode, revoked.stdout) == (0, "revoked trust in ../.clm-policy.yaml\n")
