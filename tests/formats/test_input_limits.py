"""No input ends in an internal error, takes minutes, or is echoed back.

Policy files, policy test files, scenarios and SessionState input: files that are not regular
files or are too large, binary or deeply nested text, YAML merge keys and duplicate keys,
JSON with NaN, duplicate keys, huge numbers or deep nesting. Each is refused with exit 2 and one
line ``file:line:col: message`` (or, in ``lint`` and ``test``, reported as a finding), and a
message quotes at most a short excerpt of what was written.
"""

from __future__ import annotations

import io
import json
import os
import random
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from ruamel.yaml import YAML

from clm_policy.base.errors import InputError, StateError, quote
from clm_policy.formats import textio
from clm_policy.formats.jsonio import JsonDocument
from clm_policy.formats.textio import MiB
from clm_policy.formats.yamldepth import check_depth
from clm_policy.formats.yamlio import parse_yaml
from clm_policy.lifecycle.sources import read_state_source
from clm_policy.models.state_io import parse_state

from conftest import REPO, Endless, data_paths, invoke, message_of

OK = "version: 1\nprofiles:\n  coding: {soft_compact: 100, hard_handoff: 200}\n"
SECRET = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
fifo_only = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
dev_zero = pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")


def policy(tmp_path: Path, text: str, name: str = "p.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def decide_policy(path: Path | str) -> tuple[int, str]:
    result = invoke("decide", "-p", str(path), "--tokens", "150")
    assert result.stdout == ""
    return result.exit_code, message_of(result.stderr)


# -- A.1: an error never echoes a document ------------------------------------------------


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        (f"https://alice:{SECRET}@github.com\n", "a string"),
        (f"user=alice\npassword={SECRET}\ntoken={SECRET}\n", "a string"),
        (f"'{SECRET}'\n", "a string"),
        (f"- {SECRET}\n- {SECRET}\n", "a list"),
        ("12345\n", "an integer"),
    ],
    ids=["credentials", "key-value-lines", "scalar", "list", "number"],
)
def test_extends_of_a_file_that_is_no_policy_never_echoes_it(
    tmp_path: Path, content: str, kind: str
) -> None:
    (tmp_path / ".git-credentials").write_text(content)
    path = policy(tmp_path, "version: 1\nextends: ./.git-credentials\n")
    secret = tmp_path / ".git-credentials"
    expected = f"expected a mapping at the top of the policy, got {kind}"
    assert decide_policy(path) == (2, f"{secret}:1:1: {expected}\n")
    for fmt in ("text", "github", "json", "sarif"):
        linted = invoke("lint", str(path), "--format", fmt)
        assert linted.exit_code == 1
        assert expected in linted.stdout
        assert SECRET not in linted.stdout + linted.stderr
        assert "alice" not in linted.stdout + linted.stderr


def test_a_policy_file_that_is_a_list_is_described_not_quoted(tmp_path: Path) -> None:
    path = policy(tmp_path, f"- {SECRET}\n")
    assert decide_policy(path) == (
        2,
        f"{path}:1:1: expected a mapping at the top of the policy, got a list\n",
    )


LONG = "x" * 500
CUT = "'" + "x" * 60 + "…'"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            f"version: 1\nname: {LONG}\n" + OK.removeprefix("version: 1\n"),
            f"2:7: name: string should have at most 64 characters, got string {CUT}",
        ),
        (
            f"version: 1\n{LONG}: 1\n",
            f"2:1: unknown key {CUT} (allowed: version, name, description, extends, default_profile, defaults, profiles, models, prices, signals, rules, otherwise, guards, confirm)",
        ),
        (
            f"version: 1\ndefaults: {{prefer_handoff_on_phase: {LONG}}}\n{OK[11:]}",
            f"2:37: defaults.prefer_handoff_on_phase: expected true or false, got string {CUT}",
        ),
        (
            f"version: 1\nsignals:\n  s: {{type: int, default: {LONG}}}\n{OK[11:]}",
            f"3:6: signals.s: default {CUT} is not an int",
        ),
        (
            f"version: 1\nprofiles:\n  coding: {{soft_compact: {LONG}, hard_handoff: 2}}\n",
            f"3:26: profiles.coding.soft_compact: expected tokens (an integer) or a share like '70%', got string {CUT}",
        ),
        (f"version: 1\nname: *{LONG}\n", "2:7: YAML syntax error: found undefined alias " + CUT),
        (
            f"version: 1\nrules:\n  - id: {LONG}\n",
            f"3:9: rules[0].id: string should have at most 64 characters, got string {CUT}",
        ),
        (
            f"version: 1\nprofiles:\n  {LONG}: {{soft_compact: 1, hard_handoff: 2}}\n",
            "3:3: profiles."
            + "x" * 60
            + "…: string should have at most 64 characters, got string "
            + CUT,
        ),
        (
            f"version: 1\nprofiles:\n  9{LONG}: {{soft_compact: 1, hard_handoff: 2}}\n",
            "3:3: profiles.9"
            + "x" * 59
            + "…: string should have at most 64 characters, got string '9"
            + "x" * 59
            + "…'",
        ),
    ],
    ids=[
        "name",
        "unknown-key",
        "bool",
        "signal-default",
        "threshold",
        "alias",
        "rule-id",
        "profile-name",
        "bad-profile-name",
    ],
)
def test_messages_quote_a_short_excerpt(tmp_path: Path, text: str, expected: str) -> None:
    path = policy(tmp_path, text)
    assert decide_policy(path) == (2, f"{path}:{expected}\n")


def test_quote_cuts_every_kind_of_value() -> None:
    assert quote("abc") == "'abc'"
    assert quote("a" * 61) == "'" + "a" * 60 + "…'"
    assert quote("it's") == '"it\'s"'
    assert quote(12) == "12"
    assert quote(10**100) == "10000000000000000000… (101 digits)"
    assert quote(10**5000) == "an integer of more than 4300 digits"
    assert len(quote([list(range(100))] * 100)) <= 61
    assert len(quote({"k": "v" * 1000})) <= 61
    assert quote(None) == "None"


# -- A.2 and B.6: regular files within a size limit, read with a bound -----------------------


@dev_zero
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_is_no_policy(device: str) -> None:
    if not Path(device).exists():
        pytest.skip(f"no {device} here")
    assert decide_policy(device) == (2, f"{device}: is a device, not a policy file\n")


@fifo_only
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "p.yaml"
    os.mkfifo(fifo)
    assert decide_policy(fifo) == (2, f"{fifo}: is a FIFO (named pipe), not a policy file\n")
    state = invoke("decide", "--state", str(fifo))
    assert (state.exit_code, message_of(state.stderr)) == (
        2,
        f"{fifo}: is a FIFO (named pipe), not a state file\n",
    )
    linted = invoke("lint", str(fifo))
    assert (linted.exit_code, message_of(linted.stderr)) == (
        2,
        f"{fifo}: not a regular file or a folder\n",
    )
    suite = tmp_path / "t.test.yaml"
    os.mkfifo(suite)
    tested = invoke("test", str(suite))
    assert (tested.exit_code, message_of(tested.stderr)) == (
        2,
        f"{suite}: not a regular file or a folder\n",
    )
    scenario = invoke("run", "--scenario", str(fifo), "--memory", str(tmp_path / "mem"))
    assert scenario.exit_code == 2
    assert f"{fifo}: is a FIFO (named pipe), not a scenario file" in scenario.stderr


def test_a_directory_is_no_policy(tmp_path: Path) -> None:
    assert decide_policy(tmp_path) == (2, f"{tmp_path}: is a directory, not a policy file\n")
    state = invoke("decide", "--state", str(tmp_path))
    assert (state.exit_code, message_of(state.stderr)) == (
        2,
        f"{tmp_path}: is a directory, not a state file\n",
    )
    experiment = invoke("experiment", str(tmp_path))  # (its article too: once "a experiment")
    assert (experiment.exit_code, message_of(experiment.stderr)) == (
        2,
        f"{tmp_path}: is a directory, not an experiment file\n",
    )


@dev_zero
def test_extends_of_a_device_is_refused_at_the_extends_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLM_POLICY_EXTENDS_PATH", "/dev")  # the person allows the folder
    path = policy(tmp_path, "version: 1\nextends: /dev/zero\n")
    assert decide_policy(path) == (
        2,
        f"{path}:2:10: extends target /dev/zero: is a device, not a policy file\n",
    )
    linted = invoke("lint", str(path))
    assert linted.stdout == (
        f"{path}:2:10: error [extends] extends target /dev/zero: is a device, not a policy file\n"
    )


def _sparse(path: Path, size: int, head: bytes = b"version: 1\n") -> Path:
    with path.open("wb") as fh:
        fh.write(head)
        fh.truncate(size)
    return path


def test_size_limits(tmp_path: Path) -> None:
    big = _sparse(tmp_path / "p.yaml", MiB + 1)
    assert decide_policy(big) == (2, f"{big}: too large for a policy file (more than 1 MiB)\n")
    linted = invoke("lint", str(big))
    assert (
        linted.stdout
        == f"{big}:1:1: error [yaml-syntax] too large for a policy file (more than 1 MiB)\n"
    )
    parent = policy(tmp_path, "version: 1\nextends: ./p.yaml\n", "child.yaml")
    assert decide_policy(parent) == (
        2,
        f"{parent}:2:10: extends target {big}: too large for a policy file (more than 1 MiB)\n",
    )
    state = _sparse(tmp_path / "s.json", 64 * MiB + 1, b"{}")
    result = invoke("decide", "--state", str(state))
    assert (result.exit_code, message_of(result.stderr)) == (
        2,
        f"{state}: too large for a state file (more than 64 MiB)\n",
    )
    suite = _sparse(tmp_path / "t.test.yaml", 16 * MiB + 1)
    tested = invoke("test", str(suite))
    assert tested.exit_code == 1
    assert f"ERROR {suite}: too large for a policy test file (more than 16 MiB)" in tested.stdout
    scenario = _sparse(tmp_path / "sc.yaml", MiB + 1)
    ran = invoke("run", "--scenario", str(scenario), "--memory", str(tmp_path / "mem"))
    assert ran.exit_code == 2
    assert f"{scenario}: too large for a scenario file (more than 1 MiB)" in ran.stderr


def test_a_10000_case_test_file_is_within_the_limit() -> None:
    from clm_policy.formats.textio import TEST_FILE_LIMIT

    assert TEST_FILE_LIMIT >= 4 * 2_600_000  # benchmarks/bench_test.py writes ~2.6 MB


def test_standard_input_is_read_with_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    # `--state -`: the state's limit, lowered here so as not to send 64 MiB
    monkeypatch.setattr(textio, "STATE_LIMIT", 1000)
    stream = Endless()
    monkeypatch.setattr(sys, "stdin", SimpleNamespace(buffer=stream))
    with pytest.raises(InputError, match=r"too large for a state file \(more than 1000 bytes\)"):
        read_state_source("-")
    assert stream.given == 1001


# -- A.3: binary and non-UTF-8 files ---------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "where", "message"),
    [
        (b"version: 1\nname: a\0b\n", "2:8", "binary file (a NUL byte), not text"),
        (b"\0\x01\x02", "1:1", "binary file (a NUL byte), not text"),
        (b"version: 1\nname: caf\xe9\n", "2:10", "not UTF-8 text (byte 0xe9)"),
        (b"version: 1\n# \xc3\xa9t\xc3\xa9 \xff\n", "2:7", "not UTF-8 text (byte 0xff)"),
    ],
    ids=["nul", "binary", "latin-1", "after-utf8"],
)
def test_lint_refuses_binary_and_non_utf8_like_decide(
    tmp_path: Path, data: bytes, where: str, message: str
) -> None:
    path = tmp_path / "p.yaml"
    path.write_bytes(data)
    assert decide_policy(path) == (2, f"{path}:{where}: {message}\n")
    linted = invoke("lint", str(path))
    assert (linted.exit_code, linted.stdout) == (
        1,
        f"{path}:{where}: error [yaml-syntax] {message}\n",
    )
    assert message_of(linted.stderr) == "clm-policy lint: 1 error, 0 warnings in 1 file\n"


def test_a_control_character_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_bytes(b"version: 1\nname: a\x01b\n")
    assert decide_policy(path) == (
        2,
        f"{path}:2:8: YAML syntax error: control characters are not allowed ('\\x01')\n",
    )


def test_a_binary_test_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "t.test.yaml"
    path.write_bytes(b"version: 1\npolicy: default\0\n")
    result = invoke("test", str(path))
    assert result.exit_code == 1
    assert f"ERROR {path}:2:16: binary file (a NUL byte), not text" in result.stdout


# -- A.4: merge keys work, with positions -------------------------------------------------

MERGED = """\
version: 1
profiles:
  coding: &base
    soft_compact: 100
    hard_handoff: 200
  research:
    <<: *base
    hard_handoff: 300
rules:
  - &big
    id: big
    when: tokens.context >= profile.hard_handoff
    action: handoff
  - <<: *big
    id: bigger
    when: tokens.context >= 2 * profile.hard_handoff
"""


def test_merge_keys_merge(tmp_path: Path) -> None:
    path = policy(tmp_path, MERGED)
    result = invoke("decide", "-p", str(path), "-t", "250", "--profile", "research", "--explain")
    assert result.exit_code == 0, message_of(result.stderr)
    assert "action:    continue" in result.stdout
    assert f"big -> handoff: false  [no]  {path}:12:11" in result.stdout
    assert f"bigger -> handoff: false  [no]  {path}:16:11" in result.stdout
    linted = invoke("lint", "--strict", str(path))
    assert (linted.exit_code, linted.stdout) == (0, "")
    assert invoke("resolve", str(path)).exit_code == 0


def test_an_error_in_a_merged_value_is_located_where_it_is_written(tmp_path: Path) -> None:
    path = policy(tmp_path, MERGED.replace("soft_compact: 100", "soft_compact: lots"))
    expected = "profiles.{}.soft_compact: expected tokens (an integer) or a share like '70%', got string 'lots'"
    assert decide_policy(path) == (2, f"{path}:4:19: {expected.format('coding')}\n")
    linted = invoke("lint", str(path))
    assert linted.stdout == (
        f"{path}:4:19: error [schema] {expected.format('coding')}\n"
        f"{path}:4:19: error [schema] {expected.format('research')}\n"
    )
    typo = policy(tmp_path, MERGED.replace("tokens.context >= profile", "tokens.contxt >= profile"))
    assert decide_policy(typo) == (
        2,
        f"{typo}:12:11: unknown name 'tokens.contxt'; did you mean 'tokens.context'?\n",
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "version: 1\nprofiles:\n  coding: {<<: 5}\n",
            "3:16: '<<' merges mappings only",
        ),
        (
            "version: 1\nprofiles:\n  coding: {<<: *nope}\n",
            "3:16: YAML syntax error: found undefined alias 'nope'",
        ),
    ],
)
def test_a_bad_merge_is_refused_at_its_place(tmp_path: Path, text: str, expected: str) -> None:
    path = policy(tmp_path, text)
    assert decide_policy(path) == (2, f"{path}:{expected}\n")


# -- A.5: nesting depth, refused before the parser ----------------------------------------


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("version: 1\nx: " + "[" * 4000 + "]" * 4000 + "\n", "2:67"),
        ("version: 1\nx: " + "{a: " * 2000 + "}" * 2000 + "\n", "2:256"),
        ("version: 1\nx: " + "[{a: " * 2000 + "\n", "2:160"),
        ("version: 1\nx: " + "[a: " * 2000 + "\n", "2:130"),
        # "x:", then each line a sequence whose item is a mapping: 2 levels a line
        ("version: 1\nx:\n" + "".join("  " * i + "- a:\n" for i in range(1, 200)), "34:67"),
        ("version: 1\nx:\n" + "".join(" " * i + "a:\n" for i in range(1, 200)), "66:65"),
        ("version: 1\nx: " + "- " * 2000 + "a\n", "2:130"),
        ("- " * 2000 + "a\n", "1:129"),
    ],
    ids=[
        "flow-seq",
        "flow-map",
        "mixed",
        "seq-of-pairs",
        "block-seq",
        "block-map",
        "dashes-as-value",
        "dashes",
    ],
)
def test_deep_nesting_is_refused_where_it_crosses_the_limit(
    tmp_path: Path, text: str, where: str
) -> None:
    path = policy(tmp_path, text)
    assert decide_policy(path) == (2, f"{path}:{where}: nested more than 64 levels deep\n")
    linted = invoke("lint", str(path))
    assert linted.stdout == f"{path}:{where}: error [yaml-syntax] nested more than 64 levels deep\n"


@pytest.mark.parametrize(
    "text",
    [
        "version: 1\nrules:\n  - {id: a, when: 'max([1, [2]]) > [[[0]]]', action: compact}\n",
        "version: 1\ndescription: a " + "[" * 200 + "\n",
        "version: 1\ndescription: '" + "[{" * 200 + "'\n",
        'version: 1\ndescription: "' + "[{" * 200 + '"\n',
        "version: 1\ndescription: |\n" + "".join(f"  {'[' * 100}\n" for _ in range(5)),
        "version: 1\ndescription: >-\n  a\n" + "".join(f"  {'- ' * 100}\n" for _ in range(5)),
        "version: 1\n# " + "[" * 200 + "\ndescription: a # " + "{" * 200 + "\n",
        "version: 1\ndescription: it's [a {b\n",
    ],
    ids=[
        "in-expression",
        "plain",
        "single-quoted",
        "double-quoted",
        "literal",
        "folded",
        "comments",
        "apostrophe",
    ],
)
def test_brackets_in_text_are_not_nesting(tmp_path: Path, text: str) -> None:
    check_depth(text, "f")  # nothing refused
    parse_yaml(text, "f")


def _nesting(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max([_nesting(v) for v in value.values()], default=0)
    if isinstance(value, list):
        return 1 + max([_nesting(v) for v in value], default=0)
    return 0


def _estimate(text: str) -> int:
    for limit in range(100):
        try:
            check_depth(text, "f", limit)
        except InputError:
            continue
        return limit
    raise AssertionError("deeper than 100")


def test_the_depth_scan_counts_as_the_parser_nests() -> None:
    """On documents of every YAML style ruamel writes, the scan's depth is the true depth."""
    rng = random.Random(20240601)
    scalars = ["a", "it's [x] {y} # z", "x: y", "- q", 5, None, "|", "&a", '"d"', "a\nb [c", ""]

    def gen(depth: int) -> Any:
        if depth == 0 or rng.random() < 0.2:
            return rng.choice(scalars)
        if rng.random() < 0.5:
            return {
                f"k{i}{rng.choice(['', ' x', '#', '['])}": gen(depth - 1)
                for i in range(rng.randint(0, 3))
            }
        return [gen(depth - 1) for _ in range(rng.randint(0, 3))]

    for _ in range(300):
        data = {"root": gen(rng.randint(1, 10))}
        for flow in (False, True, None):
            yaml = YAML()
            yaml.default_flow_style = flow
            offset = rng.choice([0, 2])
            yaml.indent(mapping=rng.choice([2, 4]), sequence=offset + 2, offset=offset)
            out = io.StringIO()
            yaml.dump(data, out)
            assert _estimate(out.getvalue()) == _nesting(data), out.getvalue()


def test_shipped_yaml_is_far_from_the_limit() -> None:
    files = [*REPO.glob("policies/**/*.yaml"), *REPO.glob("clm_policy/scenarios/*.yaml")]
    assert files
    for path in files:
        assert _estimate(path.read_text()) <= 6, path


# -- A.6: duplicate keys name the first --------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "version: 1\nname: a\ndescription: x\n\nname: b\n",
            "5:1: duplicate key 'name' (first at line 2)",
        ),
        (
            "version: 1\nprofiles:\n  coding: {soft_compact: 1, hard_handoff: 2}\n  x: {}\n\n  x: {}\n",
            "6:3: duplicate key 'x' (first at line 4)",
        ),
        ("version: 1\nprofiles: {a: {}, 'a': {}}\n", "2:19: duplicate key 'a' (first at line 2)"),
        (f"version: 1\n{LONG}: 1\n{LONG}: 2\n", f"3:1: duplicate key {CUT} (first at line 2)"),
    ],
    ids=["top-level", "nested", "quoted", "long"],
)
def test_a_duplicate_key_names_its_first_line(tmp_path: Path, text: str, expected: str) -> None:
    path = policy(tmp_path, text)
    assert decide_policy(path) == (2, f"{path}:{expected}\n")


# -- B: SessionState input ----------------------------------------------------------------


def _state(**extra: Any) -> dict[str, Any]:
    return {"session_id": "s", **extra}


STATE_CASES = [
    (
        "400-digits",
        '{"session_id": "s", "step_index": ' + "9" * 400 + "}",
        "1:35: step_index: input should be less than or equal to 9223372036854775807, got integer 99999999999999999999… (400 digits)",
    ),
    (
        "5000-digits",
        '{"session_id": "s", "step_index": ' + "9" * 5000 + "}",
        "1:35: number out of range: an integer of 5000 digits (at most 4300)",
    ),
    (
        "ratio-overflow",
        '{"session_id": "s",\n "tokens": {"context_tokens": 1'
        + "0" * 330
        + ', "context_window": 3}}',
        "2:31: tokens.context_tokens: input should be less than or equal to 9223372036854775807, got integer 10000000000000000000… (331 digits)",
    ),
    (
        "window-0",
        '{"session_id": "s", "tokens": {"context_tokens": 5, "context_window": 0}}',
        "1:71: tokens.context_window: input should be greater than 0, got integer 0",
    ),
    (
        "nested-201",
        '{"session_id": "s", "goal": ' + "[" * 201 + "]" * 201 + "}",
        "1:92: nested more than 64 levels deep",
    ),
    (
        "nested-2001",
        '{"session_id": "s", "goal": ' + "[" * 2001 + "]" * 2001 + "}",
        "1:92: nested more than 64 levels deep",
    ),
    (
        "nested-objects",
        '{"session_id": "s", "goal": ' + '{"a": ' * 100 + "1" + "}" * 100 + "}",
        "1:407: nested more than 64 levels deep",
    ),
    (
        "duplicate-key",
        '{"session_id": "s",\n "session_id": "t"}',
        "2:2: duplicate key 'session_id'",
    ),
    (
        "duplicate-nested",
        '{"session_id": "s", "tokens": {"context_tokens": 1, "context_tokens": 2}}',
        "1:53: duplicate key 'context_tokens'",
    ),
    (
        "duplicate-escaped",
        '{"session_id": "s", "goal": "a", "go\\u0061l": "b"}',
        "1:34: duplicate key 'goal'",
    ),
    (
        "nan",
        '{"session_id": "s", "signals": {"degradation": NaN}}',
        "1:48: NaN is not a JSON number",
    ),
    (
        "infinity",
        '{"session_id": "s", "signals": {"x": Infinity}}',
        "1:38: Infinity is not a JSON number",
    ),
    (
        "minus-infinity",
        '{"session_id": "s",\n  "signals": {"x": -Infinity}}',
        "2:20: -Infinity is not a JSON number",
    ),
    (
        "float-overflow",
        '{"session_id": "s", "signals": {"x": 1e400}}',
        "1:38: number out of range: '1e400' is beyond a float's range",
    ),
]


@pytest.mark.parametrize(
    "args",
    [[], ["--explain"], ["--format", "json"], ["--explain", "--format", "json"]],
    ids=["plain", "explain", "json", "explain-json"],
)
@pytest.mark.parametrize(
    ("content", "expected"), [c[1:] for c in STATE_CASES], ids=[c[0] for c in STATE_CASES]
)
def test_bad_state_is_bad_input(
    tmp_path: Path, content: str, expected: str, args: list[str]
) -> None:
    path = tmp_path / "state.json"
    path.write_text(content)
    result = invoke("decide", "--state", str(path), *args)
    assert result.exit_code == 2, message_of(result.stderr)
    if "--format" not in args:
        assert (result.stdout, message_of(result.stderr)) == ("", f"{path}:{expected}\n")
    else:  # the error may come as one JSON object on standard output
        shown = json.dumps(json.loads(result.stdout), ensure_ascii=False) if result.stdout else ""
        assert expected.split(": ", 1)[1] in shown + result.stderr


@pytest.mark.parametrize(
    ("content", "expected"), [c[1:] for c in STATE_CASES[:8]], ids=[c[0] for c in STATE_CASES[:8]]
)
def test_bad_state_on_stdin(content: str, expected: str) -> None:
    result = invoke("decide", "--state", "-", stdin=content)
    assert (result.exit_code, result.stdout, message_of(result.stderr)) == (
        2,
        "",
        f"<stdin>:{expected}\n",
    )


def test_bad_state_for_compact_writes_nothing(tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    assert invoke("init", str(memory)).exit_code == 0
    before = sorted(p.relative_to(memory) for p in memory.rglob("*") if ".git" not in p.parts)
    path = tmp_path / "state.json"
    path.write_text('{"session_id": "s", "signals": {"degradation": NaN}}')
    for command in ("compact", "handoff"):
        result = invoke(command, "--memory", str(memory), "--state", str(path))
        assert (result.exit_code, message_of(result.stderr)) == (
            2,
            f"{path}:1:48: NaN is not a JSON number\n",
        )
    assert (
        sorted(p.relative_to(memory) for p in memory.rglob("*") if ".git" not in p.parts) == before
    )


def test_a_deep_state_never_echoes_itself(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text(
        json.dumps({"session_id": SECRET, "goal": SECRET})[:-1]
        + ', "constraints": '
        + "[" * 201
        + "]" * 201
        + "}"
    )
    result = invoke("decide", "--state", str(path))
    assert result.exit_code == 2
    assert SECRET not in result.stderr
    assert message_of(result.stderr).endswith(": nested more than 64 levels deep\n")


def test_a_long_bad_value_is_quoted_short(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text(json.dumps(_state(status=SECRET * 20)))
    result = invoke("decide", "--state", str(path))
    assert result.exit_code == 2
    assert message_of(result.stderr) == (
        f"{path}:1:31: status: input should be 'running', 'waiting', 'phase_boundary', "
        f"'completed', 'failed' or 'blocked', got string '{(SECRET * 2)[:60]}…'\n"
    )
    long_signal = tmp_path / "signal.json"
    long_signal.write_text(
        json.dumps(_state(signals={SECRET * 20: True, "degradation": SECRET * 20}))
    )
    result = invoke("decide", "--state", str(long_signal))
    assert result.exit_code == 2
    assert SECRET * 2 not in result.stderr


def test_the_error_in_a_big_state_is_found_at_its_place() -> None:
    messages = [{"role": "user", "content": f"message {i} " * 20} for i in range(3000)]
    messages[2999]["role"] = "robot"
    text = json.dumps(_state(messages=messages), indent=1)
    with pytest.raises(StateError) as caught:
        parse_state(text, "s.json")
    line = text[: text.index('"robot"')].count("\n") + 1
    assert str(caught.value) == (
        f"s.json:{line}:12: messages[2999].role: input should be 'system', 'user', "
        "'assistant' or 'tool', got string 'robot'"
    )


def test_many_errors_report_the_first() -> None:
    messages = [{"role": "robot", "content": "x"} for _ in range(2000)]
    text = json.dumps(_state(messages=messages))
    with pytest.raises(StateError) as caught:
        parse_state(text, "s.json")
    assert str(caught.value).startswith("s.json:1:43: messages[0].role:")


def test_json_positions_equal_the_yaml_loaders() -> None:
    """JsonDocument locates every path, key or value, where the YAML loader (which reads JSON
    too, slowly) does."""
    rng = random.Random(7)
    leaves = [1, -2.5, "s", 'q"uo\\te', "ünï", None, True, "a\nb", "", 10**20]

    def gen(depth: int) -> Any:
        roll = rng.random()
        if depth == 0 or roll < 0.3:
            return rng.choice(leaves)
        if roll < 0.65:
            keys = ["a", "é", "k k", 'x"y', "", "1"]
            return {f"{rng.choice(keys)}{i}": gen(depth - 1) for i in range(rng.randint(0, 4))}
        return [gen(depth - 1) for _ in range(rng.randint(0, 4))]

    for _ in range(60):
        data = {"root": gen(5)}
        for indent in (None, 1, 4):
            text = " \n" + json.dumps(data, indent=indent, ensure_ascii=rng.random() < 0.5)
            fast, slow = JsonDocument("f", text, data), parse_yaml(text, "f")
            for path in [*data_paths(data), ("root", "missing"), ("nope",)]:
                for key in (False, True):
                    assert fast.location(path, key=key) == slow.location(path, key=key), path


def test_a_test_file_given_with_nan_is_an_error_of_its_case(tmp_path: Path) -> None:
    path = tmp_path / "t.test.yaml"
    path.write_text(
        "version: 1\npolicy: default\ncases:\n"
        "  - name: nan\n    given: {signals: {degradation: .nan}}\n    expect: {action: continue}\n"
        "  - name: huge\n    given: {tokens: {context_tokens: "
        + "9"
        * 400
        + ", context_window: 3}}\n"
        "    expect: {action: continue}\n"
    )
    result = invoke("test", str(path))
    assert result.exit_code == 1
    assert (
        f"ERROR {path}:5:36: nan: given: signals.degradation: input should be a finite number, got number nan"
        in result.stdout
    )
    assert (
        f"ERROR {path}:8:38: huge: given: tokens.context_tokens: input should be less than or equal to 9223372036854775807"
        in result.stdout
    )


def test_a_scenario_with_a_huge_step_is_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "sc.yaml"
    path.write_text(
        "version: 1\ngoal: g\ncontext_window: 3\nsteps:\n  - say: hi\n    tokens: "
        + "9" * 400
        + "\n"
    )
    result = invoke("run", "--scenario", str(path), "--memory", str(tmp_path / "mem"))
    assert result.exit_code == 2
    assert (
        f"{path}:6:13: steps[0].tokens: input should be less than or equal to 1000000000"
        in result.stderr
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--tokens", "9" * 30], "is not in the range 0<=x<=9223372036854775807"),
        (["--tokens", "5", "--window", "9" * 30], "is not in the range 1<=x<=9223372036854775807"),
        (
            ["--tokens", "5", "--signal", "degradation=1e400"],
            "clm-policy decide: --signal degradation: number out of range: '1e400'",
        ),
        (
            ["--tokens", "5", "--signal", "degradation=NaN"],
            "clm-policy: signal 'degradation' must be a bool, got 'NaN'",
        ),
    ],
)
def test_tokens_shortcut_bounds(args: list[str], expected: str) -> None:
    result = invoke("decide", *args)
    assert result.exit_code == 2
    assert expected in result.stderr


# -- C.1: a report into a missing folder ---------------------------------------------------


@pytest.mark.parametrize("command", [["lint", "--format", "sarif"], ["test", "--format", "junit"]])
def test_output_into_a_missing_folder_is_bad_input(tmp_path: Path, command: list[str]) -> None:
    out = tmp_path / "missing" / "deeper" / "report.out"
    result = invoke(*command, str(REPO / "policies"), "--output", str(out))
    assert (result.exit_code, result.stdout) == (2, "")
    assert (
        message_of(result.stderr) == f"{out}: cannot write the output: No such file or directory\n"
    )
    assert not (tmp_path / "missing").exists()


def test_a_key_that_is_a_list_or_mapping_is_refused(tmp_path: Path) -> None:
    path = policy(tmp_path, "version: 1\nguards:\n  ? [compact]\n  : []\n")
    assert decide_policy(path) == (
        2,
        f"{path}:3:5: a key must be a string, not a mapping or a list\n",
    )
    nested = policy(tmp_path, "version: 1\nguards:\n  ? {a: [b]}\n  : []\n", "q.yaml")
    linted = invoke("lint", str(nested))
    assert linted.stdout == (
        f"{nested}:3:5: error [yaml-syntax] a key must be a string, not a mapping or a list\n"
    )


@pytest.mark.parametrize(
    "args",
    [
        ["decide", "-p", "x" * 5000 + ".yaml", "-t", "1"],
        ["decide", "-p", "x" * 5000, "-t", "1"],
        ["decide", "--state", "x" * 5000],
        ["lint", "x" * 5000],
        ["test", "x" * 5000],
        ["lint", "policies", "--output", "x" * 5000 + "/r.sarif"],
    ],
    ids=["policy-file", "policy-name", "state", "lint", "test", "output"],
)
def test_a_name_too_long_for_the_system_is_bad_input(
    monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    monkeypatch.chdir(REPO)
    result = invoke(*args)
    assert result.exit_code == 2, message_of(result.stderr)
    assert "internal error" not in result.stderr
