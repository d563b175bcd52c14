"""A condition or message part that reads no name must evaluate without error.

Such an expression gives the same result for every state, so if it fails (a division by
zero, a power the sandbox refuses) it fails on every decision that reaches it. Found here,
before an agent meets it.

Passes::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}
    rules:
      - {id: big, when: tokens.context >= 2 ** 18, action: handoff}

Fails::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}
    rules:
      - {id: big, when: tokens.context >= 2 ** 99999, action: handoff}
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from clm_policy.base.errors import EvaluationError
from clm_policy.lint.context import LintContext, conditions, message_parts
from clm_policy.lint.problem import ERROR, Problem
from clm_policy.policy.expr import CompiledExpression
from clm_policy.policy.sandbox import Sandbox

ID = "constant-error"
LEVEL = ERROR


def _constant_parts(expr: CompiledExpression) -> Iterator[ast.expr]:
    """The largest parts of ``expr`` that read no name (the whole, if it reads none)."""
    if not expr.names:
        yield expr.tree
        return
    for node in ast.walk(expr.tree):
        for child in ast.iter_child_nodes(node):
            if (
                isinstance(child, ast.expr)
                and not any(isinstance(n, ast.Name) for n in ast.walk(child))
                and not isinstance(child, ast.Constant)
            ):
                yield child


def check(ctx: LintContext) -> Iterator[Problem]:
    policy = ctx.policy
    if policy is None:
        return
    sandbox = Sandbox()
    for expr in conditions(policy) + message_parts(policy):
        seen: set[int] = set()
        for part in _constant_parts(expr):
            if any(id(n) in seen for n in ast.walk(part)):
                continue
            seen.update(id(n) for n in ast.walk(part))
            probe = CompiledExpression(
                text=ast.unparse(part), tree=part, names=(), location=expr.node_location(part)
            )
            try:
                sandbox.run(probe, {})
            except EvaluationError as exc:
                yield Problem.at(probe.location, ID, LEVEL, exc.message)
