"""The redactor's two shortcuts change nothing it redacts or counts.

- ``may_hold_secret`` (clm_policy.memory.redact.engine): every rule's pre-test (its needles, or
  its anchor) taken together. A text it refuses is returned before the rules run; it must be
  a text every rule leaves alone. Held here structurally (every rule has a pre-test; the
  combined needles and anchors say what each rule's say) and on every secret we know of: each
  corpus sample and its secrets alone, the fake tokens of the rule tests, in the contexts a
  commit holds them (plain, in a JSON line, upper- and lower-cased).
- the memory of clean strings and plain dict keys: the rules are a function of the text (and
  a key/value rule of the key), so a string seen clean once is clean again. Held by a walk
  without that memory, on records like the loop's with secrets among them; the memory is
  bounded, and holds nothing a rule replaced.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from test_redact import KEY_VALUE, TOKENS
from test_redact_tokens import NEW_TOKENS
from test_redaction_corpus import SAMPLES

from clm_policy.memory.redact import RULES, Redactor, Rule, engine, redact_data, redact_text
from clm_policy.memory.redact.engine import NEEDLES, _Tally, may_hold_secret

GITHUB = "ghp_" + "Zx8Kq2Lm9Nv4Bc7Df1Gh5Jk3Pw6Rt0Ys2Ua4E"
RANDOM = "x9Qw3Er5Ty7Ui9Op1As3"


def test_every_rule_has_a_pre_test() -> None:
    # a rule with neither needles nor an anchor would make the pre-check let everything through
    assert [r.id for r in RULES if not r.needles and r.anchor is None] == []
    # an anchor searched as written is no pre-test of the lower-cased text: needles are
    assert [r.id for r in RULES if r.cased and not r.needles] == []
    assert engine._UNGUARDED is False


def test_the_combined_needles_say_what_every_rule_s_needles_say() -> None:
    every = {needle for rule in RULES for needle in rule.needles}
    assert set(NEEDLES) <= every
    for needle in every:  # each needle holds one the pre-check looks for
        assert any(kept in needle for kept in NEEDLES), needle
    assert "sk-" in NEEDLES
    assert "sk-ant-" not in NEEDLES  # it holds "sk-"


def test_the_combined_anchor_matches_where_any_rule_s_anchor_does() -> None:
    anchors = [r.anchor for r in RULES if r.anchor is not None and not r.cased]
    texts = [s.text.lower() for s in SAMPLES] + ["x-api-key: 1", "heroku=", "bearer", "nothing"]
    for text in texts:
        each = any(a.search(text) is not None for a in anchors)
        assert (engine.ANCHORS.search(text) is not None) == each, text


def _texts() -> Iterator[str]:
    """Every text with a secret we know of, in the shapes a commit holds it."""
    for sample in SAMPLES:
        yield sample.text
        yield from sample.secrets
    for secrets in (*TOKENS.values(), *NEW_TOKENS.values()):
        yield from secrets
    for _rule, text, _expected in KEY_VALUE:
        yield text


def _shapes(text: str) -> Iterator[str]:
    yield text
    yield json.dumps({"note": text})  # a JSON line: escapes (\n, \") in front of it
    yield text.upper()
    yield text.lower()


def _passes_own_pre_test(rule: Rule, text: str) -> bool:
    """What engine._apply asks before it runs ``rule``'s pattern."""
    if rule.needles and not any(needle in text for needle in rule.needles):
        return False
    if rule.anchor is None:
        return True
    return rule.anchor.search(text if rule.cased else engine._lower(text)) is not None


def test_a_text_the_pre_check_refuses_is_one_no_rule_touches() -> None:
    checked = refused = 0
    for text in _texts():
        for shape in _shapes(text):
            tally = _Tally()
            scanned = engine._scan(shape, tally)  # every rule, without the pre-check
            if tally.total:
                assert may_hold_secret(shape), shape
                checked += 1
            elif not may_hold_secret(shape):
                assert scanned == shape
                assert [r.id for r in RULES if _passes_own_pre_test(r, shape)] == [], shape
                refused += 1
            assert redact_text(shape).text == scanned
    assert checked > 1500  # the corpus's secrets and the tests' fakes, in four shapes
    assert refused > 50  # and the pre-check is no formality: it refuses non-secrets


@pytest.mark.parametrize(
    "line",
    [
        {"step": 12, "estimated": False, "messages": 3, "tool_calls": 0, "recall": 0.75},
        {"action": "continue", "rationale": "no rule held; otherwise continue"},
        {"session": "bench-00-2", "status": "running", "profile": "coding", "policy": "default"},
        {"blocked_by": [], "warnings": [], "trigger": None, "window_source": None},
    ],
)
def test_a_loop_s_json_line_of_numbers_booleans_and_plain_words_is_refused(
    line: dict[str, Any],
) -> None:
    assert may_hold_secret(json.dumps(line, sort_keys=True)) is False


@pytest.mark.parametrize(
    "text",
    ["context_tokens", "tokens.context >= profile.soft_compact", "--resume", "DISK", "ask-me"],
)
def test_what_holds_a_pre_test_s_word_goes_through_the_rules(text: str) -> None:
    assert may_hold_secret(text) is True


# -- the memory of clean strings ------------------------------------------------------------


def _walk_without_memory(value: Any, tally: _Tally) -> Any:
    """clm_policy.memory.redact.engine._walk as it was before the memory: every string
    scanned, every key's value rule asked."""
    if isinstance(value, str):
        before = tally.total
        redacted = engine._scan(value, tally)
        return value if tally.total == before else redacted
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            new_item = _walk_without_memory(item, tally)
            if isinstance(key, str) and isinstance(item, str) and new_item is item:
                rule = engine._value_rule(key, item)
                if rule is not None:
                    new_item = tally.marker(rule, item)
            out[_walk_without_memory(key, tally)] = new_item
        return out
    if isinstance(value, list):
        return [_walk_without_memory(item, tally) for item in value]
    return value


def _records(seed: int) -> list[dict[str, Any]]:
    """Lines like the loop's decisions and metrics, a secret here and there: in a value, in a
    rationale, under a key that names a secret, and the same string under a key that does
    not first."""
    rng = random.Random(seed)
    out = []
    for step in range(200):
        record: dict[str, Any] = {
            "session": "bench-00",
            "step": step,
            "action": rng.choice(["continue", "compact", "handoff"]),
            "rationale": rng.choice(
                ["no rule held; otherwise continue", f"context {step} >= hard limit 250000"]
            ),
            "state": {"tokens": {"context_tokens": step * 100, "estimated": False}},
            "lengths": {"messages": step % 7},
        }
        pick = rng.randrange(12)
        if pick == 0:
            record["rationale"] = f"pushed with {GITHUB}"
        elif pick == 1:
            record["note"] = RANDOM  # clean where it stands...
        elif pick == 2:
            record["password"] = RANDOM  # ...a secret under this key
        elif pick == 3:
            record["signals"] = {"X-Api-Key": "3f9a0c7e5b1d2468", "token": "tok"}
        out.append(record)
    return out


@pytest.mark.parametrize("seed", range(5))
def test_a_commit_s_records_redact_as_without_the_memory(seed: int) -> None:
    records = _records(seed)
    reference = _Tally()
    expected = [_walk_without_memory(r, reference) for r in records]
    redactor = Redactor()
    assert [redactor.data(r) for r in records] == expected
    assert dict(redactor.counts) == {
        rule: sum(1 for r, _ in reference.secrets.values() if r == rule)
        for rule in {r for r, _ in reference.secrets.values()}
    }
    # one redact_data over all of them: the same, and the same counts of occurrences
    assert redact_data(records) == (expected, reference.counts)


def test_a_string_seen_clean_is_still_a_secret_under_a_key_that_names_one() -> None:
    redactor = Redactor()
    assert redactor.data({"note": RANDOM}) == {"note": RANDOM}
    assert redactor.data({"password": RANDOM}) == {"password": "[REDACTED:generic-secret]"}
    assert redactor.data({"note": RANDOM}) == {"note": RANDOM}
    assert dict(redactor.counts) == {"generic-secret": 1}


def test_a_repeated_secret_is_replaced_and_counted_every_time() -> None:
    line = f"pushed with {GITHUB}"
    assert redact_data([line, {"k": line}, line]) == (
        ["pushed with [REDACTED:github-pat]"] * 1
        + [{"k": "pushed with [REDACTED:github-pat]"}]
        + ["pushed with [REDACTED:github-pat]"],
        {"github-pat": 3},
    )
    redactor = Redactor()
    assert redactor.text(line) == redactor.text(line) == "pushed with [REDACTED:github-pat]"
    assert redactor.total == 1  # one distinct secret, as before


def test_the_memory_holds_only_clean_strings_and_stays_bounded() -> None:
    line = f"pushed with {GITHUB}"
    redact_data({"note": line, "password": RANDOM, "plain": "nothing here"})
    assert "nothing here" in engine._CLEAN
    assert line not in engine._CLEAN
    assert GITHUB not in engine._CLEAN
    assert RANDOM in engine._CLEAN  # clean as a text: its key made it a secret
    assert "password" not in engine._PLAIN_KEYS
    assert "plain" in engine._PLAIN_KEYS
    long = "a plain sentence. " * 100
    assert len(long) > engine.KNOWN_LENGTH
    redact_data([long])
    assert long not in engine._CLEAN  # too long to remember: scanned each time
    redact_data([f"plain line {n}" for n in range(engine.KNOWN_CLEAN + 10)])
    assert 10 <= len(engine._CLEAN) <= engine.KNOWN_CLEAN
    assert redact_data([line, "nothing here"]) == (
        ["pushed with [REDACTED:github-pat]", "nothing here"],
        {"github-pat": 1},
    )
