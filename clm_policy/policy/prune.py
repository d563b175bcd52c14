"""Rules that cannot fire under a profile, found once so that decisions skip them.

A profile's values are constants (``profile.prefer_handoff_on_phase`` is ``false`` in every
decision under that profile), so a rule whose ``when`` is an ``and`` with such a constant
being false can never hold under it: ``status == "phase_boundary" and
profile.prefer_handoff_on_phase`` under a profile that does not prefer handoffs at phase
boundaries. Skipping it changes nothing a decision could show — not the result and not an
error — only when every part of the ``and`` before that constant is *total*: it cannot fail on
any value (a name, a constant, ``==``/``!=`` of such, ``not`` of such), so evaluating the rule
would have reached the constant, and stopped there. Anything else is kept and evaluated.

The constants are :meth:`~clm_policy.policy.engine.Profile.constants` (not the thresholds,
which may depend on the window).
"""

from __future__ import annotations

import ast

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def cannot_fire(tree: ast.expr, fixed: dict[str, Any]) -> bool:
    """Whether ``tree`` (a checked ``when``) is false for every state, by the rule above."""
    if not (isinstance(tree, ast.BoolOp) and isinstance(tree.op, ast.And)):
        return _false_constant(tree, fixed)
    for part in tree.values:
        if _false_constant(part, fixed):
            return True
        if not _total(part):
            return False
    return False


def _false_constant(node: ast.expr, fixed: dict[str, Any]) -> bool:
    if isinstance(node, ast.Constant):
        return not node.value
    if isinstance(node, ast.Name) and node.id in fixed:
        return not fixed[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = node.operand
        if isinstance(inner, ast.Constant):
            return bool(inner.value)
        return isinstance(inner, ast.Name) and inner.id in fixed and bool(fixed[inner.id])
    return False


def _total(node: ast.expr) -> bool:
    """Whether evaluating ``node`` can never fail, whatever the names hold."""
    if isinstance(node, ast.Constant | ast.Name):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _total(node.operand)
    if isinstance(node, ast.BoolOp):
        return all(_total(v) for v in node.values)
    if isinstance(node, ast.Compare):
        return all(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops) and all(
            _total(c) for c in (node.left, *node.comparators)
        )
    return False
