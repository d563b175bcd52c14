"""``clm-policy mcp``: registering the server with Claude Code (``--install``), the server as
a real process over standard input and output, and a clear exit 2 without the MCP SDK."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from clm_policy.agents.hooks.claude_settings import executable

from conftest import as_shown, invoke

EXE = executable()
OURS = {"type": "stdio", "command": EXE, "args": ["mcp"]}
APPROVE = (
    "Claude Code asks once whether to use a project's MCP servers: approve clm-policy (or list "
    "it in enabledMcpjsonServers in .claude/settings.local.json)."
)


def tools(settings: object = Path(".claude", "settings.json")) -> str:
    """The install's last line, naming the settings file ``settings`` for the permission."""
    return (
        "Its tools are mcp__clm-policy__handoff, __status, __explain, __memory_search, "
        "__memory_read and __memory_write; to call them without a prompt add "
        f'"mcp__clm-policy" to permissions.allow in {settings}.'
    )


TOOLS = tools()


def test_install_project_merges_into_mcp_json_keeping_other_servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    other = {"command": "npx", "args": ["-y", "some-server"], "env": {"K": "v"}}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": other}, "x": 1}))
    result = invoke("mcp", "--install", "--project")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"wrote {as_shown(tmp_path / '.mcp.json')}",
        f"  added MCP server clm-policy `{EXE} mcp`",
        APPROVE,
        TOOLS,
    ]
    written = json.loads((tmp_path / ".mcp.json").read_text())
    assert written == {"mcpServers": {"other": other, "clm-policy": OURS}, "x": 1}

    again = invoke("mcp", "--install")  # --project is the default
    assert again.stdout.splitlines()[0] == (
        f"{as_shown(tmp_path / '.mcp.json')}: already up to date; nothing written"
    )
    assert json.loads((tmp_path / ".mcp.json").read_text()) == written

    stale = {**written, "mcpServers": {**written["mcpServers"], "clm-policy": {"command": "old"}}}
    (tmp_path / ".mcp.json").write_text(json.dumps(stale))
    replaced = invoke("mcp", "--install")
    assert replaced.stdout.splitlines()[1] == (
        f"  MCP server clm-policy: replaced `old` by `{EXE} mcp`"
    )


def test_install_user_writes_claude_codes_own_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "claude"
    config.mkdir()
    (config / ".claude.json").write_text(json.dumps({"numStartups": 3, "projects": {}}))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    monkeypatch.chdir(tmp_path)
    result = invoke("mcp", "--install", "--user")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"wrote {as_shown(config / '.claude.json')}",
        f"  added MCP server clm-policy `{EXE} mcp`",
        tools(config / "settings.json"),  # the user's settings, not the project's
    ]
    data = json.loads((config / ".claude.json").read_text())
    assert data == {"numStartups": 3, "projects": {}, "mcpServers": {"clm-policy": OURS}}
    assert not (tmp_path / ".mcp.json").exists()

    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    result = invoke("mcp", "--install", "--user")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[-1] == tools(home / ".claude" / "settings.json")
    assert json.loads((home / ".claude.json").read_text()) == {"mcpServers": {"clm-policy": OURS}}


def test_install_over_an_entry_of_ours_keeps_the_keys_it_does_not_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    mine = {"command": "/old/clm-policy", "env": {"X": "1"}, "args": ["mcp"], "timeout": 30}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"clm-policy": mine}}))
    result = invoke("mcp", "--install")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[:2] == [
        f"wrote {as_shown(tmp_path / '.mcp.json')}",
        f"  MCP server clm-policy: replaced `/old/clm-policy mcp` by `{EXE} mcp` (kept its env, "
        "timeout)",
    ]
    entry = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["clm-policy"]
    assert entry == {**OURS, "env": {"X": "1"}, "timeout": 30}
    assert list(entry) == ["command", "env", "args", "timeout", "type"]  # in their order
    again = invoke("mcp", "--install")
    assert again.stdout.splitlines()[0] == (
        f"{as_shown(tmp_path / '.mcp.json')}: already up to date; nothing written"
    )


def test_install_into_a_broken_file_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".mcp.json").write_text('{"mcpServers": []}')
    result = invoke("mcp", "--install")
    assert result.exit_code == 2
    assert result.stderr == f"{tmp_path / '.mcp.json'}: `mcpServers` is not an object\n"
    (tmp_path / ".mcp.json").write_text('{"mcpServers": ')
    result = invoke("mcp", "--install")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"{as_shown(tmp_path / '.mcp.json')}:1:")
    assert (tmp_path / ".mcp.json").read_text() == '{"mcpServers": '


def test_uninstall_takes_out_only_our_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    other = {"command": "npx", "args": ["-y", "some-server"]}
    before = {"x": 1, "mcpServers": {"other": other}}
    (tmp_path / ".mcp.json").write_text(json.dumps(before))
    assert invoke("mcp", "--install").exit_code == 0
    assert invoke("mcp", "--install").exit_code == 0
    result = invoke("mcp", "--uninstall")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"wrote {as_shown(tmp_path / '.mcp.json')}",
        f"  removed MCP server clm-policy `{EXE} mcp`",
    ]
    assert json.loads((tmp_path / ".mcp.json").read_text()) == before
    again = invoke("mcp", "--uninstall", "--project")
    assert (again.exit_code, again.stdout) == (
        0,
        f"{as_shown(tmp_path / '.mcp.json')}: no clm-policy MCP server in it; nothing written\n",
    )


def test_uninstall_user_empties_what_install_made_and_writes_no_missing_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "claude"
    config.mkdir()
    (config / ".claude.json").write_text(json.dumps({"numStartups": 3}))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    monkeypatch.chdir(tmp_path)
    assert invoke("mcp", "--install", "--user").exit_code == 0
    result = invoke("mcp", "--uninstall", "--user")
    assert result.exit_code == 0, result.stderr
    assert json.loads((config / ".claude.json").read_text()) == {"numStartups": 3}
    missing = invoke("mcp", "--uninstall")  # the project has no .mcp.json
    assert missing.exit_code == 0, missing.stderr
    assert "no clm-policy MCP server in it; nothing written" in missing.stdout
    assert not (tmp_path / ".mcp.json").exists()
    (tmp_path / ".mcp.json").write_text('{"mcpServers": ')
    broken = invoke("mcp", "--uninstall")
    assert broken.exit_code == 2
    assert broken.stderr.startswith(f"{as_shown(tmp_path / '.mcp.json')}:1:")
    assert (tmp_path / ".mcp.json").read_text() == '{"mcpServers": '


def test_a_claude_json_of_many_megabytes_is_claude_codes_and_is_merged_into(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """~/.claude.json keeps every project's history (tens of MB is common): --user merges into
    one of 5 MB and takes the server out again (it was refused as "too large for a settings
    file (more than 4 MiB)"); a project's .mcp.json keeps the settings files' bound."""
    config = tmp_path / "claude"
    config.mkdir()
    history = {f"/src/p{i}": {"history": ["x" * 500] * 10} for i in range(1000)}
    before = {"numStartups": 3, "projects": history}
    (config / ".claude.json").write_text(json.dumps(before))
    assert (config / ".claude.json").stat().st_size > 4 * 1024 * 1024
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    monkeypatch.chdir(tmp_path)
    result = invoke("mcp", "--install", "--user")
    assert (result.exit_code, result.stderr) == (0, "")
    data = json.loads((config / ".claude.json").read_text())
    assert (data["mcpServers"], data["projects"] == history) == ({"clm-policy": OURS}, True)
    result = invoke("mcp", "--uninstall", "--user")
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads((config / ".claude.json").read_text()) == before
    (tmp_path / ".mcp.json").write_text(json.dumps(before))
    result = invoke("mcp", "--install", "--project")
    assert (result.exit_code, result.stderr) == (
        2,
        f"{as_shown(tmp_path / '.mcp.json')}: too large for a settings file (more than 4 MiB)\n",
    )


def test_init_claude_code_offers_the_server_and_mcp_installs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    plain = invoke("init", "--claude-code", "--project", str(tmp_path / "a"))
    assert plain.exit_code == 2  # no such folder
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    plain = invoke("init", "--claude-code", "--project", str(tmp_path / "a"))
    assert plain.exit_code == 0, plain.stderr
    assert plain.stdout.splitlines()[-1] == (
        "      clm-policy mcp --install --project           # optional: the agent's MCP tools "
        "(handoff, status, memory)"
    )
    assert not (tmp_path / "a" / ".mcp.json").exists()
    here = invoke("init", "--claude-code", "--mcp")  # (the default project, "."): its path too
    assert f"wrote {as_shown(tmp_path / '.mcp.json')}" in here.stdout.splitlines()
    withmcp = invoke("init", "--claude-code", "--mcp", "--project", str(tmp_path / "b"))
    assert withmcp.exit_code == 0, withmcp.stderr
    assert f"wrote {as_shown(tmp_path / 'b' / '.mcp.json')}" in withmcp.stdout.splitlines()
    config = json.loads((tmp_path / "b" / ".mcp.json").read_text())
    assert config == {"mcpServers": {"clm-policy": OURS}}
    alone = invoke("init", str(tmp_path / "mem"), "--mcp")
    assert (alone.exit_code, alone.stderr.splitlines()[-1]) == (
        2,
        "clm-policy init: --mcp goes with --claude-code (try 'clm-policy init --help')",
    )


BLOCK_MCP = (
    "import sys; sys.modules['mcp'] = None; sys.argv = ['clm-policy', *sys.argv[1:]]; "
    "from clm_policy.cli.entry import main; main()"
)


def test_without_the_sdk_serving_is_exit_2_with_one_line(tmp_path: Path) -> None:
    ran = subprocess.run(
        [sys.executable, "-c", BLOCK_MCP, "mcp"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert (ran.returncode, ran.stdout) == (2, "")
    assert ran.stderr == (
        "clm-policy: the MCP server needs the mcp package (2.x): pip install 'clm-policy[mcp]'\n"
    )
    installed = subprocess.run(
        [sys.executable, "-c", BLOCK_MCP, "mcp", "--install"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr
    assert installed.stdout.splitlines()[-1] == (
        "note: the server needs the mcp package: pip install 'clm-policy[mcp]'"
    )


def test_the_server_as_a_process_over_stdio(tmp_path: Path) -> None:
    """What Claude Code runs: the script with ``mcp``, spoken to over its standard streams."""
    pytest.importorskip("mcp.server.mcpserver")
    import os

    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=EXE,
        args=["mcp"],
        cwd=str(tmp_path),
        env={**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")},
    )

    async def go() -> tuple[list[str], str]:
        with (tmp_path / "server.log").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                names = [t.name for t in (await client.list_tools()).tools]
                status = await client.call_tool("status", {})
                return names, status.content[0].text

    names, status = anyio.run(go)
    assert names == ["status", "explain", "handoff", "memory_search", "memory_read", "memory_write"]
    assert status.startswith("Error executing tool status: no Claude Code session found for ")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full to fill")
@pytest.mark.parametrize("output", ["closed", "full"])
def test_an_install_whose_output_fails_says_the_file_is_written(
    tmp_path: Path, output: str
) -> None:
    """It said only that the output failed (exit 2 or 141), the file changed all the same;
    a change not made says no more than the failure."""
    import os

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        if output == "closed":
            read_end, write_end = os.pipe()
            os.close(read_end)
            sink = os.fdopen(write_end, "w")
        else:
            sink = open("/dev/full", "w")  # noqa: SIM115 (closed below)
        with sink:
            return subprocess.run(
                [sys.executable, "-m", "clm_policy", "mcp", *args],
                stdout=sink,
                stderr=subprocess.PIPE,
                text=True,
                cwd=tmp_path,
                timeout=120,
                check=False,
            )

    failed = (
        (141, "clm-policy: output closed; ")
        if output == "closed"
        else (2, "clm-policy: cannot write standard output: No space left on device; ")
    )
    written = f"wrote {as_shown(tmp_path / '.mcp.json', tmp_path)} all the same\n"
    for args in (["--install", "--project"], ["--uninstall", "--project"]):
        done = run(*args)
        assert (done.returncode, done.stderr) == (failed[0], failed[1] + written)
    assert json.loads((tmp_path / ".mcp.json").read_text()) == {}
    done = run("--uninstall", "--project")  # nothing to take out: nothing written
    said = "" if output == "closed" else failed[1].removesuffix("; ") + "\n"
    assert (done.returncode, done.stderr) == (failed[0], said)


def test_install_user_waits_for_claude_codes_lock_and_keeps_its_write(tmp_path: Path) -> None:
    """A running Claude Code session holds ``~/.claude.json.lock`` (a folder, mkdir'd) from
    its read of the file to its rename: --user waits for it (a terminal is told), then reads
    what the session wrote, so neither write is lost. Before, the merge ran through the lock
    and the session's next rename dropped the server."""
    import os
    import pty

    from conftest import read_terminal

    config = tmp_path / "claude"
    config.mkdir()
    claude_json = config / ".claude.json"
    claude_json.write_text('{"numStartups": 1}\n')
    lock = config / ".claude.json.lock"
    lock.mkdir()  # a session is writing
    terminal, side = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "clm_policy", "mcp", "--install", "--user"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=side,
        text=True,
        env={**os.environ, "CLAUDE_CONFIG_DIR": str(config)},
    )
    os.close(side)
    try:
        shown = read_terminal(terminal, "at most 30 s)", proc)
        # the session's write, under its lock, then the lock released
        claude_json.write_text('{"numStartups": 2, "projects": {}}\n')
        lock.rmdir()
        out, _ = proc.communicate(timeout=120)
    finally:
        os.close(terminal)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "waiting for Claude Code's lock on" in shown, shown
    assert proc.returncode == 0, out
    data = json.loads(claude_json.read_text())
    assert data["numStartups"] == 2
    assert data["projects"] == {}
    assert data["mcpServers"] == {"clm-policy": OURS}
    assert not lock.exists()


def test_install_user_takes_over_a_lock_its_session_abandoned(tmp_path: Path) -> None:
    """A lock folder untouched for 10 s was left by a session that died (its holder refreshes
    it while it lives): it is taken over, the file written and the lock removed."""
    import os

    config = tmp_path / "claude"
    config.mkdir()
    (config / ".claude.json").write_text("{}\n")
    lock = config / ".claude.json.lock"
    lock.mkdir()
    old = lock.stat().st_mtime - 60
    os.utime(lock, (old, old))
    done = subprocess.run(
        [sys.executable, "-m", "clm_policy", "mcp", "--install", "--user"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "CLAUDE_CONFIG_DIR": str(config)},
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads((config / ".claude.json").read_text())["mcpServers"] == {"clm-policy": OURS}
    assert not lock.exists()


def test_a_lock_held_past_the_wait_is_refused_with_nothing_written(tmp_path: Path) -> None:
    from clm_policy.agents.mcp.claude_lock import claude_file_lock
    from clm_policy.base.errors import InputError

    path = tmp_path / ".claude.json"
    path.write_text("{}\n")
    (tmp_path / ".claude.json.lock").mkdir()
    with pytest.raises(InputError) as caught, claude_file_lock(path, wait=0.05):
        path.write_text("changed")
    assert path.read_text() == "{}\n"
    assert "Claude Code has held its lock on this file for over 0.05 s" in caught.value.message
    assert (tmp_path / ".claude.json.lock").is_dir()  # theirs: left as it is
