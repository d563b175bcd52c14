"""Records the fidelity benchmark's sessions with the real agents: the pinned Claude Code and
Codex CLI (tests/agents_e2e/versions.json) play scripted turns against the end-to-end suite's
scripted model servers (tests/agents_e2e/: sandbox, servers; docs/agents-e2e.md), each in a
sandbox whose project is a small Python project with real tests, with clm-policy's hooks
installed as docs/claude-code.md and docs/codex.md say. The model is scripted; everything else
— the tool calls run, pytest's output, the transcript and rollout files, the hooks — is the
real agents'.

Run (a maintainer's tool, like tests/agents_e2e/regenerate_fixtures.sh; about 30 s):

    bash tests/agents_e2e/install.sh
    .venv/bin/python benchmarks/fidelity/record.py [NAME ...] [--keep DIR]

It rewrites ``benchmarks/fidelity/recorded/<name>/`` (the session's files; its ``truth.yaml``,
written by reading the session, stays as it is: review both with the diff) and prints what it
wrote. ``--keep DIR`` keeps each sandbox (the memory repository clm-policy's hooks committed to,
the request log, runs.log) under ``DIR/<name>``.

**Normalised** (:class:`Normaliser`) so that the files are the same on every machine, and from
one run to the next where the binaries allow: the sandbox's paths become a fixed home and
project (``/home/dev``, ``/home/dev/proj``; Claude Code's folder ``-home-dev-proj``; the XDG
folders under the home; the virtual environment ``/opt/venv``; Claude Code's
``/tmp/claude-<uid>`` as ``/tmp/claude-1000``), the scripted server ``http://127.0.0.1:PORT``, the
kernel ``Linux 6.0.0``; UUIDs (sessions, lines, turns, Codex's time-ordered ids), content hashes
and subagent ids are counted in order of first appearance; times (ISO, and a rollout's file
name) are counted one second per occurrence, in each file's order, the files merged by time, and
the day of the recording is 2026-11-30; durations, start and end times, process ids, costs,
pytest's "in 0.05s" and Codex's wall times and chunk ids are fixed values; Codex's
``FileChange`` lists its files in name order. The project's files carry a fixed time and its
commit a fixed date. Nothing a reader uses changes: the links between lines (``parentUuid``,
``tool_use_id``, ``call_id``), the order of events, the outputs' words and counts. Two
recordings still differ where the binaries do: Claude Code writes its ``last-prompt``,
``atis-latch`` and ``mode`` lines, and Codex its ``token_usage_record`` lines, at moments that
vary (or not at all). Python and pytest are the machine's: a traceback's library paths and
pytest's wording follow them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
OUT = HERE / "recorded"
sys.path.insert(0, str(REPO / "tests"))

from agents_e2e.agents import find  # noqa: E402 -- the harness lives in tests/
from agents_e2e.anthropic import ClaudeScript, Tool, Usage, classify  # noqa: E402
from agents_e2e.anthropic import Turn as ClaudeTurn  # noqa: E402
from agents_e2e.httpserve import Reply, Request, RequestLog, serve  # noqa: E402
from agents_e2e.responses import Call, CodexScript, codex_config  # noqa: E402
from agents_e2e.responses import Turn as CodexTurn  # noqa: E402
from agents_e2e.responses import Usage as CodexUsage  # noqa: E402
from agents_e2e.sandbox import API_KEY, OPENAI_ENV_KEY, Sandbox  # noqa: E402

HOME = "/home/dev"
PROJECT = f"{HOME}/proj"
CLAUDE_MODEL = "claude-sonnet-4-6"  # a 200,000-token window: the claude-code policy's
CLAUDE_TOOLS = "Bash Edit Write Read Agent ToolSearch TodoWrite TaskCreate TaskUpdate"
NS = uuid.UUID("0b6f7e63-6a2e-4c39-9b0e-2d1f6a7c9e10")
START = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
GATE_SECONDS = 120
GIT_DATE = "2026-11-30T08:00:00Z"
FILE_TIME = 1_796_025_600  # 2026-11-30T08:00:00Z


# ---------------------------------------------------------------------------------------------
# Scripted servers that can hold an answer until the driver says (a queued prompt)


class GatedClaude(ClaudeScript):
    """A :class:`ClaudeScript` whose requests can wait: a request is named by its kind and its
    number among that kind's, from 1 (``("main", 3)``). :meth:`hold` keeps the answer to one
    until the driver sets the event it returns; :meth:`after` makes one wait until another
    came in, :meth:`until` until a probe says so; :meth:`arrived` is set when one came in."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.counts: dict[str, int] = {}
        self.events: dict[tuple[str, str, int], threading.Event] = {}
        self.waits: dict[tuple[str, int], tuple[str, int]] = {}
        self.probes: dict[tuple[str, int], tuple[Callable[[], bool], str]] = {}
        self._gate_lock = threading.Lock()

    def _event(self, what: str, key: tuple[str, int]) -> threading.Event:
        with self._gate_lock:
            return self.events.setdefault((what, *key), threading.Event())

    def arrived(self, key: tuple[str, int]) -> threading.Event:
        return self._event("arrived", key)

    def hold(self, key: tuple[str, int]) -> threading.Event:
        return self._event("release", key)

    def after(self, key: tuple[str, int], other: tuple[str, int]) -> None:
        self.waits[key] = other

    def until(self, key: tuple[str, int], probe: Callable[[], bool], what: str) -> None:
        self.probes[key] = (probe, what)

    def handle(self, request: Request) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        key = None
        if request.method == "POST" and request.path.split("?", 1)[0] == "/v1/messages":
            kind = classify(request.headers, body)
            with self._gate_lock:
                self.counts[kind] = self.counts.get(kind, 0) + 1
                key = (kind, self.counts[kind])
            self.arrived(key).set()
            if key in self.waits:
                _wait(self.arrived(self.waits[key]), f"{self.waits[key]} before {key}")
            if key in self.probes:
                wait_for(*self.probes[key])
        reply = super().handle(request)
        if key is not None and ("release", *key) in self.events:
            _wait(self.hold(key), f"the release of {key}")
        return reply


def _wait(event: threading.Event, what: str) -> None:
    if not event.wait(GATE_SECONDS):
        raise RuntimeError(f"timed out waiting for {what}")


# ---------------------------------------------------------------------------------------------
# Running the agents


@dataclass
class World:
    """One recording: the sandbox, its project files, and the agent's environment."""

    name: str
    sandbox: Sandbox
    server: RequestLog
    env_extra: dict[str, str] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)

    @property
    def project(self) -> Path:
        return self.sandbox.project

    def files(self, files: dict[str, str]) -> None:
        """The project's files before the session, committed; then clm-policy set up in it."""
        for relative, text in files.items():
            path = self.project / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            os.utime(path, (FILE_TIME, FILE_TIME))  # diff -u shows them
        # a fixed date: the commit's id is in what Claude Code shows the model (git status)
        env = self.sandbox.env(GIT_AUTHOR_DATE=GIT_DATE, GIT_COMMITTER_DATE=GIT_DATE)
        for args in (["add", "-A"], ["commit", "-q", "-m", "Start"]):
            subprocess.run(["git", *args], cwd=self.project, env=env, check=True, timeout=60)
        self.setup()

    def setup(self) -> None:
        raise NotImplementedError

    def check(self, ran: subprocess.CompletedProcess[str], what: str) -> None:
        self.log.append(
            f"$ {what}\n-> {ran.returncode}\n{ran.stdout[-3000:]}\n{ran.stderr[-3000:]}"
        )
        if ran.returncode != 0:
            raise SystemExit(f"{self.name}: {what} failed (exit {ran.returncode})\n{ran.stderr}")


@dataclass
class ClaudeRun(World):
    exe: Path = Path()
    tools: str = CLAUDE_TOOLS

    def setup(self) -> None:
        for args in (("init", "--claude-code"), ("hook", "claude-code", "--install", "--project")):
            ran = self.sandbox.clm(*args)
            assert ran.returncode == 0, ran.describe()

    def env(self) -> dict[str, str]:
        return self.sandbox.env(
            ANTHROPIC_BASE_URL=self.server.url, ANTHROPIC_API_KEY=API_KEY, **self.env_extra
        )

    def argv(self, *args: str, output: str = "json") -> list[str]:
        return [
            str(self.exe),
            "--output-format",
            output,
            "--allowedTools",
            self.tools,
            "--model",
            CLAUDE_MODEL,
            *args,
        ]

    def p(self, prompt: str, *args: str) -> dict[str, Any]:
        """``claude -p PROMPT ARGS``: its JSON result."""
        ran = subprocess.run(
            self.argv("-p", prompt, *args),
            cwd=self.project,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )
        self.check(ran, f"claude -p {prompt!r} {' '.join(args)}")
        result = json.loads(ran.stdout.strip().splitlines()[-1])
        if result.get("is_error"):
            raise SystemExit(f"{self.name}: claude -p {prompt!r}: {result}")
        return dict(result)

    def streamed(self, first: str, later: str, script: GatedClaude, at: int) -> str:
        """``claude -p --input-format stream-json``: ``first``, then ``later`` typed while the
        agent works — sent once the main request number ``at`` came in, whose answer is held
        until Claude Code has queued ``later`` (its ``queue-operation`` line). The session id."""
        arrived, release = script.arrived(("main", at)), script.hold(("main", at))
        proc = subprocess.Popen(
            self.argv("-p", "--input-format", "stream-json", "--verbose", output="stream-json"),
            cwd=self.project,
            env=self.env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdin is not None

        def send(text: str) -> None:
            message = {"type": "user", "message": {"role": "user", "content": text}}
            assert proc.stdin is not None
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()

        try:
            send(first)
            if not arrived.wait(GATE_SECONDS):
                raise SystemExit(f"{self.name}: main request {at} never came")
            send(later)
            wait_for(lambda: self._queued(later), f"{later!r} queued")
        finally:
            release.set()
        out, err = proc.communicate(timeout=300)
        ran = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        self.check(ran, f"claude -p --input-format stream-json: {first!r}, then {later!r}")
        results = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        (result,) = [r for r in results if r.get("type") == "result"]
        return str(result["session_id"])

    def _queued(self, text: str) -> bool:
        for path in (self.sandbox.claude_dir / "projects").glob("*/*.jsonl"):
            for line in path.read_text(encoding="utf-8").splitlines():
                if '"queue-operation"' in line and '"enqueue"' in line and json.dumps(text) in line:
                    return True
        return False

    def transcript(self, session: str) -> Path:
        (found,) = (self.sandbox.claude_dir / "projects").glob(f"*/{session}.jsonl")
        return found

    def stops(self) -> int:
        """The Stop hooks the main sessions' transcripts record so far."""
        return sum(
            path.read_text(encoding="utf-8").count('"subtype":"stop_hook_summary"')
            for path in (self.sandbox.claude_dir / "projects").glob("*/*.jsonl")
        )


@dataclass
class CodexRun(World):
    exe: Path = Path()
    config_extra: str = ""

    def setup(self) -> None:
        ran = self.sandbox.clm("init", "--claude-code")
        assert ran.returncode == 0, ran.describe()
        # Codex runs commands in a login shell (bash -lc), whose PATH comes from the profile:
        # the developer's profile puts the project's Python (this venv: pytest) first
        venv_bin = Path(sys.executable).parent
        (self.sandbox.home / ".profile").write_text(f'export PATH="{venv_bin}:$PATH"\n')
        printed = self.sandbox.clm("hook", "codex", "--print-settings")
        assert printed.returncode == 0, printed.describe()
        (self.project / ".codex").mkdir(exist_ok=True)
        (self.project / ".codex" / "hooks.json").write_text(printed.stdout)
        # exec offers update_plan only when the configuration asks (top-level keys first: the
        # table header ends them)
        extra = self.config_extra + "[tools.update_plan]\nenabled = true\n"
        config = codex_config(self.server.url, model="gpt-5.5", extra=extra)
        (self.sandbox.codex_home / "config.toml").write_text(config)

    def exec(self, *args: str) -> str:
        """``codex exec --trust --dangerously-bypass-hook-trust ... ARGS``: the session id."""
        argv = [
            str(self.exe),
            "exec",
            "--trust",
            "--dangerously-bypass-hook-trust",
            "--dangerously-bypass-approvals-and-sandbox",
            "--color",
            "never",
            *args,
        ]
        env = self.sandbox.env(**{OPENAI_ENV_KEY: "sk-e2e-responses", **self.env_extra})
        ran = subprocess.run(
            argv,
            cwd=self.project,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )
        self.check(ran, f"codex exec {' '.join(args)}")
        found = re.search(r"session id: (\S+)", ran.stderr)
        assert found, ran.stderr
        return found.group(1)

    def rollout(self, session: str) -> Path:
        (found,) = (self.sandbox.codex_home / "sessions").glob(f"*/*/*/rollout-*-{session}.jsonl")
        return found


def wait_for(probe: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + GATE_SECONDS
    while not probe():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.05)


# ---------------------------------------------------------------------------------------------
# Normalising what the agents wrote

_UUID = re.compile(
    r"(?<![0-9a-f])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9a-f])"
)
_HASH = re.compile(r"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])")
_AGENT_ID = re.compile(r"(?<![0-9A-Za-z])a[0-9a-f]{16}(?![0-9a-f])")  # a subagent's id
_CLAUDE_TMP = re.compile(r"/tmp/claude-\d+/")  # Claude Code's temporary folder, by user id
_ISO = re.compile(r"\b(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?Z")
_FILE_TIME = re.compile(r"rollout-(\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d)-")
# figures of time that differ by run: durations, start and end times (numbers), process ids
_FIXED_NUMBERS = re.compile(
    r'"([A-Za-z_]*(?:[Dd]uration|_ms|Ms|_at|Time|_time|nanos|secs)|process_id|'
    r'wall_time_seconds|total_cost_usd|costUSD|totalAPIDurationWithoutRetries)":\s*("?)[0-9.]+("?)'
)
_FIXED_TEXT = (
    (re.compile(r"<duration_ms>\d+</duration_ms>"), "<duration_ms>1</duration_ms>"),
    (re.compile(r'"runId":"[^"]*"'), '"runId":"run-1"'),
    (re.compile(r"\bin \d+\.\d\ds\b"), "in 0.01s"),  # pytest
    (re.compile(r"Wall time: \d+(?:\.\d+)? seconds"), "Wall time: 0.0100 seconds"),  # Codex
    (re.compile(r"Chunk ID: [0-9a-f]+"), "Chunk ID: 000000"),  # Codex
    # the day of the recording, as the agents tell the model
    (re.compile(r"Today's date is \d{4}-\d\d-\d\d"), "Today's date is 2026-11-30"),
    (re.compile(r'"type":"date","date":"\d{4}-\d\d-\d\d"'), '"type":"date","date":"2026-11-30"'),
    (
        re.compile(r"<current_date>[\d-]{10}</current_date>"),
        "<current_date>2026-11-30</current_date>",
    ),
    (re.compile(r'"current_date":"\d{4}-\d\d-\d\d"'), '"current_date":"2026-11-30"'),
)


@dataclass
class Normaliser:
    """Rewrites a session's files, all of them at once, so that one id or time is rewritten
    the same way in each: paths (:meth:`text`), then ids, hashes, times and the figures that
    vary by run (:meth:`learn`, then :meth:`finish` for each)."""

    paths: list[tuple[str, str]]
    name: str
    ids: dict[str, str] = field(default_factory=dict)
    times: dict[tuple[int, int], str] = field(default_factory=dict)

    def text(self, text: str) -> str:
        for old, new in self.paths:
            text = text.replace(old, new)
        return text

    def learn(self, texts: list[str]) -> None:
        """Counts the ids and hashes in order of first appearance, and counts the times: each
        occurrence of a time gets its own second, in the order of the files' lines (Claude Code
        stamps a line a millisecond before or after its neighbour from one run to the next),
        the files merged by time."""
        # the lines whose place varies by run are counted last, so that they do not shift
        # the count of the ids after them
        steady = ["".join(_steady(text)) for text in texts]
        for text in [*steady, *texts]:
            for pattern, make in (
                (_UUID, self._uuid),
                (_HASH, self._hash),
                (_AGENT_ID, self._agent),
            ):
                for found in pattern.findall(text):
                    if found not in self.ids:
                        self.ids[found] = make(len(self.ids))
        # each text's times in their order there (a line written a millisecond early or late
        # keeps its place), the texts merged by time (a subagent's beside the session's)
        queues = []
        for n, text in enumerate(texts):
            found = [(m.start(), m.group(0)) for m in _ISO.finditer(text)]
            found += [(m.start(1), m.group(1)) for m in _FILE_TIME.finditer(text)]
            queues.append([(n, start, stamp) for start, stamp in sorted(found)])
        k = 0
        while any(queues):
            queue = min((q for q in queues if q), key=lambda q: _instant(q[0][2]))
            n, start, stamp = queue.pop(0)
            when = START + timedelta(seconds=k)
            k += 1
            if stamp.endswith("Z"):
                found_iso = _ISO.fullmatch(stamp)
                digits = len(found_iso.group(2) or ".") - 1 if found_iso else 3
                body = when.strftime("%Y-%m-%dT%H:%M:%S")
                self.times[(n, start)] = f"{body}.{'0' * digits}Z" if digits else f"{body}Z"
            else:
                self.times[(n, start)] = when.strftime("%Y-%m-%dT%H-%M-%S")

    def _uuid(self, n: int) -> str:
        return str(uuid.uuid5(NS, f"{self.name}/{n}"))

    def _hash(self, n: int) -> str:
        return hashlib.sha256(f"{self.name}/{n}".encode()).hexdigest()

    def _agent(self, n: int) -> str:
        return "a" + self._hash(n)[:16]

    def finish(self, n: int, text: str) -> str:
        """``text``, the ``n``-th of the texts :meth:`learn` saw, normalised. A time is found by
        its offset in the text :meth:`learn` saw: each replacement keeps the length (the
        fraction's digits too), so the offsets hold while they are made."""
        text = _ISO.sub(lambda m: self.times.get((n, m.start()), m.group(0)), text)
        text = _FILE_TIME.sub(
            lambda m: f"rollout-{self.times.get((n, m.start(1)), m.group(1))}-", text
        )
        text = _UUID.sub(lambda m: self.ids.get(m.group(0), m.group(0)), text)
        text = _HASH.sub(lambda m: self.ids.get(m.group(0), m.group(0)), text)
        text = _AGENT_ID.sub(lambda m: self.ids.get(m.group(0), m.group(0)), text)
        text = _CLAUDE_TMP.sub("/tmp/claude-1000/", text)
        text = _FIXED_NUMBERS.sub(lambda m: f'"{m.group(1)}":{m.group(2)}1{m.group(3)}', text)
        for pattern, fixed in _FIXED_TEXT:
            text = pattern.sub(fixed, text)
        return _sorted_changes(text)


VARYING = ('{"type":"last-prompt"', '{"type":"atis-latch"', '{"type":"mode"')
"""Lines Claude Code writes at a moment that varies from one run to the next (a ``mode`` line
as the process ends, or not)."""


def _steady(text: str) -> Iterator[str]:
    for line in text.splitlines(keepends=True):
        if not line.startswith(VARYING):
            yield line


def _sorted_changes(text: str) -> str:
    """Codex's ``FileChange`` items list their files in a hash map's order, which differs by
    run: in file-name order. A line is rewritten only when writing it back compactly gives
    the line as it was (so nothing else in it changes)."""
    if '"FileChange"' not in text:
        return text
    out = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\n")
        if '"FileChange"' in body:
            obj = json.loads(body)
            if json.dumps(obj, ensure_ascii=False, separators=(",", ":")) == body:
                item = obj.get("payload", {}).get("item", {})
                if isinstance(item.get("changes"), dict):
                    item["changes"] = dict(sorted(item["changes"].items()))
                line = json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
        out.append(line)
    return "".join(out)


def _instant(stamp: str) -> str:
    """A sortable form of either time format (ISO, or a rollout file name's)."""
    if stamp.endswith("Z"):
        return stamp
    day, _, clock = stamp.partition("T")
    return f"{day}T{clock.replace('-', ':')}"


def normaliser(world: World) -> Normaliser:
    sb = world.sandbox
    venv = str(Path(sys.executable).parent.parent)
    dashed = re.compile(r"[^A-Za-z0-9]")
    pairs = [
        (str(sb.project), PROJECT),
        (dashed.sub("-", str(sb.project)), dashed.sub("-", PROJECT)),
        (str(sb.xdg("config")), f"{HOME}/.config"),
        (str(sb.xdg("data")), f"{HOME}/.local/share"),
        (str(sb.xdg("state")), f"{HOME}/.local/state"),
        (str(sb.xdg("cache")), f"{HOME}/.cache"),
        (str(sb.cache_dir), f"{HOME}/.cache/clm-policy"),
        (str(sb.tmp), "/tmp"),
        (str(sb.home), HOME),
        (str(sb.root), f"{HOME}/.sandbox"),
        (venv, "/opt/venv"),
        (str(REPO), "/opt/clm-policy"),
        (world.server.url, "http://127.0.0.1:PORT"),
        (f"Linux {platform.release()}", "Linux 6.0.0"),  # the kernel Claude Code names
    ]
    return Normaliser(pairs, world.name)


def save(world: World, files: dict[str, Path]) -> list[Path]:
    """Writes ``files`` (its name under the session's folder -> the file the agent wrote),
    normalised together, into ``recorded/<name>/``; the folder's other files but
    ``truth.yaml`` go."""
    target = OUT / world.name
    norm = normaliser(world)
    texts = [norm.text(path.read_text(encoding="utf-8")) for path in files.values()]
    names = [norm.text(name) for name in files]
    norm.learn([*texts, *names])
    if target.exists():
        for child in target.iterdir():
            if child.name != "truth.yaml":
                shutil.rmtree(child) if child.is_dir() else child.unlink()
    written = []
    for n, (name, text) in enumerate(zip(names, texts, strict=True)):
        path = target / norm.finish(len(texts) + n, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(norm.finish(n, text), encoding="utf-8")
        written.append(path)
    return written


def claude_files(run: ClaudeRun, session: str) -> dict[str, Path]:
    """The session's transcript and its subagents' (transcripts and ``.meta.json``)."""
    main = run.transcript(session)
    files = {main.name: main}
    folder = main.with_suffix("")
    for path in sorted((folder / "subagents").glob("agent-*")):
        files[f"{session}/subagents/{path.name}"] = path
    return files


# ---------------------------------------------------------------------------------------------
# The sessions


def u(tokens: int) -> Usage:
    return Usage.context(tokens)


def bash(command: str, description: str) -> Tool:
    return Tool("Bash", {"command": command, "description": description})


HANDOFF_HEADINGS = ("## Goal", "## Done and verified", "## Not verified", "## Blockers")

CSVTOOL = {
    "csvtool/__init__.py": "",
    "csvtool/cli.py": (
        "import argparse\nimport csv\nimport sys\n\n\n"
        "def split_row(line):\n"
        '    """The fields of one CSV line."""\n'
        '    return line.split(",")\n\n\n'
        "def main(argv=None):\n"
        '    parser = argparse.ArgumentParser(prog="csvtool")\n'
        '    parser.add_argument("path")\n'
        "    args = parser.parse_args(argv)\n"
        '    with open(args.path, newline="") as handle:\n'
        "        for row in csv.reader(handle):\n"
        '            print(",".join(row))\n'
        "    return 0\n\n\n"
        'if __name__ == "__main__":\n    sys.exit(main())\n'
    ),
    "tests/data/small.csv": "name,qty\napple,3\npear,5\n",
    "tests/test_cli.py": (
        "from csvtool.cli import main, split_row\n\n\n"
        "def test_prints_rows(capsys):\n"
        '    main(["tests/data/small.csv"])\n'
        '    assert capsys.readouterr().out.splitlines()[1] == "apple,3"\n\n\n'
        "def test_split_plain():\n"
        '    assert split_row("a,b") == ["a", "b"]\n\n\n'
        "def test_split_empty_field():\n"
        '    assert split_row("a,,b") == ["a", "", "b"]\n\n\n'
        "def test_split_one():\n"
        '    assert split_row("a") == ["a"]\n\n\n'
        "def test_split_spaces():\n"
        '    assert split_row("a b,c") == ["a b", "c"]\n\n\n'
        "def test_escaped_quotes():\n"
        '    assert split_row(\'"a,b",c\') == ["a,b", "c"]\n'
    ),
    "README.md": "# csvtool\n\nPrints a CSV file: `python -m csvtool.cli FILE`.\n",
}


def claude_todo_handoff(world: ClaudeRun) -> dict[str, Path]:
    """TodoWrite (Claude Code's todo list, on with CLAUDE_CODE_ENABLE_TASKS=0) with statuses
    changing, a grep with no match, a red then green test, a pipeline hiding a failing suite,
    and the handoff clm-policy asks for with the prompt after the Stop that found the context
    past the hand-off limit."""
    world.files(CSVTOOL)
    world.env_extra["CLAUDE_CODE_ENABLE_TASKS"] = "0"
    p = str(world.project)
    todos = [
        "Write a failing test for --json",
        "Implement --json in csvtool/cli.py",
        "Document --json in README.md",
        "Run the full test suite",
    ]

    def todo(*statuses: str) -> Tool:
        items = [
            {"content": c, "status": s, "activeForm": c[:1].upper() + c[1:]}
            for c, s in zip(todos, statuses, strict=True)
        ]
        return Tool("TodoWrite", {"todos": items})

    cli_old = '    parser.add_argument("path")\n'
    cli_new = (
        '    parser.add_argument("path")\n'
        '    parser.add_argument("--json", action="store_true", help="print JSON")\n'
    )
    print_old = (
        '    with open(args.path, newline="") as handle:\n'
        "        for row in csv.reader(handle):\n"
        '            print(",".join(row))\n'
    )
    print_new = (
        '    with open(args.path, newline="") as handle:\n'
        "        rows = list(csv.reader(handle))\n"
        "    if args.json:\n"
        "        import json\n\n"
        "        print(json.dumps([dict(zip(rows[0], r)) for r in rows[1:]]))\n"
        "        return 0\n"
        "    for row in rows:\n"
        '        print(",".join(row))\n'
    )
    script: ClaudeScript = world.server.app  # type: ignore[assignment]
    script.main = [
        ClaudeTurn(
            "I'll work test-first.",
            [Tool("ToolSearch", {"query": "select:TodoWrite", "max_results": 1})],
            u(24_000),
        ),
        ClaudeTurn("", [todo("in_progress", "pending", "pending", "pending")], u(30_000)),
        ClaudeTurn(
            "Checking whether any JSON support exists.",
            [bash('grep -rn "json" csvtool/', "Look for JSON support")],
            u(36_000),
        ),
        ClaudeTurn(
            "",
            [
                Tool(
                    "Write",
                    {
                        "file_path": f"{p}/tests/test_json.py",
                        "content": (
                            "import json\n\nfrom csvtool.cli import main\n\n\n"
                            "def test_json(capsys):\n"
                            '    main(["--json", "tests/data/small.csv"])\n'
                            "    out = json.loads(capsys.readouterr().out)\n"
                            '    assert out[0] == {"name": "apple", "qty": "3"}\n'
                        ),
                    },
                )
            ],
            u(44_000),
        ),
        ClaudeTurn(
            "", [bash("python -m pytest -q tests/test_json.py", "Run the new test")], u(52_000)
        ),
        ClaudeTurn(
            "The test fails as it should.",
            [todo("completed", "in_progress", "pending", "pending")],
            u(60_000),
        ),
        ClaudeTurn("", [Tool("Read", {"file_path": f"{p}/csvtool/cli.py"})], u(68_000)),
        ClaudeTurn(
            "",
            [
                Tool(
                    "Edit",
                    {
                        "file_path": f"{p}/csvtool/cli.py",
                        "old_string": cli_old,
                        "new_string": cli_new,
                    },
                )
            ],
            u(76_000),
        ),
        ClaudeTurn(
            "",
            [
                Tool(
                    "Edit",
                    {
                        "file_path": f"{p}/csvtool/cli.py",
                        "old_string": print_old,
                        "new_string": print_new,
                    },
                )
            ],
            u(84_000),
        ),
        ClaudeTurn(
            "",
            [bash("python -m pytest -q tests/test_json.py", "Run the new test again")],
            u(92_000),
        ),
        ClaudeTurn("", [todo("completed", "completed", "pending", "in_progress")], u(100_000)),
        ClaudeTurn(
            "", [bash("python -m pytest -q 2>&1 | tail -3", "Run the full suite")], u(120_000)
        ),
        ClaudeTurn(
            "The JSON test passes; the full suite has one failure, test_escaped_quotes.",
            [],
            u(156_000),
        ),
        ClaudeTurn(
            "## Goal\nAdd a --json output flag to the csvtool CLI, test-first, standard library"
            " only.\n\n"
            "## Done and verified\n"
            "- --json added to csvtool/cli.py; `python -m pytest -q tests/test_json.py`: "
            "1 passed\n\n"
            "## Not verified\n- README.md does not document --json yet\n\n"
            "## Blockers\n- `python -m pytest -q` fails: tests/test_cli.py::test_escaped_quotes "
            "(1 failed, 6 passed): split_row splits inside quotes\n\n"
            "## Next safe action\nMake split_row honour quotes so that test_escaped_quotes passes,"
            " then run `python -m pytest -q`.",
            [],
            u(157_000),
        ),
    ]
    world.p(
        "Add a --json output flag to the csvtool CLI. Write the test first. "
        "No new dependencies: use the standard library json module only."
    )
    # the Stop at 156,000 tokens tells the person one line; the next prompt carries the
    # request for the handoff to the model, unseen, and that turn's Stop commits the reply
    result = world.p("Go on.", "--continue")
    return claude_files(world, result["session_id"])


TODO_APP = {
    "app/__init__.py": "",
    "app/models.py": (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass Todo:\n"
        "    title: str\n    done: bool = False\n"
    ),
    "tests/test_models.py": (
        "from app.models import Todo\n\n\ndef test_new_todo_is_open():\n"
        '    assert Todo("milk").done is False\n\n\ndef test_title():\n'
        '    assert Todo("milk").title == "milk"\n'
    ),
    ".claude/commands/feature.md": (
        "---\ndescription: Build a feature of the TODO app, test first\n"
        "argument-hint: <feature>\n---\n"
        "Build this feature of the TODO app: $ARGUMENTS\n\n"
        "Write its test first, then the code, then run `python -m pytest -q`.\n"
    ),
}


def claude_queued_slash(world: ClaudeRun) -> dict[str, Path]:
    """A custom slash command with arguments (``.claude/commands/feature.md`` run as
    ``/feature ...``), a prompt typed while the agent works (``--input-format stream-json``:
    Claude Code queues it and hands it to the model with the next tool result), a later
    request with a constraint (``--continue``), and a closing "Thanks!"."""
    world.files(TODO_APP)
    p = str(world.project)
    script: GatedClaude = world.server.app  # type: ignore[assignment]
    api = (
        "from app.models import Todo\n\n\n"
        "def mark_done(todos: list[Todo], index: int) -> Todo:\n"
        "    todos[index].done = True\n"
        "    return todos[index]\n"
    )
    script.main = [
        ClaudeTurn(
            "Writing the test first.",
            [
                Tool(
                    "Write",
                    {
                        "file_path": f"{p}/tests/test_api.py",
                        "content": (
                            "from app.api import mark_done\nfrom app.models import Todo\n\n\n"
                            "def test_mark_done():\n"
                            '    todos = [Todo("milk")]\n'
                            "    mark_done(todos, 0)\n"
                            "    assert todos[0].done\n"
                        ),
                    },
                )
            ],
            u(22_000),
        ),
        ClaudeTurn(
            "", [Tool("Write", {"file_path": f"{p}/app/api.py", "content": api})], u(26_000)
        ),
        ClaudeTurn("", [bash("python -m pytest -q", "Run the tests")], u(30_000)),
        ClaudeTurn(
            "Adding the due date you asked for.",
            [Tool("Read", {"file_path": f"{p}/app/models.py"})],
            u(34_000),
        ),
        ClaudeTurn(
            "",
            [
                Tool(
                    "Edit",
                    {
                        "file_path": f"{p}/app/models.py",
                        "old_string": "from dataclasses import dataclass\n",
                        "new_string": (
                            "from dataclasses import dataclass\nfrom datetime import date\n"
                        ),
                    },
                )
            ],
            u(36_000),
        ),
        ClaudeTurn(
            "",
            [
                Tool(
                    "Edit",
                    {
                        "file_path": f"{p}/app/models.py",
                        "old_string": "    done: bool = False\n",
                        "new_string": "    done: bool = False\n    due: date | None = None\n",
                    },
                )
            ],
            u(38_000),
        ),
        ClaudeTurn(
            "",
            [
                Tool(
                    "Write",
                    {
                        "file_path": f"{p}/tests/test_due.py",
                        "content": (
                            "from datetime import date\n\nfrom app.models import Todo\n\n\n"
                            "def test_due_date():\n"
                            '    assert Todo("milk", due=date(2026, 12, 24)).due.day == 24\n'
                        ),
                    },
                )
            ],
            u(40_000),
        ),
        ClaudeTurn("", [bash("python -m pytest -q", "Run the tests")], u(42_000)),
        ClaudeTurn(
            "A todo can be marked done (mark_done in app/api.py) and each todo has a due date;"
            " 4 tests pass.",
            [],
            u(44_000),
        ),
    ]
    session = world.streamed(
        "/feature mark a todo done with mark_done(todos, index)",
        "also add a due date to each todo",
        script,
        at=3,
    )
    script.main = [
        ClaudeTurn("", [Tool("Read", {"file_path": f"{p}/app/api.py"})], u(48_000)),
        ClaudeTurn(
            "",
            [
                Tool(
                    "Edit",
                    {
                        "file_path": f"{p}/app/api.py",
                        "old_string": "from app.models import Todo\n",
                        "new_string": "from datetime import date\n\nfrom app.models import Todo\n",
                    },
                )
            ],
            u(50_000),
        ),
        ClaudeTurn(
            "",
            [
                Tool(
                    "Edit",
                    {
                        "file_path": f"{p}/app/api.py",
                        "old_string": "    return todos[index]\n",
                        "new_string": (
                            "    return todos[index]\n\n\n"
                            "def overdue(todos: list[Todo], today: date) -> list[Todo]:\n"
                            "    return [t for t in todos"
                            " if not t.done and t.due and t.due < today]\n"
                        ),
                    },
                )
            ],
            u(52_000),
        ),
        ClaudeTurn(
            "",
            [
                Tool(
                    "Write",
                    {
                        "file_path": f"{p}/tests/test_overdue.py",
                        "content": (
                            "from datetime import date\n\nfrom app.api import overdue\n"
                            "from app.models import Todo\n\n\n"
                            "def test_overdue():\n"
                            '    late = Todo("milk", due=date(2026, 1, 1))\n'
                            '    later = Todo("bread", due=date(2027, 1, 1))\n'
                            "    assert overdue([late, later], date(2026, 6, 1)) == [late]\n"
                        ),
                    },
                )
            ],
            u(54_000),
        ),
        ClaudeTurn("", [bash("python -m pytest -q", "Run the tests")], u(56_000)),
        ClaudeTurn(
            "overdue() is in app/api.py with tests/test_overdue.py; all 5 tests pass and the work"
            " is complete.",
            [],
            u(58_000),
        ),
        ClaudeTurn("You're welcome.", [], u(59_000)),
    ]
    world.p(
        "Now add overdue(todos, today) that lists the open todos past their due date. Keep "
        "everything in memory, never add a database.",
        "--continue",
    )
    world.p("Thanks!", "--continue")
    return claude_files(world, session)


TODO_RENAME = {
    "todo/__init__.py": "",
    "todo/legacy.py": (
        "class Items:\n    def __init__(self):\n        self.items = []\n\n"
        "    def add(self, title):\n        self.items.append(title)\n"
        "        return len(self.items)\n"
    ),
    "todo/web.py": (
        "from todo.legacy import Items\n\nSTORE = Items()\n\n\n"
        'def render():\n    return "\\n".join(STORE.items)\n'
    ),
    "todo/seeds.py": (
        "import json\nfrom pathlib import Path\n\n\n"
        "def load():\n"
        '    return json.loads((Path(__file__).parent / "legacy_seeds.json").read_text())\n'
    ),
    "todo/legacy_seeds.json": '["milk", "bread"]\n',
    "tests/test_items.py": (
        "from todo.legacy import Items\n\n\ndef test_add_counts():\n"
        '    assert Items().add("milk") == 1\n\n\ndef test_add_keeps_order():\n'
        "    items = Items()\n"
        '    items.add("milk")\n    items.add("bread")\n'
        '    assert items.items == ["milk", "bread"]\n'
    ),
    "tests/test_web.py": (
        'from todo import web\n\n\ndef test_render_empty():\n    assert web.render() == ""\n'
    ),
    "tests/test_seeds.py": (
        "from todo import seeds\n\n\ndef test_seeds_loaded():\n"
        '    assert seeds.load() == ["milk", "bread"]\n'
    ),
}


def claude_pipeline_subagent(world: ClaudeRun) -> dict[str, Path]:
    """A git mv and an rm, a subagent (the ``Agent`` tool, in the background as it runs by
    default) whose edit is only in its own transcript, its notification, and a suite whose
    failure a pipeline hides."""
    world.files(TODO_RENAME)
    p = str(world.project)
    script: GatedClaude = world.server.app  # type: ignore[assignment]
    script.main = [
        ClaudeTurn(
            "Renaming the module file.",
            [bash("git mv todo/legacy.py todo/items.py", "Rename the module")],
            u(24_000),
        ),
        ClaudeTurn("", [Tool("Read", {"file_path": f"{p}/tests/test_items.py"})], u(28_000)),
        ClaudeTurn(
            "",
            [
                Tool(
                    "Edit",
                    {
                        "file_path": f"{p}/tests/test_items.py",
                        "old_string": "from todo.legacy import Items\n",
                        "new_string": "from todo.items import Items\n",
                    },
                )
            ],
            u(32_000),
        ),
        ClaudeTurn("", [bash("rm todo/legacy_seeds.json", "Drop the old seeds file")], u(36_000)),
        ClaudeTurn(
            "Delegating the references.",
            [
                Tool(
                    "Agent",
                    {
                        "description": "Update references",
                        "prompt": "Replace every import of todo.legacy with todo.items under todo/ "
                        "(todo/web.py imports it).",
                        "subagent_type": "general-purpose",
                    },
                )
            ],
            u(40_000),
        ),
        ClaudeTurn("The agent is updating the references.", [], u(42_000)),
        ClaudeTurn("", [bash("python -m pytest -q 2>&1 | tail -3", "Run the suite")], u(46_000)),
        ClaudeTurn("The rename is in; the suite reports a failure to look at.", [], u(48_000)),
    ]
    script.subagent = [
        ClaudeTurn("", [Tool("Read", {"file_path": f"{p}/todo/web.py"})], u(8_000)),
        ClaudeTurn(
            "",
            [
                Tool(
                    "Edit",
                    {
                        "file_path": f"{p}/todo/web.py",
                        "old_string": "from todo.legacy import Items\n",
                        "new_string": "from todo.items import Items\n",
                    },
                )
            ],
            u(9_000),
        ),
        ClaudeTurn("todo/web.py now imports Items from todo.items.", [], u(10_000)),
    ]
    # the subagent starts once the main turn that says it is at work came in, and ends once
    # that turn has ended (its Stop hook ran): its notification comes after that turn, every
    # run, however busy the machine
    script.after(("subagent", 1), ("main", 6))
    script.until(("subagent", 3), lambda: world.stops() >= 1, "the main turn's end")
    result = world.p(
        "Rename todo/legacy.py to todo/items.py, drop the old seeds file, and get the tests green."
    )
    return claude_files(world, result["session_id"])


LEDGER = {
    "ledger/__init__.py": "",
    "ledger/export.py": (
        'import csv\nimport io\n\nCOLUMNS = ["date", "account", "amount"]\n\n\n'
        "def export(rows):\n    out = io.StringIO()\n    writer = csv.writer(out)\n"
        "    writer.writerow(COLUMNS)\n    for row in rows:\n"
        "        writer.writerow([row[c] for c in COLUMNS])\n    return out.getvalue()\n"
    ),
    "tests/test_export.py": (
        "from ledger.export import export\n\n"
        'ROW = {"date": "2026-01-02", "account": "cash", "amount": 5}\n\n\n'
        "def test_header():\n"
        '    assert export([]).splitlines() == ["date,account,amount"]\n\n\n'
        "def test_row():\n"
        '    assert export([ROW]).splitlines()[1] == "2026-01-02,cash,5"\n\n\n'
        "def test_two_rows():\n"
        "    assert len(export([ROW, ROW]).splitlines()) == 3\n"
    ),
    "CHANGELOG.md": "# Changelog\n\n## Unreleased\n",
}

COMPACT_SUMMARY = (
    "<analysis>\nThe user asked for the ledger export to skip zero-amount rows. Three tasks were "
    "created; the filter is done.\n</analysis>\n\n<summary>\n"
    "1. Primary Request and Intent:\n   Make the ledger export skip zero-amount rows; do not "
    "change the CSV column order.\n\n"
    "2. Key Technical Concepts:\n   - csv.writer, COLUMNS in ledger/export.py\n\n"
    "3. Files and Code Sections:\n   - ledger/export.py: export() skips rows whose amount is 0\n\n"
    "4. Errors and fixes:\n   None.\n\n"
    "5. Problem Solving:\n   The filter sits in the loop, so the header and column order stay.\n\n"
    "6. All user messages:\n   - Make the ledger export skip zero-amount rows. Do not change the "
    "CSV column order.\n\n"
    "7. Pending Tasks:\n   - Add zero-row export test (tests/test_export_zero.py)\n"
    "   - Update the changelog (CHANGELOG.md)\n\n"
    "8. Current Work:\n   Filtering zero-amount rows is done in ledger/export.py.\n\n"
    "9. Optional Next Step:\n   Write tests/test_export_zero.py and run `python -m pytest -q`.\n"
    "</summary>"
)


def claude_tasks_compact(world: ClaudeRun) -> dict[str, Path]:
    """The task tools (``TaskCreate`` / ``TaskUpdate``, Claude Code's default list), a
    ``/compact`` whose next step is done after it, and a last request to carry on phase by
    phase; the session ends as the agent starts the changelog task."""
    world.files(LEDGER)
    p = str(world.project)
    script: GatedClaude = world.server.app  # type: ignore[assignment]
    tasks = ("Filter zero-amount rows", "Add zero-row export test", "Update the changelog")
    details = (
        "skip rows whose amount is 0 in ledger/export.py",
        "tests/test_export_zero.py",
        "one line under Unreleased in CHANGELOG.md",
    )

    def update(n: int, status: str) -> Tool:
        return Tool("TaskUpdate", {"taskId": str(n), "status": status})

    script.main = [
        ClaudeTurn(
            "Planning the work.",
            [Tool("ToolSearch", {"query": "select:TaskCreate,TaskUpdate", "max_results": 2})],
            u(22_000),
        ),
        # the three at once: a model calls tools in parallel
        ClaudeTurn(
            "",
            [
                Tool("TaskCreate", {"subject": t, "description": d})
                for t, d in zip(tasks, details, strict=True)
            ],
            u(26_000),
        ),
        ClaudeTurn("", [update(1, "in_progress")], u(28_000)),
        ClaudeTurn("", [Tool("Read", {"file_path": f"{p}/ledger/export.py"})], u(32_000)),
        ClaudeTurn(
            "",
            [
                Tool(
                    "Edit",
                    {
                        "file_path": f"{p}/ledger/export.py",
                        "old_string": "    for row in rows:\n",
                        "new_string": (
                            '    for row in rows:\n        if row["amount"] == 0:\n'
                            "            continue\n"
                        ),
                    },
                )
            ],
            u(40_000),
        ),
        ClaudeTurn("", [update(1, "completed")], u(60_000)),
        ClaudeTurn(
            "Zero-amount rows are skipped in ledger/export.py; the test is next.", [], u(80_000)
        ),
    ]
    script.compact_summary = COMPACT_SUMMARY
    session = world.p(
        "Make the ledger export skip zero-amount rows. Do not change the CSV column order."
    )["session_id"]
    world.p("/compact", "--continue")
    script.main = [
        ClaudeTurn("", [update(2, "in_progress")], u(24_000)),
        ClaudeTurn(
            "",
            [
                Tool(
                    "Write",
                    {
                        "file_path": f"{p}/tests/test_export_zero.py",
                        "content": (
                            "from ledger.export import export\n\n\n"
                            "def test_zero_rows_skipped():\n"
                            '    zero = {"date": "2026-01-03", "account": "cash", "amount": 0}\n'
                            '    assert export([zero]).splitlines() == ["date,account,amount"]\n'
                        ),
                    },
                )
            ],
            u(26_000),
        ),
        ClaudeTurn("", [bash("python -m pytest -q", "Run the tests")], u(28_000)),
        ClaudeTurn("", [update(2, "completed")], u(30_000)),
        ClaudeTurn(
            "The zero-row test passes with the rest of the suite (4 passed).", [], u(32_000)
        ),
        ClaudeTurn("", [update(3, "in_progress")], u(34_000)),
        ClaudeTurn("Next I'll add the CHANGELOG entry.", [], u(36_000)),
    ]
    world.p("Carry on with the tasks.", "--continue")
    world.p(
        "Implement the rest of the plan phase by phase, running the tests after each, until all "
        "tests are green.",
        "--continue",
    )
    return claude_files(world, session)


HANDLERS = 30
GROUPS = [list(range(n, n + 3)) for n in range(0, HANDLERS, 3)]


def _shop() -> dict[str, str]:
    files = {"shop/__init__.py": "", "shop/handlers/__init__.py": "", "shop/legacy/old.py": ""}
    for n in range(HANDLERS):
        files[f"shop/handlers/h{n:02d}.py"] = "def handle(req, cb):\n    cb(req)\n"
        wanted = '{"timeout": 1, "late": True}' if n == 27 else '{"timeout": 1}'
        files[f"tests/handlers/test_h{n:02d}.py"] = (
            f"import asyncio\n\nfrom shop.handlers.h{n:02d} import handle\n\n\n"
            f'def test_timeout():\n    assert asyncio.run(handle({{"timeout": 1}})) == {wanted}\n'
        )
    return files


def claude_long_budget(world: ClaudeRun) -> dict[str, Path]:
    """A long session, in parallel tool calls as a model makes them: 30 handlers read and
    ported, ten tasks, ten test runs, a later request that only adds constraints, and the
    whole suite behind ``| tail -5`` failing in one test — so that the seed's budget decides
    what it shows."""
    world.files(_shop())
    p = str(world.project)
    script: GatedClaude = world.server.app  # type: ignore[assignment]
    tasks = [f"Port h{g[0]:02d} to h{g[-1]:02d}" for g in GROUPS]

    def edits(numbers: range) -> list[Tool]:
        return [
            Tool(
                "Edit",
                {
                    "file_path": f"{p}/shop/handlers/h{n:02d}.py",
                    "old_string": "def handle(req, cb):\n    cb(req)\n",
                    "new_string": "async def handle(req):\n    return req\n",
                },
            )
            for n in numbers
        ]

    def runs(groups: list[list[int]]) -> list[Tool]:
        return [
            bash(
                "python -m pytest -q " + " ".join(f"tests/handlers/test_h{n:02d}.py" for n in g),
                f"Test h{g[0]:02d}-h{g[-1]:02d}",
            )
            for g in groups
        ]

    def updates(numbers: range, status: str) -> list[Tool]:
        return [Tool("TaskUpdate", {"taskId": str(n + 1), "status": status}) for n in numbers]

    script.main = [
        ClaudeTurn(
            "One task per three handlers.",
            [Tool("ToolSearch", {"query": "select:TaskCreate,TaskUpdate", "max_results": 2})],
            u(22_000),
        ),
        ClaudeTurn("", [Tool("TaskCreate", {"subject": t}) for t in tasks], u(26_000)),
        ClaudeTurn(
            "",
            [
                Tool("Read", {"file_path": f"{p}/shop/handlers/h{n:02d}.py"})
                for n in range(HANDLERS)
            ],
            u(34_000),
        ),
        ClaudeTurn("", edits(range(15)), u(44_000)),
        ClaudeTurn("", runs(GROUPS[:5]), u(52_000)),
        ClaudeTurn(
            "", [*updates(range(5), "completed"), *updates(range(5, 6), "in_progress")], u(56_000)
        ),
        ClaudeTurn("Five of ten groups are ported and pass.", [], u(58_000)),
        ClaudeTurn("", edits(range(15, HANDLERS)), u(70_000)),
        ClaudeTurn("", runs(GROUPS[5:8]), u(76_000)),
        ClaudeTurn(
            "",
            [*updates(range(5, 8), "completed"), *updates(range(8, 9), "in_progress")],
            u(80_000),
        ),
        ClaudeTurn(
            "",
            [bash("python -m pytest -q tests/handlers 2>&1 | tail -5", "Run all handler tests")],
            u(86_000),
        ),
        ClaudeTurn("29 of 30 handler tests pass; test_h27 expects a late flag.", [], u(88_000)),
    ]
    session = world.p("Port every handler under shop/handlers/ from callbacks to async/await.")[
        "session_id"
    ]
    world.p("Keep the public function names unchanged; do not touch shop/legacy/.", "--continue")
    return claude_files(world, session)


# -- Codex


def patch(body: str) -> Call:
    return Call("apply_patch", f"*** Begin Patch\n{body}*** End Patch\n", custom=True)


def shell(command: str) -> Call:
    return Call("exec_command", {"cmd": command})


def plan(steps: list[tuple[str, str]], explanation: str | None = None) -> Call:
    args: dict[str, Any] = {"plan": [{"step": s, "status": t} for s, t in steps]}
    if explanation:
        args = {"explanation": explanation, **args}
    return Call("update_plan", args)


def cu(tokens: int) -> CodexUsage:
    return CodexUsage.context(tokens)


WORDCOUNT = {
    "NOTES.md": "# Notes\n\nwordcount: count the words of a text.\n",
    "legacy/wc.py": "import sys\n\nprint(len(sys.stdin.read().split()))\n",
}

CODEX_SUMMARY = (
    "## Progress\n- Created the wordcount package: wordcount/__init__.py, wordcount/helpers.py, "
    "tests/test_count.py\n\n"
    "## Decisions\n- Keep the text helpers in their own module (wordcount/text.py)\n\n"
    "## What remains (next steps)\n1. Fix count so `python -m pytest -q` passes "
    "(test_three_words fails)\n2. Move wordcount/helpers.py to wordcount/text.py\n"
    "3. Write the README\n\n## Constraints\n- Standard library only, no third-party packages\n"
)


def codex_plan_compact(world: CodexRun) -> dict[str, Path]:
    """update_plan with statuses changing, a grep with no match, apply_patch adding, moving
    and deleting files, a command that makes a file, pytest behind tail failing then passing,
    an automatic compaction whose first next step is done after it, and a last "continue"
    (``codex exec resume``)."""
    world.config_extra = "model_auto_compact_token_limit = 50000\n"
    world.files(WORDCOUNT)
    script: CodexScript = world.server.app  # type: ignore[assignment]
    steps = (
        "Create the package",
        "Implement count",
        "Move the helpers into wordcount/text.py",
        "Write the README",
    )

    def status(*statuses: str) -> list[tuple[str, str]]:
        return list(zip(steps, statuses, strict=True))

    script.main = [
        CodexTurn(
            "",
            [plan(status("in_progress", "pending", "pending", "pending"), "A new package")],
            cu(20_000),
        ),
        CodexTurn("", [shell('grep -rn "import requests" legacy/')], cu(24_000)),
        CodexTurn(
            "",
            [
                patch(
                    "*** Add File: wordcount/__init__.py\n"
                    "+from wordcount.helpers import words\n+\n+\n"
                    "+def count(text):\n+    return 0\n"
                    "*** Add File: wordcount/helpers.py\n"
                    "+def words(text):\n+    return text.split()\n"
                    "*** Add File: tests/test_count.py\n"
                    "+from wordcount import count\n+\n+\n"
                    '+def test_empty():\n+    assert count("") == 0\n+\n+\n'
                    '+def test_three_words():\n+    assert count("a b c") == 3\n'
                )
            ],
            cu(28_000),
        ),
        CodexTurn("", [shell("touch wordcount/py.typed")], cu(30_000)),
        CodexTurn("", [plan(status("completed", "in_progress", "pending", "pending"))], cu(32_000)),
        CodexTurn("", [shell("python -m pytest -q 2>&1 | tail -3")], cu(60_000)),
        CodexTurn(
            "",
            [
                patch(
                    "*** Update File: wordcount/__init__.py\n@@\n"
                    "-from wordcount.helpers import words\n+from wordcount.text import words\n"
                    "@@\n def count(text):\n-    return 0\n+    return len(words(text))\n"
                    "*** Update File: wordcount/helpers.py\n*** Move to: wordcount/text.py\n"
                    "@@\n def words(text):\n"
                )
            ],
            cu(24_000),
        ),
        CodexTurn(
            "",
            [
                patch(
                    "*** Update File: NOTES.md\n*** Move to: docs/NOTES.md\n@@\n # Notes\n"
                    "*** Delete File: legacy/wc.py\n"
                )
            ],
            cu(26_000),
        ),
        CodexTurn("", [shell("python -m pytest -q 2>&1 | tail -3")], cu(28_000)),
        CodexTurn(
            "", [plan(status("completed", "completed", "completed", "in_progress"))], cu(30_000)
        ),
        CodexTurn(
            "count works and the tests pass (2 passed); the helpers live in wordcount/text.py now."
            " The README is the remaining step.",
            [],
            cu(32_000),
        ),
    ]
    script.compact_summary = CODEX_SUMMARY
    session = world.exec(
        "Create the wordcount package with a count(text) function that counts words. Standard "
        "library only, no third-party packages."
    )
    script.main = [CodexTurn("Writing the README next.", [], cu(34_000))]
    world.exec("resume", session, "continue")
    rollout = world.rollout(session)
    return {rollout.name: rollout}


REPORT = {
    "report/__init__.py": "",
    "report/cli.py": (
        "import argparse\nimport csv\n\n\n"
        "def main(argv=None):\n"
        '    parser = argparse.ArgumentParser(prog="report")\n'
        '    parser.add_argument("path")\n'
        "    args = parser.parse_args(argv)\n"
        '    with open(args.path, newline="") as handle:\n'
        "        rows = list(csv.DictReader(handle))\n"
        "    for row in rows:\n"
        "        print(f\"{row['name']}: {row['qty']}\")\n"
        "    return 0\n\n\n"
        'if __name__ == "__main__":\n    raise SystemExit(main())\n'
    ),
    "tests/data/sample.csv": "name,qty\napple,3\npear,5\nplum,1\n",
    "expected/plain.txt": "apple: 3\npear: 5\nplum: 1\n",
    "expected/verbose.txt": "apple: 3\npear: 5\nplum: 1\n3 rows\n",
    "tests/test_cli.py": (
        "from report.cli import main\n\n\n"
        "def test_rows(capsys):\n"
        '    main(["tests/data/sample.csv"])\n'
        '    assert capsys.readouterr().out.splitlines()[0] == "apple: 3"\n\n\n'
        "def test_all_rows(capsys):\n"
        '    main(["tests/data/sample.csv"])\n'
        "    assert len(capsys.readouterr().out.splitlines()) == 3\n"
    ),
    "tests/test_legacy_dates.py": (
        "import datetime\n\n\n"
        "def test_legacy_parse():\n"
        '    assert datetime.date.fromisoformat("2026-02-30")\n\n\n'
        "def test_legacy_week():\n"
        "    assert datetime.date(2026, 1, 1).isocalendar().week == 53\n"
    ),
}


def codex_handoff(world: CodexRun) -> dict[str, Path]:
    """update_plan, a diff that finds differences (the answer, no failure), a run of the CLI
    that works, pytest failing in tests the agent says fail on main too, and the handoff the
    Stop hook asks for (the context past the hand-off limit)."""
    world.files(REPORT)
    script: CodexScript = world.server.app  # type: ignore[assignment]
    steps = ("Add the --verbose flag", "Print the row count", "Add a test for --verbose")

    def status(*statuses: str) -> list[tuple[str, str]]:
        return list(zip(steps, statuses, strict=True))

    script.main = [
        CodexTurn("", [plan(status("in_progress", "pending", "pending"))], cu(60_000)),
        CodexTurn(
            "",
            [
                patch(
                    "*** Update File: report/cli.py\n@@\n"
                    '     parser.add_argument("path")\n'
                    '+    parser.add_argument("--verbose", action="store_true")\n'
                )
            ],
            cu(90_000),
        ),
        CodexTurn("", [plan(status("completed", "in_progress", "pending"))], cu(110_000)),
        CodexTurn(
            "",
            [
                patch(
                    "*** Update File: report/cli.py\n@@\n"
                    "     for row in rows:\n"
                    "         print(f\"{row['name']}: {row['qty']}\")\n"
                    "+    if args.verbose:\n"
                    '+        print(f"{len(rows)} rows")\n'
                )
            ],
            cu(130_000),
        ),
        CodexTurn("", [plan(status("completed", "completed", "pending"))], cu(140_000)),
        # two calls at once: a model calls tools in parallel
        CodexTurn(
            "",
            [
                shell("diff -u expected/plain.txt expected/verbose.txt"),
                shell("python -m report.cli --verbose tests/data/sample.csv"),
            ],
            cu(165_000),
        ),
        CodexTurn("", [shell("python -m pytest -q")], cu(180_000)),
        CodexTurn(
            "--verbose prints the row count. `python -m pytest -q` fails only in "
            "tests/test_legacy_dates.py, which fails on main too.",
            [],
            cu(200_000),
        ),
        CodexTurn(
            "## Goal\nAdd a --verbose flag to the report CLI that prints the row count, keeping "
            "the output format and adding no dependencies.\n\n"
            "## Done and verified\n- --verbose added to report/cli.py; `python -m report.cli "
            "--verbose tests/data/sample.csv` prints the three rows and `3 rows`\n\n"
            "## Not verified\n- no test covers --verbose yet\n\n"
            "## Blockers\nnone — the 2 failing tests in tests/test_legacy_dates.py fail on main "
            "too (known, unrelated)\n\n"
            "## Next safe action\nAdd a test for --verbose in tests/test_cli.py, then run "
            "`python -m pytest -q tests/test_cli.py`.",
            [],
            cu(201_000),
        ),
    ]
    session = world.exec(
        "Add a --verbose flag to the report CLI that also prints the row count. Keep the existing "
        "output format; do not add dependencies."
    )
    rollout = world.rollout(session)
    return {rollout.name: rollout}


SESSIONS: dict[str, tuple[str, Callable[[Any], dict[str, Path]]]] = {
    "claude-todo-handoff": ("claude-code", claude_todo_handoff),
    "claude-queued-slash": ("claude-code", claude_queued_slash),
    "claude-pipeline-subagent": ("claude-code", claude_pipeline_subagent),
    "claude-tasks-compact": ("claude-code", claude_tasks_compact),
    "claude-long-budget": ("claude-code", claude_long_budget),
    "codex-plan-compact": ("codex", codex_plan_compact),
    "codex-handoff": ("codex", codex_handoff),
}


def record(name: str, keep: Path | None) -> list[Path]:
    agent, make = SESSIONS[name]
    found = find(agent)
    if found.executable is None:
        raise SystemExit(f"{found.problem}; install with `bash tests/agents_e2e/install.sh`")
    with tempfile.TemporaryDirectory(prefix=f"clm-record-{name}-") as tmp:
        root = Path(tmp) / "box"
        sandbox = Sandbox(root)
        app: Any = GatedClaude() if agent == "claude-code" else CodexScript()
        with serve(app, root / "requests.jsonl") as server:
            world: World
            if agent == "claude-code":
                world = ClaudeRun(name, sandbox, server, exe=found.executable)
            else:
                world = CodexRun(name, sandbox, server, exe=found.executable)
            files = make(world)
            (root / "runs.log").write_text("\n\n".join(world.log), encoding="utf-8")
            written = save(world, files)
        if keep is not None:
            shutil.rmtree(keep / name, ignore_errors=True)
            shutil.copytree(root, keep / name, symlinks=True)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "names", nargs="*", help=f"sessions to record (default: all: {', '.join(SESSIONS)})"
    )
    parser.add_argument("--keep", type=Path, help="keep each sandbox under this folder")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in SESSIONS]
    if unknown:
        parser.error(f"unknown session {unknown[0]!r}; known: {', '.join(SESSIONS)}")
    for name in args.names or list(SESSIONS):
        for path in record(name, args.keep):
            print(path.relative_to(HERE))
    return 0


if __name__ == "__main__":
    sys.exit(main())
