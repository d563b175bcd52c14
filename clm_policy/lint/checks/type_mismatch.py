"""Operand types must fit: no bool compared to a number, and a ``when`` gives true or false.

No string ordered against a number either, no arithmetic on strings, no number looked up in a
string, no ``status`` compared with a string that is none of its values
(``status == "compelted"``), and no message part formatted as its value never can be
(``{status:.0%}``: every decision that says it would fail). Every name has a declared type
(signals theirs), so these are known at load. Python would evaluate
``signals.degradation > 0`` without complaint, and ``status == 1`` is simply always false:
both are almost always a mistake in a policy.

Passes::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}
    signals:
      degradation: {type: bool, default: false}
    rules:
      - {id: worse, when: signals.degradation and tokens.ratio is not None, action: compact}

Fails::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}
    signals:
      degradation: {type: bool, default: false}
    rules:
      - {id: worse, when: signals.degradation > 0, action: compact}
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from clm_policy.base.errors import shorten
from clm_policy.lint.context import LintContext, conditions, formatted_parts, message_parts
from clm_policy.lint.problem import ERROR, Problem
from clm_policy.lint.types import check_expression
from clm_policy.policy.engine import Policy
from clm_policy.policy.names import NameInfo, known_names

ID = "type-mismatch"
LEVEL = ERROR


def check(ctx: LintContext) -> Iterator[Problem]:
    policy = ctx.policy
    if policy is None:
        return
    names = known_names({n: s.type for n, s in policy.signals.items()})
    whens = conditions(policy)
    yield from _format_specs(policy, names)
    for i, expr in enumerate(whens + message_parts(policy)):
        kinds, mismatches = check_expression(expr.tree, names)
        for m in mismatches:
            yield Problem.at(expr.node_location(m.node), ID, LEVEL, m.message)
        # a condition (not a message part) must give true or false
        if i < len(whens) and not mismatches and "any" not in kinds and "bool" not in kinds:
            shown = " or ".join(sorted(kinds))
            yield Problem.at(
                expr.location,
                ID,
                LEVEL,
                f"condition gives {shown}, not true or false: {shorten(expr.text)}",
            )


_SAMPLES = {"int": 1, "float": 1.5, "bool": True, "str": "x", "seq": (1,)}
"""A value of each kind, to ask whether a format spec takes that kind at all."""


def _format_specs(policy: Policy, names: Mapping[str, NameInfo]) -> Iterator[Problem]:
    """A message part whose format spec no value it can have takes (``{status:.0%}``):
    every decision that renders the message would fail."""
    for expr, spec in formatted_parts(policy):
        if not spec:
            continue
        kinds = check_expression(expr.tree, names)[0] - {"none"}
        if not kinds or "any" in kinds or any(_takes(spec, kind) for kind in kinds):
            continue
        shown = " or ".join(sorted(kinds))
        yield Problem.at(expr.location, ID, LEVEL, f"':{spec}' cannot format {shown}: {expr.text}")


def _takes(spec: str, kind: str) -> bool:
    try:
        format(_SAMPLES[kind], spec)
    except (TypeError, ValueError, KeyError, OverflowError):
        return False
    return True
