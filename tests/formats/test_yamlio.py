"""The one YAML reading layer: libyaml's data and positions agree with ruamel's pure-Python
parser, errors read the same for every kind of file, and a streamed sequence is never held."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from clm_policy.base.errors import InputError, Location
from clm_policy.formats import yamlbuild, yamlio
from clm_policy.formats.yamlio import PathKey, YamlStream, load_yaml, parse_yaml

from conftest import POLICIES, REPO, data_paths

FIXTURES = Path(__file__).parents[1] / "fixtures"
SAMPLES = sorted(
    {
        *POLICIES.glob("**/*.yaml"),
        *FIXTURES.glob("tester/*.yaml"),
        *(p for p in FIXTURES.glob("lint/*.yaml") if p.name != "syntax.yaml"),
        *REPO.glob("clm_policy/scenarios/*.yaml"),
    }
)

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
timestamp: 2024-01-01
block: |
  two
  lines
folded: >-
  one
  line
"""


def _reference(text: str) -> tuple[Any, dict[tuple[tuple[PathKey, ...], bool], tuple[int, int]]]:
    """Data (round-trip loader) and positions (pure-Python composer) of ruamel, the parser the
    project used before libyaml: each path's (line, col), of its value and of its key."""
    data = _plain(YAML(typ="rt", pure=True).load(text))
    where: dict[tuple[tuple[PathKey, ...], bool], tuple[int, int]] = {}

    def walk(node: Node, path: tuple[PathKey, ...]) -> None:
        where.setdefault((path, False), (node.start_mark.line + 1, node.start_mark.column + 1))
        if isinstance(node, SequenceNode):
            for i, item in enumerate(node.value):
                where[(*path, i), True] = (item.start_mark.line + 1, item.start_mark.column + 1)
                walk(item, (*path, i))
        elif isinstance(node, MappingNode):
            for key, value in node.value:
                if isinstance(key, ScalarNode) and key.value != "<<":
                    at = (key.start_mark.line + 1, key.start_mark.column + 1)
                    where.setdefault(((*path, key.value), True), at)
                    walk(value, (*path, key.value))
            for key, value in node.value:  # merged keys: where they are written
                if isinstance(key, ScalarNode) and key.value == "<<":
                    for source in value.value if isinstance(value, SequenceNode) else [value]:
                        walk(source, path)

    root = YAML(typ="rt", pure=True).compose(text)
    if root is not None:
        walk(root, ())
    return data, where


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    for kind in (int, float, str):
        if isinstance(value, kind):
            return kind(value)
    return str(value)  # a timestamp, kept as written by this layer


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_same_data_and_positions_as_ruamel(path: Path) -> None:
    text = path.read_text()
    doc = parse_yaml(text, "f")
    data, where = _reference(text)
    assert doc.root == data
    for path_ in data_paths(doc.root):
        line, col = where[(path_, False)]
        assert doc.location(path_) == Location("f", line, col), path_
        if path_:
            kline, kcol = where[(path_, True)]
            assert doc.location(path_, key=True) == Location("f", kline, kcol), path_


def test_scalars_resolve_as_yaml_1_2() -> None:
    data = parse_yaml(SCALARS, "f").root
    assert data["yes_is_a_string"] == "yes"
    assert data["on_too"] == "on"
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
    assert (data["float"], data["exp"], data["inf"]) == (2.5, 1000.0, float("inf"))
    assert (data["quoted_int"], data["explicit_str"], data["explicit_int"]) == ("42", "5", 5)
    assert data["timestamp"] == "2024-01-01"  # data with JSON semantics: no dates
    assert (data["block"], data["folded"]) == ("two\nlines\n", "one line")


def test_styles_and_locations() -> None:
    doc = parse_yaml(SCALARS, "f")
    assert [doc.style([k]) for k in ("plain", "quoted_int", "single", "block", "folded")] == [
        "",
        '"',
        "'",
        "|",
        ">",
    ]
    assert doc.style(["missing"]) is None
    assert doc.location(["quoted_int"]) == Location("f", 18, 13)
    assert doc.location(["quoted_int"], key=True) == Location("f", 18, 1)
    assert doc.location(["quoted_int", "deeper"]) == Location("f", 18, 13)
    assert doc.location(["nowhere", 3]) == Location("f", 1, 1)


def test_merge_keys_merge_and_keep_their_place() -> None:
    doc = parse_yaml("b: &b {x: 1, y: 2}\nc: {z: 0, <<: *b, y: 3}\n", "f")
    assert list(doc.root["c"].items()) == [("z", 0), ("y", 3), ("x", 1)]
    assert doc.location(["c", "x"]) == Location("f", 1, 11)
    assert doc.location(["c", "x"], key=True) == Location("f", 1, 8)
    assert doc.location(["c", "y"]) == Location("f", 2, 22)
    listed = parse_yaml("a: &a {p: 1}\nb: &b {q: 2, p: 3}\nc: {<<: [*a, *b]}\n", "f").root
    assert listed["c"] == {"p": 1, "q": 2}
    # only a plain '<<' key merges: a quoted one is a key, a '<<' value a string
    other = parse_yaml("x: &x {c: 1}\nd: {'<<': *x}\ne: <<\n", "f").root
    assert (other["d"], other["e"]) == ({"<<": {"c": 1}}, "<<")


def test_the_pure_python_parser_gives_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (POLICIES / "default.yaml").read_text() + "\n" + SCALARS.replace("plain", "other")
    fast = parse_yaml(text, "f")
    monkeypatch.setattr(yamlbuild, "_CPARSER", None)
    pure = parse_yaml(text, "f")
    assert pure.root == fast.root
    for where in data_paths(fast.root):
        if fast.node(where) is not None:  # an empty value: libyaml places it after the colon
            assert pure.location(where) == fast.location(where)
            assert pure.style(where) == fast.style(where)


BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
    for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (BOMB, "f:1:1: document too large: aliases expand it by more than 200000 nodes"),
        ("a: &a [*a]\n", "f:1:8: an alias refers to a node that contains it"),
        ("a: " + "[" * 120 + "]" * 120 + "\n", "f:1:67: nested more than 64 levels deep"),
        # libyaml's own composer recurses in C: this deep, it crashed the process
        ("a: " + "[" * 1_000_000 + "]" * 1_000_000, "f:1:67: nested more than 64 levels deep"),
        # nesting is reported before anything else wrong, where the scan places it
        ("a: b\nx: " + "- " * 100 + "a\n", "f:2:130: nested more than 64 levels deep"),
        ("a: *nowhere\n", "f:1:4: YAML syntax error: found undefined alias 'nowhere'"),
        ("a: [1, 2]\nb: {<<: *x}\n", "f:2:9: YAML syntax error: found undefined alias 'x'"),
        # an alias is located where its anchor is written, like any value
        ("a: &a 1\nb: {<<: *a}\n", "f:1:4: '<<' merges mappings only"),
        ("a: 1\nb: {<<: [{c: 1}, 2]}\n", "f:2:18: '<<' merges mappings only"),
        ("{a: 1}: x\n", "f:1:1: a key must be a string, not a mapping or a list"),
        ("a: &k [1]\n*k : x\n", "f:1:4: a key must be a string, not a mapping or a list"),
        ("7: x\n", "f:1:1: a key must be a string, got '7'"),
        ("a: 1\nb: 2\na: 3\n", "f:3:1: duplicate key 'a' (first at line 1)"),
        ("a: !custom 1\n", "f:1:4: unsupported YAML tag '!custom'"),
        ("a: !custom [1]\n", "f:1:4: unsupported YAML tag '!custom'"),
        ("a: !!map [1]\n", "f:1:4: unsupported YAML tag 'tag:yaml.org,2002:map'"),
        ("a: !!int x\n", "f:1:4: cannot read 'x' as a YAML int"),
        ("a: " + "9" * 5000 + "\n", "f:1:4: YAML syntax error: integer too long (5000 digits)"),
        ("a: b\n\x01", "f:2:1: YAML syntax error: control characters are not allowed ('\\x01')"),
        ("é: b\n\x01", "f:2:1: YAML syntax error: control characters are not allowed ('\\x01')"),
        (
            "a: 1\n---\nb: 2\n",
            "f:2:1: YAML syntax error: but found another document (expected a single document "
            "in the stream)",
        ),
        (
            "a: [1\n",
            "f:2:1: YAML syntax error: did not find expected ',' or ']' (while parsing a flow "
            "sequence that starts at 1:4)",
        ),
        # a '?' inside a flow collection: libyaml refuses it, so every reader does (issue 26: a
        # second, hand-written reader once read these as strings)
        (
            "a: [x?y]\n",
            "f:1:6: YAML syntax error: did not find expected ',' or ']' (while parsing a flow "
            "sequence)",
        ),
        (
            "{b: c?}\n",
            "f:1:6: YAML syntax error: did not find expected ',' or '}' (while parsing a flow "
            "mapping)",
        ),
    ],
)
def test_refused(text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_yaml(text, "f")
    assert str(caught.value) == message
    assert caught.value.check == "yaml-syntax"


def test_a_long_token_is_cut_short() -> None:
    with pytest.raises(InputError) as caught:
        parse_yaml(f"a: *{'x' * 500}\n", "f")
    assert (
        str(caught.value) == "f:1:4: YAML syntax error: found undefined alias '" + "x" * 60 + "…'"
    )


def test_the_collector_is_paused_only_while_parsing() -> None:
    assert gc.isenabled()
    parse_yaml("a: 1\n", "f")
    assert gc.isenabled()
    gc.disable()
    try:
        parse_yaml("a: 1\n", "f")
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(InputError):
        parse_yaml("a: [\n", "f")
    assert gc.isenabled()


@pytest.mark.parametrize("levels", [120, 600])
def test_the_pure_python_parser_refuses_deep_nesting_too(
    monkeypatch: pytest.MonkeyPatch, levels: int
) -> None:
    monkeypatch.setattr(yamlbuild, "_CPARSER", None)
    with pytest.raises(InputError, match="f:1:67: nested more than 64 levels deep"):
        parse_yaml("a: " + "[" * levels + "]" * levels, "f")


def test_a_file_is_parsed_once_per_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    real = yamlio.parse_yaml

    def counting(text: str, file: str) -> yamlio.YamlDocument:
        parsed.append(file)
        return real(text, file)

    monkeypatch.setattr(yamlio, "parse_yaml", counting)
    path = tmp_path / "p.yaml"
    path.write_text("version: 1\n")
    first = load_yaml(path, "p.yaml")
    assert load_yaml(path, "p.yaml") is first
    assert parsed == ["p.yaml"]
    path.write_text("version: 2\n")  # changed: read anew
    assert load_yaml(path, "p.yaml").root == {"version": 2}
    assert load_yaml(path, "other name").root == {"version": 2}
    assert parsed == ["p.yaml", "p.yaml", "other name"]


SUITE = """\
version: 1
policy: default
cases:
  - &first
    name: a
    expect: {action: continue}
  - <<: *first
    name: b
  - {name: c, expect: {action: compact}}
"""


def test_a_stream_hands_out_items_with_the_positions_of_the_whole() -> None:
    whole = parse_yaml(SUITE, "f")
    stream = YamlStream(SUITE, "f", "cases")
    seen = []
    for i, item in enumerate(stream.items()):
        if i == 0:
            assert stream.header.root == {"version": 1, "policy": "default"}
        assert item.root == whole.root["cases"][i]
        for path in data_paths(item.root):
            full = ("cases", i, *path)
            assert item.location(path) == whole.location(full)
            assert item.location(path, key=True) == whole.location(full, key=True)
        seen.append(item.root["name"])
    assert seen == ["a", "b", "c"]
    assert stream.header.root == {"version": 1, "policy": "default", "cases": []}
    assert stream.header.location(["cases"]) == whole.location(["cases"])
    assert not stream.late


def test_a_stream_says_when_a_top_level_key_comes_late() -> None:
    stream = YamlStream("version: 1\ncases:\n  - x\nprofile: p\n", "f", "cases")
    assert [item.root for item in stream.items()] == ["x"]
    assert stream.late
    assert stream.header.root == {"version": 1, "cases": [], "profile": "p"}


@pytest.mark.parametrize(
    "text",
    [
        "- a\n- b\n",
        "cases: 5\n",
        "other: [1, 2]\n",
        "a: {cases: [1]}\n",
        "cases: &c [1, 2]\nb: *c\n",  # an alias may name it: built whole
        "a: &c [1, 2]\ncases: *c\n",
    ],
)
def test_nothing_streams_but_a_top_level_sequence(text: str) -> None:
    stream = YamlStream(text, "f", "cases")
    assert list(stream.items()) == []
    assert stream.header == parse_yaml(text, "f")


def test_a_stream_refuses_what_parse_refuses() -> None:
    stream = YamlStream(SUITE + "  - {name: d}\n  - {name: d, name: e}\n", "f", "cases")
    items = stream.items()
    assert [next(items).root["name"] for _ in range(4)] == ["a", "b", "c", "d"]
    with pytest.raises(InputError, match="f:11:15: duplicate key 'name' \\(first at line 11\\)"):
        next(items)
    with pytest.raises(InputError, match="f:1:1: empty file: expected a YAML mapping"):
        list(YamlStream("# nothing\n", "f", "cases").items())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (  # a key indented deeper than the one above it goes on the value above
            "rules:\n  - id: x\n     when: a\n",
            "f:3:10: YAML syntax error: mapping values are not allowed in this context; a ': ' "
            "inside a value: quote the value, or indent this key as the keys above it",
        ),
        (
            "because: ratio: {x}\n",
            "f:1:15: YAML syntax error: mapping values are not allowed in this context; a ': ' "
            "inside a value: quote the value, or indent this key as the keys above it",
        ),
        (
            "rules:\n  - id: x\n    when: a\n   action: b\n",
            "f:4:4: YAML syntax error: did not find expected '-' indicator (while parsing a block "
            "collection that starts at 2:3); is this line indented as the items above it?",
        ),
        (  # an expression that starts with a quote
            'rule:\n  when: "x" == status\n',
            "f:2:13: YAML syntax error: did not find expected key (while parsing a block "
            "mapping); a value that starts with a quote ends where the quote closes: write the "
            "whole value inside quotes of the other kind",
        ),
        (  # a quote left open swallows lines up to the next quote
            'a:\n  b: "x > 1\n  c: 2\n  d: "y"\n',
            "f:4:7: YAML syntax error: did not find expected key (while parsing a block mapping "
            "that starts at 2:3); is this line indented as the keys above it, and is every quote "
            "above it closed?",
        ),
        (
            "a: 1\nb: 'x > 1\n",
            "f:3:1: YAML syntax error: found unexpected end of stream (while scanning a quoted "
            "scalar that starts at 2:4); a quote is never closed",
        ),
        (
            "because: {ratio:.0%} full\n",
            "f:1:16: YAML syntax error: found unexpected ':' (while scanning a plain scalar); a "
            "value that starts with '{' or '[' is a YAML mapping or list: quote it",
        ),
    ],
)
def test_a_syntax_error_says_what_was_likely_meant(text: str, message: str) -> None:
    """The mistakes of someone new to YAML, each with what libyaml says and what to do."""
    with pytest.raises(InputError) as caught:
        parse_yaml(text, "f")
    assert str(caught.value) == message
