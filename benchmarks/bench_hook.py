"""Benchmark: ``clm-policy hook claude-code`` as a fresh process, on the events a person waits
for: a prompt (warm, and the first after the policy changed), a session's start with nothing
to hand, and a Stop far from the handoff point (its reply written to the transcript or not).

Run: ``.venv/bin/python benchmarks/bench_hook.py [--json] [--runs N] [--size-mb N]
[--config plain|untrusted|trusted]``

Claude Code runs the hook on every prompt, at every start, ``/clear`` and compaction, and at
every stop, so its whole process is what a person waits for. A project is set up in a
temporary folder (``.clm-policy.yaml`` naming the project's policy, ``policy.yaml``: the
bundled claude-code policy's text, which extends the default; its memory repository) with a
Claude Code transcript of about 3 MB whose last response reports 40,000 tokens of context:
the policy says continue and the hook answers nothing, the common case. The hook's JSON goes
to the process's stdin as Claude Code sends it.

The figures:

- **warm**: UserPromptSubmit with the compiled policy in its cache (every prompt but one);
- **first after a change**: UserPromptSubmit right after ``policy.yaml`` was edited (a comment
  line that names the run is added before each such run, untimed), so that it reads,
  validates and compiles the policy and its parent and writes the cache entry — validated
  by the validator pydantic built before and clm-policy kept (clm_policy/policy/schemacheck.py);
- **first after a change, no kept validator** (for information): the same with the kept
  validator removed first, as after an upgrade: pydantic checks the file and the validator is
  kept again;
- **start, nothing to hand**: SessionStart ``startup`` (as Claude Code 2.1.332 sends it) in a
  project whose memory repository holds a handoff that a session has taken already (made
  untimed, before the runs, by the hooks themselves: a Stop past the handoff point commits
  it, a SessionStart takes it): the hook looks for a handoff no session has taken, finds
  none, and answers nothing;
- **Stop, far, reply written** and **Stop, far, reply not written**: Stop at 40,000 of
  200,000 tokens with ``last_assistant_message`` the transcript's last reply, or a reply
  Claude Code has not written to the file yet (it writes every 100 ms): either way the reply
  cannot bring the session to its handoff point (150,000), and the hook answers nothing
  without waiting for it.

``--config untrusted`` names another memory and a remote in the file, not trusted (the hook
checks the trust record on every call and, once the person was told, answers nothing);
``--config trusted`` the same file, trusted (``clm-policy trust``).

The baseline is ``sys.executable -c pass`` in the same run, round-robin with every figure: a
process start, as each hook call is. For information, the libraries a cache miss needs are
timed alone the same way — a process that imports ruamel.yaml's parser and checks one policy
with the validator pydantic built before (clm_policy/policy/schemacheck.py), and one that
imports pydantic and checks it with clm-policy's model (what a miss costs before that
validator is kept, once per install) — the floors under "first after a change". The
subprocesses run without ``PYTHONDONTWRITEBYTECODE`` and after warm-ups, so they use bytecode
as an installed clm-policy does. Targets: warm <= 3x the baseline, first after a change <= 12x
(once per edit of the policy: libyaml reads it and pydantic-core checks it), start with nothing to
hand <= 4x, Stop far from the handoff point <= 4x whether or not the reply is written (issue
27).

Exit status: 0 whether or not the targets are met; 1 when a hook run fails or answers
something, or when the memory repository does not hold the handoff and its start record.
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

WARMUPS = 3
SESSION = "3f6d2b1a-8c4e-4f7a-9b2d-1e5c7a9d0f42"
HANDED_OFF = "0b6f1d2e-3c4a-4b5d-8e6f-7a8b9c0d1e2f"
TOOK_IT = "1c7e2f3a-4d5b-4c6e-9f7a-8b9c0d1e2f3a"
STARTING = "2d8f3a4b-5e6c-4d7f-8a9b-9c0d1e2f3a4b"
BODY = "Reading the module and its tests; " * 40
NOT_WRITTEN = "The parser keeps quoted commas now; the 212 tests pass."
LIBRARIES = (  # and the process ended at once, as the hook's is (no finalization)
    "import os, _ruamel_yaml\n"
    "from clm_policy.policy import schemacheck\n"
    "os._exit(0 if schemacheck.valid({'version': 1}) else 1)\n"
)
PYDANTIC = (
    "import os, _ruamel_yaml\n"
    "from clm_policy.models.policy import PolicyFile\n"
    "PolicyFile.model_validate({'version': 1})\n"
    "os._exit(0)\n"
)

# figure -> (what it is, target ratio to the baseline)
FIGURES = {
    "warm": ("warm (UserPromptSubmit)", 3.0),
    "cold": ("first after a change", 12.0),
    "start": ("start, nothing to hand", 4.0),
    "stop_written": ("Stop, far, reply written", 4.0),
    "stop_pending": ("Stop, far, reply not written", 4.0),
}
INFORMATION = {
    "unkept": "first after a change, unkept",
    "libraries": "(libyaml + kept validator)",
    "pydantic": "(libyaml + pydantic's model)",
}


def write_transcript(path: Path, size_mb: float, context: int) -> int:
    """A Claude Code session of about ``size_mb`` MB: turns of text, tool calls and results."""
    lines = []
    parent = None
    n = 0
    while sum(map(len, lines)) < size_mb * 1024 * 1024:
        n += 1
        for kind in ("user", "assistant"):
            uid = f"{kind[0]}{n:06d}"
            message: dict[str, Any] = {"role": kind, "content": BODY}
            if kind == "assistant":
                message.update(
                    id=f"msg_{n}",
                    model="claude-sonnet-4-6",
                    content=[{"type": "text", "text": BODY}],
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


def run(cmd: list[str], stdin: bytes, env: dict[str, str], cwd: Path) -> tuple[float, Any]:
    start = time.perf_counter_ns()
    done = subprocess.run(cmd, input=stdin, capture_output=True, env=env, cwd=cwd, check=False)
    return (time.perf_counter_ns() - start) / 1e6, done


def time_run(cmd: list[str], stdin: bytes, env: dict[str, str], cwd: Path, check: bool) -> float:
    elapsed, done = run(cmd, stdin, env, cwd)
    if check and (done.returncode != 0 or done.stdout or done.stderr):
        raise SystemExit(f"the hook did not answer nothing: {done!r}")
    return elapsed


def event(name: str, transcript: Path, root: Path, **fields: Any) -> bytes:
    data = {
        "session_id": SESSION,
        "transcript_path": str(transcript),
        "cwd": str(root),
        "hook_event_name": name,
        **fields,
    }
    return json.dumps(data).encode()


def hand_off_and_take(hook: list[str], env: dict[str, str], root: Path) -> None:
    """A handoff committed (a Stop past the handoff point that the prompt hook asked for) and
    taken (a new session's SessionStart): the memory repository as it is after one handoff."""
    past = root / "handed-off.jsonl"
    write_transcript(past, 0.05, 160_000)
    stop = event("Stop", past, root, session_id=HANDED_OFF, stop_hook_active=True)
    stop_done = run(hook, stop, env, root)[1]
    start = event("SessionStart", past, root, session_id=TOOK_IT, source="startup")
    took = run(hook, start, env, root)[1]
    if b"handoff committed" not in stop_done.stdout or b"additionalContext" not in took.stdout:
        raise SystemExit(f"no handoff committed and taken: {stop_done!r} {took!r}")


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
        from clm_policy.base.resources import bundled_policy_file

        source = Path(bundled_policy_file("claude-code")).read_text(encoding="utf-8")
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
            GIT_AUTHOR_NAME="bench",
            GIT_AUTHOR_EMAIL="bench@example.com",
            GIT_COMMITTER_NAME="bench",
            GIT_COMMITTER_EMAIL="bench@example.com",
        )
        if args.config == "trusted":
            trust = [sys.executable, "-m", "clm_policy", "trust", str(root)]
            subprocess.run(trust, env=env, capture_output=True, check=True)
        hook = [sys.executable, "-m", "clm_policy", "hook", "claude-code"]
        base = [sys.executable, "-c", "pass"]
        hand_off_and_take(hook, env, root)
        inputs = {
            "warm": event("UserPromptSubmit", transcript, root, prompt="go on"),
            "start": event("SessionStart", transcript, root, session_id=STARTING, source="startup"),
            "stop_written": event(
                "Stop", transcript, root, stop_hook_active=False, last_assistant_message=BODY
            ),
            "stop_pending": event(
                "Stop", transcript, root, stop_hook_active=False, last_assistant_message=NOT_WRITTEN
            ),
        }
        for n in range(WARMUPS):  # the first run of an untrusted one tells the person
            for stdin in inputs.values():
                time_run(hook, stdin, env, root, False)
            time_run(base, b"", env, root, False)
            policy.write_text(f"{source}# warm-up {n}\n", encoding="utf-8")
            time_run(hook, inputs["warm"], env, root, False)
        policy.write_text(source, encoding="utf-8")
        time_run(hook, inputs["warm"], env, root, True)  # the entry of the policy as it stays
        floors = {
            "libraries": [sys.executable, "-c", LIBRARIES],
            "pydantic": [sys.executable, "-c", PYDANTIC],
        }
        for floor in floors.values():
            time_run(floor, b"", env, root, True)
        names = ("baseline", *floors, *FIGURES, "unkept")
        samples: dict[str, list[float]] = {name: [] for name in names}
        for n in range(args.runs):
            samples["baseline"].append(time_run(base, b"", env, root, False))
            for name, floor in floors.items():
                samples[name].append(time_run(floor, b"", env, root, True))
            for name, stdin in inputs.items():
                samples[name].append(time_run(hook, stdin, env, root, True))
            policy.write_text(f"{source}# change {n}\n", encoding="utf-8")
            samples["cold"].append(time_run(hook, inputs["warm"], env, root, True))
            policy.write_text(f"{source}# change {n} again\n", encoding="utf-8")
            for kept in (Path(tmp) / "cache").glob("policy-check-*.json"):
                kept.unlink()  # as after an upgrade: pydantic checks, and keeps the validator
            samples["unkept"].append(time_run(hook, inputs["warm"], env, root, True))
            policy.write_text(source, encoding="utf-8")  # (its entry is in the cache)
    return report(args, size, samples)


def report(args: argparse.Namespace, size: int, samples: dict[str, list[float]]) -> int:
    base_ms = statistics.median(samples["baseline"])
    result: dict[str, Any] = {
        "config": args.config,
        "transcript_bytes": size,
        "runs": args.runs,
        "baseline_median_ms": round(base_ms, 1),
    }
    for name in INFORMATION:
        median = statistics.median(samples[name])
        result[name] = {"median_ms": round(median, 1), "ratio": round(median / base_ms, 2)}
    for name, (_, target) in FIGURES.items():
        median = statistics.median(samples[name])
        result[name] = {
            "median_ms": round(median, 1),
            "ratio": round(median / base_ms, 2),
            "target_ratio": target,
            "met": median / base_ms <= target,
        }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(
        f"bench_hook: `clm-policy hook claude-code` as a fresh process, on a "
        f"{size / 1024 / 1024:.1f} MB transcript at 40,000 of 200,000 tokens; "
        f"{args.config} .clm-policy.yaml"
    )
    print(f"  python {sys.version.split()[0]}; median of {args.runs} runs, round-robin, bytecode")
    for name, (label, target) in FIGURES.items():
        figure = result[name]
        met = "met" if figure["met"] else "NOT met"
        print(
            f"  {label:<30} median {figure['median_ms']:7.1f} ms  {figure['ratio']:5.2f}x"
            f"  target <= {target:g}x: {met}"
        )
    for name, label in INFORMATION.items():
        figure = result[name]
        print(
            f"  {label:<30} median {figure['median_ms']:7.1f} ms  {figure['ratio']:5.2f}x"
            "  for information"
        )
    print(f"  {'baseline (python -c pass)':<30} median {base_ms:7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
