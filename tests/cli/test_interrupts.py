"""Ctrl-C and a bad option at any moment: a quiet exit, a repository every command can use, a
run that resumes where it stopped; and exit 2 means nothing was written.

Interrupts are sent to real processes, the way a terminal does (to the whole process group).
No test depends on timing: each waits for what the process prints before interrupting it, or
asserts only what must hold whenever the interrupt lands.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from clm_policy.memory.init import init_memory
from clm_policy.memory.layout import is_memory_repo

from conftest import git, invoke, read_terminal, run_process

LONG = textwrap.dedent("""\
    version: 1
    name: long
    goal: A long session to interrupt
    session: long
    profile: coding
    steps:
      - say: "Working on part {n}."
        tokens: 20000
        repeat: 20000
      - say: Done.
        tokens: 10
        status: completed
""")


# Ctrl-C as a terminal delivers it, whatever the test run was started with: pytest in a
# background job (or under nohup, or some CI runners) has SIGINT ignored, a child inherits
# that, and clm-policy rightly keeps an ignored SIGINT ignored. Python installs its own
# handler only when SIGINT is not ignored at its start: a process that interrupts itself
# sets that handler first, and `python -m clm_policy` is started through an exec with the
# default disposition, so that it starts exactly as from a terminal.
AS_FROM_A_TERMINAL = "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
_LAUNCH = (
    "import os, signal, sys\nsignal.signal(signal.SIGINT, signal.SIG_DFL)\n"
    "os.execv(sys.executable, [sys.executable, '-m', 'clm_policy', *sys.argv[1:]])\n"
)


@pytest.fixture
def start() -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Start ``clm-policy ARGS`` in its own process group, as a terminal would; whatever is
    still running when the test ends (a failed assertion before the interrupt) is killed."""
    started: list[subprocess.Popen[str]] = []

    def launch(*args: str, cwd: Path) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-c", _LAUNCH, *args],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group, interrupted as a terminal would
        )
        started.append(proc)
        return proc

    yield launch
    for proc in started:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()


def interrupt(proc: subprocess.Popen[str]) -> tuple[str, str]:
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    return out, err


def test_ctrl_c_while_the_cli_is_imported_is_a_quiet_130(tmp_path: Path) -> None:
    # the interrupt arrives after the entry module took over, while click and the command
    # are still being imported
    code = AS_FROM_A_TERMINAL + (
        "import os, signal, sys\n"
        "import clm_policy.cli.entry as entry\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "sys.argv = ['clm-policy', 'init', sys.argv[1]]\n"
        "entry.main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "mem")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 130
    assert "Traceback" not in done.stderr
    assert done.stderr.strip() == "clm-policy: interrupted"
    assert not (tmp_path / "mem").exists()


class _Interrupting:
    """Ctrl-C arriving while a class is made: a module being imported when it came."""

    def __set_name__(self, owner: type, name: str) -> None:
        raise KeyboardInterrupt


def test_ctrl_c_while_a_command_imports_a_module_is_a_quiet_130(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python 3.11 turns a KeyboardInterrupt raised while a class is created into a
    RuntimeError ("Error calling __set_name__") caused by it; it is Ctrl-C all the same (it was
    an internal error, exit 3, when init was interrupted while importing ipaddress)."""

    def init_memory(path: object) -> None:
        type("Network", (), {"broadcast_address": _Interrupting()})

    monkeypatch.setattr("clm_policy.memory.init.init_memory", init_memory)
    result = invoke("init", str(tmp_path / "mem"))
    assert (result.exit_code, result.stderr) == (130, "clm-policy: interrupted\n")
    assert not (tmp_path / "mem").exists()


@pytest.mark.parametrize("saved", [None, "session demo is saved at step 7 (stopped: interrupted)"])
def test_ctrl_c_with_format_json_still_prints_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, saved: str | None
) -> None:
    # a program reading `--format json` gets an error object, as for any other error
    from clm_policy.base.errors import Interrupted

    def execute(*_args: object, **_kwargs: object) -> None:
        raise Interrupted(saved) if saved else KeyboardInterrupt

    monkeypatch.setattr("clm_policy.loop.runs.execute", execute)
    result = invoke("run", "--memory", str(tmp_path / "mem"), "--format", "json")
    assert result.exit_code == 130
    message = f"interrupted; {saved}" if saved else "interrupted"
    assert json.loads(result.stdout) == {"error": {"code": 130, "message": message}}
    if saved:  # one line: the run's own (no terminal here: no ^C line to end)
        assert result.stderr == f"clm-policy: interrupted; {saved}\n"
    else:
        assert result.stderr == "\nclm-policy: interrupted\n"  # (click ends the ^C line)


_READ = {"x86_64": "0", "aarch64": "63"}  # the read system call's number (Linux)


@pytest.mark.skipif(not Path("/proc/self/syscall").exists(), reason="needs Linux's /proc")
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_ctrl_c_on_the_quick_decide_with_format_json_prints_json(tmp_path: Path, fmt: str) -> None:
    """`decide --state -` (the quick path, no click) waiting for its state: Ctrl-C there
    printed `clm-policy: interrupted` alone, where --format json promises an error object."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _LAUNCH, "decide", "--state", "-", "--format", fmt],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        syscall = Path(f"/proc/{proc.pid}/syscall")
        read = _READ.get(os.uname().machine, "?")
        while proc.poll() is None:  # until it waits in a read of its standard input
            with contextlib.suppress(OSError):
                if syscall.read_text().split()[:2] == [read, "0x0"]:
                    break
            time.sleep(0.005)  # (a poll, not a wait for a speed)
        out, err = interrupt(proc)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert (proc.returncode, err) == (130, "\nclm-policy: interrupted\n")
    if fmt == "json":
        assert json.loads(out) == {"error": {"code": 130, "message": "interrupted"}}
    else:
        assert out == ""


def test_ctrl_c_during_a_run_commits_it_and_it_resumes(
    tmp_path: Path, start: Callable[..., subprocess.Popen[str]]
) -> None:
    (tmp_path / "long.yaml").write_text(LONG)
    proc = start("run", "--scenario", "long.yaml", "--memory", "mem", cwd=tmp_path)
    assert proc.stdout is not None
    banner = proc.stdout.readline()  # the CLI is imported and the loop is starting
    assert banner.startswith("playing long.yaml"), banner
    for line in proc.stdout:  # wait for the first compaction: the run is mid-way
        if "compact" in line:
            break
    _, err = interrupt(proc)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    *notice, line = err.splitlines()  # what was saved and how to go on, in one line
    assert len(notice) <= 1, err  # (the notice, when the Ctrl-C came during a step)
    assert line.startswith("clm-policy: interrupted; session long is saved at step "), err
    assert line.endswith("to go on: clm-policy run --memory mem --resume long"), err
    memory = tmp_path / "mem"
    assert git(memory, "log", "-1", "--format=%s").startswith("clm(session): long step ")
    assert git(memory, "log", "-1", "--format=%s").endswith(", interrupted\n")
    status = json.loads(invoke("status", "--memory", str(memory), "--format", "json").stdout)
    (row,) = status
    assert (row["session"], row["stopped"]) == ("long", "interrupted")
    run_json = json.loads(git(memory, "show", "HEAD:sessions/long/run.json"))
    assert run_json["played"] == row["step"]
    resumed = invoke("run", "--memory", str(memory), "--resume", "long", "--max-steps", "3")
    assert resumed.exit_code == 0, resumed.stderr
    assert f"step {row['step'] + 3}" in git(memory, "log", "-1", "--format=%s")
    assert git(memory, "status", "--porcelain") == ""


def _default_sigint() -> None:
    """In the child, before Python starts: SIGINT as a terminal's process has it (pytest may
    run with SIGINT ignored or blocked, and a child inherits both)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


HELD_GIT = """#!{python}
# git, except that the first `git commit` waits until the test says go. (A Python script, not
# a shell one: a shell unblocks every signal when it starts, git and Python leave the mask be.)
# It gives up when the test's process is gone (a killed test run leaves no waiting git behind).
import os, sys, time
held = os.environ["HELD"]
if "commit" in sys.argv and not os.path.exists(os.path.join(held, "commit")):
    open(os.path.join(held, "commit"), "w").close()
    while not os.path.exists(os.path.join(held, "go")):
        try:
            os.kill(int(os.environ["HELD_BY"]), 0)
        except ProcessLookupError:
            sys.exit("held git: the test is gone")
        time.sleep(0.02)
os.execv({git!r}, [{git!r}, *sys.argv[1:]])
"""


def run_held_at_first_commit(tmp_path: Path, to: str, *args: str) -> tuple[int, str]:
    """Run ``clm-policy ARGS`` as a process whose first ``git commit`` waits; send SIGINT
    while it waits — ``to`` the ``process``, or to its ``group`` as a terminal's Ctrl-C does
    (git and the shell waiting with it get it too) —, then let the commit go. The exit code
    and stderr."""
    held = tmp_path / "held"
    held.mkdir()
    wrapper = held / "git"
    wrapper.write_text(HELD_GIT.format(python=sys.executable, git=shutil.which("git")))
    wrapper.chmod(0o755)
    env = {
        **os.environ,
        "HELD": str(held),
        "HELD_BY": str(os.getpid()),
        "PATH": f"{held}{os.pathsep}{os.environ['PATH']}",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "clm_policy", *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
        start_new_session=True,  # a process group of its own, as a terminal's job
    )
    deadline = time.monotonic() + 120  # a bound, not a speed: the wait ends when git is there
    while not (held / "commit").exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run never reached its first commit"
        time.sleep(0.02)
    # the files are written, the commit is not made
    if to == "group":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGINT)
    (held / "go").touch()
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


@pytest.mark.parametrize("to", ["process", "group"])
@pytest.mark.parametrize("memory_exists", [True, False], ids=["session-start", "new-memory"])
def test_ctrl_c_before_the_first_commit_leaves_a_session_that_resumes(
    tmp_path: Path, memory_exists: bool, to: str
) -> None:
    (tmp_path / "long.yaml").write_text(LONG)
    memory = tmp_path / "mem"
    if memory_exists:  # the run's first commit is the session's start
        init_memory(memory)
    # else the run's first commit is the new memory repository's
    code, err = run_held_at_first_commit(
        tmp_path, to, "run", "--scenario", "long.yaml", "--memory", "mem", "--max-steps", "5"
    )
    assert code == 130, err
    assert err == (  # (no terminal here: no ^C line to end)
        "clm-policy: interrupted; session long is saved at step 0 (stopped: interrupted); to go "
        "on: clm-policy run --memory mem --resume long\n"
    )
    assert git(memory, "status", "--porcelain", "--untracked-files=all") == ""
    assert git(memory, "log", "--format=%s") == (
        "clm(session): long step 0, interrupted\nclm(start): long step 0\n"
        "clm(init): memory repository\n"
    )
    resumed = run_process(
        "run", "--memory", "mem", "--resume", "long", "--max-steps", "2", cwd=tmp_path
    )
    assert resumed.returncode == 0, resumed.stderr
    assert git(memory, "log", "-1", "--format=%s") == "clm(session): long step 2, max_steps\n"
    assert git(memory, "status", "--porcelain", "--untracked-files=all") == ""


def test_a_killed_run_resumes_from_its_last_commit(
    tmp_path: Path, start: Callable[..., subprocess.Popen[str]]
) -> None:
    (tmp_path / "long.yaml").write_text(LONG)
    proc = start("run", "--scenario", "long.yaml", "--memory", "mem", cwd=tmp_path)
    assert proc.stdout is not None
    seen = 0
    for line in proc.stdout:
        seen += "compact" in line
        if seen == 2:
            break
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    memory = tmp_path / "mem"
    run_json = json.loads(git(memory, "show", "HEAD:sessions/long/run.json"))
    state = json.loads(git(memory, "show", "HEAD:sessions/long/state.json"))
    assert run_json["stopped"] is None
    assert run_json["played"] == state["step_index"] > 0
    resumed = invoke("run", "--memory", str(memory), "--resume", "long", "--max-steps", "2")
    assert resumed.exit_code == 0, resumed.stderr
    step = state["step_index"] + 2
    assert git(memory, "log", "-1", "--format=%s") == f"clm(session): long step {step}, max_steps\n"


PYTHON_STARTING = (  # what Python says when a SIGINT ends it before it runs any code of ours
    "Could not import runpy module",
    "Failed to import the site module",
    "Python runtime state: core initialized",  # e.g. init_sys_streams: io was being imported
)


def test_init_interrupted_anywhere_leaves_nothing_or_a_whole_repository(
    tmp_path: Path, start: Callable[..., subprocess.Popen[str]]
) -> None:
    rng = random.Random(20261130)
    for trial in range(12):
        target = tmp_path / f"mem{trial}"
        proc = start("init", str(target), cwd=tmp_path)
        time.sleep(rng.random() * 0.3)  # anywhere: before, during or after the work
        _, err = interrupt(proc)
        if proc.returncode == 1 and any(sign in err for sign in PYTHON_STARTING):
            # the interrupt came while Python itself was starting, before any of clm-policy
            # ran (the few milliseconds entry.py leaves to Python): nothing can be written
            assert not target.exists()
            continue
        assert proc.returncode in (0, 130, -signal.SIGINT), err
        if target.exists():
            assert is_memory_repo(target), sorted(p.name for p in target.iterdir())
            assert git(target, "log", "--format=%s") == "clm(init): memory repository\n"
        again = invoke("init", str(target))
        assert again.exit_code == 0, again.stderr
        assert invoke("log", "--memory", str(target)).exit_code == 0


def test_exit_2_writes_nothing(tmp_path: Path) -> None:
    os.chdir(tmp_path)
    for args in (
        ["run", "--profile", "nosuch"],
        ["run", "--policy", "nosuch.yaml"],
        ["run", "--scenario", "nosuch"],
        ["run", "--soft-compact", "900000", "--hard-handoff", "1000"],
        ["run", "--resume", "nosuch"],
    ):
        result = invoke(*args)
        assert result.exit_code == 2, (args, result.stderr)
        assert not (tmp_path / "clm-memory").exists(), args
    assert "unknown profile 'nosuch'" in invoke("run", "--profile", "nosuch").stderr


def test_overrides_are_recorded_and_apply_on_resume(tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    first = invoke(
        "run",
        "--memory",
        str(memory),
        "--scenario",
        "compaction",
        "--profile",
        "research",
        "--soft-compact",
        "40000",
        "--hard-handoff",
        "900000",
        "--max-steps",
        "2",
    )
    assert first.exit_code == 0, first.stderr
    recorded = json.loads(git(memory, "show", "HEAD:sessions/scenario-b/run.json"))
    assert (recorded["profile"], recorded["soft_compact"], recorded["hard_handoff"]) == (
        "research",
        40000,
        900000,
    )
    resumed = invoke(
        "run",
        "--memory",
        str(memory),
        "--resume",
        "scenario-b",
        "--max-steps",
        "3",
        "--format",
        "json",
    )
    assert resumed.exit_code == 0, resumed.stderr
    out = json.loads(resumed.stdout)
    assert out["profile"] == "research"
    compacted = [e for e in out["timeline"] if e["action"] == "compact"]
    # 15,000 tokens a step: the overridden soft limit (40,000) fires; the profile's would not
    assert compacted
    assert compacted[0]["context_tokens"] >= 40000
    assert compacted[0]["context_tokens"] < 100000


def test_a_second_run_starts_a_new_session(tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    for _ in range(2):
        assert invoke("run", "--memory", str(memory), "--scenario", "compaction").exit_code == 0
    third = invoke("run", "--memory", str(memory), "--scenario", "compaction")
    assert (
        "session scenario-b exists already (it completed); this run is session scenario-b.3"
    ) in third.stdout
    listed = json.loads(invoke("status", "--memory", str(memory), "--format", "json").stdout)
    assert [r["session"] for r in listed] == ["scenario-b", "scenario-b.2", "scenario-b.3"]
    assert all(r["stopped"] == "completed" for r in listed)
    # the first session's record is untouched by the later runs
    decisions = git(memory, "show", "HEAD:sessions/scenario-b/decisions.jsonl").splitlines()
    assert len(decisions) == 21


def test_a_failed_push_says_the_commit_exists(tmp_path: Path) -> None:
    memory = init_memory(tmp_path / "mem").path
    git(memory, "remote", "add", "nosuch", str(tmp_path / "gone.git"))  # named, not there
    state = tmp_path / "s.json"
    state.write_text(json.dumps({"session_id": "s1", "tokens": {"context_tokens": 400000}}))
    result = invoke("handoff", "--memory", str(memory), "--state", str(state), "--push", "nosuch")
    assert result.exit_code == 2
    head = git(memory, "rev-parse", "--short=12", "HEAD").strip()
    assert f"the handoff is committed locally ({head} on main), but pushing it to 'nosuch'" in (
        result.stderr
    )
    assert f"git -C {memory} push -- nosuch main" in result.stderr
    assert git(memory, "log", "-1", "--format=%s") == "clm(handoff): s1 step 0, hard_handoff\n"


@pytest.mark.parametrize("when", ["before", "after"])
def test_ignored_sigint_stays_ignored(tmp_path: Path, when: str) -> None:
    # a background job of a script has SIGINT ignored; clm-policy must not take it back
    code = (
        "import os, signal, sys\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "import clm_policy.cli.entry as entry\n"
        f"{'os.kill(os.getpid(), signal.SIGINT)' if when == 'before' else 'pass'}\n"
        "sys.argv = ['clm-policy', '--version']\n"
        "entry.main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("clm-policy, version ")


@pytest.mark.parametrize("then", ["ctrl-c", "released"])
def test_a_write_that_waits_for_the_lock_says_so_on_a_terminal(
    memory: Path, tmp_path: Path, then: str
) -> None:
    """A handoff whose memory repository another process is writing to waits for its lock:
    a terminal is told so (it said nothing for up to 120 s), Ctrl-C ends the wait (exit 130,
    nothing committed), and the line is erased when the wait ends."""
    import fcntl
    import pty

    state = tmp_path / "state.json"
    state.write_text(json.dumps({"session_id": "s1", "goal": "ship it", "step_index": 3}))
    head = git(memory, "rev-parse", "HEAD")
    fd = os.open(memory / ".git" / "clm-write.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    terminal, side = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", _LAUNCH, "handoff", "-m", str(memory), "-s", str(state)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=side,
        text=True,
        start_new_session=True,
    )
    os.close(side)
    try:
        shown = read_terminal(terminal, "(Ctrl-C stops; at most 120 s)", proc)
        assert shown.endswith(
            f"\rclm-policy: waiting for the write lock of {memory}: another process is "
            "writing to it (Ctrl-C stops; at most 120 s)"
        ), shown
        if then == "ctrl-c":
            os.killpg(proc.pid, signal.SIGINT)
        else:
            fcntl.flock(fd, fcntl.LOCK_UN)
        out, _ = proc.communicate(timeout=120)
        rest = read_terminal(terminal, "interrupted" if then == "ctrl-c" else "\x00", proc)
    finally:
        os.close(fd)
        os.close(terminal)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    width = len(shown) - 1
    assert rest.startswith("\r" + " " * width + "\r"), repr(rest)
    if then == "ctrl-c":
        assert (proc.returncode, out) == (130, "")
        assert "clm-policy: interrupted" in rest
        assert "Traceback" not in rest
        assert git(memory, "rev-parse", "HEAD") == head
        assert git(memory, "status", "--porcelain") == ""
    else:
        assert proc.returncode == 0
        assert out.startswith("handed off session s1 at step 3 ")
        assert git(memory, "rev-parse", "HEAD") != head


@pytest.mark.parametrize("command", ["handoff", "compact"])
def test_ctrl_c_during_a_commit_lets_the_commit_finish_then_stops(
    tmp_path: Path, command: str
) -> None:
    """Ctrl-C reaches the whole foreground process group: the `git commit` the write path
    was running died half-way, leaving the handoff's files written and not committed (and
    the write's journal). Now git does not get the terminal's SIGINT during a write: the
    commit completes, then clm-policy stops, 130."""
    memory = init_memory(tmp_path / "mem").path
    state = tmp_path / "state.json"
    data = {"session_id": "s1", "goal": "ship it", "step_index": 3}
    state.write_text(json.dumps({**data, "tokens": {"context_tokens": 400000}}))
    code, err = run_held_at_first_commit(
        tmp_path, "group", command, "--memory", "mem", "--state", "state.json"
    )
    assert code == 130, err
    assert err.endswith("clm-policy: interrupted\n"), err
    subject = git(memory, "log", "-1", "--format=%s")
    assert subject.startswith(f"clm({command}): s1 step 3"), subject
    assert git(memory, "status", "--porcelain", "--untracked-files=all") == ""
    assert not (memory / ".git" / "clm-write.journal").exists()
    assert not (memory / ".git" / "index.lock").exists()
