"""Benchmark: ``clm-policy report`` of a 10,000-step session.

Run: ``.venv/bin/python benchmarks/bench_report.py [--json] [--steps N] [--runs N]``

Builds a memory repository holding one session of ``--steps`` (10,000) steps as the loop
records it — ``metrics.jsonl`` and ``decisions.jsonl`` with a line per step, ``state.json``,
``run.json`` — and a compaction commit (with its trailers, every fourth with a
``Clm-Recall``) wherever the context reached the soft threshold: about 500 compactions. The
history is written with one ``git fast-import``, so building it takes well under a second.

Times ``python -m clm_policy report --memory DIR -o FILE`` as a fresh process (median and
max of ``--runs``, after one warm-up) and prints the page's size. **Targets: <= 2 s and
<= 2 MB.** The baseline, timed round-robin in the same run, is a fresh Python process that
reads the same data the report reads — the same ``git ls-tree``, ``git log`` (the audit
trail's format) and ``git cat-file`` of the session's four files — and parses every JSON
line, rendering nothing: the ratio is what loading clm-policy, computing the metrics and
drawing the page cost on top of reading the history.
Exit 0 whether or not the targets are met; 1 when the report fails or lacks the session.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from isolated import GIT_ISOLATION

from clm_policy.memory.audit import log_args
from clm_policy.memory.git.run import SAFE_CONFIG
from clm_policy.memory.init import init_memory

ENV = {**os.environ, **GIT_ISOLATION}
TARGET_S = 2.0
TARGET_BYTES = 2 * 1024 * 1024
SESSION = "long"
SOFT = 250_000

BASELINE = """
import json, subprocess, sys
root, session, fmt = sys.argv[1], sys.argv[2], sys.argv[3]
safe = %r
def git(*args):
    return subprocess.run(["git", *safe, *args], cwd=root, capture_output=True, check=True).stdout
git("ls-tree", "-r", "-l", "-z", "HEAD", "--", "sessions/")
git(*json.loads(fmt))
for name in ("state.json", "run.json", "metrics.jsonl", "decisions.jsonl"):
    text = git("cat-file", "blob", f"HEAD:sessions/{session}/{name}").decode()
    if name.endswith(".jsonl"):
        rows = [json.loads(line) for line in text.splitlines() if line]
    else:
        json.loads(text)
"""


def session_files(steps: int) -> tuple[dict[str, str], list[tuple[int, int]]]:
    """The session's files and the (step, context) of each compaction."""
    metrics, decisions, compactions = [], [], []
    context, total_in, total_out = 4_000, 0, 0
    for step in range(1, steps + 1):
        context += 12_000
        total_in += context - 1_000
        total_out += 1_000
        metrics.append(
            {
                "context_tokens": context,
                "estimated": False,
                "input_tokens": total_in,
                "messages": 2 * step,
                "output_tokens": total_out,
                "session": SESSION,
                "status": "completed" if step == steps else "running",
                "step": step,
                "tool_calls": 1,
                "total_tokens": total_in + total_out,
            }
        )
        compact = context >= SOFT
        decisions.append(
            {
                "action": "compact" if compact else "continue",
                "blocked_by": [],
                "context_tokens": context,
                "context_window": None,
                "forced": False,
                "overridden": [],
                "policy": "default",
                "profile": "coding",
                "proposed": "compact" if compact else "continue",
                "rationale": (
                    f"context {context} >= soft limit {SOFT}"
                    if compact
                    else "no rule held; otherwise continue"
                ),
                "session": SESSION,
                "step": step,
                "trigger": "soft_compact" if compact else None,
                "warnings": [],
                "window_source": None,
            }
        )
        if compact:
            compactions.append((step, context))
            context = 60_000
    state = {
        "session_id": SESSION,
        "goal": "A very long refactoring",
        "status": "completed",
        "step_index": steps,
        "profile": "coding",
        "tokens": {
            "context_tokens": context,
            "input_tokens": total_in,
            "output_tokens": total_out,
            "total_tokens": total_in + total_out,
        },
    }
    run = {"scenario": "bench", "policy": "default", "profile": "coding", "stopped": "completed"}

    def lines(rows: list[dict[str, object]]) -> str:
        return "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows)

    files = {
        "metrics.jsonl": lines(metrics),
        "decisions.jsonl": lines(decisions),
        "state.json": json.dumps(state, indent=2) + "\n",
        "run.json": json.dumps(run, indent=2) + "\n",
    }
    return files, compactions


def build(repo: Path, steps: int) -> int:
    """The session's history in ``repo`` (one fast-import); the number of compactions."""
    files, compactions = session_files(steps)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True, env=ENV
    ).stdout.strip()
    branch = subprocess.run(
        ["git", "symbolic-ref", "HEAD"], cwd=repo, capture_output=True, text=True, env=ENV
    ).stdout.strip()
    parts = []
    events = [(s, c, "compact") for s, c in compactions] + [(steps, 60_000, "session")]
    for i, (step, context, kind) in enumerate(events):
        recall = f"Clm-Recall: {9 + i // 4 % 4}/12\n" if kind == "compact" and i % 4 == 0 else ""
        msg = (
            f"clm({kind}): {SESSION} step {step}, soft_compact\n\nClm-Event: {kind}\n"
            f"Clm-Session: {SESSION}\nClm-Step: {step}\nClm-Rule: soft_compact\n"
            f"Clm-Context-Tokens: {context}\n{recall}Clm-Redactions: 0\n"
        )
        parts.append(
            f"commit {branch}\ncommitter bench <b@b> {1_700_000_000 + i} +0000\n"
            f"data {len(msg.encode())}\n{msg}\n"
        )
        if i == 0:
            parts.append(f"from {head}\n")
        if kind == "session":  # the files, written and committed once
            for name, text in files.items():
                data = text.encode()
                parts.append(
                    f"M 100644 inline sessions/{SESSION}/{name}\ndata {len(data)}\n{text}\n"
                )
    subprocess.run(
        ["git", "fast-import", "--quiet", "--force"],
        cwd=repo,
        input="".join(parts).encode(),
        check=True,
        env=ENV,
    )
    subprocess.run(["git", "reset", "-q", "--hard"], cwd=repo, check=True, env=ENV)
    return len(compactions)


def timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, env=env, check=False)
    took = time.perf_counter() - start
    if done.returncode != 0:
        sys.stderr.write(done.stderr.decode() + done.stdout.decode())
        raise SystemExit(1)
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = init_memory(Path(tmp) / "mem").path
        compactions = build(Path(repo), args.steps)
        out = Path(tmp) / "report.html"
        env = {**ENV, "CLM_POLICY_CACHE_DIR": str(Path(tmp) / "cache")}
        report = [sys.executable, "-m", "clm_policy", "report", "--memory", str(repo)]
        report += ["-o", str(out)]
        fmt = json.dumps(log_args("0123456789abcdef", rev="--all"))
        baseline = [sys.executable, "-c", BASELINE % (SAFE_CONFIG,), str(repo), SESSION, fmt]
        timed(report, env)  # warm-up: bytecode, the policy cache
        timed(baseline, env)
        report_s, baseline_s = [], []
        for _ in range(args.runs):
            report_s.append(timed(report, env))
            baseline_s.append(timed(baseline, env))
        page = out.read_bytes()
        if f'id="s-{SESSION}"'.encode() not in page:
            print("bench_report: the page lacks the session", file=sys.stderr)
            return 1
    median, base = statistics.median(report_s), statistics.median(baseline_s)
    ok = median <= TARGET_S and len(page) <= TARGET_BYTES
    figures = {
        "steps": args.steps,
        "compactions": compactions,
        "report_median_s": round(median, 3),
        "report_max_s": round(max(report_s), 3),
        "page_bytes": len(page),
        "baseline_median_s": round(base, 3),
        "ratio": round(median / base, 2),
        "target_met": ok,
    }
    if args.json:
        print(json.dumps(figures))
        return 0
    print(
        f"bench_report: one session of {args.steps:,} steps, {compactions} compactions, "
        f"{args.runs} runs"
    )
    print(
        f"  clm-policy report  median {median:.3f} s (max {max(report_s):.3f} s), page "
        f"{len(page) / 1024:,.0f} KiB; targets <= {TARGET_S} s, <= 2 MB: "
        f"{'target met' if ok else 'target MISSED'}"
    )
    print(
        f"  baseline           median {base:.3f} s (a Python process reading the same git "
        f"data and JSON lines); ratio {median / base:.1f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
