"""extends: per-team files override by id, insert at a stated place, disable, and resolve."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from clm_policy import PolicyError, SessionState, TaskStatus, TokenSnapshot, load_policy
from clm_policy.policy.export import resolved_yaml

Write = Callable[[str, str], Path]


def ids(path: Path) -> list[str]:
    return [r.id for r in load_policy(path).rules]


def test_override_rule_by_id_keeps_place_and_merges_fields(write: Write) -> None:
    team = write(
        "team.yaml",
        """
        version: 1
        name: team
        extends: default
        rules:
          - id: hard_handoff
            when: tokens.context >= profile.hard_handoff - 10000
    """,
    )
    policy = load_policy(team)
    assert [r.id for r in policy.rules] == [
        "phase_boundary",
        "hard_handoff",
        "soft_compact",
        "degradation",
    ]
    hard = policy.rules[1]
    assert hard.when.text == "tokens.context >= profile.hard_handoff - 10000"
    assert hard.action.value == "handoff"  # inherited field
    assert hard.because is not None
    assert hard.because.text.startswith("context {tokens.context}")
    s = SessionState(session_id="s", tokens=TokenSnapshot(context_tokens=340_000))
    assert policy.decide(s).trigger == "hard_handoff"
    assert str(hard.when.location) == f"{team}:6:11"


def test_insert_before_after_append_and_disable(write: Write) -> None:
    team = write(
        "team.yaml",
        """
        version: 1
        extends: default
        signals:
          tests_red: {type: bool, default: false}
        rules:
          - id: red_tests
            before: hard_handoff
            when: signals.tests_red
            action: continue
          - id: late
            when: step > 1000
            action: handoff
          - id: early
            after: phase_boundary
            when: step > 2000
            action: handoff
          - id: degradation
            disable: true
    """,
    )
    assert ids(team) == [
        "phase_boundary",
        "early",
        "red_tests",
        "hard_handoff",
        "soft_compact",
        "late",
    ]
    policy = load_policy(team)
    s = SessionState(
        session_id="s", tokens=TokenSnapshot(context_tokens=400_000), signals={"tests_red": True}
    )
    d = policy.decide(s)
    assert (d.action.value, d.trigger) == ("continue", "red_tests")
    assert "signals.degradation" not in [n for r in policy.rules for n in r.when.names]


def test_move_existing_rule(write: Write) -> None:
    team = write(
        "team.yaml",
        """
        version: 1
        extends: default
        rules:
          - id: degradation
            before: phase_boundary
    """,
    )
    assert ids(team) == ["degradation", "phase_boundary", "hard_handoff", "soft_compact"]


def test_profiles_defaults_and_signals_merge(write: Write) -> None:
    team = write(
        "team.yaml",
        """
        version: 1
        extends: default
        defaults:
          min_steps_between_compacts: 2
        profiles:
          coding: {soft_compact: 200000}
          review: {soft_compact: 50%, hard_handoff: 75%, context_window: 200000}
        signals:
          degradation: {type: bool, default: true}
    """,
    )
    policy = load_policy(team)
    coding = policy.profiles["coding"]
    assert (coding.soft_compact.tokens, coding.hard_handoff.tokens) == (200_000, 350_000)
    assert coding.min_steps_between_compacts == 2  # the child's defaults reach inherited ones
    assert policy.profiles["research"].min_steps_between_compacts == 2
    review = policy.profiles["review"]
    assert review.min_steps_between_compacts == 2
    assert review.retain_recent_messages == 6
    s = SessionState(session_id="s", tokens=TokenSnapshot(context_tokens=110_000))
    d = policy.decide(s, "review")
    assert (d.action.value, d.trigger, d.rationale) == (
        "compact",
        "soft_compact",
        "context 110000 >= soft limit 100000",
    )
    quiet = SessionState(session_id="s", tokens=TokenSnapshot(context_tokens=1))
    assert policy.decide(quiet).trigger == "degradation"  # default now true


def test_three_levels_and_relative_paths(write: Write, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()  # a repository: ../base/ is inside it
    write(
        "base/org.yaml",
        """
        version: 1
        extends: default
        guards:
          compact:
            - id: busy
              when: blocker_count > 0
              severity: block
    """,
    )
    write(
        "teams/a.yaml",
        """
        version: 1
        extends: ../base/org.yaml
        guards:
          compact:
            - id: busy
              severity: warn
            - id: big
              when: message_count > 100
              severity: warn
    """,
    )
    policy = load_policy(
        write(
            "teams/a-strict.yaml",
            """
        version: 1
        name: a-strict
        extends: a.yaml
        otherwise: continue
    """,
        )
    )
    from clm_policy import Action

    guards = policy.guards[Action.COMPACT]
    assert [(g.id, g.severity) for g in guards] == [("busy", "warn"), ("big", "warn")]
    assert policy.name == "a-strict"
    assert [Path(f).name for f in policy.files] == [
        "default.yaml",
        "org.yaml",
        "a.yaml",
        "a-strict.yaml",
    ]


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            {"p.yaml": "version: 1\nextends: q.yaml\n", "q.yaml": "version: 1\nextends: p.yaml\n"},
            "q.yaml:2:10: extends cycle: p.yaml -> q.yaml -> p.yaml",
        ),
        (
            {"p.yaml": "version: 1\nextends: p.yaml\n"},
            "p.yaml:2:10: extends cycle: p.yaml -> p.yaml",
        ),
        (
            {"p.yaml": "version: 1\nextends: gone.yaml\n"},
            "p.yaml:2:10: extends target not found: gone.yaml",
        ),
        (
            {"p.yaml": "version: 1\nextends: nosuchpolicy\n"},
            "p.yaml:2:10: no bundled policy named 'nosuchpolicy' (bundled: claude-code, default)",
        ),
        (
            {"p.yaml": "version: 1\nextends: default\nrules:\n  - id: nope\n    disable: true\n"},
            "p.yaml:4:9: disable: no inherited rule has id 'nope'",
        ),
        (
            {
                "p.yaml": "version: 1\nextends: default\nrules:\n  - id: degradation\n    disable: true\n"
                "    when: step > 1\n"
            },
            "p.yaml:6:5: rule 'degradation' is disabled: remove its other keys (when)",
        ),
        (
            {
                "p.yaml": "version: 1\nextends: default\nrules:\n  - id: x\n    before: hard\n"
                "    when: step > 1\n    action: compact\n"
            },
            "p.yaml:5:13: before: no rule has id 'hard' (ids: phase_boundary, hard_handoff, "
            "soft_compact, degradation)",
        ),
        (
            {"p.yaml": "version: 1\nextends: default\nrules:\n  - id: x\n    when: step > 1\n"},
            "p.yaml:4:5: rule 'x' has no 'action'",
        ),
        (
            {
                "p.yaml": "version: 1\nextends: default\nrules:\n  - id: x\n    when: step > 1\n"
                "    action: compact\n  - id: x\n    when: step > 2\n    action: compact\n"
            },
            "p.yaml:7:9: duplicate rule id 'x' (first at line 4)",
        ),
        (
            {
                "p.yaml": "version: 1\nextends: default\nprofiles:\n  coding: {soft_compact: 400000}\n"
            },
            "p.yaml:4:26: profile 'coding': soft_compact (400000) must be below hard_handoff (350000)",
        ),
    ],
)
def test_extends_errors(tmp_path: Path, files: dict[str, str], message: str) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(PolicyError) as info:
        load_policy(tmp_path / "p.yaml")
    assert str(info.value) == f"{tmp_path}/{message}"


def test_resolved_policy_is_equivalent(
    write: Write, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    policies = Path(__file__).resolve().parents[2] / "policies"
    monkeypatch.setenv("CLM_POLICY_EXTENDS_PATH", str(policies))  # the person allows it
    team = write(
        "team.yaml",
        """
        version: 1
        name: team
        extends: ../../../policies/examples/option_b.yaml
        rules:
          - id: degradation
            before: phase_boundary
    """.replace("../../../policies", str(Path(__file__).resolve().parents[2] / "policies")),
    )
    original = load_policy(team)
    text = resolved_yaml(original)
    assert "\nextends:" not in text
    flat = write("flat.yaml", text)
    resolved = load_policy(flat)
    assert [r.id for r in resolved.rules] == [r.id for r in original.rules]
    for context in (0, 50_000, 150_000, 165_000, 185_000):
        for status in (TaskStatus.RUNNING, TaskStatus.PHASE_BOUNDARY):
            for signals in (
                {},
                {"degradation": True, "open_subagent_calls": 1},
                {"degradation": True},
                {"missing_artifacts": "todo"},
            ):
                s = SessionState(
                    session_id="s",
                    status=status,
                    signals=signals,
                    tokens=TokenSnapshot(context_tokens=context),
                )
                for force in (False, True):
                    a = original.decide(s, force=force).as_dict()
                    b = resolved.decide(s, force=force).as_dict()
                    a.pop("policy"), b.pop("policy")
                    assert a == b


def test_each_file_of_a_chain_is_parsed_once_per_process(
    write: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    from collections import OrderedDict

    from clm_policy.formats import yamlio
    from clm_policy.policy.load import load_resolved

    parsed: list[str] = []
    real = yamlio.parse_yaml

    def counting(text: str, file: str) -> yamlio.YamlDocument:
        parsed.append(file)
        return real(text, file)

    monkeypatch.setattr(yamlio, "_PARSED", OrderedDict())
    monkeypatch.setattr(yamlio, "parse_yaml", counting)
    team = write("team.yaml", "version: 1\nextends: default\n")
    children = [
        write(f"c{i}.yaml", f"version: 1\nextends: ./team.yaml\nname: c{i}\n") for i in range(3)
    ]
    for child in children:
        load_resolved(child)
    load_resolved(team)
    assert sorted(parsed) == sorted(
        ["<bundled>/default.yaml", str(team), *(str(c) for c in children)]
    )
