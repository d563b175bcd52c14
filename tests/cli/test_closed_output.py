"""A command whose reader goes away (``clm-policy run | head``): it stops there with exit 141,
as a shell reports a program a closed pipe ended; a run commits its session so far and says
on standard error how to go on; nothing is lost and the resume goes on where it stopped."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_interrupts import LONG

from conftest import git, invoke


def test_a_run_whose_output_is_closed_is_saved_and_resumes(tmp_path: Path) -> None:
    (tmp_path / "long.yaml").write_text(LONG)
    proc = subprocess.Popen(
        [sys.executable, "-m", "clm_policy", "run", "--scenario", "long.yaml", "-m", "mem"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stderr is not None
    with proc:
        try:
            assert proc.stdout.readline().startswith("playing long.yaml")
            assert " compact " in proc.stdout.readline()  # mid-way: its reader leaves
            proc.stdout.close()  # (the scenario has 20,000 steps: it has more to say)
            err = proc.stderr.read()
            proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 141, err
    assert "Traceback" not in err
    assert "Exception ignored" not in err
    memory = tmp_path / "mem"
    (row,) = json.loads(invoke("status", "--memory", str(memory), "--format", "json").stdout)
    assert (row["session"], row["stopped"]) == ("long", "output_closed")
    assert err == (
        f"clm-policy: output closed; session long is saved at step {row['step']} (stopped: "
        "output_closed); to go on: clm-policy run --memory mem --resume long\n"
    )
    last = git(memory, "log", "-1", "--format=%s")
    assert last == f"clm(session): long step {row['step']}, output_closed\n"
    run_json = json.loads(git(memory, "show", "HEAD:sessions/long/run.json"))
    assert (run_json["played"], run_json["decided"]) == (row["step"], True)
    resumed = invoke("run", "--memory", str(memory), "--resume", "long", "--max-steps", "3")
    assert resumed.exit_code == 0, resumed.stderr
    assert f"long step {row['step'] + 3}, max_steps" in git(memory, "log", "-1", "--format=%s")
    steps = git(memory, "log", "--format=%s").splitlines()
    assert len(steps) == len(set(steps))  # no step's compaction committed twice
    assert git(memory, "status", "--porcelain") == ""


def test_a_quick_path_whose_output_is_closed_exits_141(tmp_path: Path) -> None:
    # `decide` answers without click: a reader that is gone before it writes
    proc = subprocess.Popen(
        [sys.executable, "-m", "clm_policy", "decide", "--tokens", "1000", "--window", "200000"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    with proc:
        proc.stdout.close()
        _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (141, b"")


def test_a_long_output_whose_reader_leaves_midway_exits_141(tmp_path: Path) -> None:
    """The reader takes the first bytes and goes (`export | head -c 10`): Python's text
    stream dropped the rest of one large write without an error, and the export ended 0."""
    (tmp_path / "long.yaml").write_text(LONG)
    memory = tmp_path / "mem"
    ran = invoke("run", "--scenario", str(tmp_path / "long.yaml"), "-m", str(memory),
                 "--max-steps", "400", "--format", "json")  # fmt: skip
    assert ran.exit_code == 0, ran.stderr
    # (export's 200 KB: more than a pipe holds. Not report -o -, which writes the same way:
    # its 42 KB fit in the pipe, and a busy reader closed it after the report had ended, 0)
    for args in (["export", "--format", "json"],):
        proc = subprocess.Popen(
            [sys.executable, "-m", "clm_policy", *args, "--memory", str(memory)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stdout is not None
        with proc:
            assert len(proc.stdout.read(10)) == 10  # (more than a pipe holds is on its way)
            proc.stdout.close()
            _, err = proc.communicate(timeout=60)
        assert (args, proc.returncode, err) == (args, 141, b"")


@pytest.fixture(scope="module")
def demo_memory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    memory = tmp_path_factory.mktemp("full") / "mem"
    assert invoke("run", "--memory", str(memory), "--format", "json").exit_code == 0
    return memory


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full to fill")
@pytest.mark.parametrize(
    "args",
    [
        ["decide", "--tokens", "5"],  # the quick path: it wrote a traceback and exit 1
        ["decide", "--tokens", "5", "--explain"],
        ["decide", "--tokens", "5", "--format", "json"],
        ["schema", "policy"],
        ["hook", "codex", "--print-settings"],
        ["log", "--memory", "MEM"],  # log's quick path: a traceback, exit 1
        ["status", "--memory", "MEM"],  # click's commands: an "internal error", exit 3
        ["export", "--memory", "MEM"],
    ],
)
def test_an_output_that_cannot_be_written_is_said_in_one_line_exit_2(
    args: list[str], request: pytest.FixtureRequest
) -> None:
    """A full disk is no bug: one line on standard error, exit 2, and nothing Python could
    not flush at its end."""
    if "MEM" in args:
        memory = str(request.getfixturevalue("demo_memory"))
        args = [memory if a == "MEM" else a for a in args]
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "clm_policy", *args],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    assert (done.returncode, done.stderr) == (
        2,
        "clm-policy: cannot write standard output: No space left on device\n",
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full to fill")
@pytest.mark.parametrize("output", ["closed", "full"])
def test_a_handoff_whose_output_fails_says_it_is_committed_all_the_same(
    tmp_path: Path, output: str
) -> None:
    """The commit is made before anything is printed: a closed or full output says so, with
    the commit (it said only that the output failed, exit 2 or 141, and a script would hand
    off again)."""
    import os

    from clm_policy.memory.init import init_memory

    memory = init_memory(tmp_path / "mem").path
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"session_id": "s1", "goal": "ship it", "step_index": 3}))
    if output == "closed":
        read_end, write_end = os.pipe()
        os.close(read_end)  # the reader went away before a byte was written
        sink = os.fdopen(write_end, "w")
    else:
        sink = open("/dev/full", "w")  # noqa: SIM115 (closed below)
    with sink:
        done = subprocess.run(
            [sys.executable, "-m", "clm_policy", "handoff", "-m", str(memory), "-s", str(state)],
            stdout=sink,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    commit = git(memory, "rev-parse", "HEAD").strip()
    assert git(memory, "log", "-1", "--format=%s").startswith("clm(handoff): s1 step 3")
    said = (
        f"the handoff is committed all the same: commit {commit[:12]} on main "
        "(sessions/s1/handoffs/001.md)\n"
    )
    if output == "closed":
        assert (done.returncode, done.stderr) == (141, f"clm-policy: output closed; {said}")
    else:
        assert done.returncode == 2
        assert done.stderr == (
            f"clm-policy: cannot write standard output: No space left on device; {said}"
        )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full to fill")
@pytest.mark.parametrize("output", ["closed", "full"])
@pytest.mark.parametrize("path", ["quick", "click"])
def test_a_compaction_whose_output_fails_says_it_is_committed_all_the_same(
    tmp_path: Path, output: str, path: str
) -> None:
    """As a handoff: the compaction is committed before anything is printed (it said only
    that the output failed, exit 2 or 141, on the quick path and click's). A compaction
    asked again at that position commits nothing, and says no more than the failure."""
    import os

    from clm_policy.memory.init import init_memory

    memory = init_memory(tmp_path / "mem").path
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"session_id": "s1", "goal": "ship it", "step_index": 3}))
    source = ["-s", str(state)] if path == "quick" else ["-s", "-"]  # stdin: click's path

    def compact() -> subprocess.CompletedProcess[str]:
        if output == "closed":
            read_end, write_end = os.pipe()
            os.close(read_end)  # the reader went away before a byte was written
            sink = os.fdopen(write_end, "w")
        else:
            sink = open("/dev/full", "w")  # noqa: SIM115 (closed below)
        with sink:
            return subprocess.run(
                [sys.executable, "-m", "clm_policy", "compact", "-m", str(memory), *source],
                input=state.read_text() if path == "click" else None,
                stdout=sink,
                stderr=subprocess.PIPE,
                text=True,
                timeout=120,
                check=False,
            )

    done = compact()
    commit = git(memory, "rev-parse", "HEAD").strip()
    assert git(memory, "log", "-1", "--format=%s").startswith("clm(compact): s1 step 3")
    said = (
        f"the compaction is committed all the same: commit {commit[:12]} "
        "(sessions/s1/compactions/000003.md)\n"
    )
    failed = "cannot write standard output: No space left on device"
    if output == "closed":
        assert (done.returncode, done.stderr) == (141, f"clm-policy: output closed; {said}")
    else:
        assert (done.returncode, done.stderr) == (2, f"clm-policy: {failed}; {said}")
    again = compact()
    assert git(memory, "rev-parse", "HEAD").strip() == commit
    if output == "closed":
        assert (again.returncode, again.stderr) == (141, "")
    else:
        assert (again.returncode, again.stderr) == (2, f"clm-policy: {failed}\n")


def _every_help() -> list[list[str]]:
    from clm_policy.cli.main import COMMANDS

    helps = [["--help"], ["--version"], ["hook", "claude-code", "--help"], ["hook", "codex", "-h"]]
    return helps + [[name, "--help"] for name in sorted(COMMANDS)]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full to fill")
def test_help_and_version_to_an_output_that_fails_are_no_bug() -> None:
    """``--help`` and ``--version`` print through the one printer too: a full disk was an
    "internal error" (exit 3) and a closed pipe exit 1, click writing them itself."""
    import os

    for args in _every_help():
        with open("/dev/full", "w") as full:
            done = subprocess.run(
                [sys.executable, "-m", "clm_policy", *args],
                stdout=full,
                stderr=subprocess.PIPE,
                text=True,
                timeout=60,
                check=False,
            )
        assert (args, done.returncode, done.stderr) == (
            args,
            2,
            "clm-policy: cannot write standard output: No space left on device\n",
        )
    for args in (["--help"], ["run", "--help"], ["--version"], ["hook", "codex", "--help"]):
        read_end, write_end = os.pipe()
        os.close(read_end)  # the reader went away before a byte was written
        with os.fdopen(write_end, "w") as sink:
            done = subprocess.run(
                [sys.executable, "-m", "clm_policy", *args],
                stdout=sink,
                stderr=subprocess.PIPE,
                text=True,
                timeout=60,
                check=False,
            )
        assert (args, done.returncode, done.stderr) == (args, 141, "")
