"""Benchmark: in-process ``Policy.decide`` on the default policy, profile ``coding``.

Run: ``.venv/bin/python benchmarks/bench_decide.py [--json] [--batches N]``

A fixed mix of states covers every outcome of the default policy (continue, soft compact,
soft compact held back by min_steps_between_compacts, hard handoff, phase boundary,
degradation). Each batch calls ``decide`` on every state of the mix ``REPS`` times; the figure
is the median (and p90) over batches of the mean time per call, from
``time.perf_counter_ns``. Two baselines, timed the same way on the same states, in alternation
with the engine's batches:

- ``baseline_decide``: the same rules written by hand in plain Python, returning action and
  trigger only (the bare rules: less work than ``decide`` does);
- ``baseline_same_decision``: the same rules by hand producing the same ``Decision`` the engine
  returns — the rationale text, the context figures and the plain ``Decision`` built the
  way the engine builds it. The ratio to it is the price of the declarative policy (reading
  the rules from YAML, the sandboxed expressions, the templates) over the same work by hand.

At start-up all three are checked against every state (the expected action and trigger; the
second baseline's whole ``Decision`` against the engine's), so the comparison is between
implementations that agree. The report also gives each rule's ``when`` cost (median over the
mix) and the cost per state.

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

from clm_policy import Action, SessionState, TaskStatus, TokenSnapshot, __version__, load_policy
from clm_policy.models.decision import Decision

TARGET_US = 10.0  # median microseconds per decide
TARGET_RATIO = 10.0  # engine / the same decision by hand
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


def baseline_same_decision(state: SessionState, limits: Limits) -> Any:
    """The default policy's rules by hand, giving the very Decision the engine gives."""
    context = state.tokens.context_tokens
    last = state.last_compact_step
    if state.status == TaskStatus.PHASE_BOUNDARY and limits.prefer_handoff_on_phase:
        action, trigger = Action.HANDOFF, "phase_boundary"
        why = "phase finished; the next phase starts in a clean session"
    elif context >= limits.hard:
        action, trigger = Action.HANDOFF, "hard_handoff"
        why = f"context {context} >= hard limit {limits.hard}"
    elif context >= limits.soft and (last is None or state.step_index - last >= limits.min_steps):
        action, trigger = Action.COMPACT, "soft_compact"
        why = f"context {context} >= soft limit {limits.soft}"
    elif state.signals.get("degradation", False):
        action, trigger, why = Action.COMPACT, "degradation", "the integration reports degradation"
    else:
        action, trigger, why = Action.CONTINUE, None, "no rule held; otherwise continue"
    return Decision(
        action=action,
        trigger=trigger,
        rationale=why,
        proposed=action,
        policy="default",
        profile=PROFILE,
        context_tokens=context,
        context_window=state.tokens.context_window,
        window_source="state" if state.tokens.context_window is not None else None,
    )


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
        same = baseline_same_decision(case.state, CODING).as_dict()
        if same != decision.as_dict():
            problems.append(f"{case.label}: the same-decision baseline gave {same}")
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
    same_fn: Callable[[SessionState, Any], object] = baseline_same_decision

    gc.collect()
    for _ in range(WARMUP_BATCHES):
        one_batch(engine_fn, PROFILE, states, REPS)
        one_batch(baseline_fn, CODING, states, REPS)
        one_batch(same_fn, CODING, states, REPS)
    engine: list[float] = []
    baseline: list[float] = []
    same: list[float] = []
    for _ in range(batches):  # alternate, so drift in machine speed hits all alike
        engine.append(one_batch(engine_fn, PROFILE, states, REPS))
        baseline.append(one_batch(baseline_fn, CODING, states, REPS))
        same.append(one_batch(same_fn, CODING, states, REPS))
    per_rule = rule_costs(policy, states)

    per_state = {
        case.label: statistics.median(
            one_batch(engine_fn, PROFILE, [case.state], PER_STATE_REPS)
            for _ in range(PER_STATE_BATCHES)
        )
        for case in CASES
    }
    eng = summary(engine)
    base = summary(baseline)
    same_decision = summary(same)
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
        "same_decision": same_decision,
        "ratio_same_decision": eng["median_us"] / same_decision["median_us"],
        "target_median_us": TARGET_US,
        "target_ratio": TARGET_RATIO,
        "target_met": eng["median_us"] <= TARGET_US
        and eng["median_us"] / same_decision["median_us"] <= TARGET_RATIO,
        "per_state_engine_median_us": per_state,
        "per_rule_when_median_us": per_rule,
    }


def rule_costs(policy: Any, states: Sequence[SessionState]) -> dict[str, float]:
    """Each rule's ``when`` alone: median microseconds per evaluation over the mix."""
    spaces = [policy.namespace(s, policy.profile(PROFILE))[0] for s in states]
    costs = {}
    for rule in policy.rules:
        samples = []
        for _ in range(PER_STATE_BATCHES):
            start = time.perf_counter_ns()
            for _ in range(PER_STATE_REPS):
                for names in spaces:
                    rule.when.evaluate(names)
            samples.append((time.perf_counter_ns() - start) / (PER_STATE_REPS * len(spaces)))
        costs[rule.id] = statistics.median(samples) / 1000
    return costs


def report(r: dict[str, Any]) -> str:
    eng, base, same = r["engine"], r["baseline"], r["same_decision"]
    verdict = "target met" if r["target_met"] else "target MISSED"
    lines = [
        f"bench_decide: Policy.decide, policy {r['policy']}, profile {r['profile']}",
        f"  python {r['python']}, clm-policy {r['clm_policy']}; {r['states']} states, "
        f"{r['calls_per_batch']} calls per batch, {r['batches']} batches per side (interleaved)",
        f"  engine    median {eng['median_us']:7.2f} µs/decide   p90 {eng['p90_us']:7.2f} µs",
        f"  by hand   median {same['median_us']:7.2f} µs/decide   p90 {same['p90_us']:7.2f} µs   "
        "(the same rules by hand, giving the same Decision)",
        f"  bare      median {base['median_us']:7.2f} µs/decide   p90 {base['p90_us']:7.2f} µs   "
        "(the same rules by hand, action and trigger only)",
        f"  ratio engine/by hand {r['ratio_same_decision']:.1f}x, engine/bare "
        f"{r['ratio_median']:.1f}x; target <= {r['target_median_us']:g} µs and "
        f"<= {r['target_ratio']:g}x by hand: {verdict}",
        "  engine median per state:",
    ]
    width = max(len(label) for label in r["per_state_engine_median_us"])
    for label, us in r["per_state_engine_median_us"].items():
        lines.append(f"    {label:<{width}}  {us:7.2f} µs")
    lines.append("  each rule's `when` alone, median over the mix:")
    for rule, us in r["per_rule_when_median_us"].items():
        lines.append(f"    {rule:<{width}}  {us:7.2f} µs")
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
