"""Benchmark: ``clm-policy hook claude-code`` answering UserPromptSubmit, as a fresh process:
on every prompt (warm), and the first prompt after the policy changed (cold).

Run: ``.venv/bin/python benchmarks/bench_hook.py [--json] [--runs N] [--size-mb N]``

Claude Code runs the hook on every prompt, so its whole process is what a person waits for.
A project is set up in a temporary folder (``.clm-policy.yaml`` naming the project's policy,
``policy.yaml``: the bundled claude-code policy's text, which extends the default; its memory
repository) with a Claude Code transcript of about 3 MB whose last response reports 40,000
tokens of context: the policy says continue and the hook answers nothing, the common case.
The hook's JSON goes to the process's stdin as Claude Code sends it.

Two figures: **warm**, the hook with the compiled policy in its cache (every prompt but one);
**first after a change**, the hook right after ``policy.yaml`` was edited (a comment line that
names the run is added before each such run, untimed), so that it reads, validates and
compiles the policy and its parent and writes the cache entry.

``--config untrusted`` names another memory and a remote in the file, not trusted (the hook
checks the trust record on every prompt and, once the person was told, answers nothing);
``--config trusted`` the same file, trusted (``clm-policy trust``).

The baseline is ``sys.executable -c pass`` in the same run, round-robin with both. The
subprocesses run without ``PYTHONDONTWRITEBYTECODE`` and after warm-ups, so they use bytecode
as an installed clm-policy does. Targets: warm <= 3x the baseline, first after a change <= 12x
(once per edit of the policy: libyaml reads it and pydantic checks it, issue 27).

Exit status: 0 whether or not the targets are met; 1 when a hook run fails or answers
something.
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
from typing import Any

TARGET_RATIO = 3.0
TARGET_COLD_RATIO = 12.0
WARMUPS = 3
SESSION = "3f6d2b1a-8c4e-4f7a-9b2d-1e5c7a9d0f42"


def write_transcript(path: Path, size_mb: float, context: int) -> int:
    """A Claude Code session of about ``size_mb`` MB: turns of text, tool calls and results."""
    lines = []
    parent = None
    n = 0
    body = "Reading the module and its tests; " * 40
    while sum(map(len, lines)) < size_mb * 1024 * 1024:
        n += 1
        for kind in ("user", "assistant"):
            uid = f"{kind[0]}{n:06d}"
            message: dict[str, Any] = {"role": kind, "content": body}
            if kind == "assistant":
                message.update(
                    id=f"msg_{n}",
                    model="claude-sonnet-4-6",
                    content=[{"type": "text", "text": body}],
                    usage={
                        "input_tokens": 5,
                        "cache_creation_input_tokens": 500,
                        "cache_read_input_tokens": context - 505,
                        "output_tokens": 300,
                    },
                )
            line = {
                "parentUuid": parent,
                "isSidechain": False,
                "type": kind,
                "uuid": uid,
                "sessionId": SESSION,
                "cwd": str(path.parent),
                "timestamp": "2026-11-30T10:00:00.000Z",
                "message": message,
            }
            lines.append(json.dumps(line) + "\n")
            parent = uid
    path.write_text("".join(lines))
    return path.stat().st_size


def time_run(cmd: list[str], stdin: bytes, env: dict[str, str], cwd: Path, check: bool) -> float:
    start = time.perf_counter_ns()
    done = subprocess.run(cmd, input=stdin, capture_output=True, env=env, cwd=cwd, check=False)
    elapsed = (time.perf_counter_ns() - start) / 1e6
    if check and (done.returncode != 0 or done.stdout or done.stderr):
        raise SystemExit(f"the hook did not answer nothing: {done!r}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--size-mb", type=float, default=3.0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--config", choices=("plain", "untrusted", "trusted"), default="plain")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        policy = root / "policy.yaml"
        from clm_policy.base.resources import bundled_policy

        source = bundled_policy("claude-code").read_text(encoding="utf-8")
        policy.write_text(source, encoding="utf-8")
        text = "version: 1\npolicy: policy.yaml\n"
        if args.config != "plain":
            text += f"memory: {Path(tmp) / 'other-memory'}\nremote: origin\n"
        (root / ".clm-policy.yaml").write_text(text)
        transcript = root / "session.jsonl"
        size = write_transcript(transcript, args.size_mb, 40_000)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(
            XDG_DATA_HOME=str(Path(tmp) / "data"),
            XDG_STATE_HOME=str(Path(tmp) / "state"),
            CLM_POLICY_CACHE_DIR=str(Path(tmp) / "cache"),
            XDG_CONFIG_HOME=str(Path(tmp) / "config"),
        )
        if args.config == "trusted":
            trust = [sys.executable, "-m", "clm_policy", "trust", str(root)]
            subprocess.run(trust, env=env, capture_output=True, check=True)
        event = json.dumps(
            {
                "session_id": SESSION,
                "transcript_path": str(transcript),
                "cwd": str(root),
                "hook_event_name": "UserPromptSubmit",
                "prompt": "go on",
            }
        ).encode()
        hook = [sys.executable, "-m", "clm_policy", "hook", "claude-code"]
        base = [sys.executable, "-c", "pass"]
        for n in range(WARMUPS):  # the first run of an untrusted one tells the person
            time_run(hook, event, env, root, False)
            time_run(base, b"", env, root, False)
            policy.write_text(f"{source}# warm-up {n}\n", encoding="utf-8")
            time_run(hook, event, env, root, False)
        policy.write_text(source, encoding="utf-8")
        time_run(hook, event, env, root, True)  # the entry of the policy as it stays
        samples: dict[str, list[float]] = {"hook": [], "cold": [], "baseline": []}
        for n in range(args.runs):
            samples["baseline"].append(time_run(base, b"", env, root, False))
            samples["hook"].append(time_run(hook, event, env, root, True))
            policy.write_text(f"{source}# change {n}\n", encoding="utf-8")
            samples["cold"].append(time_run(hook, event, env, root, True))
            policy.write_text(source, encoding="utf-8")  # (its entry is in the cache)
    hook_ms = statistics.median(samples["hook"])
    cold_ms = statistics.median(samples["cold"])
    base_ms = statistics.median(samples["baseline"])
    ratio, cold_ratio = hook_ms / base_ms, cold_ms / base_ms
    met = "met" if ratio <= TARGET_RATIO else "NOT met"
    cold_met = "met" if cold_ratio <= TARGET_COLD_RATIO else "NOT met"
    result = {
        "config": args.config,
        "transcript_bytes": size,
        "hook_median_ms": round(hook_ms, 1),
        "cold_median_ms": round(cold_ms, 1),
        "baseline_median_ms": round(base_ms, 1),
        "ratio": round(ratio, 2),
        "cold_ratio": round(cold_ratio, 2),
        "target_ratio": TARGET_RATIO,
        "target_cold_ratio": TARGET_COLD_RATIO,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(
        f"bench_hook: `clm-policy hook claude-code`, UserPromptSubmit on a "
        f"{size / 1024 / 1024:.1f} MB transcript (policy says continue), fresh process; "
        f"{args.config} .clm-policy.yaml"
    )
    print(f"  python {sys.version.split()[0]}; median of {args.runs} runs, round-robin, bytecode")
    print(f"  warm                      median {hook_ms:7.1f} ms   {ratio:.1f}x", end="")
    print(f"  target <= {TARGET_RATIO:g}x: {met}")
    print(f"  first after a change      median {cold_ms:7.1f} ms   {cold_ratio:.1f}x", end="")
    print(f"  target <= {TARGET_COLD_RATIO:g}x: {cold_met}")
    print(f"  baseline (python -c pass) median {base_ms:7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
