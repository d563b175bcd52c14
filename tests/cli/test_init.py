"""``clm-policy init --claude-code`` and ``init --codex`` as processes in a new project: each
says the steps of the agent chosen (a Codex user is never told to install Claude Code's hooks),
and the steps it prints run as written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from clm_policy.base.errors import shorten
from clm_policy.config.project import project_memory

from conftest import as_shown, git, message_of, run_process

CODEX_STEPS = [
    "next: clm-policy hook codex --install --project   # Codex: the hooks",
    "      codex   # trust this folder when Codex asks, then /hooks to review the hooks "
    "(untrusted ones never run)",
]
CLAUDE_STEPS = [
    "next: clm-policy hook claude-code --install --project   # Claude Code: the hooks",
    "      clm-policy mcp --install --project           # optional: the agent's MCP tools "
    "(handoff, status, memory)",
]


def init(project: Path, *args: str) -> list[str]:
    done = run_process("init", *args, cwd=project)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def run_step(line: str, cwd: Path) -> None:
    """Run a printed step as a person would paste it (this worktree's clm-policy first)."""
    command = line.removeprefix("next: ").strip()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, (command, done.stderr)


def test_init_codex_says_the_codex_steps(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    out = init(project, "--codex")
    memory = project_memory(project)
    assert out[:2] == [
        f"wrote {as_shown(project / '.clm-policy.yaml', project)} (policy claude-code, profile coding)",
        f"created memory repository {as_shown(memory, project)} (commit {git(Path(memory), 'rev-parse', '--short=12', 'HEAD').strip()})",
    ]
    assert out[2:] == CODEX_STEPS
    assert not any("claude" in line.lower() and "hook" in line for line in out)
    run_step(out[2], project)
    hooks = json.loads((project / ".codex" / "hooks.json").read_text())
    assert sorted(hooks["hooks"]) == [
        "PostCompact",
        "PreCompact",
        "SessionStart",
        "Stop",
        "SubagentStop",
        "UserPromptSubmit",
    ]
    # again, with the hooks file there: the same step, which merges and keeps the file's own
    again = init(project, "--codex")
    assert again[2:] == CODEX_STEPS


def test_init_claude_code_says_only_claude_codes_steps(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    out = init(project, "--claude-code")
    assert out[2:] == CLAUDE_STEPS
    assert not any("codex" in line.lower() for line in out)
    run_step(out[2], project)
    assert (project / ".claude" / "settings.json").is_file()


def test_both_agents_and_another_folder(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    out = init(tmp_path, "--claude-code", "--codex", "--project", "shop")
    # the project's own memory, not ./clm-memory of the folder init ran in
    assert out[1].startswith(
        f"created memory repository {as_shown(project_memory(project), project)} (commit "
    )
    assert not (tmp_path / "clm-memory").exists()
    assert out[2:] == [
        "next: cd shop",
        *(f"      {line.removeprefix('next: ').lstrip()}" for line in CLAUDE_STEPS),
        *(f"      {line.removeprefix('next: ').lstrip()}" for line in CODEX_STEPS),
    ]


def test_options_that_need_an_agent(tmp_path: Path) -> None:
    for args, message in (
        ([], "give DIR, or --claude-code or --codex to set a project up"),
        (["mem", "--remote", "origin"], "--remote goes with --claude-code or --codex"),
        (["--codex", "--mcp"], "--mcp goes with --claude-code"),
        (["mem", "--project", "shop"], "--project goes with --claude-code or --codex"),
    ):
        done = run_process("init", *args, cwd=tmp_path)
        assert (done.returncode, done.stderr) == (
            2,
            f"clm-policy init: {message} (try 'clm-policy init --help')\n",
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_init_with_a_remote_says_how_to_add_it_to_the_memory(tmp_path: Path) -> None:
    """The memory repository is new, with no remote: the handoffs' pushes would fail until
    it has one, so init says how to add it (and the command it prints works)."""
    project = tmp_path / "shop"
    project.mkdir()
    out = init(project, "--claude-code", "--remote", "origin")
    memory = project_memory(project)
    note = (
        "note: the memory repository has no remote 'origin' yet; handoffs are pushed from it: "
        f"git -C {memory} remote add -- origin URL"
    )
    assert note in out
    bare = tmp_path / "team.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    run_step(note.split(": ", 2)[2].replace("URL", str(bare)), project)
    assert git(Path(memory), "remote").split() == ["origin"]
    assert note not in init(project, "--claude-code", "--remote", "origin")
    other = tmp_path / "other"
    other.mkdir()
    assert not any(
        line.startswith("note:") for line in init(other, "--claude-code", "--remote", str(bare))
    )


def test_init_refuses_a_remote_it_would_not_write_or_that_is_an_option(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    config = project / ".clm-policy.yaml"
    refused = run_process("init", "--claude-code", "--remote=--upload-pack=x", cwd=project)
    assert (refused.returncode, refused.stderr) == (
        2,
        "clm-policy: invalid remote '--upload-pack=x': it must not be empty or start with '-'\n",
    )
    assert not config.exists()
    init(project, "--claude-code")
    before = config.read_text()
    again = run_process("init", "--claude-code", "--remote", "origin", cwd=project)
    assert (again.returncode, again.stderr) == (
        2,
        f"clm-policy: {config}: already there, and init writes no file over it: add "
        f"`remote: origin` to it yourself, then run clm-policy trust {config}\n",
    )
    assert config.read_text() == before


def test_a_broken_mcp_json_stops_init_mcp_before_anything_is_written(tmp_path: Path) -> None:
    """``init --claude-code --mcp`` with a ``.mcp.json`` it cannot merge into writes neither
    the configuration nor the memory repository (it wrote both, then stopped at the file)."""
    project = tmp_path / "shop"
    project.mkdir()
    (project / ".mcp.json").write_text("{,}")
    refused = run_process("init", "--claude-code", "--mcp", cwd=project)
    assert (refused.returncode, refused.stdout) == (2, "")
    assert message_of(refused.stderr) == (
        ".mcp.json:1:2: invalid JSON: Expecting property name enclosed in double quotes\n"
    )
    assert sorted(p.name for p in project.iterdir()) == [".mcp.json"]
    assert not os.path.exists(project_memory(project))
    assert (project / ".mcp.json").read_text() == "{,}"


def test_a_remote_the_file_cannot_hold_or_git_cannot_name_is_refused_before_writing(
    tmp_path: Path,
) -> None:
    """--remote is written into .clm-policy.yaml as it is: one that would not read back (a
    control character, `` #``, quotes) left a file every command refused, or one naming
    another remote; a name git refuses for a remote was trusted and failed at each push."""
    cases = {
        "a/\x1b[31mred": "remote 'a/\\x1b[31mred' cannot be written into .clm-policy.yaml: "
        "unprintable character U+001B in a value",
        "team/x #c": "remote 'team/x #c' cannot be written into .clm-policy.yaml: it would "
        "read back as 'team/x'",
        "'origin'": "remote \"'origin'\" cannot be written into .clm-policy.yaml: it would "
        "read back as 'origin'",
        "&a/b": "remote '&a/b' cannot be written into .clm-policy.yaml: expected a plain or "
        "quoted string, got '&a/b'",
        "bad name;rm": "invalid remote 'bad name;rm': not a name git takes for a remote",
    }
    for i, (remote, message) in enumerate(cases.items()):
        project = tmp_path / f"p{i}"
        project.mkdir()
        refused = run_process("init", "--claude-code", "--remote", remote, cwd=project)
        assert (refused.returncode, refused.stdout) == (2, "")
        assert refused.stderr == f"clm-policy: {message}\n"
        assert list(project.iterdir()) == []
        assert not os.path.exists(project_memory(project))


def test_the_git_remote_command_init_prints_is_quoted_for_the_shell(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    out = init(project, "--claude-code", "--remote", "team$x")
    memory = project_memory(project)
    assert (
        "note: the memory repository has no remote 'team$x' yet; handoffs are pushed from it: "
        f"git -C {memory} remote add -- 'team$x' URL"
    ) in out


def test_init_dir_says_what_is_wrong_with_it_and_quotes_the_next_step(tmp_path: Path) -> None:
    """A file is "not a folder" (it was "not empty", of an empty file), an empty DIR is
    named as such (it was the working folder, "."), and the next step runs as printed."""
    (tmp_path / "f").touch()
    for args, message in (
        (["f"], "f: exists and is not a folder; choose a new or empty folder"),
        ([""], "an empty folder name: name a new or empty folder"),
    ):
        done = run_process("init", *args, cwd=tmp_path)
        assert (done.returncode, done.stderr) == (2, f"clm-policy: {message}\n")
    out = init(tmp_path, "my mem")
    assert out[1] == "next: clm-policy compact --memory 'my mem' --state STATE.json"


def test_a_project_that_is_a_file_is_not_a_folder(tmp_path: Path) -> None:
    (tmp_path / "f").touch()
    done = run_process("init", "--codex", "--project", "f", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (2, "clm-policy: f: not a folder\n")
    done = run_process("init", "--codex", "--project", "nosuch", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (2, "clm-policy: nosuch: no such project folder\n")
    done = run_process("init", "--codex", "--project", "d" * 5000, cwd=tmp_path)  # too long
    assert (done.returncode, done.stderr) == (
        2,
        f"clm-policy: {shorten('d' * 5000)}: no such project folder\n",
    )


def test_init_claude_code_dir_is_the_memory_the_project_uses(tmp_path: Path) -> None:
    """``init --claude-code DIR`` names DIR in the file it writes and trusts it to: the
    commands and hooks then use DIR (they used the project's default, which init never made:
    `log` said "no such memory repository"). A file already there that names another memory
    is refused before anything is made."""
    project = tmp_path / "shop"
    project.mkdir()
    git(project, "init", "-q")
    out = init(project, "--claude-code", "team-memory")
    assert out[:3] == [
        f"wrote {as_shown(project / '.clm-policy.yaml', project)} (policy claude-code, profile coding)",
        "trusted it to use the memory repository team-memory (clm-policy trust --list)",
        out[2],
    ]
    assert out[2].startswith("created memory repository team-memory (commit ")
    assert "\nmemory: team-memory\n" in (project / ".clm-policy.yaml").read_text()
    log = run_process("log", cwd=project)
    assert (log.returncode, log.stderr) == (0, "")
    assert "clm(init): memory repository" in log.stdout
    assert init(project, "--claude-code", "team-memory")[1] == (
        "team-memory: already a clm-policy memory repository; nothing changed"
    )
    other = run_process("init", "--codex", str(tmp_path / "elsewhere"), cwd=project)
    assert (other.returncode, other.stdout) == (2, "")
    assert other.stderr == (
        f"clm-policy: {project / '.clm-policy.yaml'}: already there, and init writes no file "
        "over it: add `memory: ../elsewhere` to it yourself, then run clm-policy trust "
        f"{project / '.clm-policy.yaml'}\n"
    )
    assert not (tmp_path / "elsewhere").exists()


def test_a_dir_that_cannot_be_the_memory_stops_init_before_the_configuration(
    tmp_path: Path,
) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").touch()
    done = run_process("init", "--claude-code", "full", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "clm-policy: full: exists and is not empty (and is not a memory repository); choose a "
        "new or empty folder\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full"]  # no .clm-policy.yaml


def test_init_dir_that_cannot_be_made_says_why_and_leaves_nothing(tmp_path: Path) -> None:
    """A DIR under a file, or a name longer than the file system takes: exit 2 saying why
    (both were internal errors, exit 3), and no folder left behind (not even the folder
    above it that init had made)."""
    (tmp_path / "f").touch()
    long = "a" * 300
    for args, message in (
        (["f/mem"], f"f/mem: cannot create it: {tmp_path / 'f'} is a file, not a folder"),
        (["f/a/mem"], f"f/a/mem: cannot create it: {tmp_path / 'f'} is a file, not a folder"),
        ([long], f"…{long[-200:]}: cannot create it: File name too long"),
        ([f"x/{long}/m"], f"…{f'x/{long}/m'[-200:]}: cannot create it: File name too long"),
    ):
        done = run_process("init", *args, cwd=tmp_path)
        assert (done.returncode, done.stderr) == (2, f"clm-policy: {message}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]
