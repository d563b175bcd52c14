"""300 MB on standard input cost a hook or a command what its limit allows, not 300 MB: every
reader of standard input reads at most one byte past its limit
(clm_policy.base.stdin.read_stdin) and stops there. Hooks answer nothing (exit 0) and log a
line; commands exit 2 with a message.

Each command runs under a small Python parent that streams 300 MiB to it in 1 MiB writes
(never held in memory) until the command stops reading, then reports the command's status,
output, time and peak resident memory (``getrusage(RUSAGE_CHILDREN)``: the parent's only
child)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

MiB = 1024 * 1024
SENT = 300 * MiB

FEED = r"""
import json, os, resource, subprocess, sys, tempfile, time
start = time.monotonic()
with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
    child = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=out, stderr=err)
    chunk = memoryview(b"{" + b" " * (1024 * 1024 - 1))  # the start of a JSON object
    sent = 0
    try:
        while sent < int(sys.argv[1]):
            view = chunk
            while view:
                view = view[os.write(child.stdin.fileno(), view):]
            sent += len(chunk)
        child.stdin.close()
    except BrokenPipeError:  # the command stopped reading: what it did not read is not sent
        pass
    code = child.wait()
    out.seek(0)
    err.seek(0)
    print(json.dumps({
        "code": code,
        "stdout": out.read().decode(),
        "stderr": err.read().decode(),
        "sent": sent,
        "seconds": time.monotonic() - start,
        "peak_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }))
"""


def fed(args: list[str], cwd: Path, size: int = SENT) -> dict[str, Any]:
    """``clm-policy ARGS`` with ``size`` bytes streamed to its standard input."""
    done = subprocess.run(
        [sys.executable, "-c", FEED, str(size), sys.executable, "-m", "clm_policy", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "shop"
    root.mkdir()
    return root


def logged(project: Path, name: str) -> str:
    return (project.parent / "state" / "clm-policy" / name).read_text()


@pytest.mark.parametrize(
    "args",
    [
        ["hook", "claude-code"],  # the quick path (clm_policy.cli.entry)
        ["hook", "claude-code", "--policy", "default"],  # click's
        ["hook", "codex"],
    ],
    ids=["claude-code", "claude-code-click", "codex"],
)
def test_a_hook_reads_no_further_than_its_limit(args: list[str], project: Path) -> None:
    done = fed(args, project)
    assert (done["code"], done["stdout"], done["stderr"]) == (0, "", "")
    assert done["sent"] < 40 * MiB  # it stopped reading at 16 MiB (and a pipe's buffer)
    assert done["peak_mib"] < 64, done
    assert logged(project, "hook.log").endswith(" InputError: hook input larger than 16 MiB\n")


def test_the_status_line_reads_no_further_than_its_limit(project: Path) -> None:
    done = fed(["statusline"], project)
    assert (done["code"], done["stdout"], done["stderr"]) == (0, "clm-policy: ?\n", "")
    assert done["sent"] < 20 * MiB
    assert done["peak_mib"] < 40, done
    assert logged(project, "statusline.log").endswith(" stdin: more than 1048576 bytes\n")


TOO_LARGE = "<stdin>: too large for a state file (more than 64 MiB)\n"


@pytest.mark.parametrize(
    ("args", "stdout", "stderr"),
    [
        (["decide", "--state", "-"], "", TOO_LARGE),  # the quick path, then click's
        (["decide", "--state", "-", "--explain"], "", TOO_LARGE),  # click's alone
        (
            ["decide", "-s", "-", "--format", "json"],
            json.dumps(
                {
                    "error": {
                        "code": 2,
                        "message": "too large for a state file (more than 64 MiB)",
                        "file": "<stdin>",
                        "line": None,
                        "col": None,
                    }
                },
                indent=2,
            )
            + "\n",
            "",
        ),
        (["compact", "--memory", "mem", "--state", "-"], "", TOO_LARGE),
    ],
    ids=["decide", "decide-explain", "decide-json", "compact"],
)
def test_a_command_reads_no_further_than_its_limit(
    args: list[str], stdout: str, stderr: str, project: Path
) -> None:
    done = fed(args, project)
    assert (done["code"], done["stdout"], done["stderr"]) == (2, stdout, stderr)
    assert done["sent"] < 100 * MiB  # 64 MiB and a byte
    assert done["peak_mib"] < 140, done  # the 64 MiB it may hold, once
