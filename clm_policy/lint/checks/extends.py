"""``extends`` and the placement keys must resolve.

A missing or cyclic ``extends`` target; ``disable``, ``before`` or ``after`` naming an id no
inherited rule or guard has; ``before`` and ``after`` together; a disabled entry with other keys.

Passes::

    version: 1
    extends: default
    rules:
      - id: degradation
        before: soft_compact

Fails::

    version: 1
    extends: default
    rules:
      - id: degradaton
        disable: true
"""

from __future__ import annotations

from collections.abc import Iterator

from clm_policy.lint.context import LintContext
from clm_policy.lint.problem import ERROR, Problem

ID = "extends"
LEVEL = ERROR


def check(ctx: LintContext) -> Iterator[Problem]:
    yield from ctx.loading_problems(ID, LEVEL)
