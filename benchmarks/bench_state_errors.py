"""Benchmark: reading a large SessionState, valid or with one bad field (the error path).

Run: ``.venv/bin/python benchmarks/bench_state_errors.py [--json] [--messages N] [--runs N]
[--cli-messages N] [--cli-runs N]``

A fixed-seed generator writes a state of ``--messages`` messages (22,000: about 13 MB of
JSON, indented like ``json.dumps(indent=1)``) and two variants of it:

- ``good``: valid;
- ``bad``: the *last* message has the role ``robot`` — the error the farthest into the text,
  so that finding its line and column means reading past every message before it.

Two figures, each against the valid state read the same way in the same run:

1. In-process: :func:`clm_policy.models.state_io.parse_state` (strict JSON parse, pydantic
   validation and, for ``bad``, locating the error); the median of ``--runs`` timed runs after
   one untimed warm-up, good and bad alternating. Before, it re-parsed the whole text with the
   pure-Python YAML loader to find the position: about 64 s for this state. **Target: bad <=
   3x good.**
2. As a person meets it: ``clm-policy decide --state FILE`` as a process on a state of
   ``--cli-messages`` messages (40,000: about 24 MB), the median wall time of ``--cli-runs``
   runs each, alternating, and the CPU time the process used (less disturbed by a busy
   machine). The valid state is read by the plain check alone; the bad one is refused in
   pydantic's words at its line and column — it used to be read three times and validated
   twice (6.5 s against 1.2 s on the machine that reported it; 2.0-2.4 s against 0.5 s
   here). **Target: bad <= 2x good.**

Exit status: 0 whether or not a target is met (the report says which); 1 when the sanity
check fails (``good`` does not validate, or ``bad`` is not refused at the last message's
``role``), since the figures would then not measure what they claim to.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from clm_policy import __version__
from clm_policy.base.errors import StateError
from clm_policy.models.state_io import parse_state

TARGET_RATIO = 3.0
CLI_TARGET_RATIO = 2.0
DEFAULT_MESSAGES = 22_000
DEFAULT_RUNS = 7
DEFAULT_CLI_MESSAGES = 40_000
DEFAULT_CLI_RUNS = 5
SEED = 20240601
WORDS = [
    *("the", "agent", "read", "the", "file", "and", "ran", "the", "tests", "then", "it"),
    *("fixed", "a", "bug", "in", "the", "parser", "while", "the", "reviewer", "asked"),
    *("for", "a", "smaller", "change", "and", "a", "note", "in", "the", "changelog"),
]


class BenchError(Exception):
    """The reader did not do what the benchmark claims to measure."""


def generate(count: int) -> tuple[str, str, str]:
    """The good state's text, the bad one's, and the message the bad one must give."""
    rng = random.Random(SEED)
    messages = [
        {
            "role": rng.choice(["user", "assistant", "tool"]),
            "content": " ".join(rng.choice(WORDS) for _ in range(110)),
            "tokens": rng.randint(10, 900),
        }
        for _ in range(count)
    ]
    state: dict[str, Any] = {
        "session_id": "bench",
        "goal": "port the report generator",
        "step_index": 400,
        "last_compact_step": 380,
        "compact_count": 12,
        "tokens": {"context_tokens": 150_000, "context_window": 200_000},
        "signals": {"degradation": False},
        "messages": messages,
        "decisions": [f"decision {i}" for i in range(2_000)],
    }
    good = json.dumps(state, indent=1)
    messages[-1]["role"] = "robot"
    bad = json.dumps(state, indent=1)
    expected = (
        f"messages[{count - 1}].role: input should be 'system', 'user', 'assistant' or "
        "'tool', got string 'robot'"
    )
    return good, bad, expected


def time_good(text: str) -> float:
    start = time.perf_counter()
    parse_state(text, "good.json")
    return time.perf_counter() - start


def time_bad(text: str, expected: str) -> float:
    start = time.perf_counter()
    try:
        parse_state(text, "bad.json")
    except StateError as exc:
        elapsed = time.perf_counter() - start
        if exc.message != expected or exc.location is None or exc.location.line <= 1:
            raise BenchError(f"bad state refused with {exc}") from None
        return elapsed
    raise BenchError("the bad state was accepted")


def time_process(path: str, code: int, said: str, env: dict[str, str]) -> tuple[float, float]:
    """``clm-policy decide --state PATH`` as a process: its wall time and CPU time (user +
    system); it must exit ``code`` with ``said`` in its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "clm_policy", "decide", "--state", path],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != code or said not in done.stdout + done.stderr:
        raise BenchError(f"decide --state {path}: exit {done.returncode}: {done.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def run_cli(count: int, runs: int) -> dict[str, Any]:
    good, bad, expected = generate(count)
    with tempfile.TemporaryDirectory() as folder:
        paths = {"good": os.path.join(folder, "good.json"), "bad": os.path.join(folder, "bad.json")}
        for name, text in (("good", good), ("bad", bad)):
            with open(paths[name], "w", encoding="utf-8") as out:
                out.write(text)
        # compiled modules as an installed package has them (a checkout run with
        # PYTHONDONTWRITEBYTECODE would compile every module the error path imports, each run)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = os.path.join(folder, "pycache")
        wall: dict[str, list[float]] = {"good": [], "bad": []}
        cpu: dict[str, list[float]] = {"good": [], "bad": []}
        for i in range(runs + 1):  # the first round fills the caches: a warm-up
            for name, code, said in (("good", 0, "action:"), ("bad", 2, expected)):
                seconds, used = time_process(paths[name], code, said, env)
                if i:
                    wall[name].append(seconds)
                    cpu[name].append(used)
    med = {name: statistics.median(v) for name, v in wall.items()}
    med_cpu = {name: statistics.median(v) for name, v in cpu.items()}
    return {
        "messages": count,
        "state_bytes": len(good.encode()),
        "runs": runs,
        "median_s": med,
        "median_cpu_s": med_cpu,
        "ratio_bad_to_good": med["bad"] / med["good"],
        "cpu_ratio_bad_to_good": med_cpu["bad"] / med_cpu["good"],
        "target_ratio": CLI_TARGET_RATIO,
        "target_met": med["bad"] / med["good"] <= CLI_TARGET_RATIO,
    }


def run(count: int, runs: int) -> dict[str, Any]:
    good, bad, expected = generate(count)
    samples: dict[str, list[float]] = {"good": [], "bad": []}
    for i in range(runs + 1):  # the first round is the warm-up
        figures = (time_good(good), time_bad(bad, expected))
        if i:
            for name, value in zip(samples, figures, strict=True):
                samples[name].append(value)
    med = {name: statistics.median(values) for name, values in samples.items()}
    return {
        "benchmark": "state_errors",
        "python": platform.python_version(),
        "clm_policy": __version__,
        "messages": count,
        "state_bytes": len(good.encode()),
        "runs": runs,
        "median_s": med,
        "ratio_bad_to_good": med["bad"] / med["good"],
        "target_ratio": TARGET_RATIO,
        "target_met": med["bad"] / med["good"] <= TARGET_RATIO,
    }


def report(r: dict[str, Any]) -> str:
    med = r["median_s"]
    verdict = "met" if r["target_met"] else "MISSED"
    lines = [
        f"bench_state_errors: parse_state on a {r['state_bytes'] / 1e6:.1f} MB state "
        f"({r['messages']} messages)",
        f"  python {r['python']}, clm-policy {r['clm_policy']}; median of {r['runs']} runs "
        "after a warm-up",
        f"  good  {med['good'] * 1e3:7.1f} ms   (parsed and validated)",
        f"  bad   {med['bad'] * 1e3:7.1f} ms   (the last message's role; refused at its "
        "line and column)",
        f"  ratio bad/good {r['ratio_bad_to_good']:.2f}x; target <= "
        f"{r['target_ratio']:g}x: {verdict}",
    ]
    cli = r.get("cli")
    if cli is not None:
        wall, cpu = cli["median_s"], cli["median_cpu_s"]
        verdict = "met" if cli["target_met"] else "MISSED"
        lines += [
            f"clm-policy decide --state FILE as a process, {cli['state_bytes'] / 1e6:.1f} MB "
            f"({cli['messages']} messages); median of {cli['runs']} runs after a warm-up",
            f"  good  {wall['good'] * 1e3:7.1f} ms   ({cpu['good'] * 1e3:.0f} ms CPU; the "
            "decision)",
            f"  bad   {wall['bad'] * 1e3:7.1f} ms   ({cpu['bad'] * 1e3:.0f} ms CPU; refused at "
            "its line and column, exit 2)",
            f"  ratio bad/good {cli['ratio_bad_to_good']:.2f}x "
            f"({cli['cpu_ratio_bad_to_good']:.2f}x in CPU time); target <= "
            f"{cli['target_ratio']:g}x: {verdict}",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--messages", type=int, default=DEFAULT_MESSAGES, help="state size")
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, help="timed runs")
    parser.add_argument(
        "--cli-messages", type=int, default=DEFAULT_CLI_MESSAGES, help="the process's state size"
    )
    parser.add_argument(
        "--cli-runs", type=int, default=DEFAULT_CLI_RUNS, help="timed process runs (0: none)"
    )
    args = parser.parse_args(argv)
    if args.runs < 1 or args.messages < 1 or args.cli_messages < 1 or args.cli_runs < 0:
        parser.error("--runs and the sizes must be at least 1, --cli-runs at least 0")
    try:
        result = run(args.messages, args.runs)
        if args.cli_runs:
            result["cli"] = run_cli(args.cli_messages, args.cli_runs)
    except BenchError as exc:
        print(f"bench_state_errors: sanity check failed: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2) if args.json else report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
