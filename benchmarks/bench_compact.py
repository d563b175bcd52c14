"""Benchmark: ``clm-policy compact`` as a fresh process against a shell script doing the same
git work.

Run: ``.venv/bin/python benchmarks/bench_compact.py [--json] [--runs N] [--messages N]``

A person compacts a session by hand, or a hook does it for them, and waits for the process.
Each timed run compacts a new step of one session (``--state state_<n>.json``, the bundled
default policy, the default text output) in a memory repository made by ``clm-policy init``:
it writes ``sessions/s1/compactions/<step>.md`` and ``sessions/s1/state.json`` and commits
them. The baseline is a POSIX shell script that writes the same two files with the same bytes
(``printf``, a shell builtin, so no process of its own) and commits them with the same message
(``git add``, ``git commit --only``) in an identical repository made by the same ``init``. The
bytes come from the same compaction run beforehand in-process on a scratch repository. Both
sides run round-robin after warm-ups, so drift in machine load hits them alike; ``python -c
pass`` is timed with them for information (what starting Python alone costs).

The subprocesses run without ``PYTHONDONTWRITEBYTECODE`` and the warm-ups write bytecode, as an
installed clm-policy has it; the compiled-policy cache is warm (``CLM_POLICY_CACHE_DIR`` in the
temporary folder). After the timing, one more compaction runs with ``-X importtime`` and the
report lists the import time by top-level package: where start-up goes.

Sanity check: every compaction exits 0 and says it compacted the step it was given, every
script exits 0, and the two repositories end with the same commits' paths; else exit 1.
**Target: median <= 8x the script's** (issue 27).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from isolated import process_env

TARGET_RATIO = 8.0
WARMUPS = 3
DEFAULT_RUNS = 15
SESSION = "s1"
FIRST_STEP = 10


class BenchError(Exception):
    """A side did not do the work the benchmark claims to measure."""


def environment(tmp: Path) -> dict[str, str]:
    return process_env(tmp)


def state(step: int, messages: int) -> dict[str, object]:
    """Session s1 at ``step``, past the default policy's hard limit, with a working history."""
    history: list[dict[str, object]] = [
        {"role": "system", "content": "You are a careful coding agent."},
        {"role": "user", "content": "Move auth to bearer tokens; keep the tests green."},
    ]
    for i in range(messages):
        history.append(
            {
                "role": "assistant" if i % 2 else "tool",
                "content": f"step {i}: ran pytest tests/test_auth.py -q, {i % 7} failed; "
                + "checked the token refresh path and the session store. " * 3,
            }
        )
    return {
        "session_id": SESSION,
        "goal": "Move the auth service to bearer tokens",
        "step_index": step,
        "constraints": ["no new dependencies", "keep the public API"],
        "verified": ["login works with a bearer token"],
        "not_verified": ["token refresh under load"],
        "memory_keys": ["auth/tokens"],
        "tokens": {"context_tokens": 400_000},
        "messages": history,
    }


def git(cwd: Path, env: dict[str, str], *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    ).stdout


def sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def script_for(root: Path, env: dict[str, str], commit: str, message_file: Path) -> str:
    """A shell script writing ``commit``'s files (as in ``root``) and committing them."""
    paths = git(root, env, "show", "--name-only", "--format=", commit).split()
    lines = ["#!/bin/sh", "# the git work of one `clm-policy compact`", "set -e", 'cd "$1"']
    for path in paths:
        folder = os.path.dirname(path)
        data = git(root, env, "show", f"{commit}:{path}")
        lines.append(f"[ -d {folder} ] || mkdir -p {folder}")
        lines.append(f"printf '%s' {sh_quote(data)} > {path}")
    message_file.write_text(git(root, env, "log", "-1", "--format=%B", commit))
    quoted = " ".join(paths)
    lines.append(f"git add -- {quoted}")
    lines.append(
        "git commit -q --no-verify --cleanup=verbatim "
        f"-F {sh_quote(str(message_file))} --only -- {quoted}"
    )
    return "\n".join(lines) + "\n"


def prepare(tmp: Path, env: dict[str, str], rounds: int, messages: int) -> list[Path]:
    """The state files, and a script per round with the bytes of the same compaction."""
    from clm_policy.cli.main import run
    from clm_policy.memory.init import init_memory

    old = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        scratch = init_memory(tmp / "scratch").path
        scripts = []
        for n in range(rounds):
            path = tmp / f"state_{n}.json"
            path.write_text(json.dumps(state(FIRST_STEP + n, messages)))
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                args = ["compact", "--memory", str(scratch), "--state", str(path)]
                code = run([*args, "--format", "json"])
            if code != 0:
                raise BenchError(f"in-process compact exited {code}")
            commit = json.loads(out.getvalue())["commit"]
            script = tmp / f"round_{n}.sh"
            script.write_text(script_for(scratch, env, commit, tmp / f"message_{n}"))
            scripts.append(script)
        return scripts
    finally:
        os.environ.clear()
        os.environ.update(old)


def timed(cmd: Sequence[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise BenchError(f"{' '.join(cmd[:4])} exited {done.returncode}: {done.stderr[-500:]}")
    return elapsed, done.stdout


def import_profile(cmd: Sequence[str], env: dict[str, str], cwd: Path) -> list[tuple[str, float]]:
    """Milliseconds of import time by top-level package (``clm_policy`` by subpackage)."""
    done = subprocess.run(
        [cmd[0], "-X", "importtime", *cmd[1:]], env=env, cwd=cwd, capture_output=True, text=True
    )
    totals: dict[str, float] = {}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _, name = line.removeprefix("import time:").split("|")
        parts = name.strip().split(".")
        key = ".".join(parts[:2]) if parts[0] == "clm_policy" else parts[0]
        totals[key] = totals.get(key, 0.0) + int(self_us) / 1000
    return sorted(totals.items(), key=lambda kv: -kv[1])


def measure(runs: int, messages: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="bench-compact-") as name:
        tmp = Path(name)
        (tmp / "home").mkdir()
        work = tmp / "work"
        work.mkdir()
        env = environment(tmp)
        rounds = WARMUPS + runs
        scripts = prepare(tmp, env, rounds + 1, messages)
        py = sys.executable
        for side in ("ours", "shell"):
            done = subprocess.run(
                [py, "-m", "clm_policy", "init", str(tmp / side)],
                env=env,
                cwd=work,
                capture_output=True,
                check=False,
            )
            if done.returncode != 0:
                raise BenchError(f"clm-policy init {side} failed")
        ours_t, shell_t, pass_t = [], [], []
        for n in range(rounds):
            step = FIRST_STEP + n
            # the script first: the shortest figure, the one most disturbed by what ran before
            script_took, _ = timed(["sh", str(scripts[n]), str(tmp / "shell")], env, work)
            pass_took, _ = timed([py, "-c", "pass"], env, work)
            cmd = [py, "-m", "clm_policy", "compact", "--memory", str(tmp / "ours")]
            took, out = timed([*cmd, "--state", str(tmp / f"state_{n}.json")], env, work)
            if not out.startswith(f"compacted session {SESSION} at step {step} "):
                raise BenchError(f"compact printed {out[:200]!r}")
            if n >= WARMUPS:
                ours_t.append(took)
                shell_t.append(script_took)
                pass_t.append(pass_took)
        for side in ("ours", "shell"):
            count = git(tmp / side, env, "rev-list", "--count", "HEAD").strip()
            if count != str(rounds + 1):
                raise BenchError(f"{side}: {count} commits, expected {rounds + 1}")
        log_format = ["log", "--name-only", "--format=%s"]
        if git(tmp / "ours", env, *log_format) != git(tmp / "shell", env, *log_format):
            raise BenchError("the two repositories' commits differ in subjects or paths")
        last = tmp / f"state_{rounds}.json"
        cmd = [py, "-m", "clm_policy", "compact", "--memory", str(tmp / "ours")]
        imports = import_profile([*cmd, "--state", str(last)], env, work)
    ours, shell, bare = (statistics.median(t) for t in (ours_t, shell_t, pass_t))
    return {
        "runs": runs,
        "messages": messages,
        "compact_ms": round(ours * 1000, 1),
        "compact_p90_ms": round(sorted(ours_t)[int(0.9 * (len(ours_t) - 1))] * 1000, 1),
        "script_ms": round(shell * 1000, 1),
        "python_pass_ms": round(bare * 1000, 1),
        "ratio": round(ours / shell, 2),
        "ratio_python_pass": round(ours / bare, 2),
        "target_ratio": TARGET_RATIO,
        "met": ours / shell <= TARGET_RATIO,
        "imports_ms": {name: round(ms, 1) for name, ms in imports[:16]},
        "imports_total_ms": round(sum(ms for _, ms in imports), 1),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS)
    parser.add_argument("--messages", type=int, default=40, help="messages in each state")
    args = parser.parse_args()
    try:
        figures = measure(args.runs, args.messages)
    except BenchError as exc:
        print(f"bench_compact: sanity check failed: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(figures))
        return 0
    verdict = "target met" if figures["met"] else "target MISSED"
    print(
        f"bench_compact: `clm-policy compact --state` as a process, {args.runs} runs, "
        f"{args.messages} messages (Python {figures['python']}, {figures['cpus']} CPUs; "
        "bytecode on, warm policy cache)"
    )
    print(
        f"  compact          median {figures['compact_ms']:7.1f} ms  p90 "
        f"{figures['compact_p90_ms']:7.1f} ms"
    )
    print(f"  shell script     median {figures['script_ms']:7.1f} ms  (sh + git add + git commit)")
    print(f"  python -c pass   median {figures['python_pass_ms']:7.1f} ms  (for information)")
    print(
        f"  ratio compact / script {figures['ratio']:.2f}x  "
        f"(/ python -c pass {figures['ratio_python_pass']:.2f}x)  "
        f"target <= {TARGET_RATIO:g}x: {verdict}"
    )
    imports = figures["imports_ms"]
    assert isinstance(imports, dict)
    listed = ", ".join(f"{name} {ms:.1f}" for name, ms in imports.items())
    print(f"  imports {figures['imports_total_ms']} ms in all; by package (ms): {listed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
