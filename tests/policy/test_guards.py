"""Guards: block vs warn, force bypassing only overridable guards, and the shipped options A/B/C
of the block-compactor plan."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clm_policy import SessionState, TokenSnapshot, load_policy
from clm_policy.policy.engine import Policy

from conftest import POLICIES

GUARDED = """
version: 1
profiles:
  coding: {soft_compact: 100, hard_handoff: 1000, context_window: 2000}
signals:
  busy: {type: int, default: 0}
  gate_ok: {type: bool, default: true}
  note: {type: str, default: ""}
rules:
  - id: soft
    when: tokens.context >= profile.soft_compact
    action: compact
guards:
  compact:
    - id: busy
      when: signals.busy > 0
      severity: block
      message: "{signals.busy} calls open"
    - id: ratio
      when: tokens.ratio < 0.5
      severity: block
      overridable: true
      message: "only {tokens.ratio:.0%} full"
    - id: note
      when: signals.note != ""
      severity: warn
      message: "note: {signals.note}"
    - id: gate
      when: not signals.gate_ok
      severity: warn
"""


@pytest.fixture
def guarded(write: Callable[[str, str], Path]) -> Policy:
    return load_policy(write("guarded.yaml", GUARDED))


def st(context: int, **signals: Any) -> SessionState:
    return SessionState(
        session_id="g", tokens=TokenSnapshot(context_tokens=context), signals=signals
    )


def summary(policy: Policy, s: SessionState, force: bool = False) -> tuple[Any, ...]:
    d = policy.decide(s, force=force)
    return (
        d.action.value,
        d.proposed.value,
        [f.guard for f in d.blocked_by],
        [f.guard for f in d.warnings],
        [f.guard for f in d.overridden],
        d.forced,
    )


@pytest.mark.parametrize(
    ("context", "signals", "force", "expected"),
    [
        # nothing holds: the compaction goes through
        (1500, {}, False, ("compact", "compact", [], [], [], False)),
        # a blocking guard turns the action into continue, with or without force when not overridable
        (1500, {"busy": 2}, False, ("continue", "compact", ["busy"], [], [], False)),
        (1500, {"busy": 2}, True, ("continue", "compact", ["busy"], [], [], False)),
        # an overridable blocking guard: blocks without force, is bypassed with force
        (200, {}, False, ("continue", "compact", ["ratio"], [], [], False)),
        (200, {}, True, ("compact", "compact", [], [], ["ratio"], True)),
        # force bypasses only the overridable one; the other still blocks and nothing is forced
        (200, {"busy": 1}, True, ("continue", "compact", ["busy"], [], ["ratio"], False)),
        # a warn guard lets the action through with a warning, force or not
        (1500, {"note": "x"}, False, ("compact", "compact", [], ["note"], [], False)),
        (1500, {"note": "x"}, True, ("compact", "compact", [], ["note"], [], False)),
        (
            1500,
            {"note": "x", "gate_ok": False},
            False,
            ("compact", "compact", [], ["note", "gate"], [], False),
        ),
        # warnings are reported even when another guard blocks
        (
            1500,
            {"note": "x", "busy": 1},
            False,
            ("continue", "compact", ["busy"], ["note"], [], False),
        ),
        # guards of compact do not run when the proposal is continue
        (50, {"busy": 3, "note": "x"}, False, ("continue", "continue", [], [], [], False)),
    ],
)
def test_guard_semantics(
    guarded: Policy, context: int, signals: dict[str, Any], force: bool, expected: tuple[Any, ...]
) -> None:
    assert summary(guarded, st(context, **signals), force) == expected


def test_guard_messages_say_why(guarded: Policy) -> None:
    d = guarded.decide(st(200, busy=2, note="todo missing", gate_ok=False))
    assert [(f.guard, f.severity, f.message) for f in d.blocked_by] == [
        ("busy", "block", "2 calls open"),
        ("ratio", "block", "only 10% full"),
    ]
    assert [(f.guard, f.message) for f in d.warnings] == [
        ("note", "note: todo missing"),
        ("gate", "not signals.gate_ok"),
    ]
    assert d.rationale == (
        "compact blocked by busy: 2 calls open; ratio: only 10% full "
        "(proposed because tokens.context >= profile.soft_compact)"
    )
    forced = guarded.decide(st(200), force=True)
    assert forced.rationale == (
        "tokens.context >= profile.soft_compact (forced past ratio: only 10% full)"
    )


def test_explain_shows_guard_outcomes(guarded: Policy) -> None:
    ex = guarded.explain(st(200, note="n"), force=True)
    outcomes = {g.id: (g.result, g.outcome) for g in ex.guards}
    assert outcomes == {
        "busy": (False, "passed"),
        "ratio": (True, "overridden"),
        "note": (True, "warned"),
        "gate": (False, "passed"),
    }
    ratio = next(g for g in ex.guards if g.id == "ratio")
    assert ratio.names == {"tokens.ratio": 0.1}
    assert ratio.overridable
    assert ratio.severity == "block"
    assert ratio.message == "only 10% full"


# --- the block-compactor plan's options ------------------------------------------------


def example(name: str) -> Policy:
    return load_policy(POLICIES / "examples" / f"{name}.yaml")


def deg(context: int, **signals: Any) -> SessionState:
    """A compaction asked for by the degradation signal, at ``context`` of a 200K window."""
    return st(context, degradation=True, **signals)


@pytest.mark.parametrize(
    ("option", "s", "force", "expected"),
    [
        # A: subagents block (not overridable); ratio and quality gate only warn
        (
            "option_a",
            deg(50_000, open_subagent_calls=1),
            False,
            ("continue", "compact", ["open_subagents"], ["token_ratio"], [], False),
        ),
        (
            "option_a",
            deg(50_000, open_subagent_calls=1),
            True,
            ("continue", "compact", ["open_subagents"], ["token_ratio"], [], False),
        ),
        (
            "option_a",
            deg(50_000, quality_gate_passed=False),
            False,
            ("compact", "compact", [], ["token_ratio", "quality_gate"], [], False),
        ),
        ("option_a", deg(170_000), False, ("compact", "compact", [], [], [], False)),
        # B: artifacts warn; subagents, failed gate and low ratio block; force bypasses ratio only
        (
            "option_b",
            deg(50_000, missing_artifacts="todo"),
            False,
            ("continue", "compact", ["token_ratio"], ["mandatory_artifacts"], [], False),
        ),
        (
            "option_b",
            deg(50_000, missing_artifacts="todo"),
            True,
            ("compact", "compact", [], ["mandatory_artifacts"], ["token_ratio"], True),
        ),
        (
            "option_b",
            deg(170_000, quality_gate_passed=False),
            True,
            ("continue", "compact", ["quality_gate"], [], [], False),
        ),
        (
            "option_b",
            deg(170_000, open_subagent_calls=3),
            True,
            ("continue", "compact", ["open_subagents"], [], [], False),
        ),
        (
            "option_b",
            deg(170_000, missing_artifacts="worklog,todo"),
            False,
            ("compact", "compact", [], ["mandatory_artifacts"], [], False),
        ),
        # C: only open subagents block; nothing else is checked
        (
            "option_c",
            deg(5_000, open_subagent_calls=1),
            True,
            ("continue", "compact", ["open_subagents"], [], [], False),
        ),
        ("option_c", deg(5_000), False, ("compact", "compact", [], [], [], False)),
    ],
)
def test_block_compactor_options(
    option: str, s: SessionState, force: bool, expected: tuple[Any, ...]
) -> None:
    assert summary(example(option), s, force) == expected


def test_option_b_messages_explain_themselves() -> None:
    d = example("option_b").decide(deg(50_000, open_subagent_calls=2, missing_artifacts="todo"))
    assert [f.message for f in d.blocked_by] == [
        "2 subagent call(s) still open; compacting now could lose their results",
        "context only 25% full (< 80%); pass --force to compact anyway",
    ]
    assert [f.message for f in d.warnings] == ["mandatory artifacts incomplete: todo"]


def test_examples_use_window_shares() -> None:
    for option in ("option_a", "option_b"):
        d = example(option).decide(st(170_000))
        assert (d.action.value, d.trigger, d.context_window) == ("compact", "soft_compact", 200_000)
        assert d.rationale == "context 170000 >= soft limit 160000"
        assert example(option).decide(st(180_000)).action.value == "handoff"


def test_each_example_names_its_option() -> None:
    for letter in "abc":
        text = (POLICIES / "examples" / f"option_{letter}.yaml").read_text()
        assert f"OPTION {letter.upper()}" in text
        assert text.startswith("# yaml-language-server: $schema=../../schemas/policy.schema.json")
