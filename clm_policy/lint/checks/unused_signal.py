"""Every declared signal should be read by some rule, guard or message.

An unread signal is usually a typo elsewhere or a leftover after a rule was removed; an
integration that sets it changes nothing. A rule or guard whose expression does not compile
still reads the signals it names: its own error is reported, not theirs.

Passes::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}
    signals:
      degradation: {type: bool, default: false}
    rules:
      - {id: worse, when: signals.degradation, action: compact}

Fails::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}
    signals:
      degradation: {type: bool, default: false}
    rules:
      - {id: big, when: tokens.context >= profile.hard_handoff, action: handoff}
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from clm_policy.lint.context import LintContext, conditions, message_parts, set_aside
from clm_policy.lint.problem import WARNING, Problem

ID = "unused-signal"
LEVEL = WARNING


def check(ctx: LintContext) -> Iterator[Problem]:
    policy, resolved = ctx.policy, ctx.resolved
    if policy is None or resolved is None:
        return
    read = {name for expr in conditions(policy) + message_parts(policy) for name in expr.names}
    aside = "\n".join(
        str(entry.get(name) or "")
        for _, entry in set_aside(policy, resolved)
        for name in ("when", "because", "message")
    )
    for name, (_, origin) in resolved.signals.items():
        if f"signals.{name}" in read or re.search(rf"\bsignals\s*\.\s*{re.escape(name)}\b", aside):
            continue
        yield Problem.at(
            origin.key_location, ID, LEVEL, f"signal '{name}' is declared but never read"
        )
