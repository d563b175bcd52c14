"""In every profile, after ``extends`` is merged, soft_compact must be below hard_handoff.

Otherwise the hard limit always fires first and the profile never compacts. Checked when both
are tokens, both are shares, or the profile declares its context window.

Passes::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}

Fails::

    version: 1
    extends: default
    profiles:
      coding: {soft_compact: 400000}
"""

from __future__ import annotations

from collections.abc import Iterator

from clm_policy.lint.context import LintContext
from clm_policy.lint.problem import ERROR, Problem

ID = "threshold-order"
LEVEL = ERROR


def check(ctx: LintContext) -> Iterator[Problem]:
    yield from ctx.loading_problems(ID, LEVEL)
