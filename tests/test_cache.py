"""The compiled-policy cache: hits only when every file of the extends chain is unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from clm_policy import PolicyError, SessionState, TokenSnapshot
from clm_policy.policy import cache
from clm_policy.policy.cache import load_policy_cached
from clm_policy.policy.compile import load_policy


def _entries(home: Path) -> list[Path]:
    return sorted(home.glob("*.pickle"))


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
