"""A profile a file adds must not be a near miss of one it inherits.

``extends: default`` and a profile ``researh:`` with thresholds of its own makes a new
profile: ``research`` keeps the parent's values, and nothing says so. A profile is reported
when its name differs from an inherited one by a letter or two (not when it extends the name,
as ``research_long`` does).

Passes::

    version: 1
    extends: default
    profiles:
      research: {soft_compact: 200000, hard_handoff: 300000}
      research_long: {soft_compact: 300000, hard_handoff: 400000}

Fails::

    version: 1
    extends: default
    profiles:
      researh: {soft_compact: 200000, hard_handoff: 300000}
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from clm_policy.lint.context import LintContext
from clm_policy.lint.problem import WARNING, Problem

ID = "similar-profile"
LEVEL = WARNING

_NEAR = 0.8  # researh/research 0.93, codng/coding 0.91; tool_heavy/tool_light 0.6


def check(ctx: LintContext) -> Iterator[Problem]:
    resolved = ctx.resolved
    if resolved is None or not resolved.files:
        return
    here = resolved.files[-1]  # the chain is root ancestor first: this file is the last
    origins = resolved.profile_origins
    inherited = [name for name, origin in origins.items() if origin.doc is not here]
    for name, origin in origins.items():
        if origin.doc is not here:
            continue
        near = [other for other in inherited if _misspells(name, other)]
        if near:
            yield Problem.at(
                origin.key_location,
                ID,
                LEVEL,
                f"profile '{name}' is new here; did you mean the inherited '{near[0]}'? "
                f"(its values change nothing for '{near[0]}')",
            )


def _misspells(name: str, other: str) -> bool:
    if name.startswith(other) or other.startswith(name):
        return False
    return difflib.SequenceMatcher(None, name, other).ratio() >= _NEAR
