"""A command that reads what an agent sends on standard input (a hook, the status line), or a
state typed by hand (``compact --state -``), run in a terminal, says on standard error what it
waits for and how to end it, instead of waiting in silence; fed by a pipe, as the agents run
it, it says nothing of the kind.

The terminal is a real pseudo-terminal on the process's standard input; Ctrl-D (end of input)
is typed on it once the note has been read, so no test waits on a clock."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

NOTE = "reads the JSON"

COMMANDS = [
    (["hook", "claude-code"], "clm-policy hook claude-code: reads the JSON Claude Code sends"),
    (["hook", "codex"], "clm-policy hook codex: reads the JSON Codex sends"),
    (["hook", "claude-code", "--engine"], "Claude Code's plugin engine sends"),
    (["statusline"], "clm-policy statusline: reads the JSON Claude Code sends"),
    (["hook", "claude-code", "--policy", "default"], "hook claude-code: reads the JSON"),
]


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        env[name] = str(tmp_path / name.lower())
    env["CLM_POLICY_CACHE_DIR"] = str(tmp_path / "cache")
    return env


def _first_line(child: subprocess.Popen[bytes]) -> str:
    """The first line the child writes on standard error; "" when it writes none within two
    minutes (it waits in silence: the failure this test is about, not a slow machine)."""
    assert child.stderr is not None
    got = b""
    while b"\n" not in got:
        ready, _, _ = select.select([child.stderr], [], [], 120)
        chunk = os.read(child.stderr.fileno(), 4096) if ready else b""
        if not chunk:
            break
        got += chunk
    return got.decode(errors="replace")


def _on_a_terminal(tmp_path: Path, args: list[str], typed: bytes) -> tuple[str, int, bytes]:
    """Run ``clm-policy ARGS`` with a pseudo-terminal on its standard input: the first line it
    writes on standard error, then ``typed`` (ending in Ctrl-D) typed; its exit code and
    what it wrote then (standard output, then standard error)."""
    leader, follower = pty.openpty()
    child = subprocess.Popen(
        [sys.executable, "-m", "clm_policy", *args],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=_env(tmp_path),
    )
    os.close(follower)
    try:
        line = _first_line(child)  # the note comes before anything is read
        os.write(leader, typed)
        out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        os.close(leader)
    return line, child.returncode, out + err


@pytest.mark.parametrize(("args", "said"), COMMANDS, ids=[" ".join(a) for a, _ in COMMANDS])
def test_a_terminal_on_standard_input_is_told_what_is_awaited(
    tmp_path: Path, args: list[str], said: str
) -> None:
    line, code, out = _on_a_terminal(tmp_path, args, b"\x04")  # Ctrl-D: the end of the input
    assert said in line
    assert all(word in line for word in ("Ctrl-D", "Ctrl-C", "--help")), line
    assert " --engine --help" not in line  # help is the command's, not the flag's
    assert code == 0, out  # an empty input is answered as the agents' hooks are


@pytest.mark.parametrize(("args", "_said"), COMMANDS, ids=[" ".join(a) for a, _ in COMMANDS])
def test_a_pipe_on_standard_input_gets_no_note(tmp_path: Path, args: list[str], _said: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "clm_policy", *args],
        input=b"{}",
        capture_output=True,
        cwd=tmp_path,
        env=_env(tmp_path),
        timeout=120,
        check=False,
    )
    assert NOTE not in done.stderr.decode()
    assert done.returncode == 0


def test_compact_state_on_a_terminal_says_it_waits_for_the_state(tmp_path: Path) -> None:
    """``compact --state -`` typed in a terminal waited in silence; it says what it reads, and
    what is typed then is compacted and committed."""
    from clm_policy.memory.init import init_memory

    from conftest import git

    memory = init_memory(tmp_path / "mem").path
    args = ["compact", "-m", str(memory), "--state", "-"]
    typed = b'{"session_id": "typed", "step_index": 2}\n\x04'
    line, code, out = _on_a_terminal(tmp_path, args, typed)
    assert line == (
        "clm-policy compact --state -: reads a SessionState JSON on standard input; type it "
        "and end it with Ctrl-D, or stop with Ctrl-C (clm-policy compact --help)\n"
    )
    assert code == 0, out
    assert out.decode().startswith("compacted session typed at step 2 (manual)")
    assert git(memory, "log", "-1", "--format=%s").startswith("clm(compact): typed step 2")


def test_compact_state_from_a_pipe_gets_no_note(tmp_path: Path) -> None:
    from clm_policy.memory.init import init_memory

    memory = init_memory(tmp_path / "mem").path
    done = subprocess.run(
        [sys.executable, "-m", "clm_policy", "compact", "-m", str(memory), "--state", "-"],
        input=b'{"session_id": "piped", "step_index": 2}',
        capture_output=True,
        cwd=tmp_path,
        env=_env(tmp_path),
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr.decode()) == (0, "")


READERS = [  # a command line that reads a person's typing, and the note it starts with
    (["decide", "--state", "-"], "clm-policy decide --state -: reads a SessionState JSON"),
    (["decide", "--explain", "-s", "-"], "clm-policy decide --state -: reads a SessionState"),
    (["handoff", "-m", "mem", "--state", "-"], "clm-policy handoff --state -: reads a"),
    (
        ["handoff", "-m", "mem", "--state", "state.json", "--reply", "-"],
        "clm-policy handoff --reply -: reads the agent's handoff, its text, on standard input",
    ),
    (["mcp"], "clm-policy mcp: reads the JSON-RPC an MCP client (Claude Code) sends"),
]


@pytest.mark.parametrize(("args", "said"), READERS, ids=[" ".join(a) for a, _ in READERS])
def test_every_reader_of_a_terminal_says_what_it_waits_for(
    tmp_path: Path, args: list[str], said: str
) -> None:
    """``decide --state -``, ``handoff --state -``, ``handoff --reply -`` and ``mcp`` typed in
    a terminal waited in silence (the MCP server for as long as its SDK took to import, then
    for ever); each says what it reads, once, before it reads."""
    from clm_policy.memory.init import init_memory

    if args == ["mcp"]:
        pytest.importorskip("mcp", reason="the mcp extra: pip install 'clm-policy[mcp]'")
    init_memory(tmp_path / "mem")
    (tmp_path / "state.json").write_text('{"session_id": "typed", "step_index": 2}')
    line, _, out = _on_a_terminal(tmp_path, args, b"\x04")  # Ctrl-D: nothing typed
    assert line.startswith(said), line
    assert all(word in line for word in ("Ctrl-D", "Ctrl-C", f"{args[0]} --help)")), line
    assert b"on standard input; type it" not in out  # said once, not again by click's path


@pytest.mark.parametrize(("args", "_said"), READERS[:4], ids=[" ".join(a) for a, _ in READERS[:4]])
def test_a_reader_fed_by_a_pipe_says_nothing_of_it(
    tmp_path: Path, args: list[str], _said: str
) -> None:
    from clm_policy.memory.init import init_memory

    init_memory(tmp_path / "mem")
    (tmp_path / "state.json").write_text('{"session_id": "typed", "step_index": 2}')
    piped = b'{"session_id": "piped", "step_index": 3}'
    if "--reply" in args:  # the agent's handoff is its text (a state there is refused)
        piped = b"## Next step\nwrite the release notes\n"
    done = subprocess.run(
        [sys.executable, "-m", "clm_policy", *args],
        input=piped,
        capture_output=True,
        cwd=tmp_path,
        env=_env(tmp_path),
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr.decode()) == (0, "")


def _default_sigint() -> None:
    """In the child: SIGINT as a terminal's process has it (pytest may ignore or block it)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


WAITING = [
    ["hook", "claude-code"],
    ["hook", "claude-code", "--engine"],
    ["hook", "codex"],
    ["compact", "-m", "mem", "--state", "-"],
    ["handoff", "-m", "mem", "--state", "-"],
]


@pytest.mark.parametrize("args", WAITING, ids=[" ".join(a) for a in WAITING])
def test_ctrl_c_at_a_command_waiting_in_a_terminal_says_interrupted(
    tmp_path: Path, args: list[str]
) -> None:
    """A hook typed in a terminal says "stop with Ctrl-C"; Ctrl-C then ended ``hook
    claude-code`` with 130 and not a word (``hook codex`` said ``clm-policy: interrupted``),
    and ``compact --state -`` wrote its line right after the terminal's ``^C``: each ends
    the ``^C`` line and says it, as every other command does, and writes nothing (an agent's
    pipe still gets nothing)."""
    import signal

    from clm_policy.memory.init import init_memory

    from conftest import git

    memory = init_memory(tmp_path / "mem").path

    leader, follower = pty.openpty()
    child = subprocess.Popen(
        [sys.executable, "-m", "clm_policy", *args],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=_env(tmp_path),
        preexec_fn=_default_sigint,
    )
    os.close(follower)
    try:
        assert "Ctrl-C" in _first_line(child)  # it waits for the input: the note is said
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        os.close(leader)
    assert child.returncode == 130
    assert (out, err.decode()) == (b"", "\nclm-policy: interrupted\n")
    assert git(memory, "log", "--format=%s") == "clm(init): memory repository\n"
    assert git(memory, "status", "--porcelain") == ""
