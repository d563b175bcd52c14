"""Claude Code's settings.json: the snippet, the merge that keeps everything else, --install."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from clm_policy.agents.hooks import claude_settings as cs
from clm_policy.base.errors import InputError
from clm_policy.base.paths import home_as_tilde

from conftest import as_shown, invoke, message_of, run_process

EXE = "/opt/tools/bin/clm-policy"
HOOK = f"{EXE} hook claude-code"
STATUS = f"{EXE} statusline"
SNIPPET = cs.snippet(EXE)


def ours(timeout: int) -> list[dict[str, Any]]:
    return [{"hooks": [{"type": "command", "command": HOOK, "timeout": timeout}]}]


def other(command: str, matcher: str | None = None) -> dict[str, Any]:
    group: dict[str, Any] = {"hooks": [{"type": "command", "command": command}]}
    if matcher is not None:
        group = {"matcher": matcher, **group}
    return group


def test_the_snippet() -> None:
    assert cs.snippet(EXE) == {
        "hooks": {
            "UserPromptSubmit": ours(30),
            "PreCompact": ours(60),
            "PostCompact": ours(30),
            "SessionStart": ours(30),
            "Stop": ours(60),
            "SubagentStop": ours(60),
        },
        "statusLine": {"type": "command", "command": STATUS, "refreshInterval": 5},
    }
    spaced = cs.snippet("/Users/me/My Tools/clm-policy")
    assert spaced["statusLine"]["command"] == "'/Users/me/My Tools/clm-policy' statusline"


def test_the_executable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "venv" / "bin" / "clm-policy"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setattr(sys, "argv", [str(script), "hook", "claude-code"])
    assert cs.executable() == str(script)
    monkeypatch.setattr(sys, "argv", ["/somewhere/clm_policy/__main__.py"])
    monkeypatch.setattr(sys, "executable", str(script.parent / "python"))
    assert cs.executable() == str(script)  # the one of this interpreter's environment
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(script.parent))
    assert cs.executable() == str(script)  # on PATH
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert cs.executable() == "clm-policy"


@pytest.mark.parametrize(
    ("command", "args", "expected"),
    [
        (HOOK, cs.HOOK_ARGS, True),
        ("clm-policy hook claude-code --profile research", cs.HOOK_ARGS, True),
        ("'/My Tools/clm-policy' hook claude-code", cs.HOOK_ARGS, True),
        ("/venv/bin/python -m clm_policy hook claude-code", cs.HOOK_ARGS, True),
        ("uvx clm-policy statusline", cs.STATUSLINE_ARGS, True),
        ("clm-policy statusline", cs.HOOK_ARGS, False),
        ("~/.claude/statusline.sh", cs.STATUSLINE_ARGS, False),
        ("my-tool statusline", cs.STATUSLINE_ARGS, False),
        ("echo clm-policy-hook claude-code", cs.HOOK_ARGS, False),
        ("clm-policy 'unbalanced", cs.HOOK_ARGS, False),
        (None, cs.HOOK_ARGS, False),
    ],
)
def test_which_commands_are_ours(command: object, args: tuple[str, ...], expected: bool) -> None:
    assert cs.runs_clm_policy(command, args) is expected


def test_merging_into_empty_settings() -> None:
    merged, changes = cs.merge({}, SNIPPET)
    assert merged == SNIPPET
    assert changes == [
        f"added UserPromptSubmit hook `{HOOK}`",
        f"added PreCompact hook `{HOOK}`",
        f"added PostCompact hook `{HOOK}`",
        f"added SessionStart hook `{HOOK}`",
        f"added Stop hook `{HOOK}`",
        f"added SubagentStop hook `{HOOK}`",
        f"added statusLine `{STATUS}`",
    ]
    assert cs.merge(merged, SNIPPET) == (merged, [])


def test_other_tools_hooks_and_settings_stay_where_they_are() -> None:
    settings = {
        "model": "opus",
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {
            "PreToolUse": [other("guard.sh", "Bash")],
            "PreCompact": [other("backup-transcript.sh", "manual|auto")],
            "Stop": [other("notify-send done")],
        },
        "env": {"A": "1"},
    }
    merged, changes = cs.merge(settings, SNIPPET)
    assert list(merged) == ["model", "permissions", "hooks", "env", "statusLine"]
    assert list(merged["hooks"]) == [
        "PreToolUse",
        "PreCompact",
        "Stop",
        "UserPromptSubmit",
        "PostCompact",
        "SessionStart",
        "SubagentStop",
    ]
    assert merged["hooks"]["PreToolUse"] == [other("guard.sh", "Bash")]
    assert merged["hooks"]["PreCompact"] == [
        other("backup-transcript.sh", "manual|auto"),
        *ours(60),
    ]
    assert merged["hooks"]["Stop"] == [other("notify-send done"), *ours(60)]
    assert settings["hooks"]["Stop"] == [other("notify-send done")]  # the input is not changed
    assert len(changes) == 7


def test_our_old_entries_are_replaced_in_place_never_duplicated() -> None:
    old = "/old/venv/bin/clm-policy hook claude-code"
    settings = {
        "hooks": {
            "PreCompact": [
                other("first.sh"),
                {"matcher": "auto", "hooks": [{"type": "command", "command": old}]},
                other("last.sh"),
            ],
            "Stop": [
                {
                    "hooks": [
                        {"type": "command", "command": "say done"},
                        {"type": "command", "command": old, "timeout": 5},
                    ]
                },
                other("python -m clm_policy hook claude-code"),
            ],
            "SessionStart": [{"hooks": [{"type": "command", "command": HOOK, "timeout": 1}]}],
        }
    }
    merged, changes = cs.merge(settings, SNIPPET)
    assert merged["hooks"]["PreCompact"] == [other("first.sh"), *ours(60), other("last.sh")]
    assert merged["hooks"]["Stop"] == [other("say done"), *ours(60)]
    assert merged["hooks"]["SessionStart"] == ours(30)
    assert changes == [
        f"added UserPromptSubmit hook `{HOOK}`",
        f"PreCompact hook: replaced `{old}` by `{HOOK}`",
        f"added PostCompact hook `{HOOK}`",
        f"SessionStart hook: updated `{HOOK}` (type, timeout, matcher)",
        f"Stop hook: replaced `{old}`, `python -m clm_policy hook claude-code` by `{HOOK}`",
        f"added SubagentStop hook `{HOOK}`",
        f"added statusLine `{STATUS}`",
    ]
    assert cs.merge(merged, SNIPPET)[1] == []


def test_a_status_line_of_another_tool_is_kept_unless_forced() -> None:
    settings = {"statusLine": {"type": "command", "command": "~/.claude/statusline.sh"}}
    merged, changes = cs.merge(settings, SNIPPET)
    assert merged["statusLine"] == settings["statusLine"]
    assert changes[-1] == (
        "statusLine: kept `~/.claude/statusline.sh` (another tool's; --force replaces it by "
        f"`{STATUS}`)"
    )
    merged, changes = cs.merge(settings, SNIPPET, force=True)
    assert merged["statusLine"] == SNIPPET["statusLine"]
    assert changes[-1] == f"statusLine: replaced `~/.claude/statusline.sh` by `{STATUS}` (--force)"


def test_our_status_line_is_updated_and_keeps_its_padding() -> None:
    settings = {"statusLine": {"type": "command", "command": "clm-policy statusline", "padding": 0}}
    merged, changes = cs.merge(settings, SNIPPET)
    assert merged["statusLine"] == {
        "type": "command",
        "command": STATUS,
        "refreshInterval": 5,  # ours fills what the person did not set
        "padding": 0,
    }
    assert changes[-1] == f"statusLine: replaced `clm-policy statusline` by `{STATUS}`"
    assert cs.merge(merged, SNIPPET)[1] == []


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"hooks": []}, "`hooks` is a list, expected an object"),
        ({"hooks": {"Stop": {"hooks": []}}}, "`hooks.Stop` is an object, expected a list"),
    ],
)
def test_settings_that_cannot_be_merged(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as err:
        cs.merge(settings, SNIPPET)
    assert str(err.value) == message


# -- install ------------------------------------------------------------------------------------


def install(path: Path, snippet: dict[str, Any], *, force: bool = False) -> list[str]:
    result, changes = cs.update_json(path, lambda data: cs.merge(data, snippet, force=force))
    return [*changes, result]


def test_install_creates_the_folder_and_the_file(tmp_path: Path) -> None:
    path = tmp_path / "proj" / ".claude" / "settings.json"
    changes = install(path, SNIPPET)
    assert changes[-1] == f"wrote {path}"
    assert json.loads(path.read_text()) == SNIPPET
    assert path.read_text().endswith("}\n")


def test_install_twice_changes_nothing_the_second_time(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(
        json.dumps({"hooks": {"Stop": [other("notify-send done")]}, "theme": "dark"}, indent=4)
    )
    path.chmod(0o600)
    install(path, SNIPPET)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # its permissions are kept
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    assert install(path, SNIPPET) == [f"{path}: already up to date; nothing written"]
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    data = json.loads(path.read_text())
    assert list(data) == ["hooks", "theme", "statusLine"]
    assert data["hooks"]["Stop"] == [other("notify-send done"), *ours(60)]


def test_install_keeps_a_foreign_status_line_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"statusLine": {"type": "command", "command": "ccline"}}')
    changes = install(path, SNIPPET)
    assert changes[-2:] == [
        f"statusLine: kept `ccline` (another tool's; --force replaces it by `{STATUS}`)",
        f"wrote {path}",
    ]
    assert json.loads(path.read_text())["statusLine"]["command"] == "ccline"
    assert install(path, SNIPPET)[-1] == f"{path}: already up to date; nothing written"
    install(path, SNIPPET, force=True)
    assert json.loads(path.read_text())["statusLine"]["command"] == STATUS


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"hooks": {,}}', "1:12: invalid JSON: Expecting property name enclosed in double quotes"),
        ('{\n  "a": 1,\n}', "3:1: invalid JSON: Expecting property name enclosed in double quotes"),
        ("\n  [1, 2]", "2:3: expected a JSON object (Claude Code settings), got a list"),
        ('{"a": 1, "a": 2}', "1:10: duplicate key 'a'"),
        ('{"hooks": "none"}', "`hooks` is a string, expected an object"),
        (
            '\ufeff{"model": "opus"}',
            "1:1: invalid JSON: a byte-order mark (U+FEFF) before it: save the file without one",
        ),
    ],
)
def test_a_file_that_is_not_a_settings_object_is_refused_and_unchanged(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        install(path, SNIPPET)
    separator = ": " if message.startswith("`") else ":"
    assert str(err.value) == f"{path}{separator}{message}"
    assert path.read_text() == text
    assert os.listdir(tmp_path) == ["settings.json"]


def test_an_empty_file_is_empty_settings(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("\n")
    install(path, SNIPPET)
    assert json.loads(path.read_text()) == SNIPPET


def test_a_symlinked_settings_file_is_updated_through_the_link(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "claude-settings.json"
    real.parent.mkdir()
    real.write_text('{"theme": "dark"}')
    link = tmp_path / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(real)
    install(link, SNIPPET)
    assert link.is_symlink()
    assert json.loads(real.read_text())["theme"] == "dark"
    assert json.loads(real.read_text())["statusLine"] == SNIPPET["statusLine"]


# -- settings_command and the CLI ----------------------------------------------------------------


def test_print_settings() -> None:
    code, text = cs.settings_command(True, False, "project", False, Path.cwd())
    assert code == 0
    assert json.loads(text) == cs.snippet(cs.executable())


def test_install_user_writes_under_home(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    code, text = cs.settings_command(False, True, "user", False, tmp_path)
    path = home / ".claude" / "settings.json"
    assert code == 0
    assert text.splitlines()[0] == f"wrote {as_shown(path)}"
    assert json.loads(path.read_text()) == cs.snippet(cs.executable())
    assert not (tmp_path / ".claude").exists()
    code, text = cs.settings_command(False, True, "user", False, tmp_path)
    assert text == f"{as_shown(path)}: already up to date; nothing written"


def test_install_project_notes_hooks_in_the_user_settings_too(tmp_path: Path) -> None:
    cs.settings_command(False, True, "user", False, tmp_path)
    _, text = cs.settings_command(False, True, "project", False, tmp_path)
    user = Path(os.environ["HOME"]) / ".claude" / "settings.json"
    assert text.splitlines()[:2] == [
        f"wrote {tmp_path / '.clm-policy.yaml'} (policy claude-code, profile coding)",
        f"wrote {tmp_path / '.claude' / 'settings.json'}",
    ]
    assert text.splitlines()[-1] == (
        f"note: {as_shown(user)} runs clm-policy's hooks too, and Claude Code runs the hooks of both "
        "files: keep them in one."
    )


def test_settings_command_needs_an_action() -> None:
    with pytest.raises(InputError, match="give --print-settings or --install"):
        cs.settings_command(False, False, "project", False, Path.cwd())


def test_the_cli_installs_and_refuses_a_broken_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke("hook", "claude-code", "--install", "--project")
    path = tmp_path / ".claude" / "settings.json"
    assert result.exit_code == 0
    assert f"\nwrote {as_shown(path)}\n  added UserPromptSubmit hook `" in result.stdout
    path.write_text("{oops")
    result = invoke("hook", "claude-code", "--install")
    assert (result.exit_code, result.stdout) == (2, "")
    assert message_of(result.stderr) == (
        f"{as_shown(path)}:1:2: invalid JSON: Expecting property name enclosed in double quotes\n"
    )
    assert path.read_text() == "{oops"


def test_install_sets_a_project_up_in_one_command(tmp_path: Path) -> None:
    from clm_policy.config.project import read_config

    code, text = cs.settings_command(False, True, "project", False, tmp_path)
    assert code == 0
    assert read_config(tmp_path / ".clm-policy.yaml")[0]["policy"] == "claude-code"
    assert text.splitlines()[0] == (
        f"wrote {tmp_path / '.clm-policy.yaml'} (policy claude-code, profile coding)"
    )
    # a project configured already keeps its configuration
    (tmp_path / ".clm-policy.yaml").write_text("version: 1\npolicy: default\n")
    cs.settings_command(False, True, "project", False, tmp_path)
    assert read_config(tmp_path / ".clm-policy.yaml")[0]["policy"] == "default"
    # --user never writes a project's configuration
    other = tmp_path / "other"
    other.mkdir()
    cs.settings_command(False, True, "user", False, other)
    assert not (other / ".clm-policy.yaml").exists()


def test_install_user_writes_the_settings_claude_code_config_dir_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code reads ``$CLAUDE_CONFIG_DIR/settings.json`` when that is set: --install
    --user writes that file and says so, and leaves ~/.claude alone."""
    config = tmp_path / "claude-config"
    project = tmp_path / "shop"
    project.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    proc = run_process("hook", "claude-code", "--install", "--user", cwd=project)
    assert (proc.returncode, message_of(proc.stderr)) == (0, "")
    path = config / "settings.json"
    assert proc.stdout.splitlines()[0] == f"wrote {home_as_tilde(str(path))}"
    assert "To undo: clm-policy hook claude-code --uninstall --user." in proc.stdout
    assert (
        json.loads(path.read_text())["hooks"].keys() == cs.snippet(cs.executable())["hooks"].keys()
    )
    assert not (Path(os.environ["HOME"]) / ".claude").exists()
    assert not (project / ".claude").exists()
    # the project's install finds the user's hooks where Claude Code reads them
    proc = run_process("hook", "claude-code", "--install", "--project", cwd=project)
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[-1] == (
        f"note: {home_as_tilde(str(path))} runs clm-policy's hooks too, and Claude Code "
        "runs the hooks of both files: keep them in one."
    )


@pytest.mark.parametrize("dangling", ["settings.json", ".claude"])
def test_a_link_to_nothing_is_refused_and_nothing_is_created_where_it_points(
    tmp_path: Path, dangling: str
) -> None:
    """A cloned project's ``.claude/settings.json`` (or ``.claude``) may be a link to a place
    that does not exist: --install creates neither the file nor its folders there."""
    project = tmp_path / "shop"
    (project / ".claude").mkdir(parents=True)
    nowhere = tmp_path / "elsewhere" / "deep" / "x"
    link = project / ".claude" / dangling if dangling == "settings.json" else project / ".claude"
    if dangling == ".claude":
        link.rmdir()
    link.symlink_to(nowhere)
    result = run_process("hook", "claude-code", "--install", "--project", cwd=project)
    assert (result.returncode, result.stdout) == (2, "")
    assert message_of(result.stderr) == (
        f"{link}: a symbolic link to {nowhere}, which does not exist: nothing written (create "
        "that file, or remove the link)\n"
    )
    assert not (tmp_path / "elsewhere").exists()
    assert link.is_symlink()


def test_a_settings_file_that_cannot_be_merged_stops_the_install_before_the_configuration(
    tmp_path: Path,
) -> None:
    """--install --project in a project without .clm-policy.yaml writes it only once the
    settings can be merged: a broken settings.json leaves the project as it was."""
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": []}')
    result = run_process("hook", "claude-code", "--install", "--project", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert message_of(result.stderr) == f"{settings}: `hooks` is a list, expected an object\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".claude"]
    assert settings.read_text() == '{"hooks": []}'


USERS = {
    "model": "opus",
    "hooks": {
        "UserPromptSubmit": [other("echo mine", matcher="")],
        "Stop": [{"hooks": [{"type": "command", "command": "echo stop"}]}],
    },
    "permissions": {"allow": ["Bash(ls:*)"]},
}


@pytest.mark.parametrize("theirs", [USERS, {**USERS, "statusLine": {"command": "my-status"}}, {}])
def test_uninstall_takes_out_what_install_put_in_and_nothing_else(
    tmp_path: Path, theirs: dict[str, Any]
) -> None:
    """--install twice then --uninstall leaves the person's settings as they were (their own
    hooks and status line kept); a second --uninstall writes nothing."""
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(theirs))
    for _ in range(2):
        assert run_process("hook", "claude-code", "--install", cwd=tmp_path).returncode == 0
    done = run_process("hook", "claude-code", "--uninstall", "--project", cwd=tmp_path)
    assert done.returncode == 0, message_of(done.stderr)
    lines = done.stdout.splitlines()
    assert lines[0] == f"wrote {as_shown(settings, tmp_path)}"
    assert lines[1].startswith("  removed UserPromptSubmit hook `")
    assert lines[1].endswith(" hook claude-code`")
    assert ("  removed statusLine `" in done.stdout) is ("statusLine" not in theirs)
    assert lines[-1] == "The project's .clm-policy.yaml and its memory repository are kept."
    assert json.loads(settings.read_text()) == theirs
    again = run_process("hook", "claude-code", "--uninstall", cwd=tmp_path)
    assert (again.returncode, again.stdout) == (
        0,
        f"{as_shown(settings, tmp_path)}: no clm-policy hooks in it; nothing written\n",
    )
    assert (tmp_path / ".clm-policy.yaml").is_file()


def test_uninstall_refuses_a_broken_file_and_creates_none(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    done = run_process("hook", "claude-code", "--uninstall", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (
        0,
        f"{as_shown(settings, tmp_path)}: no clm-policy hooks in it; nothing written\n",
    )
    assert not settings.parent.exists()
    settings.parent.mkdir()
    settings.write_text("{oops")
    refused = run_process("hook", "claude-code", "--uninstall", cwd=tmp_path)
    assert (refused.returncode, refused.stdout) == (2, "")
    assert message_of(refused.stderr) == (
        f"{as_shown(settings, tmp_path)}:1:2: invalid JSON: Expecting property name enclosed in double quotes\n"
    )
    assert settings.read_text() == "{oops"
    usage = run_process("hook", "claude-code", "--uninstall", "--force", cwd=tmp_path)
    assert usage.returncode == 2
    assert "--force goes with --install" in usage.stderr


def test_uninstall_user_and_codex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    monkeypatch.chdir(tmp_path)
    user = Path(os.environ["HOME"]) / ".claude" / "settings.json"
    assert invoke("hook", "claude-code", "--install", "--user").exit_code == 0
    done = invoke("hook", "claude-code", "--uninstall", "--user")
    assert done.exit_code == 0, message_of(done.stderr)
    assert json.loads(user.read_text()) == {}
    hooks = tmp_path / ".codex" / "hooks.json"
    hooks.parent.mkdir()
    theirs = {"hooks": {"Stop": [other("echo mine")]}}
    hooks.write_text(json.dumps(theirs))
    assert invoke("hook", "codex", "--install").exit_code == 0
    assert invoke("hook", "claude-code", "--uninstall").stdout.endswith(
        "no clm-policy hooks in it; nothing written\n"
    )  # Claude Code's file: Codex's hooks are not its
    done = invoke("hook", "codex", "--uninstall", "--project")
    assert done.exit_code == 0, message_of(done.stderr)
    assert json.loads(hooks.read_text()) == theirs
    assert invoke("hook", "codex", "--uninstall", "--user").stdout == (
        f"{as_shown(tmp_path / 'codex-home' / 'hooks.json')}: no clm-policy hooks in it; "
        "nothing written\n"
    )


@pytest.mark.parametrize(
    "args",
    [
        ("hook", "claude-code", "--install", "--project"),
        ("hook", "claude-code", "--uninstall", "--project"),
        ("hook", "codex", "--install", "--project"),
        ("mcp", "--install", "--project"),
    ],
    ids=["install", "uninstall", "codex", "mcp"],
)
def test_a_read_only_settings_file_is_refused_and_left_as_it_is(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    """A file its owner made read-only is not replaced (an atomic rename would replace it, and
    the superuser's writes are never stopped by its permissions): exit 2, nothing written."""
    (tmp_path / ".clm-policy.yaml").write_text("version: 1\npolicy: claude-code\n")
    name = {"codex": ".codex/hooks.json", "mcp": ".mcp.json"}.get(
        args[1] if args[0] == "hook" else "mcp", ".claude/settings.json"
    )
    path = tmp_path / name
    path.parent.mkdir(exist_ok=True)
    if args[2:3] == ("--uninstall",):
        assert run_process("hook", "claude-code", "--install", cwd=tmp_path).returncode == 0
    before = path.read_text() if path.exists() else "{}\n"
    path.write_text(before)
    path.chmod(0o444)
    result = run_process(*args, cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert message_of(result.stderr) == (
        f"{path}: read-only (mode 0444): nothing written; make it writable (chmod u+w {path}) "
        "for clm-policy to change it\n"
    )
    assert (path.read_text(), stat.S_IMODE(path.stat().st_mode)) == (before, 0o444)


def test_a_read_only_file_that_needs_no_change_is_no_error(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    assert run_process("hook", "claude-code", "--install", cwd=tmp_path).returncode == 0
    path.chmod(0o444)
    result = run_process("hook", "claude-code", "--install", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (
        0,
        f"{as_shown(path, tmp_path)}: already up to date; nothing written\n",
    )


def test_a_file_that_cannot_be_written_is_an_input_error_and_says_what_stays(
    tmp_path: Path,
) -> None:
    """A settings file whose folder cannot be made (here ``.claude`` is a file; a folder
    not yours, a read-only disk are the same) is exit 2 and a line, never an internal error;
    the project's configuration, written before it, is named."""
    (tmp_path / ".claude").write_text("not a folder")
    result = run_process("hook", "claude-code", "--install", "--project", cwd=tmp_path)
    settings = tmp_path / ".claude" / "settings.json"
    assert (result.returncode, result.stdout) == (2, "")
    assert message_of(result.stderr) == (
        f"{as_shown(settings, tmp_path)}: cannot write it: Not a directory; nothing written "
        f"({as_shown(tmp_path / '.clm-policy.yaml', tmp_path)}, written before it, stays)\n"
    )
    assert (tmp_path / ".claude").read_text() == "not a folder"
    # with the configuration there already, nothing else is said
    hooks = tmp_path / ".codex" / "hooks.json"
    (tmp_path / ".codex").write_text("not a folder")
    result = run_process("hook", "codex", "--install", "--project", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert message_of(result.stderr) == (
        f"{as_shown(hooks, tmp_path)}: cannot write it: Not a directory; nothing written\n"
    )


def test_a_configuration_that_cannot_be_written_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / ".clm-policy.yaml").mkdir()  # a folder of its name: not a configuration
    result = run_process("hook", "claude-code", "--install", "--project", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert message_of(result.stderr) == (
        f"{tmp_path / '.clm-policy.yaml'}: cannot write it: Is a directory; nothing written\n"
    )
    assert not (tmp_path / ".claude").exists()


BROKEN_PROJECTS = {
    "missing-policy": (
        "version: 1\npolicy: nothere.yaml\n",
        ".clm-policy.yaml:2:9: no policy file 'nothere.yaml' (a path is relative to this file's "
        "folder)",
    ),
    "unknown-profile": (
        "version: 1\nprofile: reserch\n",
        ".clm-policy.yaml:2:10: unknown profile 'reserch'; did you mean 'research'? (policy "
        "claude-code has: coding, research, exploration, tool_heavy, multi_agent)",
    ),
    "broken-policy": (
        "version: 1\npolicy: mine.yaml\n",
        "mine.yaml:3:1: YAML syntax error: did not find expected node content (while parsing a "
        "flow node)",
    ),
}


@pytest.mark.parametrize("case", BROKEN_PROJECTS, ids=list(BROKEN_PROJECTS))
@pytest.mark.parametrize(
    "args",
    [
        ("hook", "claude-code", "--install", "--project"),
        ("hook", "codex", "--install", "--project"),
        ("hook", "claude-code", "--install", "--plugin", "--project"),
        ("init", "--claude-code"),
    ],
    ids=["claude-code", "codex", "plugin", "init"],
)
def test_a_project_whose_policy_cannot_be_loaded_is_refused_before_anything_is_written(
    tmp_path: Path, args: tuple[str, ...], case: str
) -> None:
    """Hooks installed where the project's configuration names a policy or a profile that
    cannot be loaded would answer nothing, and say so only in their log: the install says so,
    at its place, and writes nothing (it was exit 0)."""
    config, message = BROKEN_PROJECTS[case]
    (tmp_path / ".clm-policy.yaml").write_text(config)
    (tmp_path / "mine.yaml").write_text("version: 1\nrules: [\n")
    result = run_process(*args, cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert message_of(result.stderr) == (
        f"{tmp_path}/{message}; the hooks would answer nothing until it is fixed: nothing written\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == [".clm-policy.yaml", "mine.yaml"]
    assert not (Path(os.environ["HOME"]) / ".local" / "share" / "clm-policy").exists()
