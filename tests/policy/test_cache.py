"""The compiled-policy cache: hits only when every file of the extends chain is unchanged;
an entry is data that is checked again on load, in a directory private to its user."""

from __future__ import annotations

import ast
import json
import os
import pickle
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from clm_policy import ClmError, PolicyError, SessionState, TokenSnapshot
from clm_policy.base.record import Record
from clm_policy.models.enums import TaskStatus
from clm_policy.models.state_io import state_from
from clm_policy.policy import cache
from clm_policy.policy.cache import load_policy_cached
from clm_policy.policy.compile import load_policy
from clm_policy.policy.engine import Guard, Policy, Profile, Rule, Signal

from conftest import REPO

Write = Callable[[str, str], Path]


def _entries(home: Path) -> list[Path]:
    """The compiled policies in the cache (not the policy validator kept beside them, which a
    process writes or not depending on whether an earlier test in it loaded one)."""
    return sorted(p for p in home.glob("*.json") if not p.name.startswith("policy-check-"))


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "cache"
    monkeypatch.setenv("CLM_POLICY_CACHE_DIR", str(home))
    return home


def test_hit_and_same_decisions(cache_home: Path) -> None:
    first = load_policy_cached("default")
    assert len(_entries(cache_home)) == 1
    second = load_policy_cached("default")
    assert second is not first
    assert [r.id for r in second.rules] == [r.id for r in load_policy("default").rules]
    s = SessionState(session_id="s", tokens=TokenSnapshot(context_tokens=300_000))
    assert second.decide(s) == first.decide(s)


def test_edit_of_parent_is_a_miss(
    cache_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = tmp_path / "parent.yaml"
    child = tmp_path / "child.yaml"
    parent.write_text("version: 1\nprofiles:\n  coding: {soft_compact: 10, hard_handoff: 20}\n")
    child.write_text("version: 1\nextends: parent.yaml\n")
    assert load_policy_cached(child).profiles["coding"].soft_compact.tokens == 10
    parent.write_text("version: 1\nprofiles:\n  coding: {soft_compact: 11, hard_handoff: 20}\n")
    assert load_policy_cached(child).profiles["coding"].soft_compact.tokens == 11
    child.write_text("version: 1\nextends: parent.yaml\nprofiles:\n  coding: {soft_compact: 12}\n")
    assert load_policy_cached(child).profiles["coding"].soft_compact.tokens == 12


def test_a_process_decodes_an_unchanged_entry_once(cache_home: Path, tmp_path: Path) -> None:
    """A process that loads the policy on every call (the MCP server) compiles a cached entry's
    expressions once: the same policy while the entry and every file of its chain are
    unchanged; an edit of the parent is still a miss."""
    parent = tmp_path / "parent.yaml"
    child = tmp_path / "child.yaml"
    parent.write_text("version: 1\nprofiles:\n  coding: {soft_compact: 10, hard_handoff: 20}\n")
    child.write_text("version: 1\nextends: parent.yaml\n")
    load_policy_cached(child)  # compiled, and the entry written
    cached = load_policy_cached(child)
    assert load_policy_cached(child) is cached
    parent.write_text("version: 1\nprofiles:\n  coding: {soft_compact: 11, hard_handoff: 20}\n")
    edited = load_policy_cached(child)
    assert edited.profiles["coding"].soft_compact.tokens == 11
    assert load_policy_cached(child) is not cached


def test_corrupt_entry_and_unwritable_dir_fall_back(
    cache_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_policy_cached("default")
    (entry,) = _entries(cache_home)
    entry.write_bytes(b"not a pickle")
    assert load_policy_cached("default").name == "default"
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("CLM_POLICY_CACHE_DIR", str(blocker / "sub"))  # cannot be created
    assert load_policy_cached("default").name == "default"


def test_errors_are_not_cached(cache_home: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\n")
    with pytest.raises(PolicyError):
        load_policy_cached(bad)
    assert _entries(cache_home) == []


def test_disabled(monkeypatch: pytest.MonkeyPatch, cache_home: Path) -> None:
    monkeypatch.setenv("CLM_POLICY_NO_CACHE", "1")
    assert cache.cache_dir() is None
    load_policy_cached("default")
    assert not cache_home.exists()


# -- the entry is data: rebuilt, re-checked, and never able to run code ----------------------

EXAMPLES = sorted((REPO / "policies" / "examples").glob("*.yaml"))

RICH = """
version: 1
name: rich
description: every kind of field the cache must carry
extends: default
default_profile: research
defaults: {context_window: 200000}
profiles:
  research: {soft_compact: 70%, hard_handoff: 85%, description: thinks long}
  tiny: {soft_compact: 10, hard_handoff: 20, context_window: null, retain_recent_messages: 2}
models: {claude-sonnet-4: 200000, claude: 100000}
prices: {claude-sonnet-4: {input: 3, output: 15.5}, default: {input: 0.25, output: 1.25}}
signals:
  open_calls: {type: int, default: 0}
  ratio_floor: {type: float, default: 0.25, description: a float signal}
  note: {type: str, default: "n/a"}
  urgent: {type: bool, default: false}
rules:
  - id: urgent
    description: a folded expression over lines
    when: >-
      signals.urgent
      and (tokens.context > 0 or step >= 1)
    action: handoff
    because: "urgent at {tokens.context:,} tokens ({tokens.ratio:.1%}) after {step} steps; {{note}} {signals.note}"
    before: phase_boundary
  - id: literal
    when: |
      tokens.ratio is not None
        and tokens.ratio > signals.ratio_floor
        and blocker_count > 0
    action: compact
  - id: quoted
    description: columns inside it are not the file's (an escape, a folded line, a doubled quote)
    when: "signals.note == \\"\\u00e9\\" and
      step > 1"
    action: compact
    because: 'l''état: {signals.note}'
otherwise: continue
guards:
  compact:
    - id: calls_open
      when: signals.open_calls > 0
      severity: block
      overridable: true
      message: "{signals.open_calls} open; floor {signals.ratio_floor:.2f}"
    - id: noted
      when: signals.note != "n/a"
      severity: warn
  handoff:
    - id: early
      when: step < 2
      severity: block
      message: "only {step} steps"
confirm: [handoff, compact]
"""


def _states() -> list[tuple[SessionState, str | None, bool]]:
    def s(**kw: object) -> SessionState:
        return state_from({"session_id": "s", **kw})

    return [
        (s(), None, False),
        (s(tokens={"context_tokens": 300_000}), None, False),
        (s(tokens={"context_tokens": 190_000, "model": "claude-sonnet-4-6"}), None, False),
        (s(tokens={"context_tokens": 120_000, "context_window": 200_000}), None, True),
        (s(status="phase_boundary", step_index=9), None, False),
        (s(step_index=7, last_compact_step=1, tokens={"context_tokens": 260_000}), None, False),
        (s(tokens={"context_tokens": 20, "context_window": 100}), "tiny", False),
        (s(tokens={"context_tokens": 15, "context_window": 100}), "tiny", True),
    ]


def _signal_sets(policy: Policy) -> list[dict[str, object]]:
    examples: dict[str, list[object]] = {
        "bool": [True],
        "int": [3],
        "float": [0.9],
        "str": ["worklog"],
    }
    sets: list[dict[str, object]] = [{}]
    for name, signal in policy.signals.items():
        sets += [{name: value} for value in examples[signal.type]]
    sets.append({n: examples[s.type][0] for n, s in policy.signals.items()})
    return sets


def _decisions(policy: Policy) -> list[object]:
    out: list[object] = []
    for state, profile, force in _states():
        for signals in _signal_sets(policy):
            st = state.replace(signals=signals)
            try:
                out.append(policy.decide(st, profile, force=force).as_dict())
                out.append(policy.explain(st, profile, force=force).as_dict())
            except ClmError as exc:  # a profile this policy lacks, a window it cannot know
                out.append(str(exc))
    return out


@pytest.mark.parametrize(
    "source", ["default", *EXAMPLES, "rich"], ids=lambda s: getattr(s, "name", s)
)
def test_a_cached_policy_decides_and_explains_identically(
    cache_home: Path, write: Write, monkeypatch: pytest.MonkeyPatch, source: str | Path
) -> None:
    if source == "rich":
        source = write("rich.yaml", RICH)
    fresh = load_policy(source)
    load_policy_cached(source)  # fills the entry

    def no_load(source: object) -> Policy:
        raise AssertionError("a hit must not load the policy file")

    monkeypatch.setattr(cache, "_load", no_load)
    cached = load_policy_cached(source)
    assert _decisions(cached) == _decisions(fresh)
    assert [r.id for r in cached.rules] == [r.id for r in fresh.rules]


def _plain(value: object) -> object:
    """A comparable form of a compiled policy part: records field by field, the syntax
    tree of an expression with every position."""
    if isinstance(value, ast.AST):
        return ast.dump(value, include_attributes=True)
    if isinstance(value, Record):
        return (type(value).__name__, {f: _plain(getattr(value, f)) for f in value.FIELDS})
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, frozenset):
        return sorted(_plain(v) for v in value)  # type: ignore[type-var]
    return value


def test_round_trip_keeps_every_field(write: Write) -> None:
    policy = load_policy(write("rich.yaml", RICH))
    data = json.loads(json.dumps(cache.encode_policy(policy)))
    assert _plain(cache.decode_policy(data)) == _plain(policy)
    span = policy.rules[-1].when.span
    assert span is not None
    assert span.moves  # kept in the entry, as the rest of the span
    # the codec writes every field by name: one added to a record must be added there too
    assert set(data) == set(Policy.FIELDS)
    assert set(data["rules"][0]) == set(Rule.FIELDS)
    assert set(data["guards"]["compact"][0]) == set(Guard.FIELDS)
    assert set(data["profiles"]["tiny"]) == set(Profile.FIELDS)
    assert set(data["signals"]["note"]) == set(Signal.FIELDS)


class _Payload:
    """Unpickling this creates the canary file: proof that a load ran planted code."""

    def __init__(self, canary: Path) -> None:
        self.canary = canary

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.canary), "w"))


def _plant(path: Path, data: bytes) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(0o600)


def test_a_planted_pickle_never_runs(
    cache_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    canary = tmp_path / "canary"
    payload = pickle.dumps(_Payload(canary))
    entry = Path(cache.entry_path(cache_home, "default"))
    with monkeypatch.context() as m:
        m.setattr(cache, "_FORMAT", b"clm-policy-cache-1")  # the key of the pickle format
        old = Path(cache.entry_path(cache_home, "default")).with_suffix(".pickle")
    for path in (entry, entry.with_suffix(".pickle"), old):
        _plant(path, payload)
    s = SessionState(session_id="s", tokens=TokenSnapshot(context_tokens=260_000))
    for _ in range(2):  # a miss that rewrote the entry, then a hit
        assert load_policy_cached("default").decide(s) == load_policy("default").decide(s)
    assert not canary.exists()
    assert json.loads(entry.read_bytes())["policy"]["name"] == "default"


@pytest.mark.parametrize(
    ("field", "planted"),
    [
        ("when", "open({canary!r}, 'w') is None"),
        ("when", "__import__('os').system('touch ' + {canary!r}) == 0"),
        ("when", "tokens.context.__class__ is None"),
        ("because", "{{open({canary!r}, 'w')}}"),
    ],
)
def test_a_tampered_entry_with_a_refused_expression_is_a_miss(
    cache_home: Path, tmp_path: Path, field: str, planted: str
) -> None:
    canary = tmp_path / "canary"
    load_policy_cached("default")
    (entry,) = _entries(cache_home)
    data = json.loads(entry.read_bytes())
    rule = data["policy"]["rules"][0]
    text = planted.format(canary=str(canary))
    if field == "when":
        rule["when"].update(text=text, source=text)
    else:
        rule["because"]["text"] = text
    entry.write_text(json.dumps(data))
    s = SessionState(session_id="s", status=TaskStatus.PHASE_BOUNDARY)
    assert load_policy_cached("default").decide(s) == load_policy("default").decide(s)
    assert not canary.exists()
    assert json.loads(entry.read_bytes()) != data  # the miss wrote a good entry back


def _planted_rule_id(home: Path) -> None:
    """Turn every entry in ``home`` into one that decides differently, if it were read."""
    for entry in _entries(home):
        data = json.loads(entry.read_bytes())
        data["policy"]["rules"][0]["id"] = "planted"
        entry.write_text(json.dumps(data))


def test_the_cache_dir_and_entries_are_private(cache_home: Path) -> None:
    old = os.umask(0)
    try:
        load_policy_cached("default")
    finally:
        os.umask(old)
    (entry,) = _entries(cache_home)
    assert stat.S_IMODE(cache_home.stat().st_mode) == 0o700
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o707, 0o720])
def test_a_dir_others_can_write_is_ignored(cache_home: Path, mode: int) -> None:
    load_policy_cached("default")
    _planted_rule_id(cache_home)
    (entry,) = _entries(cache_home)
    planted = entry.read_bytes()
    cache_home.chmod(mode)
    try:
        assert load_policy_cached("default").rules[0].id == "phase_boundary"
        assert entry.read_bytes() == planted  # neither read nor rewritten
    finally:
        cache_home.chmod(0o700)
    assert load_policy_cached("default").rules[0].id == "planted"  # private again: read


def test_a_dir_of_another_user_is_ignored(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_policy_cached("default")
    _planted_rule_id(cache_home)
    monkeypatch.setattr(os, "geteuid", lambda: os.getuid() + 1)
    assert load_policy_cached("default").rules[0].id == "phase_boundary"


def test_a_symlinked_dir_is_ignored(
    cache_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real"
    monkeypatch.setenv("CLM_POLICY_CACHE_DIR", str(real))
    load_policy_cached("default")
    _planted_rule_id(real)
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    monkeypatch.setenv("CLM_POLICY_CACHE_DIR", str(link))
    assert load_policy_cached("default").rules[0].id == "phase_boundary"
    assert len(_entries(real)) == 1


def test_an_entry_others_can_write_or_a_symlink_is_ignored(
    cache_home: Path, tmp_path: Path
) -> None:
    load_policy_cached("default")
    _planted_rule_id(cache_home)
    (entry,) = _entries(cache_home)
    entry.chmod(0o622)
    assert load_policy_cached("default").rules[0].id == "phase_boundary"
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600  # replaced by a good entry
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(entry.read_bytes())
    elsewhere.chmod(0o600)
    _planted_rule_id(tmp_path)  # elsewhere.json decides differently
    entry.unlink()
    entry.symlink_to(elsewhere)
    assert load_policy_cached("default").rules[0].id == "phase_boundary"
    assert not entry.is_symlink()


def test_deps_naming_a_fifo_are_a_miss(cache_home: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    load_policy_cached("default")
    (entry,) = _entries(cache_home)
    data = json.loads(entry.read_bytes())
    data["deps"].append([str(fifo), "0" * 64])
    data["policy"]["rules"][0]["id"] = "planted"
    entry.write_text(json.dumps(data))
    assert load_policy_cached("default").rules[0].id == "phase_boundary"
