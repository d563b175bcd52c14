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

from clm_policy.lint.context import LintContext, conditions, message_parts
from clm_policy.lint.problem import WARNING, Problem
from clm_policy.policy.engine import Policy
from clm_policy.policy.load import ResolvedPolicy

ID = "unused-signal"
LEVEL = WARNING


def check(ctx: LintContext) -> Iterator[Problem]:
    policy, resolved = ctx.policy, ctx.resolved
    if policy is None or resolved is None:
        return
    read = {name for expr in conditions(policy) + message_parts(policy) for name in expr.names}
    aside = _set_aside(policy, resolved)
    for name, (_, origin) in resolved.signals.items():
        if f"signals.{name}" in read or re.search(rf"\bsignals\s*\.\s*{re.escape(name)}\b", aside):
            continue
        yield Problem.at(
            origin.key_location, ID, LEVEL, f"signal '{name}' is declared but never read"
        )


def _set_aside(policy: Policy, resolved: ResolvedPolicy) -> str:
    """The text of the rules and guards loading set aside (an expression or a message of
    theirs did not compile, which is reported as such): a signal they name is read by them
    once they are fixed, so it is not called unused."""
    kept = {("", r.id) for r in policy.rules}
    kept |= {(str(action), g.id) for action, guards in policy.guards.items() for g in guards}
    entries = [("", e) for e in resolved.rules]
    entries += [(action, e) for action, guards in resolved.guards.items() for e in guards]
    return "\n".join(
        str(entry.get(name) or "")
        for kind, entry in entries
        if (kind, entry.id) not in kept
        for name in ("when", "because", "message")
    )
