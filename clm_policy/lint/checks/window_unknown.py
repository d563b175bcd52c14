"""A condition reading the window holds up where the window is unknown.

``tokens.window``, ``tokens.ratio`` and ``profile.context_window`` are None when neither the
state, nor the policy's ``models`` table for the state's model, nor the profile gives a
window (``clm-policy decide --tokens N``, a transcript of a model the policy does not list).
A comparison with None fails, and the decision with it: exit 2 instead of an answer. So where
a profile declares no ``context_window``, a condition that reads one of them says what to do
without it (``tokens.window is not None and ...``).

Passes::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}
    rules:
      - {id: full, when: tokens.window is not None and tokens.ratio > 0.8, action: handoff}

Fails::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}
    rules:
      - {id: full, when: tokens.ratio > 0.8, action: handoff}
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from clm_policy.lint.context import LintContext, conditions
from clm_policy.lint.problem import WARNING, Problem
from clm_policy.policy.names import WINDOW_NAMES

ID = "window-unknown"
LEVEL = WARNING


def check(ctx: LintContext) -> Iterator[Problem]:
    policy = ctx.policy
    if policy is None:
        return
    windowless = sorted(p.name for p in policy.profiles.values() if p.context_window is None)
    if not windowless:
        return
    who = (
        f"profile {windowless[0]} declares"
        if len(windowless) == 1
        else f"profiles {', '.join(windowless)} declare"
    )
    for expr in conditions(policy):
        guarded = _compared_with_none(expr.tree)
        for node in ast.walk(expr.tree):
            if not isinstance(node, ast.Name) or node.id not in WINDOW_NAMES:
                continue
            if guarded & {node.id, "tokens.window"}:
                continue
            yield Problem.at(
                expr.node_location(node),
                ID,
                LEVEL,
                f"{node.id} is None where the window is unknown ({who} no context_window), "
                "and the decision then fails: write 'tokens.window is not None and ...', or "
                "give the profiles a context_window",
            )
            break  # once per condition


def _compared_with_none(tree: ast.expr) -> set[str]:
    """The names ``tree`` compares with None (``x is not None``, ``x == None``, ...)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        if any(isinstance(o, ast.Constant) and o.value is None for o in operands):
            found.update(o.id for o in operands if isinstance(o, ast.Name))
    return found
