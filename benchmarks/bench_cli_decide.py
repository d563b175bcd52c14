"""Benchmark: ``clm-policy decide`` as a fresh process, wall clock.

Run: ``.venv/bin/python benchmarks/bench_cli_decide.py [--json] [--runs N] [--cold-runs N]``

Times ``sys.executable -m clm_policy decide --tokens 260000`` (no dependence on PATH) and, when
it exists next to ``sys.executable``, the installed console script ``clm-policy`` with
``--tokens 260000``, with ``--state docs/examples/session-state.json`` and, for information,
with ``--state ... --explain`` (the explain trace). Targets, as ratios to the
baseline: ``--tokens`` <= 3x, ``--state`` <= 4x. The
compiled-policy cache is pointed at a fresh temporary directory (``CLM_POLICY_CACHE_DIR``)
and filled by the warm-up runs, so the measured figures are warm-cache figures: what a user
sees on every call after the first. A cold-cache figure (``CLM_POLICY_NO_CACHE=1``: YAML parsed
and compiled on every run) is measured too, for information; the target does not apply to it.

The baseline is ``sys.executable -c pass``, timed the same way in the same run: the cost of
starting this interpreter (with its site-packages) and nothing else. The commands are run
round-robin, so drift in machine load hits all of them alike. Every decide run must exit 0
and print ``action:    compact`` exactly once, so the figure is that of a working command.

Exit status: 0 whether or not the target is met (the report says which); 1 when a run fails
the output check or the warm-ups did not fill the cache.
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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

TARGET_RATIO = {"module": 3.0, "console_script": 3.0, "state": 4.0}
TOKENS = "260000"
STATE = "docs/examples/session-state.json"
EXPECTED = "action:    compact"
WARMUPS = 2
DEFAULT_RUNS = 15
DEFAULT_COLD_RUNS = 5
REPO = Path(__file__).resolve().parent.parent


class BenchError(Exception):
    """The command did not do what the benchmark claims to measure."""


def time_run(cmd: Sequence[str], env: Mapping[str, str], check_output: bool) -> float:
    """Wall-clock milliseconds of one run of ``cmd``; checks its exit status and output."""
    start = time.perf_counter_ns()
    proc = subprocess.run(
        list(cmd),
        env=dict(env),
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed_ms = (time.perf_counter_ns() - start) / 1e6
    if proc.returncode != 0:
        raise BenchError(
            f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout}{proc.stderr}".rstrip()
        )
    if check_output and proc.stdout.count(EXPECTED) != 1:
        raise BenchError(
            f"{' '.join(cmd)} did not print {EXPECTED!r} exactly once:\n{proc.stdout}".rstrip()
        )
    return elapsed_ms


def summary(samples_ms: list[float]) -> dict[str, float]:
    p90 = statistics.quantiles(samples_ms, n=10, method="inclusive")[8]
    return {"median_ms": statistics.median(samples_ms), "p90_ms": p90}


def measure(
    commands: Mapping[str, tuple[list[str], bool]], env: Mapping[str, str], runs: int
) -> dict[str, list[float]]:
    """``WARMUPS`` untimed then ``runs`` timed runs of every command, round-robin."""
    for _ in range(WARMUPS):
        for cmd, check in commands.values():
            time_run(cmd, env, check)
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, (cmd, check) in commands.items():
            samples[name].append(time_run(cmd, env, check))
    return samples


def run(runs: int, cold_runs: int) -> dict[str, Any]:
    python = sys.executable
    module_cmd = [python, "-m", "clm_policy", "decide", "--tokens", TOKENS]
    script = Path(python).parent / "clm-policy"
    script_cmd = [str(script), "decide", "--tokens", TOKENS] if script.is_file() else None

    commands: dict[str, tuple[list[str], bool]] = {
        "baseline": ([python, "-c", "pass"], False),
        "module": (module_cmd, True),
    }
    if script_cmd is not None:
        commands["console_script"] = (script_cmd, True)
        commands["state"] = ([str(script), "decide", "--state", STATE], True)
        commands["explain"] = ([str(script), "decide", "--state", STATE, "--explain"], True)

    with tempfile.TemporaryDirectory(prefix="clm-bench-cache-") as cache:
        # bytecode as an installed clm-policy has it (written by the warm-ups)
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("CLM_POLICY_NO_CACHE", "PYTHONDONTWRITEBYTECODE")
        }
        env["CLM_POLICY_CACHE_DIR"] = cache
        samples = measure(commands, env, runs)
        entries = len(list(Path(cache).glob("*.json")))
        if entries == 0:
            raise BenchError(f"the warm-up runs left no compiled policy in {cache}")

    cold_env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CLM_POLICY_CACHE_DIR", "PYTHONDONTWRITEBYTECODE")
    }
    cold_env["CLM_POLICY_NO_CACHE"] = "1"
    cold = measure({"module": (module_cmd, True)}, cold_env, cold_runs)["module"]

    base = summary(samples["baseline"])

    def figures(name: str) -> dict[str, Any]:
        fig: dict[str, Any] = summary(samples[name])
        fig["command"] = " ".join(commands[name][0])
        fig["ratio_median"] = fig["median_ms"] / base["median_ms"]
        fig["over_baseline_ms"] = fig["median_ms"] - base["median_ms"]
        target = TARGET_RATIO.get(name)
        fig["target_ratio"] = target
        fig["target_met"] = None if target is None else fig["ratio_median"] <= target
        return fig

    cold_fig: dict[str, Any] = summary(cold)
    cold_fig["ratio_median"] = cold_fig["median_ms"] / base["median_ms"]
    return {
        "benchmark": "cli_decide",
        "python": platform.python_version(),
        "executable": python,
        "runs": runs,
        "warmups": WARMUPS,
        "cache": "warm",
        "cache_entries": entries,
        "module": figures("module"),
        "console_script": figures("console_script") if script_cmd is not None else None,
        "state": figures("state") if script_cmd is not None else None,
        "explain": figures("explain") if script_cmd is not None else None,
        "baseline": {**base, "command": " ".join(commands["baseline"][0])},
        "cold_cache_module": {**cold_fig, "runs": cold_runs, "env": "CLM_POLICY_NO_CACHE=1"},
    }


def report(r: dict[str, Any]) -> str:
    def line(label: str, fig: dict[str, Any]) -> str:
        if fig["target_ratio"] is None:
            verdict = "for information"
        else:
            met = "target met" if fig["target_met"] else "target MISSED"
            verdict = f"target <= {fig['target_ratio']:g}x: {met}"
        return (
            f"  {label:<36} median {fig['median_ms']:6.1f} ms  p90 {fig['p90_ms']:6.1f} ms  "
            f"{fig['ratio_median']:4.1f}x baseline  {verdict}"
        )

    base, cold = r["baseline"], r["cold_cache_module"]
    lines = [
        "bench_cli_decide: `clm-policy decide` as a fresh process",
        f"  python {r['python']} ({r['executable']}); {r['runs']} timed runs per command "
        f"after {r['warmups']} warm-ups, round-robin",
        "  warm cache: CLM_POLICY_CACHE_DIR is a temporary directory filled by the warm-ups",
        line(f"python -m clm_policy --tokens {TOKENS}", r["module"]),
    ]
    if r["console_script"] is not None:
        lines.append(line(f"clm-policy decide --tokens {TOKENS}", r["console_script"]))
        lines.append(line("clm-policy decide --state EXAMPLE", r["state"]))
        lines.append(line("  ... --explain", r["explain"]))
    else:
        lines.append("  console script clm-policy  not found next to the interpreter; skipped")
    lines += [
        f"  {'baseline: python -c pass':<36} median {base['median_ms']:6.1f} ms  "
        f"p90 {base['p90_ms']:6.1f} ms",
        f"  decide over baseline (median): {r['module']['over_baseline_ms']:.1f} ms",
        f"  cold cache, for information (CLM_POLICY_NO_CACHE=1, python -m, {cold['runs']} runs): "
        f"median {cold['median_ms']:.1f} ms, p90 {cold['p90_ms']:.1f} ms, "
        f"{cold['ratio_median']:.1f}x baseline",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, help="timed runs per command")
    parser.add_argument(
        "--cold-runs", type=int, default=DEFAULT_COLD_RUNS, help="timed cold-cache runs"
    )
    args = parser.parse_args(argv)
    if args.runs < 2 or args.cold_runs < 2:
        parser.error("--runs and --cold-runs must be at least 2")
    try:
        result = run(args.runs, args.cold_runs)
    except BenchError as exc:
        print(f"bench_cli_decide: sanity check failed: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2) if args.json else report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
