"""A share is compared with a share, and tokens with tokens.

``tokens.ratio`` is the context's share of the window, from 0 to 1; ``tokens.context``, the
thresholds ``profile.soft_compact`` and ``profile.hard_handoff`` and the window are counts of
tokens. Comparing one with the other is a condition that almost never holds as meant:
``tokens.ratio > 80`` never holds (80% is ``0.8``), ``tokens.context > 0.8`` holds from the
first token, and ``tokens.ratio >= profile.soft_compact`` compares a share with 250,000.

Passes::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000, context_window: 1000000}
    rules:
      - {id: full, when: tokens.ratio > 0.8, action: handoff}
      - {id: soft, when: tokens.context >= profile.soft_compact, action: compact}

Fails::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000, context_window: 1000000}
    rules:
      - {id: full, when: tokens.ratio > 80, action: handoff}
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator

from clm_policy.lint.context import LintContext, conditions
from clm_policy.lint.problem import WARNING, Problem

ID = "unit-mismatch"
LEVEL = WARNING

SHARES = frozenset({"tokens.ratio"})
"""The names that are a share of the window, from 0 to 1."""

TOKENS = frozenset(
    {
        "tokens.context",
        "tokens.window",
        "profile.soft_compact",
        "profile.hard_handoff",
        "profile.context_window",
    }
)
"""The names that count tokens of a context (a test holds both tables to names rules read)."""


def check(ctx: LintContext) -> Iterator[Problem]:
    if ctx.policy is None:
        return
    for expr in conditions(ctx.policy):
        for node in ast.walk(expr.tree):
            if not isinstance(node, ast.Compare):
                continue
            operands = [node.left, *node.comparators]
            for left, right in itertools.pairwise(operands):
                message = _mismatch(left, right) or _mismatch(right, left)
                if message is not None:
                    yield Problem.at(expr.node_location(node), ID, LEVEL, message)


def _mismatch(one: ast.expr, other: ast.expr) -> str | None:
    """What is wrong with comparing ``one``, a name, with ``other``; None when nothing is."""
    if not isinstance(one, ast.Name):
        return None
    name = one.id
    value = other.value if isinstance(other, ast.Constant) else None
    number = (
        float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    )
    written = ast.unparse(other)
    if name in SHARES and isinstance(other, ast.Name) and other.id in TOKENS:
        return (
            f"{name} is a share of the window (0 to 1), {other.id} counts tokens: compare "
            f"tokens.context with {other.id}"
        )
    if name in SHARES and number is not None and number > 1:
        return (
            f"{name} is a share of the window, from 0 to 1: {written} is never reached "
            f"(for {written}% write {number / 100:g})"
        )
    if name in TOKENS and number is not None and 0 < number < 1:
        return (
            f"{name} counts tokens: {written} is a share; compare tokens.ratio with {written}, "
            f"or {name} with a number of tokens"
        )
    return None
