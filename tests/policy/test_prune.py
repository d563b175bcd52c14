"""Rules that cannot fire under a profile are not evaluated, and nothing else changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from clm_policy import SessionState, TaskStatus, TokenSnapshot, load_policy
from clm_policy.base.errors import Location
from clm_policy.policy import prune
from clm_policy.policy.expr import CompiledExpression, SourceSpan, compile_expression
from clm_policy.policy.names import known_names

FIXED = {"profile.prefer_handoff_on_phase": False, "profile.name": "calm"}


@pytest.mark.parametrize(
    ("when", "dead"),
    [
        ("profile.prefer_handoff_on_phase", True),
        ('status == "phase_boundary" and profile.prefer_handoff_on_phase', True),
        ('status != "x" and not compacted_before and profile.prefer_handoff_on_phase', True),
        ("False", True),
        ('profile.name == "calm"', False),  # a comparison is not folded: kept
        ("profile.prefer_handoff_on_phase or step > 1", False),
        # a part before the constant that may fail: evaluating it must still happen
        ("tokens.ratio > 0.5 and profile.prefer_handoff_on_phase", False),
        ("1 / step > 0 and profile.prefer_handoff_on_phase", False),
        ("not profile.prefer_handoff_on_phase", False),
    ],
)
def test_what_cannot_fire(when: str, dead: bool) -> None:
    checked = compile_expression(when, SourceSpan(Location("p.yaml", 1, 1)), known_names({}))
    assert prune.cannot_fire(checked.tree, FIXED) is dead


POLICY = """\
version: 1
name: calm
extends: default
profiles:
  calm: {soft_compact: 250000, hard_handoff: 350000, prefer_handoff_on_phase: false}
"""


def test_a_profile_skips_what_it_rules_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "calm.yaml"
    path.write_text(POLICY)
    policy = load_policy(path)
    evaluated: list[str] = []
    original = CompiledExpression.evaluate

    def counting(self: CompiledExpression, names: object) -> object:
        evaluated.append(self.text)
        return original(self, names)  # type: ignore[arg-type]

    monkeypatch.setattr(CompiledExpression, "evaluate", counting)
    state = SessionState(
        session_id="s",
        status=TaskStatus.PHASE_BOUNDARY,
        tokens=TokenSnapshot(context_tokens=10),
    )
    calm = policy.decide(state, "calm")
    assert (calm.action.value, calm.trigger) == ("continue", None)
    assert not any("phase_boundary" in text for text in evaluated)
    evaluated.clear()
    coding = policy.decide(state, "coding")  # prefers the handoff: the rule is evaluated
    assert (coding.action.value, coding.trigger) == ("handoff", "phase_boundary")
    assert any("phase_boundary" in text for text in evaluated)
