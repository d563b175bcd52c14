"""Benchmark: the context of a 100 MB Claude Code transcript, read from the end.

Run: ``.venv/bin/python benchmarks/bench_transcript.py [--json] [--size-mb N] [--runs N]``

A fixed-seed generator writes a Claude Code session transcript of ``--size-mb`` megabytes
(100) into a temporary directory, in the real shape: prompts, responses streamed over
several lines sharing ``message.id``, Bash and Edit tool calls with their results (a few
kilobytes each), inline subagent runs (``isSidechain``), hook ``progress`` lines and a
compaction in the middle. It then times, in-process:

- ``read_context`` (:mod:`clm_policy.transcripts.reading`), which reads the file from the end
  until the last main-chain usage line. **Target: median <= 50 ms.**
- the baseline: reading the whole file line by line with ``json.loads`` and keeping the last
  main-chain usage, the obvious way to get the same figure.

It reports both medians (read_context over ``--runs`` runs, the baseline over 3, each after
one warm-up), their ratio, and the bytes read_context read. Then, for information, the full
``read_transcript`` of a 3 MB transcript made by the same generator, against the same
line-by-line baseline on that file; and ``read_context`` as a fresh process (what a hook
pays) against ``python -c pass``.

Exit status: 0 whether or not the target is met (the report says which); 1 when the sanity
check fails (read_context's figure differs from the baseline's, or it read most of the
file), since the figures would then not measure what they claim to.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from clm_policy import __version__
from clm_policy.transcripts.reading import read_context, read_transcript

TARGET_MS = 50.0
DEFAULT_SIZE_MB = 100
SMALL_SIZE_MB = 3
DEFAULT_RUNS = 20
BASELINE_RUNS = 3
PROCESS_RUNS = 7
SEED = 20261130
SESSION = "5d0c2e7a-41b9-4f3e-9a6d-8c1b2e3f4a5b"
MODEL = "claude-sonnet-4-6"
WORDS = [
    *("the", "agent", "read", "the", "file", "and", "ran", "the", "tests", "then", "it"),
    *("fixed", "a", "bug", "in", "the", "parser", "while", "the", "reviewer", "asked"),
    *("for", "a", "smaller", "change", "and", "a", "note", "in", "the", "changelog"),
]


class BenchError(Exception):
    """The reader did not do what the benchmark claims to measure."""


def _words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(count))


def generate(path: Path, size: int, seed: int = SEED) -> int:
    """Write a transcript of about ``size`` bytes to ``path``; the figure it must read as."""
    rng = random.Random(seed)
    lines: list[str] = []
    written = 0
    context = 12_000
    step = 0

    def emit(obj: dict[str, Any]) -> None:
        nonlocal written
        text = json.dumps(obj, separators=(",", ":"))
        lines.append(text)
        written += len(text) + 1

    def base(kind: str, side: bool = False) -> dict[str, Any]:
        return {
            "parentUuid": f"u{len(lines) - 1}",
            "isSidechain": side,
            "userType": "external",
            "cwd": "/home/dev/project",
            "sessionId": SESSION,
            "version": "2.0.76",
            "gitBranch": "main",
            "type": kind,
            "uuid": f"u{len(lines)}",
            "timestamp": f"2026-11-30T10:{len(lines) % 60:02d}:00.000Z",
        }

    def usage(tokens: int, output: int) -> dict[str, Any]:
        return {
            "input_tokens": 3,
            "cache_creation_input_tokens": 400,
            "cache_read_input_tokens": tokens - 403,
            "output_tokens": output,
            "service_tier": "standard",
        }

    def respond(blocks: list[dict[str, Any]], tokens: int, side: bool = False) -> None:
        nonlocal step
        step += 1
        for index, block in enumerate(blocks):  # one line per content block, like Claude Code
            line = base("assistant", side) | {"requestId": f"req_{step:07d}"}
            line["message"] = {
                "model": MODEL,
                "id": f"msg_{step:07d}",
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": None,
                "usage": usage(tokens, 20 * (index + 1)),
            }
            emit(line)

    def result(tool_id: str, text: str, side: bool = False, error: bool = False) -> None:
        line = base("user", side)
        block: dict[str, Any] = {"tool_use_id": tool_id, "type": "tool_result", "content": text}
        if error:
            block["is_error"] = True
        line["message"] = {"role": "user", "content": [block]}
        emit(line)

    emit(base("user") | {"message": {"role": "user", "content": "Refactor the report module."}})
    while written < size:
        context = min(context + rng.randint(500, 4000), 160_000)
        roll = rng.random()
        tool_id = f"toolu_{step:07d}"
        if roll < 0.45:
            command = {"command": f"pytest -q tests/test_{rng.randint(1, 99)}.py"}
            respond(
                [
                    {"type": "text", "text": _words(rng, 30)},
                    {"type": "tool_use", "id": tool_id, "name": "Bash", "input": command},
                ],
                context,
            )
            emit({"type": "progress", "data": {"type": "hook_progress"}, "toolUseID": tool_id})
            failed = rng.random() < 0.2
            output = ("Exit code 1\n" if failed else "") + _words(rng, rng.randint(200, 1500))
            result(tool_id, output, error=failed)
        elif roll < 0.85:
            edit = {
                "file_path": f"/home/dev/project/src/mod_{rng.randint(1, 40)}.py",
                "old_string": _words(rng, 40),
                "new_string": _words(rng, 60),
            }
            respond([{"type": "tool_use", "id": tool_id, "name": "Edit", "input": edit}], context)
            result(tool_id, "The file has been updated. " + _words(rng, 120))
        elif roll < 0.95:  # an inline subagent run: sidechain lines with their own usage
            emit(base("user", side=True) | {"message": {"role": "user", "content": "Explore."}})
            for k in range(rng.randint(2, 6)):
                sub_id = f"{tool_id}_s{k}"
                grep = {"pattern": "def ", "path": "src"}
                respond(
                    [{"type": "tool_use", "id": sub_id, "name": "Grep", "input": grep}],
                    rng.randint(5_000, 60_000),
                    side=True,
                )
                result(sub_id, _words(rng, 300), side=True)
        elif roll < 0.996:
            emit(base("user") | {"message": {"role": "user", "content": _words(rng, 25)}})
        else:
            meta = {"trigger": "auto", "preTokens": context}
            emit(base("system") | {"subtype": "compact_boundary", "compactMetadata": meta})
            summary = {"role": "user", "content": _words(rng, 2000)}
            emit(base("user") | {"isCompactSummary": True, "message": summary})
            context = 14_000
    # the end of a turn: a last response and its tool result after it
    context += 1_234
    respond([{"type": "text", "text": "Done; the tests pass."}], context)
    emit(base("system") | {"subtype": "turn_duration", "durationMs": 51234})
    path.write_text("\n".join(lines) + "\n")
    return context


def baseline_context(path: Path) -> int | None:
    """The last main-chain usage, reading every line with json (the obvious way)."""
    found = None
    with path.open("rb") as handle:
        for raw in handle:
            obj = json.loads(raw)
            if obj.get("type") != "assistant" or obj.get("isSidechain"):
                continue
            usage = obj.get("message", {}).get("usage")
            if usage:
                found = (
                    usage["input_tokens"]
                    + usage["cache_creation_input_tokens"]
                    + usage["cache_read_input_tokens"]
                )
    return found


def median_ms(call: Any, runs: int) -> float:
    call()  # warm-up: the page cache, the imports
    samples = []
    for _ in range(runs):
        start = time.perf_counter_ns()
        call()
        samples.append((time.perf_counter_ns() - start) / 1e6)
    return statistics.median(samples)


def process_ms(code: str, runs: int) -> float:
    def once() -> None:
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)

    return median_ms(once, runs)


def run(size_mb: int, runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="clm-bench-transcript-") as tmp:
        big = Path(tmp) / "big.jsonl"
        expected = generate(big, size_mb * 1_000_000)
        reading = read_context(big)
        if reading.context_tokens != expected or baseline_context(big) != expected:
            raise BenchError(
                f"figures differ: read_context {reading.context_tokens}, generator {expected}, "
                f"baseline {baseline_context(big)}"
            )
        size = big.stat().st_size
        if reading.bytes_read * 10 > size:
            raise BenchError(f"read_context read {reading.bytes_read} of {size} bytes")
        fast = median_ms(lambda: read_context(big), runs)
        slow = median_ms(lambda: baseline_context(big), BASELINE_RUNS)

        small = Path(tmp) / "small.jsonl"
        generate(small, SMALL_SIZE_MB * 1_000_000, seed=SEED + 1)
        small_size = small.stat().st_size
        full = median_ms(lambda: read_transcript(small), 5)
        small_baseline = median_ms(lambda: baseline_context(small), 5)

        hook = (
            f"from clm_policy.transcripts.reading import read_context; read_context({str(big)!r})"
        )
        proc = process_ms(hook, PROCESS_RUNS)
        bare = process_ms("pass", PROCESS_RUNS)
    return {
        "benchmark": "transcript",
        "python": platform.python_version(),
        "clm_policy": __version__,
        "file_bytes": size,
        "context_tokens": expected,
        "bytes_read": reading.bytes_read,
        "runs": runs,
        "read_context_ms": fast,
        "baseline_ms": slow,
        "ratio_baseline_to_read_context": slow / fast,
        "target_ms": TARGET_MS,
        "target_met": fast <= TARGET_MS,
        "small_bytes": small_size,
        "read_transcript_small_ms": full,
        "baseline_small_ms": small_baseline,
        "process_read_context_ms": proc,
        "process_pass_ms": bare,
    }


def report(r: dict[str, Any]) -> str:
    verdict = "met" if r["target_met"] else "MISSED"
    return "\n".join(
        [
            f"bench_transcript: context of a {r['file_bytes'] / 1e6:.0f} MB Claude Code "
            f"transcript ({r['context_tokens']} tokens)",
            f"  python {r['python']}, clm-policy {r['clm_policy']}; medians after a warm-up",
            f"  read_context     {r['read_context_ms']:9.2f} ms   (read {r['bytes_read']} "
            f"bytes from the end; {r['runs']} runs)",
            f"  baseline         {r['baseline_ms']:9.2f} ms   (every line with json.loads; "
            f"{BASELINE_RUNS} runs)",
            f"  baseline / read_context {r['ratio_baseline_to_read_context']:.0f}x; target "
            f"<= {r['target_ms']:g} ms: {verdict}",
            f"  read_transcript  {r['read_transcript_small_ms']:9.2f} ms   (full read, "
            f"{r['small_bytes'] / 1e6:.0f} MB; json line by line: {r['baseline_small_ms']:.2f} ms, "
            f"{r['read_transcript_small_ms'] / r['baseline_small_ms']:.1f}x)",
            f"  as a process     {r['process_read_context_ms']:9.2f} ms   (python -c pass: "
            f"{r['process_pass_ms']:.2f} ms, "
            f"{r['process_read_context_ms'] / r['process_pass_ms']:.1f}x)",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--size-mb", type=int, default=DEFAULT_SIZE_MB, help="transcript size")
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, help="timed read_context runs")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.size_mb < 1:
        parser.error("--runs and --size-mb must be at least 1")
    try:
        result = run(args.size_mb, args.runs)
    except BenchError as exc:
        print(f"bench_transcript: sanity check failed: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2) if args.json else report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
