"""What a check sees of one policy file: its document, what loading it reported, the result."""

from __future__ import annotations

from dataclasses import dataclass, field

from clm_policy.base.errors import ClmError
from clm_policy.formats.yamlio import YamlDocument
from clm_policy.policy.engine import Policy
from clm_policy.policy.expr import CompiledExpression
from clm_policy.policy.load import Entry, ResolvedPolicy


@dataclass
class LintContext:
    """One policy file under lint.

    ``errors`` are the problems loading reported, each named with the ID of the check that
    reports it (checks.LOADING); ``resolved`` and ``policy`` are None when loading stopped
    before them (then the analyses, checks.ANALYSES, have nothing to look at).
    """

    file: str
    doc: YamlDocument | None
    errors: list[ClmError] = field(default_factory=list)
    resolved: ResolvedPolicy | None = None
    policy: Policy | None = None


def conditions(policy: Policy) -> list[CompiledExpression]:
    """Every rule's ``when``, then every guard's."""
    return [r.when for r in policy.rules] + [g.when for gs in policy.guards.values() for g in gs]


def formatted_parts(policy: Policy) -> list[tuple[CompiledExpression, str]]:
    """The ``{expression:spec}`` parts of every rule's ``because``, then of every guard's
    ``message``: each expression and its format spec (empty: none)."""
    texts = [r.because for r in policy.rules]
    texts += [g.message for guards in policy.guards.values() for g in guards]
    return [p for t in texts if t is not None for p in t.parts if not isinstance(p, str)]


def message_parts(policy: Policy) -> list[CompiledExpression]:
    """The ``{expression}`` parts of every rule's ``because``, then of every guard's ``message``."""
    return [expr for expr, _ in formatted_parts(policy)]


def set_aside(policy: Policy, resolved: ResolvedPolicy) -> list[tuple[str, Entry]]:
    """The rules and guards loading set aside (an expression or a message of theirs did not
    compile, which is reported as such), each with its kind ("rule", or a guard's action):
    what they read or propose counts, so that no check reports what fixing them undoes."""
    kept = {("rule", r.id) for r in policy.rules}
    kept |= {(str(action), g.id) for action, guards in policy.guards.items() for g in guards}
    entries = [("rule", e) for e in resolved.rules]
    entries += [(str(action), e) for action, guards in resolved.guards.items() for e in guards]
    return [(kind, entry) for kind, entry in entries if (kind, entry.id) not in kept]
