"""Verified compaction: the facts a state asks, what counts as found, the recall and where it is
recorded (front matter, trailers, log, status), and a compaction under the profile's
min_recall becoming a handoff (verify_failed) — in the pipeline, the loop and by hand."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from clm_policy.lifecycle.compaction import (
    DeterministicSummarizer,
    TextSummary,
    compact,
    compact_verified,
)
from clm_policy.lifecycle.pipelines import (
    Provenance,
    record_agent_summary,
    run_compaction,
    run_handoff,
)
from clm_policy.lifecycle.summary import UNKNOWN_NEXT_STEP
from clm_policy.lifecycle.verify import (
    HANDOFF_KINDS,
    KINDS,
    Fact,
    Recall,
    VerificationFailed,
    facts,
    inventory,
    key_tokens,
    normalise,
    verify,
)
from clm_policy.memory.git.write import MemoryRepo
from clm_policy.models.enums import MessageRole
from clm_policy.models.state import Message, SessionState, TokenSnapshot

from conftest import git, invoke

NOW = datetime(2026, 8, 4, 12, 0, tzinfo=UTC)
WEAK = "# Summary\n\nWe worked on it.\n"
"""A summary that keeps none of the facts the hint does not carry."""


def state(**changes: object) -> SessionState:
    values: dict[str, object] = {
        "session_id": "s1",
        "goal": "Add JWT login to the payments API",
        "step_index": 40,
        "tokens": TokenSnapshot(context_tokens=262_000),
        "messages": [
            Message(role=MessageRole.USER, content="Add JWT login to the payments API."),
            Message(role=MessageRole.ASSISTANT, content="Wrote the login handler."),
        ],
        "constraints": ["no new dependencies"],
        "decisions": ["JWT with HS256, key from PAYMENTS_JWT_KEY"],
        "changed_artifacts": ["src/payments/auth.py"],
        "commands_and_results": ["pytest tests/test_auth.py -q: 5 passed, 1 failed"],
        "verified": ["POST /login returns a token"],
        "not_verified": ["refresh of an expired token", "load under 100 rps"],
        "blockers": [],
        "memory_keys": ["decisions/auth-jwt"],
    }
    values.update(changes)
    return SessionState(**values)  # type: ignore[arg-type]


def trailers(repo: Path, rev: str = "HEAD") -> dict[str, str]:
    out = git(repo, "log", "-1", "--format=%(trailers:only,unfold)", rev)
    return dict(line.split(": ", 1) for line in out.splitlines() if line)


def front_matter(document: str) -> dict[str, object]:
    _, front, _ = document.split("---\n", 2)
    loaded: dict[str, object] = YAML(typ="safe").load(front)
    return loaded


@pytest.fixture
def weak_deterministic(monkeypatch: pytest.MonkeyPatch) -> None:
    """The deterministic summarizer keeps nothing (so even the fallback loses facts)."""
    monkeypatch.setattr(DeterministicSummarizer, "summarize", lambda self, s: WEAK)


# -- the facts ------------------------------------------------------------------------------


def test_the_facts_of_a_state_in_kind_order() -> None:
    asked = facts(state(memory_keys=["decisions/auth-jwt", "decisions/auth-jwt"]))
    assert [f.kind for f in asked] == [
        "goal",
        "constraints",
        "decisions",
        "changed_artifacts",
        "commands_and_results",
        "verified",
        "not_verified",
        "not_verified",
        "next_safe_action",
        "memory_keys",
    ]
    # the next safe action without its "(then 1 more unverified item)" count
    assert asked[-2] == Fact("next_safe_action", "Verify: refresh of an expired token")
    every = state(
        blockers=["CI secret missing"],
        requests=["Add JWT login to the payments API", "and a refresh endpoint"],
        open_failures=["pytest -q: failed (1 failed in 0.2s)"],
        remaining=["refresh endpoint"],
        done=["login handler"],
        moved_artifacts=["auth.py -> src/payments/auth.py"],
        deleted_artifacts=["old_auth.py"],
    )
    # every kind but the agent's own next step (a handoff's inventory asks that)
    assert {f.kind for f in facts(every)} == set(KINDS) - {"next_step"}
    # the request that is the goal is asked once, as the goal
    assert [f.text for f in facts(every) if f.kind == "requests"] == ["and a refresh endpoint"]


def test_a_handoffs_inventory() -> None:
    every = state(
        blockers=["CI secret missing", "pytest -q: failed (1 failed in 0.2s)"],
        requests=["Add JWT login to the payments API", "x" * 300],
        open_failures=["pytest -q: failed (1 failed in 0.2s)"],
        remaining=["refresh endpoint"],
        next_action="write the refresh test",
        moved_artifacts=["auth.py -> src/payments/auth.py"],
    )
    asked = inventory(every)
    assert [(f.kind, f.text) for f in asked] == [
        ("goal", "Add JWT login to the payments API"),
        ("requests", "x" * 159 + "…"),  # an earlier request by its opening
        ("constraints", "no new dependencies"),
        ("decisions", "JWT with HS256, key from PAYMENTS_JWT_KEY"),
        ("blockers", "CI secret missing"),  # the open failure is asked once, as one
        ("open_failures", "pytest -q: failed (1 failed in 0.2s)"),
        ("remaining", "refresh endpoint"),
        ("next_step", "write the refresh test"),
        ("changed_artifacts", "src/payments/auth.py"),
        ("moved_artifacts", "auth.py -> src/payments/auth.py"),
        ("verified", "POST /login returns a token"),
    ]
    # no commands, no not-verified items, no memory keys, no derived next safe action
    assert {f.kind for f in asked} <= set(HANDOFF_KINDS)


def test_a_state_without_facts_asks_nothing_and_recalls_everything() -> None:
    empty = SessionState(session_id="s1")
    assert facts(empty) == []  # no goal; the default next action is no fact of the session
    assert not any(f.text.startswith(UNKNOWN_NEXT_STEP) for f in facts(empty))
    recall = verify(facts(empty), ["anything"])
    assert (recall.found, recall.asked, recall.value, recall.trailer) == (0, 0, 1.0, "1.00 (0/0)")
    assert not recall.below(0.9)


def test_an_item_listed_twice_is_asked_once() -> None:
    asked = facts(state(commands_and_results=["pytest -q: passed"] * 3))
    assert [f.text for f in asked if f.kind == "commands_and_results"] == ["pytest -q: passed"]


# -- what counts as found -------------------------------------------------------------------


def test_normalised_text() -> None:
    assert normalise("Edited SRC/payments/auth.py!") == "edited src payments auth py"
    assert (
        normalise("\uff2a\uff37\uff34  with\tHS256") == "jwt with hs256"
    )  # NFKC (full-width), case-folded
    assert normalise("key_from PAYMENTS_JWT_KEY") == "key from payments jwt key"
    assert normalise("token \ue0003\ue001[REDACTED:aws]") == "token redacted aws"  # tags go
    assert key_tokens("The key is from the PAYMENTS_JWT_KEY, not a file") == [
        "key",
        "payments",
        "jwt",
        "not",
        "file",
    ]
    assert key_tokens("exit 1 (a)") == ["exit", "1"]


@pytest.mark.parametrize(
    ("fact", "context", "found"),
    [
        # 1. the normalised text, on word boundaries
        ("src/payments/auth.py", "Edited SRC/payments/auth.py.", True),
        ("pytest -q: 5 passed", "- `pytest -q` -> 5 passed", True),
        ("auth", "the authentication module", False),
        ("5 passed", "15 passed", False),
        # 2. 80 % of the key tokens (rounded up) on one line: a paraphrase keeping the words
        (
            "JWT with HS256, key from PAYMENTS_JWT_KEY",
            "HS256 JWT; the key is read from PAYMENTS_JWT_KEY",
            True,
        ),
        ("JWT with HS256, key from PAYMENTS_JWT_KEY", "HS256 JWT\nkey: PAYMENTS_JWT_KEY", False),
        ("JWT with HS256, key from PAYMENTS_JWT_KEY", "HS256 JWT with a key", False),
        (
            "the refresh endpoint rejects expired tokens with 401 after the grace period",
            "refresh endpoint rejects expired tokens with 401 after grace",  # 7 of 8 key tokens
            True,
        ),
        # 3. a path by its last component
        ("/home/me/shop/csvtool/parse.py", "Changed parse.py to keep quoted commas", True),
        ("/home/me/shop/csvtool/parse.py", "Changed the parser", False),
        ("docs/a b/c.md", "c.md", False),  # not a path: it has a space
    ],
)
def test_found(fact: str, context: str, found: bool) -> None:
    recall = verify([Fact("decisions", fact)], [context])
    assert (recall.found, recall.asked) == (int(found), 1)


def test_a_fact_of_no_words_asks_nothing() -> None:
    recall = verify([Fact("decisions", "…"), Fact("decisions", "x")], ["x"])
    assert (recall.found, recall.asked) == (1, 1)


# -- the recall -----------------------------------------------------------------------------


def test_recall_is_shown_rounded_down_and_compared_exactly() -> None:
    assert Recall(899, 1000).shown == "0.89"  # never a passing 0.90
    assert Recall(2, 3).shown == "0.66"
    assert Recall(1, 1).shown == "1.00"
    assert Recall(9, 10).trailer == "0.90 (9/10)"
    assert not Recall(9, 10).below(0.9)
    assert Recall(899, 1000).below(0.9)
    assert Recall(0, 3).below(0.1)
    assert not Recall(0, 3).below(0.0)


def test_recall_per_kind_and_what_is_missing() -> None:
    s = state()
    recall = verify(facts(s), ["Goal: Add JWT login to the payments API", "- no new dependencies"])
    assert recall.by_kind == {
        "goal": (1, 1),
        "constraints": (1, 1),
        "decisions": (0, 1),
        "changed_artifacts": (0, 1),
        "commands_and_results": (0, 1),
        "verified": (0, 1),
        "not_verified": (0, 2),
        "next_safe_action": (0, 1),
        "memory_keys": (0, 1),
    }
    assert recall.trailer == "0.20 (2/10)"
    assert recall.missing_counts == (
        "decisions 1, changed_artifacts 1, commands_and_results 1, verified 1, not_verified 2, "
        "next_safe_action 1, memory_keys 1"
    )
    assert recall.describe_missing(2) == (
        "decisions 'JWT with HS256, key from PAYMENTS_JWT_KEY'; changed_artifacts "
        "'src/payments/auth.py'; and 6 more"
    )


# -- compaction -----------------------------------------------------------------------------


def test_a_deterministic_compaction_holds_every_fact() -> None:
    result = compact(state(), retain=1, now=NOW)
    assert result.recall is not None
    assert (result.recall.found, result.recall.asked, result.recall.missing) == (10, 10, ())
    front = front_matter(result.document)
    assert (front["summarizer"], front["recall"], front["facts_found"]) == (
        "deterministic",
        1.0,
        10,
    )
    assert "facts_missing" not in front
    assert "summarizer_fallback" not in front


def test_the_hint_and_kept_messages_count_but_the_summary_carries_the_rest() -> None:
    result = compact(state(), retain=1, summarizer=TextSummary(WEAK, "mine"), now=NOW)
    assert result.recall is not None
    assert result.recall.trailer == "0.70 (7/10)"  # the hint holds all but these three
    assert [f.kind for f in result.recall.missing] == [
        "decisions",
        "changed_artifacts",
        "commands_and_results",
    ]
    front = front_matter(result.document)
    assert front["summarizer"] == "mine"
    assert front["facts_missing"] == [
        ["decisions", "JWT with HS256, key from PAYMENTS_JWT_KEY"],
        ["changed_artifacts", "src/payments/auth.py"],
        ["commands_and_results", "pytest tests/test_auth.py -q: 5 passed, 1 failed"],
    ]
    kept = compact(
        state(), retain=9, summarizer=TextSummary(WEAK, "mine"), now=NOW, verify_facts=False
    )
    assert kept.recall is None
    assert "recall" not in front_matter(kept.document)


class Failing:
    name = "flaky"

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def summarize(self, s: SessionState) -> str:
        raise self.exc


class Reasoned(Exception):
    reason = "http 503"


@pytest.mark.parametrize(
    ("summarizer", "trailer"),
    [
        (Failing(ValueError("boom")), "deterministic (fallback: error (ValueError))"),
        (Failing(Reasoned()), "deterministic (fallback: http 503)"),
        (TextSummary("  \n", "blank"), "deterministic (fallback: empty)"),
        (TextSummary(WEAK, "weak"), "deterministic (fallback: recall 0.70 < 0.9)"),
    ],
)
def test_a_summarizer_that_fails_or_loses_facts_falls_back(
    summarizer: object, trailer: str
) -> None:
    result = compact_verified(
        state(),
        retain=1,
        summarizer=summarizer,
        min_recall=0.9,
        now=NOW,  # type: ignore[arg-type]
    )
    assert result.summarizer_trailer == trailer
    assert result.tried == summarizer.name  # type: ignore[attr-defined]
    assert result.summary == compact(state(), retain=1, now=NOW).summary
    front = front_matter(result.document)
    assert (front["summarizer_fallback"], front["summarizer_tried"]) == (
        result.fallback,
        result.tried,
    )


def test_a_summarizer_that_keeps_the_facts_is_used() -> None:
    good = "JWT with HS256, key from PAYMENTS_JWT_KEY. Edited src/payments/auth.py; " + (
        "pytest tests/test_auth.py -q: 5 passed, 1 failed."
    )
    result = compact_verified(
        state(), retain=1, summarizer=TextSummary(good, "good"), min_recall=0.9, now=NOW
    )
    assert (result.summarizer_trailer, result.fallback) == ("good", None)
    assert result.summary == good + "\n"
    assert result.recall is not None
    assert result.recall.value == 1.0
    low = compact_verified(
        state(), retain=1, summarizer=TextSummary(WEAK, "weak"), min_recall=0.5, now=NOW
    )
    assert low.summarizer_trailer == "weak"  # 0.7 passes a threshold of 0.5


# -- the pipelines --------------------------------------------------------------------------


def test_a_compaction_commit_records_its_recall(memory: Path) -> None:
    with MemoryRepo(memory) as repo:
        done = run_compaction(repo, state(), retain=1, min_recall=0.9)
    assert done.result.recall is not None
    assert done.result.recall.trailer == "1.00 (10/10)"
    found = trailers(memory)
    # the deterministic summary is built from the facts it is checked against: what it kept,
    # never a recall (a quality figure)
    assert (found["Clm-Summary-Kept"], found["Clm-Summarizer"]) == (
        "1.00 (10/10)",
        "deterministic",
    )
    assert "Clm-Recall" not in found
    assert "Clm-Summary-Kept-Missing" not in found
    document = git(memory, "show", "HEAD:sessions/s1/compactions/000040.md")
    assert front_matter(document)["recall"] == 1.0


def test_a_compaction_under_min_recall_commits_nothing(
    memory: Path, weak_deterministic: None
) -> None:
    head = git(memory, "rev-parse", "HEAD")
    with MemoryRepo(memory) as repo, pytest.raises(VerificationFailed) as caught:
        run_compaction(repo, state(), retain=1, min_recall=0.9)
    assert git(memory, "rev-parse", "HEAD") == head
    exc = caught.value
    assert exc.trigger == "verify_failed"
    assert exc.rationale == (
        "compaction recall 0.70 (7/10) < min_recall 0.9; not found in the next context: "
        "decisions 'JWT with HS256, key from PAYMENTS_JWT_KEY'; changed_artifacts "
        "'src/payments/auth.py'; commands_and_results 'pytest tests/test_auth.py -q: 5 "
        "passed, 1 failed'"
    )
    # without min_recall (a snapshot while an agent compacts on its own) it is recorded only
    with MemoryRepo(memory) as repo:
        run_compaction(repo, state(), retain=1)
    found = trailers(memory)
    assert found["Clm-Summary-Kept"] == "0.70 (7/10)"
    assert found["Clm-Summary-Kept-Missing"] == (
        "decisions 1, changed_artifacts 1, commands_and_results 1"
    )


def test_secrets_are_compared_as_the_commit_holds_them(memory: Path) -> None:
    key = "AKIAZ7Q3X9P2M4N6R8T0"
    s = state(decisions=[f"deploy with {key}"])
    with MemoryRepo(memory) as repo:
        done = run_compaction(repo, s, retain=1, min_recall=1.0)
    assert done.result.recall is not None
    assert done.result.recall.value == 1.0
    document = git(memory, "show", "HEAD:sessions/s1/compactions/000040.md")
    assert key not in document


def test_a_handoff_records_what_its_seed_kept(memory: Path) -> None:
    with MemoryRepo(memory) as repo:
        done = run_handoff(repo, state(), why=Provenance("hard_handoff", "context too big"))
    # the seed holds the inventory (goal, constraints, decisions, the file, what is verified):
    # what the budget let through, measured against facts the seed is made of — never a recall
    found = trailers(memory)
    assert found["Clm-Seed-Kept"] == "1.00 (5/5)"
    assert "Clm-Recall" not in found
    assert "Clm-Recall-Agent" not in found  # the agent wrote no handoff of its own
    assert found["Clm-Seed-Tokens"] == str(-(-len(done.seed[0].content) // 4))


def test_a_seed_cut_short_loses_facts_and_says_so(memory: Path) -> None:
    names = [
        "alpha",
        "bravo",
        "charlie",
        "delta",
        "echo",
        "foxtrot",
        "golf",
        "hotel",
        "india",
        "juliett",
        "kilo",
        "lima",
        "mike",
        "november",
        "oscar",
        "papa",
        "quebec",
        "romeo",
        "sierra",
        "tango",
        "uniform",
        "victor",
        "whiskey",
        "xray",
        "yankee",
    ]
    many = [f"{name} endpoint answers" for name in names]
    with MemoryRepo(memory) as repo:
        done = run_handoff(
            repo, state(verified=many), why=Provenance("hard_handoff", "big"), seed_tokens=300
        )
    seed = done.seed[0].content
    assert len(seed) <= 300 * 4
    # 300 tokens cannot hold the 25; the last line counts them and says where they are
    assert "alpha endpoint answers" in seed
    assert "yankee endpoint answers" not in seed
    assert seed.splitlines()[-1].startswith("Left out for length: verified ")
    assert f"`clm-policy show --memory {memory} {done.handoff_path}`" in seed
    kept = trailers(memory)["Clm-Seed-Kept"]
    assert kept.startswith("0.")
    # the default budget holds them all (a step later: at the same one nothing is committed)
    later = state(verified=many, step_index=41)
    with MemoryRepo(memory) as repo:
        done = run_handoff(repo, later, why=Provenance("hard_handoff", "big"))
    assert "yankee endpoint answers" in done.seed[0].content


def test_an_agent_summary_is_verified_against_the_snapshot(memory: Path) -> None:
    why = Provenance("claude-code:manual", extra_trailers={"Clm-Agent": "claude-code"})
    bare = SessionState(session_id="s1", step_index=41)
    with MemoryRepo(memory) as repo:
        record_agent_summary(repo, bare, "Nothing to go on.", why=why)
    assert "Clm-Recall" not in trailers(memory)  # no snapshot: nothing to check against
    with MemoryRepo(memory) as repo:
        run_compaction(repo, state(), retain=1, why=why)  # the PreCompact snapshot
        record_agent_summary(
            repo, bare, "Goal: add JWT login to the payments API. No new dependencies.", why=why
        )
    found = trailers(memory)
    assert found["Clm-Event"] == "summary"
    assert found["Clm-Recall"] == "0.20 (2/10)"
    assert found["Clm-Recall-Missing"].startswith("decisions 1, changed_artifacts 1")
    shown = invoke("log", "--memory", str(memory)).stdout.splitlines()
    summary = next(i for i, line in enumerate(shown) if "clm(summary)" in line)
    assert shown[summary + 2].startswith("              recall 0.20 (2/10); missing decisions 1")
    document = git(memory, "show", "HEAD:sessions/s1/summaries/000041.md")
    front = front_matter(document)
    assert (front["facts_found"], front["facts_asked"]) == (2, 10)
    assert document.endswith("No new dependencies.\n")


# -- the loop and by hand -------------------------------------------------------------------


def test_the_loop_hands_off_when_a_compaction_loses_facts(
    tmp_path: Path, weak_deterministic: None
) -> None:
    mem = tmp_path / "mem"
    result = invoke("run", "--memory", str(mem), "--format", "json", "--stop-at-handoff")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert (out["stopped_reason"], out["compact_count"]) == ("handoff", 0)
    (last,) = [e for e in out["timeline"] if e["action"] != "continue"]
    assert (last["action"], last["rule"]) == ("handoff", "verify_failed")
    assert last["rationale"].startswith("compaction recall 0.75 (6/8) < min_recall 0.9; not found")
    # the handoff's commit records how the run stopped: no empty session-end commit follows
    assert git(mem, "log", "-1", "--format=%s").startswith(
        "clm(handoff): demo step 23, verify_failed"
    )
    manifest = json.loads(git(mem, "show", f"HEAD:{trailers(mem, 'HEAD')['Clm-Manifest']}"))
    assert "changed_artifacts 'src/auth/middleware.py'" in manifest["decision_rationale"]
    decisions = git(mem, "show", "HEAD:sessions/demo/decisions.jsonl").splitlines()
    said = [(d["action"], d["trigger"]) for d in map(json.loads, decisions[-2:])]
    assert said == [("compact", "soft_compact"), ("handoff", "verify_failed")]


def test_a_policy_may_lower_min_recall(tmp_path: Path, weak_deterministic: None) -> None:
    policy = tmp_path / "team.yaml"
    policy.write_text("version: 1\nname: team\nextends: default\ndefaults:\n  min_recall: 0.5\n")
    mem = tmp_path / "mem"
    result = invoke(
        "run", "--memory", str(mem), "--policy", str(policy), "--format", "json",
        "--stop-at-handoff",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["compact_count"] == 2  # the demo's first session's
    assert "Clm-Summary-Kept: 0.75 (6/8)" in git(mem, "log", "--format=%(trailers:only,unfold)")


def test_compact_by_hand_hands_off_under_min_recall(
    tmp_path: Path, memory: Path, weak_deterministic: None
) -> None:
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state().as_dict()))
    result = invoke("compact", "--memory", str(memory), "--state", str(path))
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(
        "compaction of session s1 at step 40 not committed: compaction recall 0.70 (7/10)"
    )
    assert lines[1].startswith("handed off instead (verify_failed): commit ")
    assert trailers(memory)["Clm-Rule"] == "verify_failed"
    head = git(memory, "rev-parse", "HEAD").strip()
    # the same position again: the compaction fails as before, and its handoff is made already
    again = invoke("compact", "--memory", str(memory), "--state", str(path))
    assert (again.exit_code, again.stdout) == (
        0,
        f"session s1 at step 40 (262000 tokens) is handed off already: commit {head[:12]} "
        "(sessions/s1/handoffs/001.md); nothing new to commit\n",
    )
    later = tmp_path / "later.json"
    later.write_text(json.dumps(state(step_index=41).as_dict()))
    as_json = invoke("compact", "--memory", str(memory), "--state", str(later), "--format", "json")
    out = json.loads(as_json.stdout)
    assert (out["event"], out["rule"]) == ("handoff", "verify_failed")
    assert out["rationale"].startswith("compaction recall 0.70 (7/10) < min_recall 0.9")


def test_compact_by_hand_reports_the_recall(tmp_path: Path, memory: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state().as_dict()))
    result = invoke("compact", "--memory", str(memory), "--state", str(path))
    assert result.exit_code == 0, result.stderr
    assert (
        "  kept      1.00 (10/10) of the session's facts (the deterministic summary is built "
        "from them)\n"
    ) in result.stdout
    assert "summary   by" not in result.stdout
    # the same position again: nothing new to commit
    again = invoke("compact", "--memory", str(memory), "--state", str(path))
    assert again.exit_code == 0, again.stderr
    head = git(memory, "rev-parse", "HEAD").strip()
    assert again.stdout == (
        f"session s1 at step 40 ({state().tokens.context_tokens} tokens) is compacted already: "
        f"commit {head[:12]}; nothing new to commit\n"
    )
    later = tmp_path / "later.json"
    later.write_text(json.dumps(state().replace(step_index=41).as_dict()))
    out = json.loads(
        invoke("compact", "--memory", str(memory), "--state", str(later), "--format", "json").stdout
    )
    assert out["summarizer"] == "deterministic"
    assert out["recall"] is None
    assert (out["kept"]["value"], out["kept"]["found"], out["kept"]["missing"]) == (1.0, 10, [])


# -- log and status -------------------------------------------------------------------------


def test_log_and_status_show_what_was_measured(tmp_path: Path) -> None:
    mem = tmp_path / "mem"
    assert invoke("run", "--memory", str(mem), "--stop-at-handoff").exit_code == 0
    log = invoke("log", "--memory", str(mem)).stdout.splitlines()
    # the demo's summaries are deterministic: what was kept is shown, no recall (nothing was
    # measured); its handoff has the agent's words, measured against the record
    handoff = next(i for i, line in enumerate(log) if "clm(handoff)" in line)
    assert log[handoff + 3 : handoff + 5] == [
        "              the agent's words hold of the record 1.00 (7/7)",
        "              seed kept of the record 1.00 (7/7)",
    ]
    compaction = next(i for i, line in enumerate(log) if "clm(compact)" in line)
    assert log[compaction + 2] == "              summary kept 1.00 (9/9)"
    assert not any(" recall " in line for line in log)
    status = invoke("status", "--memory", str(mem)).stdout.splitlines()
    assert status[0].split()[-4:] == ["handoff", "recall", "last", "decision"]
    assert status[1].split()[:3] == ["demo", "handed", "off"]
    assert status[1].split()[8] == "1.00"  # the agent's words, the one thing measured
    detail = invoke("status", "--memory", str(mem), "--session", "demo").stdout
    assert "\nrecall    1.00 (7/7 facts) at the last handoff\n" in detail
    row = json.loads(invoke("status", "--memory", str(mem), "--format", "json").stdout)[0]
    assert (row["recall"], row["recall_facts"], row["recall_event"]) == (1.0, "7/7", "handoff")


def test_status_shows_the_agents_recall_of_the_record(memory: Path) -> None:
    from clm_policy.loop.status import last_recall
    from clm_policy.memory.audit import AuditEntry

    handoff = AuditEntry("c", "d", "s", {"Clm-Event": "handoff", "Clm-Recall-Agent": "0.80 (4/5)"})
    assert last_recall([handoff])["recall"] == 0.8
    assert last_recall([handoff])["recall_event"] == "handoff"


def test_status_ignores_a_recall_trailer_it_cannot_read(memory: Path) -> None:
    from clm_policy.loop.status import last_recall
    from clm_policy.memory.audit import AuditEntry

    def entry(value: str) -> AuditEntry:
        return AuditEntry("c", "d", "s", {"Clm-Event": "compact", "Clm-Recall": value})

    assert last_recall([entry("lots"), entry("1.00 (11/10)"), entry("0.50 (1/2)")])["recall"] == 0.5
    assert last_recall([entry("x")])["recall"] is None


# -- the profile's min_recall ---------------------------------------------------------------


def test_min_recall_in_a_policy(tmp_path: Path) -> None:
    from clm_policy.policy.cache import decode_policy, encode_policy
    from clm_policy.policy.compile import load_policy
    from clm_policy.policy.engine import Profile, Threshold

    assert load_policy("default").profile("coding").min_recall == 0.9
    path = tmp_path / "team.yaml"
    path.write_text(
        "version: 1\nname: team\nextends: default\ndefaults:\n  min_recall: 1\n"
        "profiles:\n  research: {soft_compact: 285000, hard_handoff: 400000, min_recall: 0.75}\n"
    )
    team = load_policy(path)
    assert (team.profile("coding").min_recall, team.profile("research").min_recall) == (1.0, 0.75)
    assert type(team.profile("coding").min_recall) is float
    again = decode_policy(json.loads(json.dumps(encode_policy(team))))
    assert again.profile("research").min_recall == 0.75
    assert again == team
    resolved = invoke("resolve", str(path)).stdout
    assert "min_recall: 0.75" in resolved
    assert resolved.count("\n    min_recall: ") == 5  # every profile: all differ from the default
    assert "min_recall" not in invoke("resolve", "default").stdout
    # the constructor stays as it was; min_recall is keyword-only
    plain = Profile("p", Threshold(1), Threshold(2), 5, True, 6, None, None, None)
    assert plain.min_recall == 0.9
    assert plain != Profile("p", Threshold(1), Threshold(2), min_recall=0.5)


@pytest.mark.parametrize("value", ["1.5", "-0.1", "true", "'high'"])
def test_min_recall_out_of_range_is_refused(tmp_path: Path, value: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(f"version: 1\nextends: default\ndefaults:\n  min_recall: {value}\n")
    result = invoke("decide", "-p", str(path), "--tokens", "150")
    assert result.exit_code == 2
    assert "min_recall" in result.stderr


def test_the_run_records_no_recall_of_a_deterministic_summary(tmp_path: Path) -> None:
    mem = tmp_path / "mem"
    assert invoke("run", "--memory", str(mem)).exit_code == 0
    lines = [
        json.loads(x) for x in git(mem, "show", "HEAD:sessions/demo/metrics.jsonl").split("\n") if x
    ]
    # the demo's compactions are deterministic: a recall of them would be 1.00 by construction
    # and nothing the experiment's quality figures may count
    assert [line["step"] for line in lines if "recall" in line] == []
