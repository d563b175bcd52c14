"""A lone surrogate (``"\\ud800"`` in JSON: no Unicode character, and no UTF-8 can carry it) is
refused where it comes in — a state, a hook's input, an MCP request — before anything reads
it: a command exits 2 with one line, a hook exits 0 with one line in its log, the MCP server
answers the request with an error and goes on serving; nothing is written (issue 26). A
surrogate pair (an emoji written ``"\\ud83d\\ude00"``) is a character and passes."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path

import pytest

from clm_policy.base.surrogates import lone_surrogate

from conftest import REPO, git, message_of

STATE = (REPO / "docs" / "examples" / "session-state.json").read_text()
LONE = STATE.replace("Move session tokens", "Move \\ud800 session tokens")
PAIR = STATE.replace("Move session tokens", "Move \\ud83d\\ude00 session tokens")


def clm(
    cwd: Path, *args: str, stdin: bytes = b"", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clm_policy", *args],
        input=stdin.decode(),
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ('"a\\ud800b"', (2, "\\ud800")),
        ('"\\uDFFF"', (1, "\\uDFFF")),
        ('"\\ud83d\\ude00 \\udc00"', (14, "\\udc00")),
        ('"\\ud83d\\ude00"', None),  # a pair: one character
        ('"\\\\ud800"', None),  # an escaped backslash, then the letters ud800
        ('"\\\\\\ud800"', (3, "\\ud800")),
        ('"\\u00e9 no escape here"', None),
        ("plain", None),
    ],
)
def test_finding_a_lone_surrogate_escape(text: str, found: tuple[int, str] | None) -> None:
    assert lone_surrogate(text) == found


def test_a_state_is_refused_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text(LONE)
    done = clm(tmp_path, "decide", "--state", "bad.json")
    assert (done.returncode, done.stdout) == (2, "")
    assert message_of(done.stderr) == (
        "bad.json:3:17: a lone surrogate (\\ud800) in a string: not Unicode text\n"
    )
    (tmp_path / "good.json").write_text(PAIR)
    assert clm(tmp_path, "decide", "--state", "good.json").returncode == 0


@pytest.mark.parametrize("command", ["compact", "handoff"])
def test_a_refused_compaction_leaves_nothing_behind(tmp_path: Path, command: str) -> None:
    (tmp_path / "bad.json").write_text(LONE)
    assert clm(tmp_path, "init", "mem").returncode == 0
    before = git(tmp_path / "mem", "log", "--format=%H")
    done = clm(tmp_path, command, "--state", "bad.json", "--memory", "mem")
    assert (done.returncode, done.stdout) == (2, "")
    assert (
        message_of(done.stderr)
        == "bad.json:3:17: a lone surrogate (\\ud800) in a string: not Unicode text\n"
    )
    assert git(tmp_path / "mem", "status", "--porcelain", "--untracked-files=all") == ""
    assert git(tmp_path / "mem", "log", "--format=%H") == before


def test_a_hook_logs_one_line_and_exits_0(tmp_path: Path) -> None:
    state = tmp_path / "state"
    event = (
        json.dumps(
            {"hook_event_name": "UserPromptSubmit", "cwd": str(tmp_path), "session_id": "s1"}
        )[:-1]
        + ', "prompt": "a\\ud800b"}'
    )
    done = clm(
        tmp_path,
        "hook",
        "claude-code",
        stdin=event.encode(),
        env={**os.environ, "XDG_STATE_HOME": str(state)},
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    (line,) = (state / "clm-policy" / "hook.log").read_text().splitlines()
    offset = event.index("\\ud800")
    assert line.endswith(
        f" claude-code: InputError: hook input holds a lone surrogate (\\ud800) at offset {offset}: "
        "not Unicode text"
    )


class Server:
    """``clm-policy mcp`` as a process, spoken to line by line."""

    def __init__(self, cwd: Path) -> None:
        pytest.importorskip("mcp.server.mcpserver")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "clm_policy", "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
        )
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"},
                },
            }
        )
        assert self.receive()["id"] == 1
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, object] | bytes) -> None:
        assert self.process.stdin is not None
        line = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def receive(self, timeout: float = 60) -> dict[str, object]:
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        assert ready, "no answer: the server hangs"
        answer: dict[str, object] = json.loads(self.process.stdout.readline())
        return answer

    def close(self) -> int:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.close()
        code = self.process.wait(timeout=60)
        self.process.stdout.close()
        return code


def test_the_mcp_server_answers_a_lone_surrogate_with_an_error_and_goes_on(
    tmp_path: Path,
) -> None:
    server = Server(tmp_path)
    request = (
        b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": '
        b'{"name": "memory_search", "arguments": {"query": "a\\ud800b"}}}'
    )
    server.send(request)
    at = request.index(b"\\ud800")
    assert server.receive() == {
        "jsonrpc": "2.0",
        "id": 2,
        "error": {
            "code": -32600,
            "message": "invalid request: a lone surrogate (\\ud800) at character "
            f"{at}: not Unicode text",
        },
    }
    server.send({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    assert server.receive()["id"] == 3  # still serving
    assert server.close() == 0


# A client that streams one 150 MiB line to the server, then asks for the tools, and reports
# the server's answers and its peak memory (the parent's only child).
FEED = r"""
import json, os, resource, subprocess, sys
child = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
def send(data):
    view = memoryview(data)
    while view:
        view = view[os.write(child.stdin.fileno(), view):]
send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "test", "version": "1"}}}).encode() + b"\n")
answers = [json.loads(child.stdout.readline())]
send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
send(b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"x": "')
filler = memoryview(b"a" * (1024 * 1024))
for _ in range(int(sys.argv[1])):
    send(filler)
send(b'"}}\n')
answers.append(json.loads(child.stdout.readline()))
send(b'{"jsonrpc": "2.0", "id": 3, "method": "tools/list"}\n')
answers.append(json.loads(child.stdout.readline()))
child.stdin.close()
code = child.wait()
child.stdout.close()
print(json.dumps({"code": code, "answers": [{k: a.get(k) for k in ("id", "error")} for a in answers],
                  "peak_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


def test_the_mcp_server_refuses_a_150_mib_line_without_holding_it(tmp_path: Path) -> None:
    pytest.importorskip("mcp.server.mcpserver")
    done = subprocess.run(
        [sys.executable, "-c", FEED, "150", sys.executable, "-m", "clm_policy", "mcp"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
        check=True,
    )
    result = json.loads(done.stdout)
    assert result["code"] == 0
    assert result["answers"][1:] == [
        {
            "id": None,
            "error": {
                "code": -32600,
                "message": "invalid request: a line longer than 4 MiB, not read",
            },
        },
        {"id": 3, "error": None},  # still serving
    ]
    assert result["peak_mib"] < 150  # the line was never held whole
