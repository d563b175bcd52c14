"""Policy test files: invalid files at exact file:line:col, per-case state errors, policies.

Each table row is a test file and the one line ``clm-policy test`` reports for it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import POLICIES, CliResult, invoke

Write = Callable[[str, str], Path]

HEAD = "version: 1\npolicy: default\n"


def run_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, *args: str) -> CliResult:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.test.yaml").write_text(text, encoding="utf-8")
    return invoke("test", "t.test.yaml", *args)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (
            HEAD + "cases:\n  - name: a\n    expect: {action: compact\n",
            "t.test.yaml:6:1: YAML syntax error: did not find expected ',' or '}' (while parsing a flow mapping that starts at 5:13)",
        ),
        (
            HEAD + "cases:\n  - name: a\n    expect: {action: compact}\n    expcet: {}\n",
            "t.test.yaml:6:5: unknown key 'expcet'; did you mean 'expect'? (allowed: name, description, given, profile, force, skip, expect)",
        ),
        (
            HEAD + "cases:\n  - name: a\n    force: yes\n    expect: {action: compact}\n",
            "t.test.yaml:5:12: cases[0].force: expected true or false, got string 'yes'",
        ),
        (
            HEAD
            + "cases:\n  - name: a\n    expect: {action: compact}\n  - name: a\n    expect: {action: handoff}\n",
            "t.test.yaml:6:11: duplicate case name 'a' (first at line 4)",
        ),
        (
            HEAD + "cases:\n  - name: a\n    expect: {trigger: soft_compact}\n",
            "t.test.yaml:5:13: missing required key 'action' in cases[0].expect",
        ),
        (
            HEAD + "cases:\n  - name: a\n    given: {}\n",
            "t.test.yaml:4:5: missing required key 'expect' in cases[0]",
        ),
        (
            HEAD + "cases:\n  - name: a\n    expect: {action: compact, proposed: null}\n",
            "t.test.yaml:5:13: cases[0].expect: proposed: null is not allowed (leave the key out to not check it)",
        ),
        (
            HEAD + "cases:\n  - name: a\n    expect: {action: compac}\n",
            "t.test.yaml:5:22: cases[0].expect.action: expected 'continue', 'compact' or 'handoff', got string 'compac'",
        ),
        (
            HEAD
            + "cases:\n  - name: a\n    expect: {action: compact, blocked_by: open_subagents}\n",
            "t.test.yaml:5:43: cases[0].expect.blocked_by: expected a list, got string 'open_subagents'",
        ),
        (
            HEAD + "cases: []\n",
            "t.test.yaml:3:8: cases: list should have at least 1 item after validation, not 0",
        ),
        (
            "version: 2\npolicy: default\ncases: []\n",
            "t.test.yaml:1:10: version: expected 1, got integer 2",
        ),
        (
            "version: 1\ncases: []\n",
            "t.test.yaml:1:1: missing required key 'policy' in the top level",
        ),
        (HEAD + "policy: other\n", "t.test.yaml:3:1: duplicate key 'policy' (first at line 2)"),
        (
            "- version: 1\n",
            "t.test.yaml:1:1: expected a mapping at the top of the test file, got a list",
        ),
        ("", "t.test.yaml:1:1: empty file: expected a YAML mapping"),
        ("# only a comment\n", "t.test.yaml:1:1: empty file: expected a YAML mapping"),
        (HEAD + "7: x\n", "t.test.yaml:3:1: a key must be a string, got '7'"),
        (
            HEAD + "cases: !!set {a}\n",
            "t.test.yaml:3:8: unsupported YAML tag 'tag:yaml.org,2002:set'",
        ),
    ],
)
def test_an_invalid_file_is_one_error_at_its_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, line: str
) -> None:
    result = run_file(tmp_path, monkeypatch, text)
    assert result.exit_code == 1
    assert result.stdout == f"ERROR {line}\n\n1 error\n0 passed, 0 failed, 0 skipped\n"


@pytest.mark.parametrize(
    ("given", "line"),
    [
        (
            "{tokenz: {context_tokens: 1}}",
            "t.test.yaml:5:13: a: given: unknown key 'tokenz'; did you mean 'tokens'?",
        ),
        (
            "{step_index: 3, last_compact_step: 5}",
            "t.test.yaml:5:12: a: given: last_compact_step (5) is after step_index (3)",
        ),
        ("[]", "t.test.yaml:5:12: a: given: expected a mapping (a SessionState), got a list"),
        (
            "{status: done}",
            "t.test.yaml:5:21: a: given: status: input should be 'running', 'waiting',",
        ),
        (
            "{tokens: {context_tokens: 1.5}}",
            "t.test.yaml:5:38: a: given: tokens.context_tokens: expected an integer, got number 1.5",
        ),
        (
            "{signals: {degradation: [1]}}",
            "t.test.yaml:5:36: a: given: signals.degradation: expected true or false, got a list",
        ),
        (
            "{signals: {degradation: 1}}",
            "t.test.yaml:5:23: a: signal 'degradation' must be a bool, got 1",
        ),
        (
            "{profile: resarch}",
            "t.test.yaml:5:22: a: unknown profile 'resarch'; did you mean 'research'?",
        ),
    ],
)
def test_a_bad_state_is_an_error_of_its_case_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str, line: str
) -> None:
    text = (
        HEAD
        + f"cases:\n  - name: a\n    given: {given}\n    expect: {{action: continue}}\n"
        + "  - name: b\n    expect: {action: continue}\n"
    )
    result = run_file(tmp_path, monkeypatch, text)
    assert result.exit_code == 1
    first, *rest = result.stdout.splitlines()
    assert first.startswith(f"ERROR {line}"), first
    assert rest[-2:] == ["1 error", "1 passed, 0 failed, 0 skipped"]


def test_a_policy_that_does_not_load_errs_every_case(write: Write, tmp_path: Path) -> None:
    write("bad.yaml", "version: 1\nrulez: []\n")
    path = write(
        "t.test.yaml",
        """
        version: 1
        policy: bad.yaml
        cases:
          - {name: one, expect: {action: continue}}
          - {name: two, expect: {action: compact}}
        """,
    )
    result = invoke("test", str(path))
    assert result.exit_code == 1
    bad = tmp_path / "bad.yaml"
    assert result.stdout.splitlines() == [
        f"ERROR {path}:2:9: one: cannot load policy 'bad.yaml': {bad}:2:1: unknown key 'rulez'; "
        "did you mean 'rules'? (allowed: version, name, description, extends, default_profile, "
        "defaults, profiles, models, prices, signals, rules, otherwise, guards, confirm)",
        f"ERROR {path}:2:9: two: cannot load policy 'bad.yaml': {bad}:2:1: unknown key 'rulez'; "
        "did you mean 'rules'? (allowed: version, name, description, extends, default_profile, "
        "defaults, profiles, models, prices, signals, rules, otherwise, guards, confirm)",
        "",
        "2 errors",
        "0 passed, 0 failed, 0 skipped",
    ]


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        (
            "nosuch",
            "cannot load policy 'nosuch': no bundled policy named 'nosuch' (bundled: claude-code, default)",
        ),
        ("nosuch.yaml", "cannot load policy 'nosuch.yaml': {dir}/nosuch.yaml: no such file"),
    ],
)
def test_a_missing_policy(write: Write, tmp_path: Path, ref: str, message: str) -> None:
    path = write(
        "t.test.yaml",
        f"version: 1\npolicy: {ref}\ncases: [{{name: a, expect: {{action: continue}}}}]\n",
    )
    result = invoke("test", str(path))
    assert result.stdout.splitlines()[0] == f"ERROR {path}:2:9: a: " + message.format(dir=tmp_path)


def test_policy_paths_are_relative_to_the_test_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write: Write
) -> None:
    write(
        "policies/team.yaml",
        "version: 1\nextends: default\ndefaults: {soft_compact: 1000, hard_handoff: 2000}\n",
    )
    write(
        "policies/tests/team.test.yaml",
        """
        version: 1
        policy: ../team.yaml
        cases:
          - {name: compacts at 1000, given: {tokens: {context_tokens: 1000}}, expect: {action: compact}}
        """,
    )
    monkeypatch.chdir(tmp_path)
    result = invoke("test", "--coverage")
    assert result.exit_code == 0, result.stdout
    assert "   25.0%  1/4  team  policies/team.yaml" in result.stdout.splitlines()


def test_profile_precedence_case_then_state_then_file(write: Write) -> None:
    # research compacts at 285000, exploration at 340000, coding (the default) at 250000
    path = write(
        "t.test.yaml",
        """
        version: 1
        policy: default
        profile: research
        cases:
          - name: the file's profile
            given: {tokens: {context_tokens: 290000}}
            expect: {action: compact}
          - name: the state's profile beats the file's
            given: {profile: exploration, tokens: {context_tokens: 290000}}
            expect: {action: continue}
          - name: the case's profile beats the state's
            profile: coding
            given: {profile: exploration, tokens: {context_tokens: 260000}}
            expect: {action: compact}
        """,
    )
    result = invoke("test", str(path))
    assert result.exit_code == 0, result.stdout


def test_an_unknown_file_profile_is_an_error_where_it_is_written(write: Write) -> None:
    path = write(
        "t.test.yaml",
        """
        version: 1
        policy: default
        profile: researsh
        cases:
          - {name: a, expect: {action: continue}}
        """,
    )
    assert invoke("test", str(path)).stdout.splitlines()[0] == (
        f"ERROR {path}:3:10: a: unknown profile 'researsh'; did you mean 'research'? "
        "(policy default has: coding, research, exploration, tool_heavy, multi_agent)"
    )


def test_unknown_guard_ids_in_every_list_are_errors(write: Write) -> None:
    path = write(
        "t.test.yaml",
        """
        version: 1
        policy: default
        cases:
          - {name: a, expect: {action: compact, warnings: [nope]}}
          - {name: b, expect: {action: compact, overridden: [nope]}}
        """,
    )
    lines = invoke("test", str(path)).stdout.splitlines()
    assert lines[:2] == [
        f"ERROR {path}:4:52: a: expect.warnings: policy default has no guard 'nope' (guards: none)",
        f"ERROR {path}:5:54: b: expect.overridden: policy default has no guard 'nope' (guards: none)",
    ]


def test_merge_keys_share_a_state(write: Write) -> None:
    path = write(
        "t.test.yaml",
        """
        version: 1
        policy: default
        cases:
          - name: held back
            given: &busy {step_index: 12, last_compact_step: 10, tokens: {context_tokens: 270000}}
            expect: {action: continue}
          - name: degradation still compacts
            given: {<<: *busy, signals: {degradation: true}}
            expect: {action: compact, trigger: degradation}
          - name: a merged value is located where it is written
            given: {<<: *busy, signals: {degradaton: true}}
            expect: {action: compact}
        """,
    )
    result = invoke("test", str(path))
    assert result.stdout.splitlines()[0] == (
        f"ERROR {path}:11:34: a merged value is located where it is written: signal 'degradaton' "
        "is not declared by policy default; did you mean 'degradation'? (declared: degradation)"
    )
    assert result.stdout.splitlines()[-2:] == ["1 error", "2 passed, 0 failed, 0 skipped"]


def test_discovery_finds_both_suffixes_and_skips_hidden_folders(
    write: Write, tmp_path: Path
) -> None:
    case = "version: 1\npolicy: default\ncases: [{name: a, expect: {action: continue}}]\n"
    write("p/b.test.yml", case)
    write("p/a/z.test.yaml", case)
    write("p/.hidden/x.test.yaml", "not: valid")
    write("p/team.yaml", "version: 1\n")
    result = invoke("test", str(tmp_path / "p"), str(tmp_path / "p" / "b.test.yml"), "-v")
    assert result.stdout.splitlines()[:2] == [
        f"PASS {tmp_path}/p/a/z.test.yaml:3: a",
        f"PASS {tmp_path}/p/b.test.yml:3: a",
    ]
    assert result.exit_code == 0


def test_discovery_skips_other_tools_packages(write: Write, tmp_path: Path) -> None:
    case = "version: 1\npolicy: default\ncases: [{name: a, expect: {action: continue}}]\n"
    write("p/a.test.yaml", case)
    write("p/node_modules/pkg/x.test.yaml", "not: valid")
    result = invoke("test", str(tmp_path / "p"), "-v")
    assert result.stdout.splitlines()[0] == f"PASS {tmp_path}/p/a.test.yaml:3: a"
    assert result.stdout.splitlines()[-1] == "1 passed, 0 failed, 0 skipped"
    assert result.exit_code == 0


def test_a_signal_of_the_wrong_type_names_its_type_in_english(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "team.yaml").write_text((POLICIES / "examples" / "team.yaml").read_text())
    text = (
        "version: 1\npolicy: team.yaml\ncases:\n  - name: a\n"
        "    given: {signals: {open_subagent_calls: x}}\n    expect: {action: continue}\n"
    )
    result = run_file(tmp_path, monkeypatch, text)
    assert result.stdout.splitlines()[0] == (
        "ERROR t.test.yaml:5:23: a: signal 'open_subagent_calls' must be an int, got 'x'"
    )


def test_output_that_names_a_file_the_run_reads_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--output` naming the test file, or the policy it tests, replaced it with the report."""
    policy = "version: 1\nextends: default\n"
    (tmp_path / "team.yaml").write_text(policy)
    text = "version: 1\npolicy: team.yaml\ncases: [{name: a, expect: {action: continue}}]\n"
    for target in ("t.test.yaml", "team.yaml"):
        result = run_file(tmp_path, monkeypatch, text, "--format", "junit", "--output", target)
        assert (result.exit_code, result.stdout) == (2, "")
        assert result.stderr == (
            f"{target}: is a file this run read: --output would replace it with the report; "
            "name another file\n"
        )
        assert (tmp_path / "t.test.yaml").read_text() == text
        assert (tmp_path / "team.yaml").read_text() == policy
