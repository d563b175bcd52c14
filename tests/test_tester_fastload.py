"""The fast YAML loader of test files agrees with the round-trip loader, and refuses bombs."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clm_policy.errors import InputError
from clm_policy.tester import yamlnodes
from clm_policy.tester.fastload import parse_fast
from clm_policy.yamlio import PathKey, parse_yaml, to_plain

from conftest import POLICIES

FIXTURES = Path(__file__).parent / "fixtures" / "tester"
SAMPLES = sorted(POLICIES.glob("tests/*.test.yaml")) + sorted(FIXTURES.glob("*.yaml"))

SCALARS = """\
plain: text
yes_is_a_string: yes
on_too: on
true_is: true
False_is: False
null_is: null
tilde: ~
empty:
int: 42
negative: -7
underscored: 1_000
hex: 0x1F
octal: 0o17
leading_zero: 017
float: 2.5
exp: 1e3
inf: .inf
quoted_int: "42"
single: 'x'
explicit_str: !!str 5
explicit_int: !!int "5"
block: |
  two
  lines
folded: >-
  one
  line
"""


def _paths(value: Any, prefix: tuple[PathKey, ...] = ()) -> Iterator[tuple[PathKey, ...]]:
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_same_data_and_positions_as_the_round_trip_loader(path: Path) -> None:
    text = path.read_text()
    fast, slow = parse_fast(text, "f"), parse_yaml(text, "f")
    assert fast.root == to_plain(slow.root)
    for where in _paths(fast.root):
        assert fast.location(where) == slow.location(where), where
        assert fast.location(where, key=True) == slow.location(where, key=True), where


def test_scalars_resolve_as_yaml_1_2() -> None:
    data = parse_fast(SCALARS, "f").root
    slow = to_plain(parse_yaml(SCALARS, "f").root)
    assert {k: v for k, v in data.items() if k != "explicit_str"} == {
        k: v
        for k, v in slow.items()
        if k != "explicit_str"  # the round-trip keeps a TaggedScalar
    }
    assert data["yes_is_a_string"] == "yes"
    assert (data["true_is"], data["False_is"], data["null_is"], data["empty"]) == (
        True,
        False,
        None,
        None,
    )
    assert (data["hex"], data["octal"], data["leading_zero"], data["underscored"]) == (
        31,
        15,
        17,
        1000,
    )
    assert data["inf"] == float("inf")
    assert (data["explicit_str"], data["explicit_int"]) == ("5", 5)


def test_timestamps_stay_strings() -> None:
    assert parse_fast("when: 2024-01-01\n", "f").root == {"when": "2024-01-01"}


def test_the_pure_python_parser_gives_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (
        (POLICIES / "tests" / "option_b.test.yaml").read_text()
        + "\n"
        + SCALARS.replace("plain", "other")
    )
    fast = parse_fast(text, "f")
    monkeypatch.setattr(yamlnodes, "_COMPOSER", None)
    pure = parse_fast(text, "f")
    assert pure.root == fast.root
    for where in _paths(fast.root):
        if fast.node(where) is not None:  # an empty value: libyaml places it after the colon
            assert pure.location(where) == fast.location(where)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "a: &a [x, x, x, x, x, x, x, x, x]\n"
            + "".join(
                f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
                for p, c in zip("abcdefgh", "bcdefghi", strict=True)
            ),
            "f:1:1: document too large once aliases are expanded",
        ),
        ("a: &a [*a]\n", "f:1:4: an alias refers to a node that contains it"),
        ("a: " + "[" * 120 + "]" * 120 + "\n", "f:1:102: nested more than 100 levels deep"),
        # libyaml's composer recurses in C: this deep, unguarded, it crashes the process
        ("a: " + "[" * 1_000_000 + "]" * 1_000_000, "f:1:102: nested more than 100 levels deep"),
        ("a: *nowhere\n", "f:1:4: YAML syntax error: found undefined alias"),
        ("a: [1, 2]\nb: {<<: *x}\n", "f:2:9: YAML syntax error: found undefined alias"),
        ("a: &a 1\nb: {<<: *a}\n", "f:1:4: '<<' merges mappings only"),
        ("{a: 1}: x\n", "f:1:1: a key must be a string"),
        ("a: !custom 1\n", "f:1:4: unsupported YAML tag '!custom'"),
        ("a: !custom [1]\n", "f:1:4: unsupported YAML tag '!custom'"),
        ("a: b\n\x01", "f:2:1: YAML syntax error: control characters are not allowed ('\\x01')"),
    ],
)
def test_refused(text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_fast(text, "f")
    assert str(caught.value) == message


def test_the_collector_is_paused_only_while_parsing() -> None:
    assert gc.isenabled()
    parse_fast("a: 1\n", "f")
    assert gc.isenabled()
    gc.disable()
    try:
        parse_fast("a: 1\n", "f")
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(InputError):
        parse_fast("a: [\n", "f")
    assert gc.isenabled()


@pytest.mark.parametrize("levels", [120, 600])
def test_the_pure_python_parser_refuses_deep_nesting_too(
    monkeypatch: pytest.MonkeyPatch, levels: int
) -> None:
    monkeypatch.setattr(yamlnodes, "_COMPOSER", None)
    with pytest.raises(InputError, match="nested more than 100 levels deep"):
        parse_fast("a: " + "[" * levels + "]" * levels, "f")
