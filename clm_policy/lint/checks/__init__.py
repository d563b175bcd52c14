"""The lint checks, one per module: ``ID``, ``LEVEL``, ``check(ctx)``, and a docstring that
documents the check with a passing and a failing example (``clm-policy lint --list-checks``).
"""

from __future__ import annotations

from types import ModuleType

from clm_policy.lint.checks import (
    constant_error,
    duplicate_id,
    expression_syntax,
    extends,
    guard_unused_action,
    schema,
    threshold_above_window,
    threshold_order,
    type_mismatch,
    unknown_name,
    unreachable_rule,
    unused_signal,
    yaml_syntax,
)

CHECKS: tuple[ModuleType, ...] = (
    yaml_syntax,
    schema,
    extends,
    duplicate_id,
    expression_syntax,
    unknown_name,
    type_mismatch,
    constant_error,
    threshold_order,
    threshold_above_window,
    unreachable_rule,
    guard_unused_action,
    unused_signal,
)

BY_ID: dict[str, ModuleType] = {module.ID: module for module in CHECKS}


def summary(module: ModuleType) -> str:
    """The first line of a check's documentation."""
    return (module.__doc__ or "").strip().splitlines()[0]
