"""Benchmark: ``clm-policy replay`` of 100,000 recorded decisions as a fresh process, against
the same decisions re-decided in-process by a plain loop.

Run: ``.venv/bin/python benchmarks/bench_replay.py [--json] [--runs N] [--sessions N]
[--steps N]``

A memory repository made by ``clm-policy init`` gets ``--sessions`` sessions (default 100) of
``--steps`` decisions each (default 1,000): each line exactly as the run loop writes it — the
bundled default policy's decision on a state (``Decision.as_dict``) and what the decision read
(``clm_policy.loop.monitor.seen_state``) — all committed at once with ``git fast-import``.
The states climb through the default thresholds and compact, so the old decisions include
continue, compact and handoff. The timed command replays them under a policy with lower coding
thresholds (about a quarter of the decisions change): ``python -m clm_policy replay --memory DIR
--policy lower.yaml --format json`` (its output read through a pipe). The baseline is the same
decisions re-decided in-process: a plain loop over ``Policy.decide`` on the states prebuilt
as ``SessionState`` objects, comparing action and rule with the recorded ones — the same work
minus reading. Both run round-robin after a warm-up; the figure is the median.

Sanity check: the command exits 0 and reports every decision replayed, none refused or not
replayable, and the same number changed as the baseline counts; else exit 1.
**Target: <= 5 s for 100,000 decisions.**
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from isolated import process_env

from clm_policy.loop.monitor import seen_state
from clm_policy.memory.init import init_memory
from clm_policy.models.state import SessionState, TokenSnapshot
from clm_policy.policy.compile import load_policy
from clm_policy.policy.engine import Policy

TARGET_S = 5.0
LOWER = """\
version: 1
name: lower
extends: default
profiles:
  coding: {soft_compact: 200000, hard_handoff: 300000}
"""


class BenchError(Exception):
    """A side did not do the work the benchmark claims to measure."""


def environment(tmp: Path) -> dict[str, str]:
    return process_env(tmp)


def session(
    sid: str, steps: int, old: Policy
) -> tuple[list[str], list[tuple[SessionState, str, str | None]]]:
    """The decisions.jsonl lines of one session, and each decision's state, action and rule."""
    lines: list[str] = []
    decided: list[tuple[SessionState, str, str | None]] = []
    context, last, count, total = 15000, None, 0, 0
    template = SessionState(session_id=sid, profile="coding", tokens=TokenSnapshot())
    for step in range(1, steps + 1):
        context += 11016
        total += context
        state = template.replace(
            step_index=step,
            last_compact_step=last,
            compact_count=count,
            tokens=TokenSnapshot(context_tokens=context, input_tokens=total, total_tokens=total),
        )
        figures = state.replace(messages=range(2 * step))  # a decision counts them only
        outcome = old.decide(figures, "coding")
        seen = seen_state(state)
        seen["lengths"]["messages"] = 2 * step
        lines.append(json.dumps({"session": sid, "step": step, **outcome.as_dict(), **seen}))
        decided.append((figures, outcome.action.value, outcome.trigger))
        if outcome.action.value != "continue":  # compacted (or handed off and went on)
            context, last, count = 60000, step, count + 1
    return lines, decided


def build(
    root: Path, env: dict[str, str], sessions: int, steps: int
) -> list[tuple[SessionState, str, str | None]]:
    """The memory repository, committed with fast-import; the decisions for the baseline."""
    old = load_policy("default")
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        init_memory(root)
    finally:
        os.environ.clear()
        os.environ.update(saved)

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True)
        return done.stdout.strip()

    head, branch = git("rev-parse", "HEAD"), git("symbolic-ref", "--short", "HEAD")
    message = "clm(session): replay benchmark\n\nClm-Event: session\n"
    parts = [
        f"commit refs/heads/{branch}\ncommitter bench <b@b> 1700000000 +0000\n"
        f"data {len(message.encode())}\n{message}from {head}\n"
    ]
    decided: list[tuple[SessionState, str, str | None]] = []
    for n in range(sessions):
        lines, made = session(f"bench-{n:04d}", steps, old)
        decided += made
        data = ("\n".join(lines) + "\n").encode()
        parts.append(f"M 100644 inline sessions/bench-{n:04d}/decisions.jsonl\ndata {len(data)}\n")
        parts.append(data.decode() + "\n")
    stream = "".join(parts).encode()
    subprocess.run(["git", "fast-import", "--quiet"], cwd=root, env=env, input=stream, check=True)
    subprocess.run(["git", "reset", "-q", "--hard"], cwd=root, env=env, check=True)
    return decided


def baseline(
    policy: Policy, decided: list[tuple[SessionState, str, str | None]]
) -> tuple[float, int]:
    start = time.perf_counter()
    changed = 0
    outcome = policy.decide
    for state, action, trigger in decided:
        new = outcome(state, "coding")
        if new.action.value != action or new.trigger != trigger:
            changed += 1
    return time.perf_counter() - start, changed


def measure(runs: int, sessions: int, steps: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="bench-replay-") as name:
        tmp = Path(name)
        (tmp / "home").mkdir()
        env = environment(tmp)
        built = time.perf_counter()
        decided = build(tmp / "mem", env, sessions, steps)
        built = time.perf_counter() - built
        policy_path = tmp / "lower.yaml"
        policy_path.write_text(LOWER)
        policy = load_policy(policy_path)
        cmd = [sys.executable, "-m", "clm_policy", "replay", "--memory", str(tmp / "mem")]
        cmd += ["--policy", str(policy_path), "--format", "json"]
        ours_t, base_t = [], []
        changed = 0
        for n in range(runs + 1):
            start = time.perf_counter()
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
            took = time.perf_counter() - start
            if done.returncode != 0:
                raise BenchError(f"replay exited {done.returncode}: {done.stderr[-500:]}")
            base, changed = baseline(policy, decided)
            report = json.loads(done.stdout)
            expected = (len(decided), len(decided), changed, 0, 0)
            got = tuple(
                report[k] for k in ("decisions", "replayed", "changed", "refused", "not_replayable")
            )
            if got != expected:
                raise BenchError(f"replay reported {got}, expected {expected}")
            if n:  # the first round warms up
                ours_t.append(took)
                base_t.append(base)
    ours, base = statistics.median(ours_t), statistics.median(base_t)
    return {
        "runs": runs,
        "decisions": len(decided),
        "sessions": sessions,
        "changed": changed,
        "build_s": round(built, 2),
        "replay_s": round(ours, 3),
        "baseline_s": round(base, 3),
        "ratio": round(ours / base, 2),
        "target_s": TARGET_S,
        "met": ours <= TARGET_S,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--steps", type=int, default=1000, help="decisions per session")
    args = parser.parse_args()
    try:
        figures = measure(args.runs, args.sessions, args.steps)
    except BenchError as exc:
        print(f"bench_replay: sanity check failed: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(figures))
        return 0
    verdict = "target met" if figures["met"] else "target MISSED"
    print(
        f"bench_replay: `clm-policy replay` of {figures['decisions']:,} decisions in "
        f"{figures['sessions']} sessions as a process, {args.runs} runs (Python "
        f"{figures['python']}, {figures['cpus']} CPUs; repository built in {figures['build_s']} s)"
    )
    print(
        f"  replay            median {figures['replay_s']:6.3f} s  ({figures['changed']:,} changed)"
    )
    print(
        f"  in-process loop   median {figures['baseline_s']:6.3f} s"
        "  (Policy.decide on prebuilt states)"
    )
    print(f"  ratio replay / loop {figures['ratio']:.2f}x  target <= {TARGET_S:g} s: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
