"""Guards must be attached to an action some rule (or ``otherwise``) can propose.

Guards run only on the proposed action; guards on an action nothing proposes never run.

Passes::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}
    rules:
      - {id: soft, when: tokens.context >= profile.soft_compact, action: compact}
    guards:
      compact:
        - {id: busy, when: message_count > 1000, severity: warn}

Fails::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}
    rules:
      - {id: soft, when: tokens.context >= profile.soft_compact, action: compact}
    guards:
      handoff:
        - {id: busy, when: message_count > 1000, severity: warn}
"""

from __future__ import annotations

from collections.abc import Iterator

from clm_policy.lint.context import LintContext, set_aside
from clm_policy.lint.problem import WARNING, Problem

ID = "guard-unused-action"
LEVEL = WARNING


def check(ctx: LintContext) -> Iterator[Problem]:
    policy = ctx.policy
    if policy is None:
        return
    proposed = {str(rule.action) for rule in policy.rules} | {str(policy.otherwise)}
    if ctx.resolved is not None:  # a rule set aside (its error reported) proposes its action
        aside = set_aside(policy, ctx.resolved)
        proposed |= {str(entry.get("action")) for kind, entry in aside if kind == "rule"}
    for action, guards in policy.guards.items():
        if action in proposed:
            continue
        for guard in guards:
            where = guard.location or guard.when.location
            yield Problem.at(
                where,
                ID,
                LEVEL,
                f"{action.value} guard '{guard.id}' never runs: no rule proposes {action.value} "
                f"and otherwise is {policy.otherwise.value}",
            )
