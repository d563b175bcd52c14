"""Every rule must be able to fire.

A rule can never fire when its own condition is constant and false (``when: False``,
``when: 1 > 2``), or when an earlier rule's condition is constant and true: rules run in
order and the first that holds decides, so everything after it (and ``otherwise``) is dead.

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
