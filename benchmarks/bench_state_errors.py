"""Benchmark: reading a 13 MB SessionState, valid or with one bad field (the error path).

Run: ``.venv/bin/python benchmarks/bench_state_errors.py [--json] [--messages N] [--runs N]``

A fixed-seed generator writes a state of ``--messages`` messages (22,000: about 13 MB of
JSON, indented like ``json.dumps(indent=1)``) and two variants of it:

- ``good``: valid;
- ``bad``: the *last* message has the role ``robot`` — the error the farthest into the text,
  so that finding its line and column means reading past every message before it.

Each is read with :func:`clm_policy.models.state_io.parse_state` (strict JSON parse, pydantic
validation and, for ``bad``, locating the error), in-process; the figure is the median of
``--runs`` timed runs after one untimed warm-up, good and bad alternating. Reading a state
already costs a JSON parse and a validation; the error path adds a walk down the failing path
(the C scanner skips each value it passes). Before, it re-parsed the whole text with the
pure-Python YAML loader to find the position: about 64 s for this state. **Target: bad <=
3x good.**

Exit status: 0 whether or not the target is met (the report says which); 1 when the sanity
check fails (``good`` does not validate, or ``bad`` is not refused at the last message's
``role``), since the figures would then not measure what they claim to.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
from typing import Any

from clm_policy import __version__
from clm_policy.base.errors import StateError
from clm_policy.models.state_io import parse_state

TARGET_RATIO = 3.0
DEFAULT_MESSAGES = 22_000
DEFAULT_RUNS = 7
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
    return "\n".join(
        [
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
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--messages", type=int, default=DEFAULT_MESSAGES, help="state size")
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, help="timed runs")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.messages < 1:
        parser.error("--runs and --messages must be at least 1")
    try:
        result = run(args.messages, args.runs)
    except BenchError as exc:
        print(f"bench_state_errors: sanity check failed: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2) if args.json else report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
