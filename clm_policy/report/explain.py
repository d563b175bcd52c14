"""Text rendering of decisions and explanations for people (``decide``, and the explain trace
of a failed policy test case). A policy's texts — rationales, guard messages, expressions,
names, locations — are shown on one line each (:func:`~clm_policy.base.termsafe.one_line`):
a ``because:`` holding a newline cannot start a line of its own in a report or a CI log."""

from __future__ import annotations

import json

from clm_policy.base.termsafe import one_line

TYPE_CHECKING = False
if TYPE_CHECKING:  # decide prints through here on every prompt: no typing at run time
    from clm_policy.models.decision import Decision, Explanation


def render_decision(d: Decision, state_window: str = "state") -> str:
    """``d`` for people; ``state_window`` names what gave a window the state held (``decide``
    says ``--window``, ``the transcript``, ``the state file``, ...)."""
    if d.context_window:
        share = round(100 * d.context_tokens / d.context_window)
        source = one_line(state_window if d.window_source == "state" else str(d.window_source))
        window = f" of {d.context_window} ({share}%, window from {source})"
        if d.context_tokens > d.context_window:  # real figures can say so: a window guessed
            window += "; more than its window: check the window the state gives"
    else:
        window = " (window unknown)"
    lines = [
        f"action:    {d.action.value}",
        f"trigger:   {d.trigger or '-'}",
        f"rationale: {one_line(d.rationale)}",
    ]
    if d.proposed != d.action:
        lines.append(f"proposed:  {d.proposed.value}")
    for f in d.blocked_by:
        lines.append(f"blocked:   {one_line(f.guard)}: {one_line(f.message)}")
    for f in d.overridden:
        lines.append(f"forced:    {one_line(f.guard)}: {one_line(f.message)}")
    for f in d.warnings:
        lines.append(f"warning:   {one_line(f.guard)}: {one_line(f.message)}")
    lines.append(f"context:   {d.context_tokens} tokens{window}")
    lines.append(f"policy:    {one_line(d.policy)}, profile {one_line(d.profile)}")
    return "\n".join(lines)


def _result(result: bool | None) -> str:
    return "error" if result is None else str(result).lower()


def _details(expression: str, names: dict[str, object], error: str | None) -> list[str]:
    lines = [f"      when: {one_line(expression)}"]
    if names:
        read = ", ".join(f"{k}={json.dumps(v)}" for k, v in names.items())
        lines.append(f"      read: {one_line(read)}")
    if error:
        lines.append(f"      error: {one_line(error)}")
    return lines


def render_explanation(e: Explanation, state_window: str = "state") -> str:
    """``e`` for people: the decision (:func:`render_decision`), then every rule and guard."""
    lines = [
        render_decision(e.decision, state_window),
        "",
        "rules, in order (the first that holds decides):",
    ]
    reached = True
    for r in e.rules:
        mark = "DECIDED" if r.decided else ("no" if reached else "not reached")
        reached = reached and not r.decided
        where = one_line(r.location)
        result = _result(r.result)
        if mark == "not reached" and r.result is not None:  # evaluated all the same
            result = f"would be {result}"
        lines.append(f"  {r.id} -> {r.action.value}: {result}  [{mark}]  {where}")
        lines.extend(_details(r.expression, dict(r.names), r.error))
    lines.append(f"  otherwise -> {e.otherwise.value}" + ("  [DECIDED]" if reached else ""))
    if e.guards:
        lines += ["", "guards:"]
        for g in e.guards:
            flag = f"{g.severity}{', overridable' if g.overridable else ''}"
            lines.append(
                f"  {g.guards.value}/{g.id} ({flag}): {_result(g.result)}  "
                f"[{g.outcome}]  {one_line(g.location)}"
            )
            lines.extend(_details(g.expression, dict(g.names), g.error))
            if g.message:
                lines.append(f"      message: {one_line(g.message)}")
    return "\n".join(lines)
