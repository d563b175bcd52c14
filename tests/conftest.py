"""Shared fixtures: an isolated home, cache and git identity for every test; CLI helpers."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from clm_policy.cli.main import run
from clm_policy.config.trust import take_ignored

REPO = Path(__file__).resolve().parents[1]
POLICIES = REPO / "policies"
TESTS = REPO / "tests"
FIXTURES = TESTS / "fixtures"
GOLDEN = TESTS / "golden"


def real_fixtures(agent: str) -> Path:
    """What the pinned ``agent`` (``claude-code``, ``codex``) produced in the end-to-end tests:
    ``tests/fixtures/real/<agent>-<version>`` of the version tests/agents_e2e/versions.json
    pins (until a bump's fixtures are made, the newest there)."""
    from agents_e2e.agents import fixtures

    return fixtures(agent)


@pytest.fixture(autouse=True)
def _isolate(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the real home, cache or global git configuration."""
    isolate_in(tmp_path_factory.mktemp("home"), monkeypatch)


def isolate_in(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment of a test (``_isolate``): ``home`` as the home, nothing of the user's."""
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))  # the trust record
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))  # logs, notices
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))  # projects' memory
    for name in (
        "CLM_POLICY_MEMORY",
        "CLM_POLICY_REMOTE",
        "CLM_POLICY_MEMORY_BACKEND",
        "CLM_POLICY_EXTENDS_PATH",
        "CLAUDE_CONFIG_DIR",  # Claude Code's user files: the home's unless a test says
    ):
        monkeypatch.delenv(name, raising=False)
    for suffix in ("BASE_URL", "API_KEY", "LLM_MODEL", "EMBED_MODEL", "EMBED_DIMS", "TIMEOUT"):
        monkeypatch.delenv(f"CLM_POLICY_MEM0_{suffix}", raising=False)  # no model of the user's
    take_ignored()  # what an earlier test's settings left unsaid
    monkeypatch.setenv("CLM_POLICY_CACHE_DIR", str(home / "clm-cache"))
    monkeypatch.delenv("CLM_POLICY_NO_CACHE", raising=False)
    monkeypatch.delenv("CLM_POLICY_DEBUG", raising=False)
    for suffix in ("", "_MODEL", "_BASE_URL", "_API_KEY", "_TIMEOUT"):  # no model summarizes
        monkeypatch.delenv(f"CLM_POLICY_SUMMARIZER{suffix}", raising=False)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "clm-policy tests")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "tests@clm-policy.invalid")


def _live_children() -> dict[int, str]:
    """This process's children that still run (an ended one, not yet waited for, does not),
    with their command lines; empty where /proc does not list children."""
    me = os.getpid()
    found: dict[int, str] = {}
    try:
        tasks = os.listdir(f"/proc/{me}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{me}/task/{task}/children") as fh:
                children = fh.read().split()
        except OSError:
            continue
        for child in children:
            try:
                with open(f"/proc/{child}/stat") as fh:
                    state = fh.read().rsplit(")", 1)[1].split()[0]
                with open(f"/proc/{child}/cmdline", "rb") as fh:
                    command = fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
            except (OSError, IndexError):
                continue  # it ended meanwhile
            if state not in ("Z", "X"):
                found[int(child)] = command
    return found


@pytest.fixture(autouse=True)
def _no_process_left() -> Iterator[None]:
    """A test ends every process it started: one left running (a test that failed before it
    stopped its subprocess) would go on writing, and make a later test fail instead."""
    before = set(_live_children())
    yield
    left = {pid: cmd for pid, cmd in _live_children().items() if pid not in before}
    deadline = time.monotonic() + 10  # (one that was just told to stop may take a moment)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = {pid: cmd for pid, cmd in _live_children().items() if pid in left}
    for pid in left:  # (so that the tests after this one do not meet them)
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    assert not left, f"the test left processes running: {left}"


def golden(name: str, actual: str) -> None:
    """``actual`` equals tests/golden/NAME (``CLM_UPDATE_GOLDEN=1`` rewrites the file; review
    the diff before committing it)."""
    path = GOLDEN / name
    if os.environ.get("CLM_UPDATE_GOLDEN"):
        path.write_text(actual, encoding="utf-8")
    assert actual == path.read_text(encoding="utf-8")


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


def invoke(*args: str, stdin: str | None = None) -> CliResult:
    """Run the real CLI entry point (``run``) in-process, capturing stdout and stderr."""
    runner = CliRunner()
    with runner.isolation(input=stdin) as (out, err, _):
        code = run(list(args))
        sys.stdout.flush()
        sys.stderr.flush()
        stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
    return CliResult(code, stdout, stderr)


def _mem0_installed() -> bool:
    from clm_policy.memory.mem0store import available

    return available()


MEM0_MISSING = "Mem0 is not installed (the mem0 extra): pip install 'clm-policy[mem0]'"
"""Why a test that needs Mem0 skips: the dev extra leaves it out (176 MB); .ci/run has it."""
NEEDS_MEM0 = pytest.mark.skipif(not _mem0_installed(), reason=MEM0_MISSING)


@pytest.fixture
def cli() -> Callable[..., CliResult]:
    return invoke


@pytest.fixture(scope="session")
def _templates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("templates")


def from_template(templates: Path, name: str, build: Callable[[Path], None], to: Path) -> Path:
    """``to``: a copy of what ``build`` made of the folder ``templates/name``, built once per
    process (in a test's environment, ``isolate_in``) and never used itself: each test gets a
    copy of its own, as if it had built it (``shutil.copytree`` is faster than git's commands).
    What the build writes that names its own folder names the template's: use it where no
    test reads that."""
    template = templates / name / "made"
    if not template.exists():
        with pytest.MonkeyPatch.context() as monkeypatch:
            isolate_in(templates / name / "home", monkeypatch)
            build(template)
    shutil.copytree(template, to, symlinks=True)
    return to


def _new_memory(folder: Path) -> None:
    from clm_policy.memory.init import init_memory

    init_memory(folder)


@pytest.fixture
def memory(tmp_path: Path, _templates: Path) -> Path:
    """A new memory repository, ``tmp_path/mem``."""
    return from_template(_templates, "memory", _new_memory, tmp_path / "mem")


def state_file(tmp_path: Path, **fields: object) -> Path:
    """``tmp_path/state.json``: session s1 at step 3, 400,000 tokens, and ``fields``."""
    data: dict[str, object] = {
        "session_id": "s1",
        "goal": "ship it",
        "step_index": 3,
        "tokens": {"context_tokens": 400000},
        **fields,
    }
    path = tmp_path / "state.json"
    path.write_text(json.dumps(data))
    return path


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd`` (tests' identity comes from the environment _isolate sets)."""
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout


def empty_commits(repo: Path) -> list[str]:
    """The commits of ``repo`` (every branch) whose tree is their first parent's: empty."""
    trees = {}
    rows = []
    for line in git(repo, "log", "--all", "--format=%H %T %P").splitlines():
        sha, tree, *parents = line.split()
        trees[sha] = tree
        rows.append((sha, tree, parents))
    return [sha for sha, tree, parents in rows if parents and trees.get(parents[0]) == tree]


def run_process(
    *args: str, stdin: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``clm-policy`` as a real process (``python -m clm_policy``)."""
    return subprocess.run(
        [sys.executable, "-m", "clm_policy", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
        check=False,
    )


@pytest.fixture
def write(tmp_path: Path) -> Iterator[Callable[[str, str], Path]]:
    """Write a (dedented) file under tmp_path and return its path."""

    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return _write


def click_option_table(
    command: Any, skip: set[str]
) -> tuple[dict[str, tuple[str, object]], dict[str, Any]]:
    """A click command's options as a quick path's table (option -> (destination, kind)) and
    the values click gives when nothing is given, for the parameters not in ``skip``."""
    import click

    defaults = command.make_context(command.name, [], resilient_parsing=True).params
    table: dict[str, tuple[str, object]] = {}
    for param in command.params:
        assert isinstance(param, click.Option)
        if param.name in skip:
            continue
        assert param.name is not None
        if param.is_flag:
            kind: object = "flag"
        elif param.multiple:
            kind = "multi"
        elif isinstance(param.type, click.IntRange):
            kind = (param.type.min, param.type.max)
        elif isinstance(param.type, click.Choice):
            kind = tuple(param.type.choices)
        else:
            assert param.type is click.STRING, param.name
            kind = "str"
        for opt in param.opts:
            table[opt] = (param.name, kind)
    return table, {k: v for k, v in defaults.items() if k not in skip}


def run_on_terminal(args: list[str]) -> tuple[subprocess.CompletedProcess[bytes], bytes]:
    """Run ``args`` with standard error on a pseudo-terminal (standard output piped): the
    process, and everything the terminal was sent."""
    import pty

    primary, secondary = pty.openpty()
    try:
        done = subprocess.run(
            args, stdout=subprocess.PIPE, stderr=secondary, check=False, timeout=60
        )
        os.close(secondary)
        seen = b""
        while True:
            try:
                chunk = os.read(primary, 4096)
            except OSError:  # the terminal closed: all read
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(primary)
    return done, seen


def values_of_kind(kind: object, samples: list[str]) -> list[str]:
    """Command-line values for an option of a quick path's table (see cli/fast/args.py): the
    kind's edges and one value beyond them for a range, every choice and one that is not for a
    choice; ``samples`` for a string. A flag takes none."""
    if kind == "flag":
        return []
    if kind in ("str", "multi"):
        return samples
    assert isinstance(kind, tuple), kind
    if len(kind) == 2 and isinstance(kind[0], int):
        low, high = kind
        edges = [str(low), str(low - 1), "x"]
        return edges if high is None else [*edges, str(high), str(high + 1)]
    return [*kind, "nope"]


class Endless(io.RawIOBase):
    """An endless stream (like /dev/zero on standard input) that counts what it gave."""

    def __init__(self) -> None:
        self.given = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        size = len(buffer)
        buffer[:size] = b"a" * size
        self.given += size
        return size


def runner_commands(output: str) -> list[str]:
    """The workflow commands a GitHub Actions runner would take from ``output``, line by line
    as its ActionCommandManager: a line whose start (after blanks: TrimStart) is ``::name
    …::``; else one that holds ``##[name…]`` anywhere (the older syntax); Azure Pipelines'
    ``##vso[`` too. (A ``::`` line of a name the runner does not know falls to the older
    syntax, as there.)"""
    found = []
    for line in output.splitlines():
        stripped = line.lstrip()
        if stripped.startswith("::") and stripped.find("::", 2) > 0:
            name = stripped[2 : stripped.find("::", 2)].split(" ")[0]
            found.append(name)
            if name in RUNNER_COMMANDS:
                continue
        for opening in ("##[", "##vso["):
            at = line.find(opening)
            if at >= 0 and line.find("]", at) > 0:
                found.append(line[at + len(opening) : line.find("]", at)].split(" ")[0])
    return found


RUNNER_COMMANDS = {
    *("error", "warning", "notice", "debug", "group", "endgroup", "echo", "add-mask"),
    *("stop-commands", "set-output", "save-state", "add-matcher", "remove-matcher"),
    *("set-env", "add-path"),
}


def data_paths(value: Any, prefix: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """Every path in JSON-like data (keys and list positions), the root's ``()`` first, depth
    first in document order."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from data_paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from data_paths(item, (*prefix, index))


def spec_kit_message(typed: str, instructions: list[str]) -> str:
    """A spec-kit command as Codex records the person's message: the prompt template expanded
    around what they typed (carriage returns and all)."""
    head = ["## User Input", "", "```text", *([typed] if typed else []), "```", ""]
    must = "You **MUST** consider the user input before proceeding (if not empty)."
    return "\r\n".join([*head, must, "", "## Outline", "", *instructions])


def read_terminal(fd: int, wanted: str, proc: subprocess.Popen[str]) -> str:
    """What the terminal ``fd`` shows until ``wanted`` appears (or ``proc`` ends)."""
    import select

    seen = b""
    deadline = time.monotonic() + 60
    while wanted.encode() not in seen and time.monotonic() < deadline:
        if select.select([fd], [], [], 0.1)[0]:
            try:
                seen += os.read(fd, 4096)
            except OSError:  # (the terminal's other side is closed: the process ended)
                break
        elif proc.poll() is not None:
            break
    return seen.decode("utf-8", "replace")


def message_of(stderr: str) -> str:
    """``stderr`` without the excerpt an error about a file shows under its first line (the
    line and a caret, or the note that the line is not shown), which this checks is there in
    that form: the message the tests compare, as it was before errors quoted their line."""
    lines = stderr.splitlines(keepends=True)
    if len(lines) == 3 and lines[2].strip() == "^" and lines[1].startswith("  "):
        return lines[0]
    if (
        len(lines) == 2
        and lines[1] == "  (the line is not shown: it looks like it holds a secret)\n"
    ):
        return lines[0]
    return stderr


def as_shown(path: Path | str, cwd: Path | None = None) -> str:
    """``path`` as clm-policy names a path it found or made, run in ``cwd`` (None: here):
    base.paths.shown_path there."""
    from clm_policy.base.paths import shown_path

    with contextlib.chdir(cwd or os.getcwd()):
        return shown_path(str(path))
