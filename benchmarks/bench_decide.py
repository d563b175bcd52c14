"""Benchmark: in-process ``Policy.decide`` on the default policy, profile ``coding``.

Run: ``.venv/bin/python benchmarks/bench_decide.py [--json] [--batches N]``

A fixed mix of states covers every outcome of the default policy (continue, soft compact,
soft compact held back by min_steps_between_compacts, hard handoff, phase boundary,
degradation). Each batch calls ``decide`` on every state of the mix ``REPS`` times; the figure
is the median (and p90) over batches of the mean time per call, from
``time.perf_counter_ns``. The baseline is ``baseline_decide``: the same rules written by hand
in plain Python, timed the same way on the same states, in alternation with the engine's
batches. At start-up both are checked against the expected outcome of every state, so the
comparison is between two implementations that agree.

Exit status: 0 whether or not the target is met (the report says which); 1 when the sanity
check fails (the engine or the baseline disagrees with the expected outcomes), since the
figures would then not measure what they claim to.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from clm_policy import SessionState, TaskStatus, TokenSnapshot, __version__, load_policy

TARGET_US = 20.0  # median microseconds per decide
PROFILE = "coding"
REPS = 20  # passes over the mix per batch
WARMUP_BATCHES = 20
DEFAULT_BATCHES = 300
PER_STATE_REPS = 100
PER_STATE_BATCHES = 40


@dataclass(frozen=True)
class Limits:
    """The coding profile of policies/default.yaml, as the hand-written baseline sees it."""

    soft: int = 250_000
    hard: int = 350_000
    min_steps: int = 5
    prefer_handoff_on_phase: bool = True


CODING = Limits()


def baseline_decide(state: SessionState, limits: Limits) -> tuple[str, str | None]:
    """The default policy's rules written by hand: (action, trigger) for ``state``."""
    if state.status == TaskStatus.PHASE_BOUNDARY and limits.prefer_handoff_on_phase:
        return "handoff", "phase_boundary"
    context = state.tokens.context_tokens
    if context >= limits.hard:
        return "handoff", "hard_handoff"
    last = state.last_compact_step
    if context >= limits.soft and (last is None or state.step_index - last >= limits.min_steps):
        return "compact", "soft_compact"
    if state.signals.get("degradation", False):
        return "compact", "degradation"
    return "continue", None


@dataclass(frozen=True)
class Case:
    label: str
    state: SessionState
    action: str
    trigger: str | None


def _state(
    context: int,
    step: int,
    last_compact: int | None = None,
    status: TaskStatus = TaskStatus.RUNNING,
    degradation: bool | None = None,
) -> SessionState:
    signals: dict[str, bool | int | float | str] = {}
    if degradation is not None:
        signals["degradation"] = degradation
    return SessionState(
        session_id="bench",
        step_index=step,
        last_compact_step=last_compact,
        status=status,
        tokens=TokenSnapshot(context_tokens=context),
        signals=signals,
    )


CASES: tuple[Case, ...] = (
    Case("continue", _state(120_000, 3), "continue", None),
    Case("soft compact, never compacted", _state(260_000, 8), "compact", "soft_compact"),
    Case("soft compact, 6 steps after last", _state(280_000, 16, 10), "compact", "soft_compact"),
    Case("soft compact held by min steps", _state(270_000, 12, 10), "continue", None),
    Case(
        "held by min steps + degradation",
        _state(270_000, 12, 10, degradation=True),
        "compact",
        "degradation",
    ),
    Case("hard handoff", _state(360_000, 30), "handoff", "hard_handoff"),
    Case("hard handoff right after compact", _state(352_000, 21, 20), "handoff", "hard_handoff"),
    Case(
        "phase boundary",
        _state(90_000, 14, status=TaskStatus.PHASE_BOUNDARY),
        "handoff",
        "phase_boundary",
    ),
    Case("continue, degradation=false", _state(150_000, 9, degradation=False), "continue", None),
    Case("degradation signal", _state(150_000, 9, degradation=True), "compact", "degradation"),
)


def check_agreement(engine: Callable[[SessionState, str], Any]) -> list[str]:
    """Every case's expected outcome, from the engine and from the baseline; the mismatches."""
    problems = []
    for case in CASES:
        decision = engine(case.state, PROFILE)
        got_engine = (decision.action.value, decision.trigger)
        got_baseline = baseline_decide(case.state, CODING)
        expected = (case.action, case.trigger)
        if got_engine != expected:
            problems.append(f"{case.label}: engine gave {got_engine}, expected {expected}")
        if got_baseline != expected:
            problems.append(f"{case.label}: baseline gave {got_baseline}, expected {expected}")
    return problems


def one_batch(
    fn: Callable[[SessionState, Any], object],
    arg: object,
    states: Sequence[SessionState],
    reps: int,
) -> float:
    """Mean microseconds per call of ``fn(state, arg)`` over ``reps`` passes over ``states``."""
    start = time.perf_counter_ns()
    for _ in range(reps):
        for state in states:
            fn(state, arg)
    elapsed = time.perf_counter_ns() - start
    return elapsed / (reps * len(states)) / 1000


def summary(per_call_us: list[float]) -> dict[str, float]:
    p90 = statistics.quantiles(per_call_us, n=10, method="inclusive")[8]
    return {"median_us": statistics.median(per_call_us), "p90_us": p90}


def run(batches: int) -> dict[str, Any]:
    policy = load_policy("default")
    problems = check_agreement(policy.decide)
    if problems:
        raise SystemExit(
            "bench_decide: sanity check failed, not measuring:\n  " + "\n  ".join(problems)
        )
    states = [case.state for case in CASES]
    engine_fn: Callable[[SessionState, Any], object] = policy.decide
    baseline_fn: Callable[[SessionState, Any], object] = baseline_decide

    gc.collect()
    for _ in range(WARMUP_BATCHES):
        one_batch(engine_fn, PROFILE, states, REPS)
        one_batch(baseline_fn, CODING, states, REPS)
    engine: list[float] = []
    baseline: list[float] = []
    for _ in range(batches):  # alternate, so drift in machine speed hits both alike
        engine.append(one_batch(engine_fn, PROFILE, states, REPS))
        baseline.append(one_batch(baseline_fn, CODING, states, REPS))

    per_state = {
        case.label: statistics.median(
            one_batch(engine_fn, PROFILE, [case.state], PER_STATE_REPS)
            for _ in range(PER_STATE_BATCHES)
        )
        for case in CASES
    }
    eng = summary(engine)
    base = summary(baseline)
    return {
        "benchmark": "decide",
        "python": platform.python_version(),
        "clm_policy": __version__,
        "policy": "default",
        "profile": PROFILE,
        "states": len(states),
        "calls_per_batch": REPS * len(states),
        "batches": batches,
        "engine": eng,
        "baseline": base,
        "ratio_median": eng["median_us"] / base["median_us"],
        "target_median_us": TARGET_US,
        "target_met": eng["median_us"] <= TARGET_US,
        "per_state_engine_median_us": per_state,
    }


def report(r: dict[str, Any]) -> str:
    eng, base = r["engine"], r["baseline"]
    verdict = "target met" if r["target_met"] else "target MISSED"
    lines = [
        f"bench_decide: Policy.decide, policy {r['policy']}, profile {r['profile']}",
        f"  python {r['python']}, clm-policy {r['clm_policy']}; {r['states']} states, "
        f"{r['calls_per_batch']} calls per batch, {r['batches']} batches per side (interleaved)",
        f"  engine    median {eng['median_us']:7.2f} µs/decide   p90 {eng['p90_us']:7.2f} µs   "
        f"target <= {r['target_median_us']:g} µs median: {verdict}",
        f"  baseline  median {base['median_us']:7.2f} µs/decide   p90 {base['p90_us']:7.2f} µs   "
        "(the same rules hand-written in plain Python)",
        f"  ratio engine/baseline (medians): {r['ratio_median']:.1f}x",
        "  engine median per state:",
    ]
    width = max(len(label) for label in r["per_state_engine_median_us"])
    for label, us in r["per_state_engine_median_us"].items():
        lines.append(f"    {label:<{width}}  {us:7.2f} µs")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--batches", type=int, default=DEFAULT_BATCHES, help="timed batches per side"
    )
    args = parser.parse_args(argv)
    if args.batches < 2:
        parser.error("--batches must be at least 2")
    result = run(args.batches)
    print(json.dumps(result, indent=2) if args.json else report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
