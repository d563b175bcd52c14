"""Every broken input exits 2 with one line ``file:line:col: message`` and no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import invoke, message_of, run_process

OK_PROFILE = "profiles:\n  coding: {soft_compact: 100, hard_handoff: 200}\n"


def rule(when: str, extra: str = "") -> str:
    return (
        f"version: 1\n{OK_PROFILE}rules:\n  - id: r\n    when: {when}\n    action: compact\n{extra}"
    )


# (id, file content, expected "line:col: message" after the file name)
POLICY_CASES = [
    ("empty-file", "", "1:1: empty file: expected a YAML mapping"),
    ("only-comments", "# nothing\n", "1:1: empty file: expected a YAML mapping"),
    (
        "yaml-syntax",
        "version: 1\nprofiles: [a\n",
        "3:1: YAML syntax error: did not find expected ',' or ']' (while parsing a flow sequence "
        "that starts at 2:11)",
    ),
    (
        "bad-indent",
        "version: 1\n  profiles: {}\n",
        "2:11: YAML syntax error: mapping values are not allowed in this context; a ': ' "
        "inside a value: quote the value, or indent this key as the keys above it",
    ),
    ("duplicate-key", "version: 1\nversion: 1\n", "2:1: duplicate key 'version' (first at line 1)"),
    (
        "braces-not-quoted",
        rule("{tokens.ratio > 0.5}"),
        "6:11: rules[0].when: expected a string, got a mapping (a value that starts with '{' or "
        "'[' is a YAML mapping or list: quote it)",
    ),
    (
        "list-not-quoted",
        rule("tokens.ratio > 0.5", "    because: [big]\n"),
        "8:14: rules[0].because: expected a string, got a list (a value that starts with '{' or "
        "'[' is a YAML mapping or list: quote it)",
    ),
    ("not-a-mapping", "- 1\n", "1:1: expected a mapping at the top of the policy, got a list"),
    ("missing-version", OK_PROFILE, "1:1: missing required key 'version' in the top level"),
    ("wrong-version", "version: 2\n" + OK_PROFILE, "1:10: version: expected 1, got integer 2"),
    (
        "unknown-key",
        "version: 1\nprofile: {}\n" + OK_PROFILE,
        "2:1: unknown key 'profile'; did you mean 'profiles'? (allowed: version, name, "
        "description, extends, default_profile, defaults, profiles, models, prices, signals, rules, "
        "otherwise, guards, confirm)",
    ),
    (
        "unknown-profile-key",
        "version: 1\nprofiles:\n  coding: {soft_compact: 1, hard_handof: 2}\n",
        "3:29: unknown key 'hard_handof'; did you mean 'hard_handoff'? (allowed: description, "
        "soft_compact, hard_handoff, min_steps_between_compacts, prefer_handoff_on_phase, "
        "retain_recent_messages, context_window, min_recall, seed_tokens)",
    ),
    (
        "wrong-type-threshold",
        "version: 1\nprofiles:\n  coding: {soft_compact: abc, hard_handoff: 2}\n",
        "3:26: profiles.coding.soft_compact: expected tokens (an integer) or a share like '70%', "
        "got string 'abc'",
    ),
    (
        "wrong-type-bool",
        "version: 1\ndefaults: {prefer_handoff_on_phase: yes}\n" + OK_PROFILE,
        "2:37: defaults.prefer_handoff_on_phase: expected true or false, got string 'yes'",
    ),
    (
        "quoted-number",
        "version: 1\nprofiles:\n  coding: {soft_compact: '100', hard_handoff: 200}\n",
        "3:26: profiles.coding.soft_compact: expected tokens (an integer) or a share like '70%', "
        "got string '100' (tokens are written as a plain number: 100)",
    ),
    (
        "negative-threshold",
        "version: 1\nprofiles:\n  coding: {soft_compact: -1, hard_handoff: 2}\n",
        "3:26: profiles.coding.soft_compact: input should be greater than or equal to 0, "
        "got integer -1",
    ),
    (
        "unknown-action",
        rule("step > 1").replace("action: compact", "action: stop"),
        "7:13: rules[0].action: expected 'continue', 'compact' or 'handoff', got string 'stop'",
    ),
    (
        "bad-severity",
        f"version: 1\n{OK_PROFILE}guards:\n  compact:\n    - id: g\n"
        "      when: step > 1\n      severity: fatal\n",
        "8:17: guards.compact[0].severity: expected 'block' or 'warn', got string 'fatal'",
    ),
    (
        "guard-on-continue",
        f"version: 1\n{OK_PROFILE}guards:\n  continue: []\n",
        "5:3: guards.continue: expected 'compact' or 'handoff', got string 'continue'",
    ),
    (
        "soft-not-below-hard",
        "version: 1\nprofiles:\n  coding: {soft_compact: 300, hard_handoff: 200}\n",
        "3:26: profile 'coding': soft_compact (300) must be below hard_handoff (200)",
    ),
    (
        "soft-equals-hard-share",
        "version: 1\nprofiles:\n  c: {soft_compact: 90%, hard_handoff: 90%}\n",
        "3:21: profile 'c': soft_compact (90%) must be below hard_handoff (90%)",
    ),
    (
        "missing-threshold",
        "version: 1\nprofiles:\n  coding: {soft_compact: 1}\n",
        "3:3: profile 'coding' has no hard_handoff (set it in the profile or under defaults)",
    ),
    ("no-profiles", "version: 1\n", "1:1: a policy needs at least one profile under 'profiles:'"),
    (
        "bad-default-profile",
        "version: 1\ndefault_profile: codng\n" + OK_PROFILE,
        "2:18: default_profile: no profile named 'codng'; did you mean 'coding'?",
    ),
    (
        "signal-default-type",
        f"version: 1\n{OK_PROFILE}signals:\n  s: {{type: int, default: x}}\n",
        "5:6: signals.s: default 'x' is not an int",
    ),
    (
        "bad-rule-id",
        rule("step > 1").replace("id: r", "id: 9r"),
        "5:9: rules[0].id: '9r' is not a valid id (ASCII letters, digits, '_' and '-', starting "
        "with a letter, at most 64 characters)",
    ),
    (  # é is a letter, but not one an id may hold: the message says which letters
        "accented-rule-id",
        rule("step > 1").replace("id: r", "id: règle"),
        "5:9: rules[0].id: 'règle' is not a valid id (ASCII letters, digits, '_' and '-', "
        "starting with a letter, at most 64 characters)",
    ),
    (
        "accented-signal-name",
        f"version: 1\n{OK_PROFILE}signals:\n  prêt: {{type: bool, default: false}}\n",
        "5:3: signals.prêt: name 'prêt' is not allowed (ASCII letters, digits, '_', '-'; a "
        "letter first)",
    ),
    (
        "rule-without-when",
        f"version: 1\n{OK_PROFILE}rules:\n  - id: r\n    action: compact\n",
        "5:5: rule 'r' has no 'when'",
    ),
    (
        "expr-syntax",
        rule("tokens.context >= >= 1"),
        "6:29: expression syntax error: invalid syntax at '>= 1'",
    ),
    ("expr-unclosed", rule("(step > 1"), "6:11: expression syntax error: '(' was never closed"),
    ("expr-empty", rule("''"), "6:12: empty expression"),
    (
        "unknown-name",
        rule("tokens.contxt >= 1"),
        "6:11: unknown name 'tokens.contxt'; did you mean 'tokens.context'?",
    ),
    ("unknown-bare-name", rule("stpe > 1"), "6:11: unknown name 'stpe'; did you mean 'step'?"),
    (
        "undeclared-signal",
        rule("signals.busy"),
        "6:11: unknown name 'signals.busy'; signals must be declared under 'signals:'",
    ),
    (
        "group-as-value",
        rule("tokens > 1"),
        "6:11: 'tokens' is a group of names, not a value: use tokens.context, tokens.estimated, "
        "tokens.input, tokens.output, …",
    ),
    (
        "dunder",
        rule('"step.__class__ == 1"'),
        "6:12: names starting with '_' are not allowed: step.__class__",
    ),
    ("lambda", rule('"(lambda: 1)()"'), "6:13: not allowed in a policy expression: lambda"),
    (
        "comprehension",
        rule('"[x for x in (1, 2)]"'),
        "6:12: not allowed in a policy expression: comprehension",
    ),
    ("walrus", rule('"(x := 1)"'), "6:13: not allowed in a policy expression: assignment (:=)"),
    (
        "statement",
        rule('"import os"'),
        "6:12: expression syntax error: invalid syntax at 'import os'",
    ),
    (
        "call-not-allowed",
        rule("\"open('x')\""),
        "6:12: call to 'open' is not allowed (allowed: abs, all, any, bool, float, int, len, max, "
        "min, round, str, sum)",
    ),
    ("method-call", rule('"status.upper() == 1"'), "6:12: method calls are not allowed"),
    (
        "subscript",
        rule('"status[0]"'),
        "6:12: not allowed in a policy expression: subscript ([...])",
    ),
    (
        "bad-template-name",
        rule("step > 1", "    because: 'at {stepp}'\n"),
        "8:19: unknown name 'stepp'; did you mean 'step'?",
    ),
    (
        "bad-template-brace",
        rule("step > 1", "    because: 'at {step'\n"),
        "8:18: unclosed '{' in message",
    ),
    (
        "bad-template-spec",
        rule("step > 1", "    because: 'at {step:>999999}'\n"),
        "8:18: format spec ':>999999' not allowed (use e.g. ':,' ':.1f' ':.0%')",
    ),
    (
        "block-scalar-position",
        rule("|\n      step > 1\n      and stepz > 2"),
        "8:11: unknown name 'stepz'; did you mean 'step'?",
    ),
    (
        "folded-scalar-position",
        rule(">-\n      step > 1\n      and stepz > 2"),
        "8:11: unknown name 'stepz'; did you mean 'step'?",
    ),
]


@pytest.mark.parametrize(
    ("content", "expected"), [c[1:] for c in POLICY_CASES], ids=[c[0] for c in POLICY_CASES]
)
def test_bad_policy(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(content)
    result = invoke("decide", "-p", str(path), "--tokens", "150")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert message_of(result.stderr) == f"{path}:{expected}\n"


STATE_CASES = [
    (
        "invalid-json",
        '{"session_id": "s", ',
        "1:21: invalid JSON: Expecting property name enclosed in double quotes",
    ),
    ("empty", "", "1:1: empty input: expected a SessionState JSON object"),
    ("missing-id", "{}", "1:1: missing required key 'session_id' in the top level"),
    (
        "string-for-int",
        '{"session_id": "s", "step_index": "5"}',
        "1:35: step_index: expected an integer, got string '5'",
    ),
    (
        "negative-tokens",
        '{"session_id": "s", "tokens": {"context_tokens": -5}}',
        "1:50: tokens.context_tokens: input should be greater than or equal to 0, got integer -5",
    ),
    (
        "bad-status",
        '{"session_id": "s", "status": "done"}',
        "1:31: status: input should be 'running', 'waiting', 'phase_boundary', 'completed', "
        "'failed' or 'blocked', got string 'done'",
    ),
    (
        "unknown-key",
        '{"session_id": "s", "bogus": 1}',
        "1:21: unknown key 'bogus' (allowed: session_id, goal, status, step_index, "
        "last_compact_step, compact_count, profile, tokens, signals, messages, "
        "human_interventions, requests, constraints, decisions, done, remaining, next_action, "
        "open_failures, changed_artifacts, moved_artifacts, deleted_artifacts, "
        "commands_and_results, verified, not_verified, assumptions_risks, blockers, "
        "source_of_truth, memory_keys, transcript, parent_session, schema_version)",
    ),
    (
        "compact-after-step",
        '{"session_id": "s", "step_index": 1, "last_compact_step": 3}',
        "1:1: last_compact_step (3) is after step_index (1)",
    ),
    (
        "undeclared-signal",
        '{"session_id": "s",\n "signals": {"degradatoin": true}}',
        "2:14: signal 'degradatoin' is not declared by policy default; did you mean "
        "'degradation'? (declared: degradation)",
    ),
    (
        "signal-type",
        '{"session_id": "s", "signals": {"degradation": 1}}',
        "1:33: signal 'degradation' must be a bool, got 1",
    ),
]


@pytest.mark.parametrize(
    ("content", "expected"), [c[1:] for c in STATE_CASES], ids=[c[0] for c in STATE_CASES]
)
def test_bad_state_file(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "state.json"
    path.write_text(content)
    result = invoke("decide", "--state", str(path))
    assert (result.exit_code, result.stdout) == (2, "")
    assert message_of(result.stderr) == f"{path}:{expected}\n"


def test_bad_state_on_stdin() -> None:
    result = invoke("decide", "--state", "-", stdin='{"session_id": 5}')
    assert (result.exit_code, result.stdout) == (2, "")
    assert (
        message_of(result.stderr) == "<stdin>:1:16: session_id: expected a string, got integer 5\n"
    )


USAGE = " (try 'clm-policy decide --help')"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["decide"],
            "clm-policy decide: give exactly one of --state FILE|-, --tokens N, --session ID or "
            "--transcript PATH" + USAGE,
        ),
        (
            ["decide", "--tokens", "1", "--state", "x.json"],
            "clm-policy decide: give exactly one of --state FILE|-, --tokens N, --session ID or "
            "--transcript PATH; got --state and --tokens" + USAGE,
        ),
        (
            ["decide", "--tokens", "-1"],
            "clm-policy decide: Invalid value for '--tokens' / '-t': -1 is not in the range "
            "0<=x<=9223372036854775807." + USAGE,
        ),
        (
            ["decide", "--tokens", "1", "--format", "xml"],
            "clm-policy decide: Invalid value for '--format': 'xml' is not one of 'text', "
            "'json'." + USAGE,
        ),
        (
            ["decide", "--window", "200000", "--step", "3"],  # it said: give one of the sources
            "clm-policy decide: --window and --step go with --tokens N: give the context's "
            "tokens" + USAGE,
        ),
        (
            ["decide", "--state", "x.json", "--step", "3"],
            "clm-policy decide: --step goes with --tokens: a state file carries its own figures"
            + USAGE,
        ),
        (
            ["decide", "--tokens", "1", "--signal", "novalue"],
            "clm-policy decide: --signal expects NAME=VALUE, got 'novalue'" + USAGE,
        ),
        (
            ["decide", "--tokens", "1", "--profile", "codng"],
            "clm-policy: unknown profile 'codng'; did you mean 'coding'? (policy default has: coding, "
            "research, exploration, tool_heavy, multi_agent)",
        ),
        (
            ["decide", "--tokens", "1", "--policy", "nosuch"],
            "clm-policy: no bundled policy named 'nosuch' (bundled: claude-code, default)",
        ),
        (["decide", "--tokens", "1", "--policy", "nosuch.yaml"], "nosuch.yaml: no such file"),
        (  # the repository's path to a bundled policy, where no checkout of it is
            ["resolve", "policies/default.yaml"],
            "policies/default.yaml: no such file; a bundled policy has that name: give it as "
            "'default', alone",
        ),
        (
            ["decide", "--tokens", "1", "--policy", "policies/claude-code.yaml"],
            "policies/claude-code.yaml: no such file; a bundled policy has that name: give it as "
            "'claude-code', alone",
        ),
        (  # a folder of that name is no bundled policy's name mistyped
            ["decide", "--tokens", "1", "--policy", "."],
            ".: is a directory, not a policy file",
        ),
        (
            ["decide", "--tokens", "abc"],  # (click says "is not a valid integer range")
            "clm-policy decide: Invalid value for '--tokens' / '-t': 'abc' is not a whole number"
            + USAGE,
        ),
        (["decide", "--state", "missing.json"], "missing.json: no such file"),
        (
            ["decdie"],
            "clm-policy: No such command 'decdie'. Did you mean 'decide'? "
            "(try 'clm-policy --help')",
        ),
        (["frobnicate"], "clm-policy: No such command 'frobnicate'. (try 'clm-policy --help')"),
        (  # a command without --format: asking it for JSON is the usage error, told as a line
            ["report", "--format", "json"],
            "clm-policy report: No such option '--format'. (try 'clm-policy report --help')",
        ),
        (
            ["migrate", "--format=json"],
            "clm-policy migrate: No such option '--format'. (try 'clm-policy migrate --help')",
        ),
        (
            ["hook", "codex", "--bogus"],  # (its --user, since --install and --uninstall)
            "clm-policy hook codex: No such option '--bogus'. Did you mean '--user'? (try "
            "'clm-policy hook codex --help')",
        ),
        (
            ["compact", "--session", "s", "--transcript", "t.jsonl"],
            "clm-policy compact: give exactly one of --state FILE|-, --session ID or --transcript "
            "PATH; got --session and --transcript (try 'clm-policy compact --help')",
        ),
        (
            ["schema", "polcy"],
            "clm-policy: no schema named 'polcy'; did you mean 'policy'? "
            "(schemas: experiment, handoff-manifest, policy, policy-test, scenario, session-state)",
        ),
    ],
)
def test_usage_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], expected: str
) -> None:
    """One line on standard error, exit 2: a usage error names the command and its help."""
    monkeypatch.chdir(tmp_path)
    result = invoke(*args)
    assert (result.exit_code, result.stdout, message_of(result.stderr)) == (2, "", f"{expected}\n")


def test_bad_input_as_a_process_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(rule("tokens.contxt > 1"))
    before = sorted(tmp_path.iterdir())
    proc = run_process("decide", "-p", str(path), "--tokens", "5", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    # the policy's line and a caret under the name, as an error in a JSON file shows
    assert proc.stderr == (
        f"{path}:6:11: unknown name 'tokens.contxt'; did you mean 'tokens.context'?\n"
        "      when: tokens.contxt > 1\n"
        "            ^\n"
    )
    assert sorted(tmp_path.iterdir()) == before


def test_a_file_of_another_kind_named_by_an_error_shows_no_line(tmp_path: Path) -> None:
    """Only the kinds of file a person writes for clm-policy are read back for a line: a file
    given in the wrong place (``--policy ~/.git-credentials``) shows none of its own."""
    secretish = tmp_path / "credentials"
    secretish.write_text("user = bob\n  not: [yaml\n")
    proc = run_process("decide", "--policy", str(secretish), "--tokens", "5", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"{secretish}:"), proc.stderr
    assert len(proc.stderr.splitlines()) == 1, proc.stderr


def test_evaluation_error_is_located(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(rule("step / (step - step) > 1"))
    result = invoke("decide", "-p", str(path), "--tokens", "5")
    assert result.exit_code == 2
    assert message_of(result.stderr) == (
        f"{path}:6:11: evaluating 'step / (step - step) > 1' failed: division by zero\n"
    )


def test_missing_window_for_share_thresholds(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        "version: 1\nextends: default\nprofiles:\n  c: {soft_compact: 70%, hard_handoff: 90%}\n"
    )
    result = invoke("decide", "-p", str(path), "--profile", "c", "--tokens", "5")
    assert result.exit_code == 2
    assert message_of(result.stderr) == (
        "clm-policy: profile 'c' gives soft_compact as a share of the context window, but no "
        "window is known: set tokens.context_window or tokens.model in the state, or "
        "context_window in the profile; with --tokens: give --window N\n"
    )  # (the option that gives it, on the command line that has no state to edit)
    ok = invoke("decide", "-p", str(path), "-t", "150000", "--window", "200000", "--profile", "c")
    assert ok.exit_code == 0
    assert "action:    compact" in ok.stdout


def test_alias_bomb_is_refused(tmp_path: Path) -> None:
    lines = ["version: 1", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    result = invoke("decide", "-p", str(path), "--tokens", "1")
    assert result.exit_code == 2
    assert message_of(result.stderr) == (
        f"{path}:1:1: document too large: aliases expand it by more than 200000 nodes\n"
    )


def test_deeply_nested_yaml_is_refused(tmp_path: Path) -> None:
    # refused by a pre-scan before the parser sees it, where the 64th '[' under 'x:' (level
    # 65) opens: ruamel's scanner takes seconds on this (quadratic in the depth)
    path = tmp_path / "deep.yaml"
    path.write_text("version: 1\nx: " + "[" * 2000 + "]" * 2000 + "\n")
    result = invoke("decide", "-p", str(path), "--tokens", "1")
    assert (result.exit_code, message_of(result.stderr)) == (
        2,
        f"{path}:2:67: nested more than 64 levels deep\n",
    )
    linted = invoke("lint", str(path))
    assert linted.exit_code == 1
    assert linted.stdout == f"{path}:2:67: error [yaml-syntax] nested more than 64 levels deep\n"


def test_a_signal_given_twice_is_refused(tmp_path: Path) -> None:
    """Which value was meant? Not the last one silently: both commands refuse it."""
    decided = run_process("decide", "--tokens", "5", "--signal", "a=1", "--signal", "a=2")
    assert decided.returncode == 2
    assert "--signal a is given twice: give it once" in decided.stderr
    memory = tmp_path / "mem"
    assert run_process("run", "--memory", str(memory), "--max-steps", "1").returncode == 0
    args = ("--memory", str(memory), "--session", "demo", "degradation=true", "degradation=false")
    signalled = run_process("signal", *args)
    assert signalled.returncode == 2
    assert "a signal degradation is given twice: give it once" in signalled.stderr
    assert "signal" not in run_process("log", "--memory", str(memory)).stdout


@pytest.mark.parametrize(
    ("args", "stderr"),
    [
        (
            ["decide", "--tokens", "5", "-p", ""],
            "clm-policy decide: Invalid value for '--policy' / '-p' (env var: "
            "'CLM_POLICY_POLICY'): empty: give a policy file or a bundled name, or leave the "
            "option out (try 'clm-policy decide --help')\n",
        ),
        (
            ["decide", "--tokens", "5", "--profile", " "],
            "clm-policy decide: Invalid value for '--profile' (env var: 'CLM_POLICY_PROFILE'): "
            "empty: give a profile's name, or leave the option out (try 'clm-policy decide "
            "--help')\n",
        ),
        (
            ["decide", "--state", ""],
            "clm-policy decide: Invalid value for '--state' / '-s': empty: give a SessionState "
            "JSON file, or - for standard input, or leave the option out (try 'clm-policy "
            "decide --help')\n",
        ),
        (
            ["decide", "--transcript", " "],
            "clm-policy decide: Invalid value for '--transcript': empty: give a transcript "
            "file's path, or leave the option out (try 'clm-policy decide --help')\n",
        ),
        (
            ["lint", "-o", "", "policies"],
            "clm-policy lint: Invalid value for '--output' / '-o': empty: give a file's path, "
            "or - for standard output, or leave the option out (try 'clm-policy lint --help')\n",
        ),
        (
            ["log", "-m", ""],
            "clm-policy log: Invalid value for '--memory' / '-m' (env var: 'CLM_POLICY_MEMORY'): "
            "empty: give a memory repository's folder, or leave the option out (try 'clm-policy "
            "log --help')\n",
        ),
        (
            ["compact", "--memory", "", "--state", "s.json"],
            "clm-policy compact: Invalid value for '--memory' / '-m' (env var: "
            "'CLM_POLICY_MEMORY'): empty: give a memory repository's folder, or leave the option "
            "out (try 'clm-policy compact --help')\n",
        ),
        (
            ["lint", ""],
            "clm-policy lint: an empty PATH names nothing: give a file or a folder ('.' for "
            "this one) (try 'clm-policy lint --help')\n",
        ),
        (
            ["test", "policies", ""],
            "clm-policy test: an empty PATH names nothing: give a file or a folder ('.' for "
            "this one) (try 'clm-policy test --help')\n",
        ),
    ],
)
def test_an_empty_value_is_refused_not_taken_for_the_default(
    tmp_path: Path, args: list[str], stderr: str
) -> None:
    """``-p "$POLICY"`` with the variable unset decided under the default policy, ``-m
    "$MEMORY"`` used (and made) the project's default memory, and ``lint "$DIR"`` linted the
    whole working folder, all with exit 0."""
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "p.yaml").write_text("version: 1\nextends: default\n")
    result = run_process(*args, cwd=tmp_path)  # the quick path of decide too
    assert (result.returncode, result.stdout, message_of(result.stderr)) == (2, "", stderr)


def test_a_condition_failing_without_a_window_says_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        "version: 1\nextends: default\nrules:\n"
        "  - {id: full, when: tokens.ratio > 0.5, action: compact, before: phase_boundary}\n"
    )
    result = run_process("decide", "-p", str(path), "--tokens", "5")
    assert (result.returncode, result.stdout) == (2, "")
    assert message_of(result.stderr) == (
        f"{path}:4:22: evaluating 'tokens.ratio > 0.5' failed: tokens.ratio has no value in "
        "this state ('>' not supported between instances of 'NoneType' and 'float'); no window "
        "is known: give the profile a context_window (or the state one), or write "
        "'tokens.window is not None and ...'\n"
    )


@pytest.mark.parametrize(
    "args",
    [
        ["lint", "p.yaml"],
        ["test", "t.test.yaml"],
        ["report", "--memory", "mem"],
    ],
    ids=["lint", "test", "report"],
)
@pytest.mark.parametrize("folder", ["out", "out/"])
def test_an_output_that_is_a_folder_is_told_in_the_same_words(
    tmp_path: Path, args: list[str], folder: str
) -> None:
    """``lint -o DIR`` and ``test -o DIR`` said click's ``Invalid value for '--output' / '-o':
    File 'out' is a directory. (try ...)`` where ``report -o DIR`` says the folder's name
    first, as every other error naming a file does."""
    from clm_policy.memory.init import init_memory

    init_memory(tmp_path / "mem")
    (tmp_path / "out").mkdir()
    (tmp_path / "p.yaml").write_text(rule("tokens.context > 1"))
    (tmp_path / "t.test.yaml").write_text(
        "version: 1\npolicy: p.yaml\ncases:\n  - name: c\n    given: {tokens: {context_tokens: 5}}"
        "\n    expect: {action: compact}\n"
    )
    proc = run_process(*args, "-o", folder, cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"{folder}: is a folder: --output takes a file's path\n"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == []


def test_a_folder_given_as_the_scenario_is_named_as_a_folder(tmp_path: Path) -> None:
    """``run --scenario plays`` with a folder ``plays`` there said ``no bundled scenario named
    'plays'``, as though the folder were not; it names the folder, and says it is neither a
    scenario file nor a bundled name. A folder named as a bundled scenario (``demo``) leaves
    the bundled one playing."""
    (tmp_path / "plays").mkdir()
    proc = run_process("run", "--scenario", "plays", "--memory", "mem", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        "plays: is a folder, not a scenario file, nor a bundled scenario's name (bundled: "
        "compaction, continue_only, demo, handoff)\n"
    )
    assert not (tmp_path / "mem").exists()
    (tmp_path / "demo").mkdir()
    demo = run_process(
        "run", "--scenario", "demo", "--memory", "mem", "--max-steps", "1", cwd=tmp_path
    )
    assert demo.returncode == 0, demo.stderr
    assert demo.stdout.startswith("playing <bundled>/scenarios/demo.yaml")


def _as_a_plain_user() -> list[str]:
    """The command prefix under which file modes hold: none for a user; for root, the
    capabilities that let it read any file dropped (setpriv), else the test is skipped."""
    import os
    import shutil

    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("root reads any folder, and setpriv is not here to stop it")
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search"]


@pytest.mark.parametrize("command", ["log", "status", "export"])
def test_a_memory_repository_that_cannot_be_read_says_so(tmp_path: Path, command: str) -> None:
    """A memory folder without read permission was called ``not a clm-policy memory
    repository (no .clm-memory; create one with: clm-policy init DIR)``, sending its owner to
    make a new one over it; it says it cannot be read."""
    import subprocess
    import sys

    from clm_policy.memory.init import init_memory

    init_memory(tmp_path / "mem")
    (tmp_path / "mem").chmod(0)
    try:
        proc = subprocess.run(
            [*_as_a_plain_user(), sys.executable, "-m", "clm_policy", command, "-m", "mem"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=60,
            check=False,
        )
    finally:
        (tmp_path / "mem").chmod(0o755)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == "clm-policy: mem: cannot read: Permission denied\n"


def test_trust_names_the_file_as_typed_or_from_the_working_folder(tmp_path: Path) -> None:
    """``clm-policy trust`` named the configuration by its absolute path in every error
    (``/home/me/src/shop/.clm-policy.yaml:2:9: …``, ``no .clm-policy.yaml in /home/me/x …``),
    where every other command names a path as it was typed, and one it found from the
    working folder."""
    shop = tmp_path / "shop"
    shop.mkdir()
    (shop / ".clm-policy.yaml").write_text("version: 1\npolicy: nosuch\n")
    (tmp_path / "empty").mkdir()
    error = "2:9: no bundled policy named 'nosuch' (bundled: claude-code, default)"
    for args, cwd, named in (
        ([], shop, ".clm-policy.yaml"),  # found: from the working folder
        (["shop"], tmp_path, "shop/.clm-policy.yaml"),
        (["shop/.clm-policy.yaml"], tmp_path, "shop/.clm-policy.yaml"),  # as typed
    ):
        proc = run_process("trust", *args, cwd=cwd)
        assert proc.returncode == 2, proc.stderr
        assert message_of(proc.stderr) == f"{named}:{error}\n", args
    missing = run_process("trust", "empty", cwd=tmp_path)
    assert (missing.returncode, missing.stderr) == (
        2,
        "clm-policy: no .clm-policy.yaml in empty or a folder above it\n",
    )


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (
            b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4,
            "1:8: binary file (a NUL byte), not text",
        ),
        (b'{"session_id": "caf\xe9"}', "1:20: not UTF-8 text (byte 0xe9)"),
        (b'{"role": "user"}\n{"content": "\xe9t\xe9"}\n', "2:14: not UTF-8 text (byte 0xe9)"),
    ],
    ids=["binary", "latin-1 json", "latin-1 lines"],
)
@pytest.mark.parametrize("command", ["decide", "compact"])
def test_a_transcript_that_is_not_text_says_so(
    tmp_path: Path, content: bytes, said: str, command: str
) -> None:
    """``--transcript`` given a binary file said ``cannot tell the transcript format: neither
    the last nor the first lines look like Claude Code, Codex or OpenAI chat messages``, and a
    Latin-1 one ``not a JSON document``; each says what every other file-taking option says,
    where."""
    from clm_policy.memory.init import init_memory

    init_memory(tmp_path / "mem")
    (tmp_path / "t.jsonl").write_bytes(content)
    proc = run_process(command, "-m", "mem", "--transcript", "t.jsonl", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.splitlines()[0].startswith(f"t.jsonl:{said}")  # (; nor a Claude Code …)
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("option", "name"),
    [("--state", "s.json"), ("--transcript", "t.jsonl"), ("--policy", "p.yaml")],
)
def test_a_file_that_cannot_be_read_is_told_in_the_same_words(
    tmp_path: Path, option: str, name: str
) -> None:
    """A transcript without read permission said ``cannot read the file: permission
    denied`` where a state or a policy says ``cannot read: Permission denied``."""
    import subprocess
    import sys

    (tmp_path / name).write_text("{}")
    (tmp_path / name).chmod(0)
    args = ["decide", option, name] + (["--tokens", "5"] if option == "--policy" else [])
    proc = subprocess.run(
        [*_as_a_plain_user(), sys.executable, "-m", "clm_policy", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"{name}: cannot read: Permission denied\n"
