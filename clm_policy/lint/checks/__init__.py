"""The lint checks, one per module: ``ID``, ``LEVEL`` and a docstring that documents the check
with a passing and a failing example (``clm-policy lint --list-checks``, docs/lint.md).

Two kinds, told apart here once:

* :data:`ANALYSES` look at a policy that loaded; each finds its own problems (``check(ctx)``).
* :data:`LOADING` name the problems loading itself finds: the code that must refuse such a
  file for ``decide`` too (clm_policy.formats.yamlio, .validate, .policy) raises each error named by
  one of these IDs, and the runner reports it under that check. Finding them again here would
  be a second copy of the loader to keep in step.

A loading error named by no check of :data:`LOADING` (or by none) is reported under
:data:`GENERIC`, ``policy-error``: a problem nobody claims still fails the lint. A disable
comment that names no check, or one of :data:`UNSILENCED`, is ``disable_comment``'s.
"""

from __future__ import annotations

from types import ModuleType

from clm_policy.base.errors import LoadCheck
from clm_policy.lint.checks import (
    constant_error,
    disable_comment,
    duplicate_id,
    expression_syntax,
    extends,
    guard_unused_action,
    policy_error,
    schema,
    similar_profile,
    threshold_above_window,
    threshold_order,
    type_mismatch,
    unit_mismatch,
    unknown_name,
    unreachable_rule,
    unused_signal,
    window_unknown,
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
    unit_mismatch,
    window_unknown,
    constant_error,
    threshold_order,
    threshold_above_window,
    similar_profile,
    unreachable_rule,
    guard_unused_action,
    unused_signal,
    disable_comment,
    policy_error,
)
"""Every check, in the order ``--list-checks`` and SARIF show them."""

# Told apart by what each module is: named by loading (an ID of LoadCheck), or its own check.
LOADING: tuple[ModuleType, ...] = tuple(m for m in CHECKS if isinstance(m.ID, LoadCheck))
ANALYSES: tuple[ModuleType, ...] = tuple(m for m in CHECKS if hasattr(m, "check"))
GENERIC: ModuleType = policy_error
UNSILENCED: frozenset[str] = frozenset({*(str(m.ID) for m in LOADING), str(GENERIC.ID)})
"""The checks no disable comment silences: their problems stop the policy from loading."""

_LOADING_BY_ID: dict[str, ModuleType] = {module.ID: module for module in LOADING}


def claiming(check: LoadCheck | None) -> ModuleType:
    """The check that reports a loading error named ``check``: its own, else :data:`GENERIC`."""
    return _LOADING_BY_ID.get(check or "", GENERIC)


def summary(module: ModuleType) -> str:
    """The first line of a check's documentation, its reST literals (````when````) written as
    a terminal and Markdown show them (```when```)."""
    return (module.__doc__ or "").strip().splitlines()[0].replace("``", "`")
