"""The program (the ``clm-policy`` script, ``python -m clm_policy``) ends a quick path's process
at once, without Python's finalization (clm_policy.cli.entry._finish): the exit code and every
byte of output as before, nothing run after. ``main()`` called in a process of its own (the
import probes) still raises SystemExit, and click's commands end as Python ends."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from clm_policy.memory.init import init_memory

from conftest import state_file

# a handler Python's finalization would run: printed only when the process ends normally
WRAP = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write('finalized'))\n"
    "sys.argv = ['clm-policy', *sys.argv[2:]]\n"
    "from clm_policy.cli import entry\n"
    "getattr(entry, ENTRY)()\n"
)


def program(entry: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    code = WRAP.replace("ENTRY", repr(entry))
    return subprocess.run(
        [sys.executable, "-c", code, "x", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def test_a_quick_path_ends_at_once_with_its_code_and_output(tmp_path: Path) -> None:
    done = program("program", "decide", "--tokens", "260000", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("action:    compact\n")
    refused = program("program", "decide", "--tokens", "-5", cwd=tmp_path)  # click's path
    assert (refused.returncode, refused.stderr.endswith("finalized")) == (2, True)


def test_a_compaction_s_buffered_output_is_all_there(tmp_path: Path) -> None:
    memory = init_memory(tmp_path / "mem").path
    path = state_file(tmp_path, messages=[{"role": "user", "content": "go"}])
    args = ["compact", "--memory", str(memory), "--state", str(path)]
    done = program("program", *args, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("compacted session s1 at step 3 (manual): commit ")
    assert done.stdout.endswith(f"  next      clm-policy log --memory {memory} --session s1\n")


def test_main_in_a_process_of_its_own_raises_system_exit(tmp_path: Path) -> None:
    done = program("main", "decide", "--tokens", "260000", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "finalized")
    assert done.stdout.startswith("action:    compact\n")


FINISH = (
    "import sys\n"
    "from clm_policy.cli import entry\n"
    "entry._PROGRAM = True\n"
    "sys.stdout.write('unflushed')\n"
    "entry._finish(3)\n"
)


def buffered() -> dict[str, str]:
    """The environment with standard output buffered, as Python has it by default."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


def test_the_end_flushes_what_was_written() -> None:
    done = subprocess.run(
        [sys.executable, "-c", FINISH],
        capture_output=True,
        text=True,
        env=buffered(),
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (3, "unflushed", "")


def test_output_that_cannot_be_flushed_ends_with_python_s_status_for_it() -> None:
    code = FINISH.replace("entry._finish", "sys.stdin.read()\nentry._finish")  # (in turn)
    with subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=buffered(),
    ) as proc:
        assert proc.stdout is not None
        assert proc.stdin is not None
        proc.stdout.close()  # nobody reads: the flush fails (EPIPE)
        proc.stdin.close()
        proc.wait(timeout=60)
        assert proc.stderr is not None
        assert (proc.returncode, proc.stderr.read()) == (120, b"")
