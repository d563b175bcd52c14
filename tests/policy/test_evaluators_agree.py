"""The expression as code (what decisions run) equals simpleeval's tree walk (the reference).

Every ``when:`` and message placeholder of every bundled policy, on states around each
threshold, and a few thousand generated expressions over every operator, function and kind of
value: both evaluators give the same value of the same type, or the same error at the same
place.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from clm_policy import SessionState, TaskStatus, TokenSnapshot, load_policy
from clm_policy.base.errors import EvaluationError, ExpressionError, Location
from clm_policy.policy.expr import CompiledExpression, SourceSpan, compile_expression
from clm_policy.policy.names import known_names
from clm_policy.policy.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = sorted(str(p) for p in (ROOT / "policies").rglob("*.yaml") if "tests" not in p.parts)


def outcome(run: Any) -> tuple[str, Any]:
    try:
        value = run()
    except EvaluationError as exc:
        return ("error", (exc.message, exc.location))
    return ("value", (type(value).__name__, value))


def same(expr: CompiledExpression, names: dict[str, Any]) -> None:
    tree = outcome(lambda: Sandbox().run(expr, names))
    code = outcome(lambda: expr.evaluate(names))
    assert code == tree, expr.text


def states() -> list[SessionState]:
    made = []
    for context in (0, 1, 99_999, 150_000, 250_000, 350_000, 2**40):
        for status in (TaskStatus.RUNNING, TaskStatus.PHASE_BOUNDARY):
            for step, last in ((0, None), (3, 1), (40, 2)):
                made.append(
                    SessionState(
                        session_id="s",
                        status=status,
                        step_index=step,
                        last_compact_step=last,
                        tokens=TokenSnapshot(context_tokens=context, model="claude-sonnet-4-6"),
                    )
                )
    return made


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: Path(p).name)
def test_bundled_policies_evaluate_alike(path: str) -> None:
    policy = load_policy(path)
    expressions = [r.when for r in policy.rules]
    for guards in policy.guards.values():
        expressions += [g.when for g in guards]
    for template in [r.because for r in policy.rules] + [
        g.message for gs in policy.guards.values() for g in gs
    ]:
        if template is not None:
            expressions += [p[0] for p in template.parts if not isinstance(p, str)]
    assert expressions
    for state in states():
        for name in policy.profiles:
            try:
                names, _, _ = policy.namespace(state, policy.profile(name))
            except Exception:
                continue  # a share of an unknown window: no names to evaluate on
            for expr in expressions:
                same(expr, names)


NAMES = known_names({"flag": "bool", "count": "int", "ratio": "float", "label": "str"})
VALUES: dict[str, Any] = dict.fromkeys(NAMES)
VALUES.update(
    {
        "tokens.context": 120_000,
        "tokens.window": 200_000,
        "tokens.ratio": 0.6,
        "tokens.estimated": False,
        "status": "running",
        "step": 7,
        "compacted_before": True,
        "profile.name": "coding",
        "signals.flag": True,
        "signals.count": 0,
        "signals.ratio": -2.5,
        "signals.label": "ab",
    }
)
LEAVES = [
    "tokens.context",
    "tokens.window",
    "tokens.ratio",
    "tokens.estimated",
    "profile.context_window",  # None in VALUES
    "status",
    "step",
    "compacted_before",
    "signals.flag",
    "signals.count",
    "signals.ratio",
    "signals.label",
    "0",
    "1",
    "-3",
    "2.5",
    "10**3",
    "'x'",
    "''",
    "True",
    "None",
    "(1, 2)",
    "[3]",
]
BINARY = ["+", "-", "*", "/", "//", "%", "**"]
COMPARE = ["==", "!=", "<", "<=", ">", ">=", "in", "not in", "is", "is not"]
CALLS = ["abs", "min", "max", "round", "len", "int", "float", "str", "bool", "sum", "any", "all"]


def generated(rng: random.Random, depth: int) -> str:
    if depth <= 0 or rng.random() < 0.25:
        return rng.choice(LEAVES)
    kind = rng.randrange(7)
    a, b = generated(rng, depth - 1), generated(rng, depth - 1)
    if kind == 0:
        return f"({a} {rng.choice(BINARY)} {b})"
    if kind == 1:
        c = generated(rng, depth - 1)
        return f"({a} {rng.choice(COMPARE)} {b} {rng.choice(COMPARE)} {c})"
    if kind == 2:
        return f"({a} {rng.choice(COMPARE)} {b})"
    if kind == 3:
        return f"({a} {rng.choice(['and', 'or'])} {b})"
    if kind == 4:
        return f"({rng.choice(['not ', '-', '+'])}{a})"
    if kind == 5:
        return f"({a} if {b} else {generated(rng, depth - 1)})"
    args = ", ".join([a, b][: rng.randrange(1, 3)])
    return f"{rng.choice(CALLS)}({args})"


def test_generated_expressions_evaluate_alike() -> None:
    rng = random.Random(20261130)
    span = SourceSpan(Location("g.yaml", 1, 1))
    kinds = {"value": 0, "error": 0}
    for _ in range(4000):
        text = generated(rng, 4)
        try:
            expr = compile_expression(text, span, NAMES)
        except ExpressionError:
            continue
        same(expr, VALUES)
        kinds[outcome(lambda e=expr: e.evaluate(VALUES))[0]] += 1
    # the generator makes expressions the checker accepts, with values and with failures
    assert kinds["value"] > 1000
    assert kinds["error"] > 500
