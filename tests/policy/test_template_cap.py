"""The total cap on a rendered template: a rationale or a guard's message is never huge,
however many placeholders it has or however long its text."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from clm_policy import SessionState, TokenSnapshot, load_policy
from clm_policy.base.errors import ExpressionError, Location
from clm_policy.policy.expr import SourceSpan
from clm_policy.policy.names import known_names
from clm_policy.policy.template import MAX_RENDERED_LENGTH, MAX_VALUE_LENGTH, compile_template

from conftest import CliResult

Write = Callable[[str, str], Path]

LONG = "'ab' * 600"  # 1,200 characters: each placeholder alone is cut at MAX_VALUE_LENGTH
FIFTY = " ".join(f"{{{LONG}}}" for _ in range(50))


def _render(text: str, **names: object) -> str:
    template = compile_template(text, SourceSpan(Location("t.yaml", 1, 1)), known_names({}))
    return template.render(names)


def test_the_caps() -> None:
    assert (MAX_VALUE_LENGTH, MAX_RENDERED_LENGTH) == (1000, 2000)


def test_fifty_long_placeholders_render_at_most_the_cap() -> None:
    text = _render(FIFTY)
    assert len(text) == MAX_RENDERED_LENGTH
    assert text == ("ab" * 500 + "... ") * 1 + ("ab" * 500)[: 2000 - 1004 - 3] + "..."


def test_long_literal_text_around_a_placeholder_is_capped() -> None:
    text = _render("x" * 5000 + " {step} " + "y" * 5000, step=3)
    assert text == "x" * (MAX_RENDERED_LENGTH - 3) + "..."


def test_one_long_value_is_cut_at_the_value_cap() -> None:
    assert _render("{" + LONG + "}") == "ab" * 500 + "..."


def test_text_at_the_cap_is_left_whole() -> None:
    assert _render("z" * MAX_RENDERED_LENGTH) == "z" * MAX_RENDERED_LENGTH
    assert _render("z" * (MAX_RENDERED_LENGTH - 1) + "{step}", step=7) == "z" * 1999 + "7"
    assert _render("z" * MAX_RENDERED_LENGTH + "{step}", step=7) == "z" * 1997 + "..."


POLICY = f"""
version: 1
profiles:
  coding: {{soft_compact: 10, hard_handoff: 20}}
rules:
  - id: long
    when: tokens.context > 15
    action: handoff
    because: "{FIFTY}"
  - id: short
    when: tokens.context > 5
    action: compact
    because: "context {{tokens.context}} > 5"
guards:
  compact:
    - id: loud
      when: step < 1
      severity: block
      message: "{"m" * 3000}{{step}}{FIFTY}"
"""


def test_the_rationale_and_a_guards_message_obey_the_cap(write: Write) -> None:
    policy = load_policy(write("p.yaml", POLICY))
    decision = policy.decide(SessionState(session_id="s", tokens=TokenSnapshot(context_tokens=16)))
    assert decision.trigger == "long"
    assert decision.rationale == _render(FIFTY)
    assert len(decision.rationale) == MAX_RENDERED_LENGTH
    blocked = policy.decide(SessionState(session_id="s", tokens=TokenSnapshot(context_tokens=6)))
    (finding,) = blocked.blocked_by
    assert finding.message == "m" * (MAX_RENDERED_LENGTH - 3) + "..."
    # the rationale keeps why the rule fired and cuts the guard's message to fit
    assert len(blocked.rationale) == MAX_RENDERED_LENGTH
    assert blocked.rationale.startswith("compact blocked by loud: mmm")
    assert blocked.rationale.endswith("mmm... (proposed because context 6 > 5)")
    explained = policy.explain(SessionState(session_id="s", tokens=TokenSnapshot(context_tokens=6)))
    assert [g.message for g in explained.guards] == [finding.message]


def test_lint_accepts_templates_with_many_placeholders(
    write: Write, cli: Callable[..., CliResult]
) -> None:
    path = write("p.yaml", POLICY)
    result = cli("lint", str(path), "--strict")
    assert (result.exit_code, result.stderr) == (0, "clm-policy lint: 1 file, no problems\n")


def test_a_format_spec_is_matched_whole() -> None:
    # a trailing newline passed a `$`-anchored check before and then broke at render time
    for spec in ("d\n", ",.1f\n", "%\n"):
        with pytest.raises(ExpressionError, match="format"):
            compile_template(
                f"x {{step:{spec}}}", SourceSpan(Location("t.yaml", 1, 1)), known_names({})
            )
    assert _render("x {step:,d}", step=12345) == "x 12,345"


def test_a_rationale_of_many_blocking_guards_is_capped(write: Write) -> None:
    guards = "\n".join(
        f'    - id: g{i}\n      when: step >= 0\n      severity: block\n      message: "{{{LONG}}}"'
        for i in range(5)
    )
    path = write(
        "many.yaml",
        "version: 1\nextends: default\nguards:\n  compact:\n" + guards + "\n",
    )
    policy = load_policy(path)
    state = SessionState(session_id="s", tokens=TokenSnapshot(context_tokens=260_000))
    decision = policy.decide(state, "coding")
    assert [f.guard for f in decision.blocked_by] == ["g0", "g1", "g2", "g3", "g4"]
    assert len(decision.rationale) == MAX_RENDERED_LENGTH
    assert decision.rationale.startswith("compact blocked by g0: abab")
    assert decision.rationale.endswith("... (proposed because context 260000 >= soft limit 250000)")
