"""Benchmark: ``clm-policy lint`` on a folder of 100 team policies.

Run: ``.venv/bin/python benchmarks/bench_lint.py [--json] [--runs N] [--files N]``

Generates ``--files`` (default 100) team policies into a temporary folder; each extends the
bundled default policy and adds signals, rules (placed with before/after), guards and a
profile, and is clean, so the run does the whole work (load, merge, compile, every check) and
prints nothing. Times ``python -m clm_policy lint FOLDER`` as a fresh process (median and p90
of ``--runs`` after one warm-up, which writes the bytecode an installed clm-policy has: the
processes run without ``PYTHONDONTWRITEBYTECODE``, as the other process benchmarks do) against
``python -c pass``; and in-process ``lint_paths``
against loading and compiling the same files with ``load_policy`` (what any command pays).
Target: the process, median <= 0.6 s for 100 files. Exit 0 whether or not the target is met;
1 when lint finds a problem (then it measured something else).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from isolated import process_env

from clm_policy.lint.runner import lint_paths
from clm_policy.policy.compile import load_policy

TARGET_S = 0.6
REPO = Path(__file__).resolve().parent.parent

TEAM = """\
# yaml-language-server: $schema=../schemas/policy.schema.json
version: 1
name: team{n}
extends: default
defaults:
  min_steps_between_compacts: {steps}
profiles:
  review{n}: {{soft_compact: 70%, hard_handoff: 85%, context_window: 200000}}
signals:
  open_calls: {{type: int, default: 0, description: subagent calls in flight}}
  gate_ok: {{type: bool, default: true}}
  owner: {{type: str, default: "team{n}"}}
rules:
  - id: blocked_session
    before: hard_handoff
    when: blocker_count > {blockers} and tokens.context >= profile.soft_compact
    action: handoff
    because: "{{blocker_count}} blockers at {{tokens.context}} tokens"
  - id: long_session
    after: soft_compact
    when: step > {steps} * 100 and not compacted_before
    action: compact
guards:
  compact:
    - id: open_calls
      when: signals.open_calls > 0
      severity: block
      overridable: true
      message: "{{signals.open_calls}} calls open for {{signals.owner}}"
    - id: gate
      when: not signals.gate_ok
      severity: warn
"""


def generate(folder: Path, count: int) -> list[Path]:
    paths = []
    for n in range(count):
        path = folder / f"team{n:03d}.yaml"
        path.write_text(TEAM.format(n=n, steps=2 + n % 5, blockers=n % 3), encoding="utf-8")
        paths.append(path)
    return paths


def wall(cmd: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=REPO, env=env)
    return time.perf_counter() - start, proc


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--files", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "policies"
        folder.mkdir()
        paths = generate(folder, args.files)
        lint_cmd = [sys.executable, "-m", "clm_policy", "lint", str(folder)]
        base_cmd = [sys.executable, "-c", "pass"]
        env = process_env(Path(tmp))  # (bytecode written by the warm-up, as installed)
        _, first = wall(lint_cmd, env)
        if first.returncode != 0:
            print(f"lint found problems or failed:\n{first.stdout}{first.stderr}")
            return 1
        lint_times, base_times = [], []
        for _ in range(args.runs):
            lint_times.append(wall(lint_cmd, env)[0])
            base_times.append(wall(base_cmd, env)[0])
        start = time.perf_counter()
        report = lint_paths([str(folder)])
        in_process = time.perf_counter() - start
        start = time.perf_counter()
        for path in paths:
            load_policy(path)
        loading = time.perf_counter() - start
    median = statistics.median(lint_times)
    p90 = sorted(lint_times)[max(0, int(len(lint_times) * 0.9) - 1)]
    base = statistics.median(base_times)
    figures = {
        "files": args.files,
        "process_median_s": round(median, 4),
        "process_p90_s": round(p90, 4),
        "baseline_python_pass_s": round(base, 4),
        "ratio_to_baseline": round(median / base, 1),
        "in_process_s": round(in_process, 4),
        "load_policy_only_s": round(loading, 4),
        "ratio_to_loading": round(in_process / loading, 2),
        "problems": len(report.problems),
        "target_met": median <= TARGET_S,
    }
    if args.json:
        print(json.dumps(figures))
        return 0
    verdict = "target met" if figures["target_met"] else "target MISSED"
    print(f"bench_lint: clm-policy lint on {args.files} team policies (each extends default)")
    print(
        f"  process      median {median:7.3f} s  p90 {p90:7.3f} s  "
        f"({median / args.files * 1000:.1f} ms per file)  target <= {TARGET_S} s: {verdict}"
    )
    print(f"  baseline     python -c pass  {base:7.3f} s  ratio {median / base:.1f}x")
    print(
        f"  in-process   lint_paths {in_process:7.3f} s  vs load_policy of the same files "
        f"{loading:7.3f} s  ratio {in_process / loading:.2f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
