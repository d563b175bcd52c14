"""Benchmark: ``clm-policy statusline`` as a fresh process, with a warm digest, wall clock.

Run: ``.venv/bin/python benchmarks/bench_statusline.py [--json] [--runs N] [--cold-runs N]``

Claude Code runs the status-line command on every refresh of its status bar, so the whole
process is the figure. A project is set up in a temporary folder (``.clm-policy.yaml`` naming
the bundled claude-code policy), and the status-line JSON goes to the process's stdin as
Claude Code sends it (model, workspace, cost, ``context_window`` with ``current_usage``).

Timed: ``sys.executable -m clm_policy statusline`` (no dependence on PATH) and, when it sits
next to the interpreter, the installed console script ``clm-policy statusline``. The baseline
is ``sys.executable -c pass``, timed the same way in the same run, round-robin with them, so
drift in machine load hits all alike. ``CLM_POLICY_CACHE_DIR`` and ``XDG_STATE_HOME`` point
into the temporary folder; the warm-ups write the digest (and the compiled policy), so the
timed runs are digest hits: what a person sees on every refresh after the first.

Bytecode: this environment may set ``PYTHONDONTWRITEBYTECODE=1``. The subprocesses run with it
removed, after the warm-ups, so they load bytecode as an installed clm-policy does (with it set,
every run would compile the sources again); the report says so. For information, the same
command with the digest and the policy cache off (``CLM_POLICY_NO_CACHE=1``: the configuration,
the YAML policy and its thresholds on every run) is timed too; the target does not apply to it.

Every run must exit 0 and print exactly the expected line, and the log must stay empty, or the
benchmark exits 1: the figure is that of a working status line. **Target: median <= 3x the
baseline's.**
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

TARGET_RATIO = 3.0
WARMUPS = 3
DEFAULT_RUNS = 21
DEFAULT_COLD_RUNS = 5
EXPECTED = "ctx 46% 82k/180k · compact at 67% · continue · claude-code/coding\n"


class BenchError(Exception):
    """The command did not do what the benchmark claims to measure."""


def status_input(project: Path) -> bytes:
    """Claude Code's status-line JSON for a session in ``project`` at 82,000 tokens."""
    return json.dumps(
        {
            "hook_event_name": "Status",
            "session_id": "3f6d2b1a-8c4e-4f7a-9b2d-1e5c7a9d0f42",
            "transcript_path": str(project / "session.jsonl"),
            "cwd": str(project),
            "model": {"id": "claude-sonnet-4-6", "display_name": "Sonnet 4.6"},
            "workspace": {"current_dir": str(project), "project_dir": str(project)},
            "version": "2.1.0",
            "output_style": {"name": "default"},
            "cost": {
                "total_cost_usd": 0.42,
                "total_duration_ms": 845000,
                "total_api_duration_ms": 230000,
                "total_lines_added": 156,
                "total_lines_removed": 23,
            },
            "context_window": {
                "total_input_tokens": 152340,
                "total_output_tokens": 14521,
                "context_window_size": 200000,
                "used_percentage": 41,
                "remaining_percentage": 59,
                "current_usage": {
                    "input_tokens": 2000,
                    "output_tokens": 1200,
                    "cache_creation_input_tokens": 5000,
                    "cache_read_input_tokens": 75000,
                },
            },
        }
    ).encode()


def time_run(
    cmd: Sequence[str], stdin: bytes, env: Mapping[str, str], cwd: Path, check: bool
) -> float:
    """Wall-clock milliseconds of one run of ``cmd``; checks its exit status and output."""
    start = time.perf_counter_ns()
    proc = subprocess.run(
        list(cmd), input=stdin, env=dict(env), cwd=cwd, capture_output=True, check=False
    )
    elapsed_ms = (time.perf_counter_ns() - start) / 1e6
    if proc.returncode != 0:
        raise BenchError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr!r}")
    if check and (proc.stdout.decode() != EXPECTED or proc.stderr):
        raise BenchError(f"{' '.join(cmd)} printed {proc.stdout!r} {proc.stderr!r}")
    return elapsed_ms


def measure(
    commands: Mapping[str, tuple[list[str], bool]],
    stdin: bytes,
    env: Mapping[str, str],
    cwd: Path,
    runs: int,
) -> dict[str, list[float]]:
    """``WARMUPS`` untimed then ``runs`` timed runs of every command, round-robin."""
    for _ in range(WARMUPS):
        for cmd, check in commands.values():
            time_run(cmd, stdin, env, cwd, check)
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, (cmd, check) in commands.items():
            samples[name].append(time_run(cmd, stdin, env, cwd, check))
    return samples


def summary(samples_ms: list[float]) -> dict[str, float]:
    p90 = statistics.quantiles(samples_ms, n=10, method="inclusive")[8]
    return {"median_ms": statistics.median(samples_ms), "p90_ms": p90}


def run(runs: int, cold_runs: int) -> dict[str, Any]:
    python = sys.executable
    module_cmd = [python, "-m", "clm_policy", "statusline"]
    script = Path(python).parent / "clm-policy"
    commands: dict[str, tuple[list[str], bool]] = {
        "baseline": ([python, "-c", "pass"], False),
        "module": (module_cmd, True),
    }
    if script.is_file():
        commands["console_script"] = ([str(script), "statusline"], True)

    with tempfile.TemporaryDirectory(prefix="clm-bench-statusline-") as tmp:
        project = Path(tmp) / "shop"
        project.mkdir()
        (project / ".clm-policy.yaml").write_text(
            "version: 1\npolicy: claude-code\nprofile: coding\n"
        )
        stdin = status_input(project)
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("PYTHONDONTWRITEBYTECODE", "CLM_POLICY_NO_CACHE")
            and not k.startswith(("CLM_POLICY_POLICY", "CLM_POLICY_PROFILE"))
        }
        env.update(
            CLM_POLICY_CACHE_DIR=str(Path(tmp) / "cache"),
            XDG_STATE_HOME=str(Path(tmp) / "state"),
        )
        samples = measure(commands, stdin, env, project, runs)
        digests = len(list((Path(tmp) / "cache").glob("statusline-*.json")))
        if digests != 1:
            raise BenchError(f"the warm-ups left {digests} digests, expected 1")
        log = Path(tmp) / "state" / "clm-policy" / "statusline.log"
        if log.exists():
            raise BenchError(f"the status line logged problems:\n{log.read_text()}")
        cold_env = {**env, "CLM_POLICY_NO_CACHE": "1"}
        cold = measure({"module": (module_cmd, True)}, stdin, cold_env, project, cold_runs)

    base = summary(samples["baseline"])

    def figures(name: str) -> dict[str, Any]:
        fig: dict[str, Any] = summary(samples[name])
        fig["command"] = " ".join(commands[name][0])
        fig["ratio_median"] = fig["median_ms"] / base["median_ms"]
        fig["target_met"] = fig["ratio_median"] <= TARGET_RATIO
        return fig

    cold_fig: dict[str, Any] = summary(cold["module"])
    cold_fig["ratio_median"] = cold_fig["median_ms"] / base["median_ms"]
    return {
        "benchmark": "statusline",
        "python": platform.python_version(),
        "executable": python,
        "runs": runs,
        "warmups": WARMUPS,
        "bytecode": "PYTHONDONTWRITEBYTECODE removed; bytecode written by the warm-ups",
        "digest": "warm",
        "target_ratio": TARGET_RATIO,
        "module": figures("module"),
        "console_script": figures("console_script") if "console_script" in commands else None,
        "baseline": {**base, "command": " ".join(commands["baseline"][0])},
        "no_cache_module": {**cold_fig, "runs": cold_runs, "env": "CLM_POLICY_NO_CACHE=1"},
    }


def report(r: dict[str, Any]) -> str:
    def line(label: str, fig: dict[str, Any]) -> str:
        verdict = "target met" if fig["target_met"] else "target MISSED"
        return (
            f"  {label:<28} median {fig['median_ms']:6.1f} ms  p90 {fig['p90_ms']:6.1f} ms  "
            f"{fig['ratio_median']:4.2f}x baseline  (target <= {r['target_ratio']:g}x): {verdict}"
        )

    base, cold = r["baseline"], r["no_cache_module"]
    lines = [
        "bench_statusline: `clm-policy statusline` as a fresh process, warm digest",
        f"  python {r['python']} ({r['executable']}); {r['runs']} timed runs per command "
        f"after {r['warmups']} warm-ups, round-robin",
        f"  bytecode: {r['bytecode']}",
        line("python -m clm_policy", r["module"]),
    ]
    if r["console_script"] is not None:
        lines.append(line("console script clm-policy", r["console_script"]))
    else:
        lines.append("  console script clm-policy    not found next to the interpreter; skipped")
    lines += [
        f"  {'baseline: python -c pass':<28} median {base['median_ms']:6.1f} ms  "
        f"p90 {base['p90_ms']:6.1f} ms",
        f"  no digest, for information (CLM_POLICY_NO_CACHE=1, {cold['runs']} runs): median "
        f"{cold['median_ms']:.1f} ms, {cold['ratio_median']:.1f}x baseline",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, help="timed runs per command")
    parser.add_argument(
        "--cold-runs", type=int, default=DEFAULT_COLD_RUNS, help="timed runs without a digest"
    )
    args = parser.parse_args(argv)
    if args.runs < 2 or args.cold_runs < 2:
        parser.error("--runs and --cold-runs must be at least 2")
    try:
        result = run(args.runs, args.cold_runs)
    except BenchError as exc:
        print(f"bench_statusline: sanity check failed: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2) if args.json else report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
