"""Every rule must be able to fire.

A rule can never fire when its own condition is constant and false (``when: False``,
``when: 1 > 2``), when two parts of it joined by ``and`` compare one name with values no
value of it meets together (``tokens.context > 300000 and tokens.context < 200000``,
``status == "waiting" and status == "blocked"``), or when an earlier rule's condition is
constant and true: rules run in order and the first that holds decides, so everything after
it (and ``otherwise``) is dead.

Passes::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}
    rules:
      - {id: big, when: tokens.context >= profile.hard_handoff, action: handoff}
      - {id: soft, when: tokens.context >= profile.soft_compact, action: compact}

Fails::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}
    rules:
      - {id: always, when: "True", action: continue}
      - {id: big, when: tokens.context >= profile.hard_handoff, action: handoff}
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from clm_policy.base.errors import EvaluationError
from clm_policy.lint.context import LintContext
from clm_policy.lint.problem import WARNING, Problem
from clm_policy.policy.expr import CompiledExpression
from clm_policy.policy.sandbox import Sandbox

ID = "unreachable-rule"
LEVEL = WARNING


def constant(expr: CompiledExpression) -> bool | None:
    """The truth of an expression that reads no name; None when it reads one (or fails)."""
    if expr.names:
        return None
    try:
        return bool(Sandbox().run(expr, {}))
    except EvaluationError:
        return None


def check(ctx: LintContext) -> Iterator[Problem]:
    policy = ctx.policy
    if policy is None:
        return
    always: str | None = None
    for rule in policy.rules:
        where = rule.when.location
        if always is not None:
            yield Problem.at(
                where, ID, LEVEL, f"rule '{rule.id}' can never fire: {always} always holds"
            )
            continue
        value = constant(rule.when)
        if value is False:
            yield Problem.at(
                where, ID, LEVEL, f"rule '{rule.id}' can never fire: its condition is always false"
            )
        elif value is True:
            always = f"rule '{rule.id}' (line {where.line})"
        elif (clash := _clash(rule.when.tree)) is not None:
            first, second = clash
            yield Problem.at(
                rule.when.node_location(second),
                ID,
                LEVEL,
                f"rule '{rule.id}' can never fire: {ast.unparse(first)} and "
                f"{ast.unparse(second)} never hold together",
            )


_FLIPPED = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE, ast.Eq: ast.Eq}

Bound = tuple[str, type[ast.cmpop], int | float | str]
"""A name, how it compares, and the constant it compares with (the name on the left)."""


def _clash(tree: ast.expr) -> tuple[ast.expr, ast.expr] | None:
    """Two comparisons that ``tree`` requires together (parts of an ``and``) which no value of
    the one name they compare meets both of; None when there are none. Pairs suffice: values
    of one name that meet every part are the overlap of intervals, and intervals that do not
    all overlap have two that do not (Helly, on a line)."""
    found: list[tuple[Bound, ast.expr]] = []
    for part in _conjuncts(tree):
        found += [(bound, part) for bound in _bounds(part)]
    for i, (one, part) in enumerate(found):
        for other, later in found[i + 1 :]:
            if one[0] == other[0] and not _overlap(one, other):
                return part, later
    return None


def _conjuncts(tree: ast.expr) -> list[ast.expr]:
    if isinstance(tree, ast.BoolOp) and isinstance(tree.op, ast.And):
        return [part for value in tree.values for part in _conjuncts(value)]
    return [tree]


def _bounds(part: ast.expr) -> list[Bound]:
    """What a comparison of a name with a number or a string requires of the name."""
    if not isinstance(part, ast.Compare):
        return []
    out: list[Bound] = []
    operands = [part.left, *part.comparators]
    for left, op, right in zip(operands, part.ops, operands[1:], strict=False):
        kind = type(op)
        if kind not in _FLIPPED:
            continue
        if isinstance(left, ast.Name) and (value := _constant(right)) is not None:
            out.append((left.id, kind, value))
        elif isinstance(right, ast.Name) and (value := _constant(left)) is not None:
            out.append((right.id, _FLIPPED[kind], value))
    return out


def _constant(node: ast.expr) -> int | float | str | None:
    """A number or a string written as such (no bool: another check's business)."""
    value = node.value if isinstance(node, ast.Constant) else None
    return value if isinstance(value, int | float | str) and not isinstance(value, bool) else None


def _overlap(one: Bound, other: Bound) -> bool:
    """Whether some value meets both bounds on one name (True when they cannot be compared)."""
    (_, op1, v1), (_, op2, v2) = one, other
    if isinstance(v1, str) or isinstance(v2, str):
        return not (
            op1 is op2 is ast.Eq and isinstance(v1, str) and isinstance(v2, str) and v1 != v2
        )
    (lo1, hi1), (lo2, hi2) = _interval(op1, v1), _interval(op2, v2)
    return _meets(lo1, hi2) and _meets(lo2, hi1)


def _interval(op: type[ast.cmpop], value: float) -> tuple[tuple[float, bool], tuple[float, bool]]:
    """(low, strict) and (high, strict) of the values a bound allows."""
    v = float(value)
    inf = float("inf")
    return {
        ast.Lt: ((-inf, True), (v, True)),
        ast.LtE: ((-inf, True), (v, False)),
        ast.Gt: ((v, True), (inf, True)),
        ast.GtE: ((v, False), (inf, True)),
        ast.Eq: ((v, False), (v, False)),
    }[op]


def _meets(low: tuple[float, bool], high: tuple[float, bool]) -> bool:
    """Whether some value is above ``low`` and below ``high``."""
    return low[0] < high[0] or (low[0] == high[0] and not (low[1] or high[1]))
