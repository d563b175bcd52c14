"""A threshold in tokens must fit in the profile's context window, where one is declared.

A soft_compact or hard_handoff above the window can never be reached: the model's context
cannot hold that many tokens. The CLM plan's 250K/350K starting values, for example, never
fire on a 200K model; write them as shares (``80%``) instead.

Passes::

    version: 1
    profiles:
      coding: {soft_compact: 80%, hard_handoff: 90%, context_window: 200000}

Fails::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000, context_window: 200000}
"""

from __future__ import annotations

from collections.abc import Iterator

from clm_policy.lint.context import LintContext
from clm_policy.lint.problem import WARNING, Problem

ID = "threshold-above-window"
LEVEL = WARNING


def check(ctx: LintContext) -> Iterator[Problem]:
    if ctx.policy is None:
        return
    for profile in ctx.policy.profiles.values():
        window = profile.context_window
        if window is None:
            continue
        for key in ("soft_compact", "hard_handoff"):
            tokens = getattr(profile, key).tokens
            if tokens is not None and tokens > window:
                yield Problem.at(
                    profile.locations[key],
                    ID,
                    LEVEL,
                    f"profile '{profile.name}': {key} {tokens} is above its context window "
                    f"{window}, so it can never fire",
                )
