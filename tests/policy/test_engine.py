"""Engine details: explain never fails where decide succeeds, templates, windows, doctests."""

from __future__ import annotations

import doctest
from collections.abc import Callable
from pathlib import Path

import pytest

import clm_policy
from clm_policy import EvaluationError, SessionState, TokenSnapshot, load_policy
from clm_policy.policy.compile import PROFILE_DEFAULTS
from clm_policy.policy.engine import DEFAULT_MIN_RECALL, DEFAULT_SEED_TOKENS, Profile, Threshold

Write = Callable[[str, str], Path]


def test_explain_records_errors_of_rules_decide_never_reaches(write: Write) -> None:
    policy = load_policy(
        write(
            "p.yaml",
            """
        version: 1
        profiles:
          coding: {soft_compact: 10, hard_handoff: 20}
        rules:
          - id: first
            when: tokens.context >= 0
            action: continue
          - id: needs_window
            when: tokens.ratio > 0.5
            action: compact
    """,
        )
    )
    s = SessionState(session_id="s")
    assert policy.decide(s).trigger == "first"
    ex = policy.explain(s)
    assert ex.decision == policy.decide(s)
    later = ex.rules[1]
    assert (later.result, later.decided) == (None, False)
    assert later.error == (
        "evaluating 'tokens.ratio > 0.5' failed: tokens.ratio has no value in "
        "this state ('>' not supported between instances of 'NoneType' and "
        "'float'); no window is known: give the profile a context_window (or the state one), "
        "or write 'tokens.window is not None and ...'"
    )
    reordered = load_policy(
        write(
            "q.yaml",
            """
        version: 1
        extends: p.yaml
        rules:
          - id: first
            disable: true
    """,
        )
    )
    with pytest.raises(EvaluationError):
        reordered.decide(s)


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{tokens.context:,} tokens", "1,234,567 tokens"),
        ("{tokens.ratio:.0%} full", "62% full"),
        ("{tokens.ratio:.2f}", "0.62"),
        ("{{literal}} {step}", "{literal} 3"),
        ("{compacted_before} / {profile.context_window}", "false / 2000000"),
        ("{tokens.model_free}", None),
        ("{status in ('running', 'waiting')} {max(step, 10) - min(1, 2)}", "true 9"),
        ("{'a' if step > 2 else 'b'}", "a"),
    ],
)
def test_templates(write: Write, template: str, expected: str | None) -> None:
    text = (
        "version: 1\nprofiles:\n  coding: {soft_compact: 10, hard_handoff: 2000000, "
        "context_window: 2000000}\nrules:\n  - id: r\n    when: 'True'\n    action: compact\n"
        f'    because: "{template}"\n'
    )
    path = write("t.yaml", text)
    if expected is None:
        with pytest.raises(clm_policy.ExpressionError, match=r"unknown name 'tokens\.model_free'"):
            load_policy(path)
        return
    s = SessionState(session_id="s", step_index=3, tokens=TokenSnapshot(context_tokens=1_234_567))
    assert load_policy(path).decide(s).rationale == expected


def test_window_from_models_table_longest_prefix(write: Write) -> None:
    policy = load_policy(
        write(
            "m.yaml",
            """
        version: 1
        models:
          claude-: 200000
          claude-opus-4-5: 1000000
        profiles:
          coding: {soft_compact: 80%, hard_handoff: 90%, context_window: 128000}
        rules:
          - id: soft
            when: tokens.context >= profile.soft_compact
            action: compact
    """,
        )
    )

    def decide(model: str | None, window: int | None = None) -> tuple[int | None, str | None]:
        s = SessionState(
            session_id="s",
            tokens=TokenSnapshot(context_tokens=150_000, model=model, context_window=window),
        )
        d = policy.decide(s)
        return d.context_window, d.window_source

    assert decide("claude-opus-4-5-20251101") == (1_000_000, "model claude-opus-4-5")
    assert decide("claude-haiku-4-5") == (200_000, "model claude-")
    assert decide("gpt-5") == (128_000, "profile coding")
    assert decide("claude-haiku-4-5", 64_000) == (64_000, "state")


def test_package_doctest() -> None:
    result = doctest.testmod(clm_policy)
    assert result.attempted > 0
    assert result.failed == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1) or (1", "f:1:2: expression syntax error: unmatched ')'"),
        ("step >", "f:1:7: expression syntax error: invalid syntax at the end of the expression"),
        ("signals", "f:1:1: 'signals' is a group of names, and none is declared"),
        ("(-8) ** 0.5 > 0", None),
    ],
)
def test_expression_edge_cases(text: str, message: str | None) -> None:
    from clm_policy.base.errors import Location
    from clm_policy.policy.expr import SourceSpan, compile_expression
    from clm_policy.policy.names import known_names
    from clm_policy.policy.sandbox import Sandbox

    span = SourceSpan(Location("f", 1, 1))
    if message is not None:
        with pytest.raises(clm_policy.ExpressionError) as info:
            compile_expression(text, span, known_names({}))
        assert str(info.value) == message
        return
    with pytest.raises(EvaluationError, match="has no real value"):
        Sandbox().run(compile_expression(text, span, known_names({})), {})


def test_the_decision_is_what_its_declaration_reads() -> None:
    """The decision the engine returns (plain, no pydantic) dumps what its declaration
    (models/shapes/decision.py) accepts, key for key."""
    from clm_policy.models.shapes.decision import Decision as Declared

    from conftest import POLICIES

    policy = load_policy(POLICIES / "examples" / "option_b.yaml")
    for context in (0, 50_000, 170_000, 190_000):
        for signals in (
            {},
            {"degradation": True, "open_subagent_calls": 1},
            {"degradation": True, "missing_artifacts": "todo"},
        ):
            for force in (False, True):
                s = SessionState(
                    session_id="s", signals=signals, tokens=TokenSnapshot(context_tokens=context)
                )
                dumped = policy.decide(s, force=force).as_dict()
                assert Declared.model_validate(dumped).model_dump(mode="json") == dumped


def test_decide_path_does_not_import_pydantic() -> None:
    """The one-shot CLI decide on a cached policy stays off pydantic and the YAML parser."""
    from probes import probe_code

    code = (
        "from clm_policy.cli.main import run\n"
        "run(['decide', '--tokens', '5'])\n"
        "run(['decide', '--tokens', '5', '--format', 'json'])\n"
    )
    assert probe_code("engine", code, runs=2).loaded == []  # the first run fills the cache


def test_a_profile_s_defaults_are_the_compiler_s() -> None:
    """A profile built in code and one a policy file leaves blank get the same values (the
    compiler's table and the constructor's defaults, which lifecycle reads too)."""
    built = Profile("p", Threshold.parse(1), Threshold.parse(2))
    defaulted = [n for n in Profile.FIELDS if n not in (*Profile.REQUIRED, "locations")]
    given = {name: getattr(built, name) for name in defaulted}
    assert given == PROFILE_DEFAULTS
    assert (given["min_recall"], given["seed_tokens"]) == (DEFAULT_MIN_RECALL, DEFAULT_SEED_TOKENS)
