"""The seed's decision table (CLM plan, Task 1.3) on every profile of the default policy."""

from __future__ import annotations

from typing import Any

import pytest

from clm_policy import SessionState, TaskStatus, TokenSnapshot, load_policy
from clm_policy.policy.engine import Policy

THRESHOLDS = {  # the plan's starting values (Task 0.4)
    "coding": (250_000, 350_000),
    "research": (285_000, 400_000),
    "exploration": (340_000, 450_000),
    "tool_heavy": (225_000, 320_000),
    "multi_agent": (210_000, 300_000),
}


@pytest.fixture(scope="module")
def policy() -> Policy:
    return load_policy("default")


def state(context: int, **kw: Any) -> SessionState:
    base: dict[str, Any] = {"session_id": "s", "step_index": 10}
    base.update(kw)
    return SessionState(tokens=TokenSnapshot(context_tokens=context), **base)


def test_profiles_and_defaults(policy: Policy) -> None:
    assert list(policy.profiles) == list(THRESHOLDS)
    for name, (soft, hard) in THRESHOLDS.items():
        p = policy.profiles[name]
        assert (p.soft_compact.tokens, p.hard_handoff.tokens) == (soft, hard)
        assert p.min_steps_between_compacts == 5
        assert p.prefer_handoff_on_phase is True
        assert p.retain_recent_messages == 6
    assert policy.default_profile == "coding"
    assert [r.id for r in policy.rules] == [
        "phase_boundary",
        "hard_handoff",
        "soft_compact",
        "degradation",
    ]


# (case id, state factory(soft, hard), expected action, expected trigger)
TABLE = [
    ("continue-below-soft", lambda s, h: state(s - 1), "continue", None),
    ("continue-empty", lambda s, h: state(0, step_index=0), "continue", None),
    ("compact-at-soft", lambda s, h: state(s, last_compact_step=0), "compact", "soft_compact"),
    (
        "compact-never-compacted-step-0",
        lambda s, h: state(s, step_index=0),
        "compact",
        "soft_compact",
    ),
    ("compact-just-below-hard", lambda s, h: state(h - 1), "compact", "soft_compact"),
    ("handoff-at-hard", lambda s, h: state(h), "handoff", "hard_handoff"),
    ("handoff-above-hard", lambda s, h: state(h + 50_000), "handoff", "hard_handoff"),
    (
        "phase-boundary-prefers-handoff",
        lambda s, h: state(50_000, status=TaskStatus.PHASE_BOUNDARY),
        "handoff",
        "phase_boundary",
    ),
    (
        "phase-boundary-beats-soft",
        lambda s, h: state(s, status=TaskStatus.PHASE_BOUNDARY),
        "handoff",
        "phase_boundary",
    ),
    (
        "min-steps-not-reached",  # last compact at 9, now 10, min 5: wait
        lambda s, h: state(s + 10_000, step_index=10, last_compact_step=9),
        "continue",
        None,
    ),
    (
        "min-steps-one-short",
        lambda s, h: state(s, step_index=14, last_compact_step=10),
        "continue",
        None,
    ),
    (
        "min-steps-exactly-reached",
        lambda s, h: state(s, step_index=15, last_compact_step=10),
        "compact",
        "soft_compact",
    ),
    (
        "hard-ignores-min-steps",
        lambda s, h: state(h, step_index=10, last_compact_step=10),
        "handoff",
        "hard_handoff",
    ),
    (
        "degradation-compacts",
        lambda s, h: state(1_000, signals={"degradation": True}),
        "compact",
        "degradation",
    ),
    (
        "degradation-after-soft-blocked-by-min-steps",
        lambda s, h: state(s, step_index=10, last_compact_step=9, signals={"degradation": True}),
        "compact",
        "degradation",
    ),
    (
        "hard-beats-degradation",
        lambda s, h: state(h, signals={"degradation": True}),
        "handoff",
        "hard_handoff",
    ),
    (
        "soft-beats-degradation",
        lambda s, h: state(s, signals={"degradation": True}),
        "compact",
        "soft_compact",
    ),
    (
        "degradation-false-continues",
        lambda s, h: state(1_000, signals={"degradation": False}),
        "continue",
        None,
    ),
    (
        "cumulative-totals-are-not-context",  # the seed's running sum must not trigger anything
        lambda s, h: SessionState(
            session_id="s",
            tokens=TokenSnapshot(
                context_tokens=1_000, input_tokens=10 * h, output_tokens=h, total_tokens=11 * h
            ),
        ),
        "continue",
        None,
    ),
]


@pytest.mark.parametrize("profile", list(THRESHOLDS))
@pytest.mark.parametrize(("case", "make", "action", "trigger"), TABLE, ids=[t[0] for t in TABLE])
def test_decision_table(
    policy: Policy, profile: str, case: str, make: Any, action: str, trigger: str | None
) -> None:
    soft, hard = THRESHOLDS[profile]
    decision = policy.decide(make(soft, hard), profile)
    assert (decision.action.value, decision.trigger) == (action, trigger), decision.rationale
    assert decision.proposed.value == action
    assert decision.profile == profile
    assert decision.blocked_by == []
    assert decision.warnings == []
    assert not decision.forced


def test_rationales_are_rendered(policy: Policy) -> None:
    assert policy.decide(state(360_000)).rationale == "context 360000 >= hard limit 350000"
    assert policy.decide(state(260_000)).rationale == "context 260000 >= soft limit 250000"
    assert policy.decide(state(1)).rationale == "no rule held; otherwise continue"
    assert (
        policy.decide(state(1, status=TaskStatus.PHASE_BOUNDARY)).rationale
        == "phase finished; the next phase starts in a clean session"
    )


def test_profile_from_state_then_default(policy: Policy) -> None:
    s = state(300_000, profile="research")
    assert policy.decide(s).profile == "research"
    assert policy.decide(s).action.value == "compact"
    assert policy.decide(s, "multi_agent").action.value == "handoff"
    assert policy.decide(state(300_000)).profile == "coding"


def test_explain_lists_every_rule_with_values(policy: Policy) -> None:
    ex = policy.explain(state(260_000, step_index=7, last_compact_step=5))
    assert ex.decision.action.value == "continue"
    assert [(r.id, r.result, r.decided) for r in ex.rules] == [
        ("phase_boundary", False, False),
        ("hard_handoff", False, False),
        ("soft_compact", False, False),
        ("degradation", False, False),
    ]
    soft = ex.rules[2]
    assert soft.names == {
        "tokens.context": 260_000,
        "profile.soft_compact": 250_000,
        "compacted_before": True,
        "steps_since_compact": 2,
        "profile.min_steps_between_compacts": 5,
    }
    assert soft.location.endswith("default.yaml:49:7")
    assert ex.otherwise.value == "continue"


def test_explain_agrees_with_decide(policy: Policy) -> None:
    for make in (t[1] for t in TABLE):
        for soft, hard in THRESHOLDS.values():
            s = make(soft, hard)
            assert policy.explain(s).decision == policy.decide(s)
