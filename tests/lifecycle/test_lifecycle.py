"""Compaction and handoff content: summary, hint, kept messages, manifest, seed messages.

Set CLM_UPDATE_GOLDEN=1 to rewrite the golden files after an intended change, then review the
diff like any other change.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from clm_policy.base.errors import InputError, StateError
from clm_policy.lifecycle.compaction import (
    HINT_NAME,
    DeterministicSummarizer,
    Summarizer,
    compact,
    compaction_path,
)
from clm_policy.lifecycle.estimate import estimate_message_tokens, estimate_tokens
from clm_policy.lifecycle.handoff import (
    NO_GOAL,
    build_manifest,
    derive_status,
    manifest_filename,
    render_manifest_markdown,
)
from clm_policy.lifecycle.seed import seed_text
from clm_policy.lifecycle.summary import build_summary, next_safe_action, unknown_next_step
from clm_policy.models.enums import ManifestStatus, MessageRole, TaskStatus
from clm_policy.models.manifest import HandoffManifest
from clm_policy.models.shapes.manifest import validate_manifest
from clm_policy.models.state import Message, SessionState, TokenSnapshot
from clm_policy.models.state_io import parse_state

from conftest import golden

NOW = datetime(2026, 8, 4, 12, 0, tzinfo=UTC)
MANIFEST_READ_MORE = (
    "`clm-policy show --memory clm-memory sessions/s1/handoffs/001.md`, or the MCP tool "
    "memory_read with the key `sessions/s1/handoffs/001`."
)
TRANSCRIPT_ONLY = "TRANSCRIPT-ONLY: the flaky fixture hides in conftest line 42"
LIST_FIELDS = [
    "constraints",
    "decisions",
    "changed_artifacts",
    "commands_and_results",
    "verified",
    "not_verified",
    "assumptions_risks",
    "blockers",
    "source_of_truth",
    "memory_keys",
]


def conversation() -> list[Message]:
    m = Message
    return [
        m(role=MessageRole.SYSTEM, content="You are a careful coding agent."),
        m(role=MessageRole.USER, content="Add JWT login to the payments API."),
        m(role=MessageRole.ASSISTANT, content="Reading docs/auth-spec.md first."),
        m(role=MessageRole.TOOL, content="(spec text)", name="read_file"),
        m(role=MessageRole.ASSISTANT, content=TRANSCRIPT_ONLY),
        m(role=MessageRole.USER, content="Keep the token lifetime at 15 minutes."),
        m(role=MessageRole.ASSISTANT, content="Wrote the login handler;\n  running the tests."),
        m(role=MessageRole.TOOL, content="5 passed, 1 failed " + "x" * 400, name="pytest"),
        m(role=MessageRole.ASSISTANT, content="test_refresh_expired fails; looking at refresh."),
    ]


def rich_state(**changes: object) -> SessionState:
    values: dict[str, object] = {
        "session_id": "s1",
        "goal": "Add JWT login to the payments API: POST /login returns a 15-minute token",
        "status": TaskStatus.RUNNING,
        "step_index": 40,
        "last_compact_step": 20,
        "compact_count": 1,
        "profile": "coding",
        "tokens": TokenSnapshot(
            context_tokens=262_000,
            input_tokens=4_180_000,
            output_tokens=61_000,
            total_tokens=4_241_000,
            context_window=400_000,
            model="example-model",
        ),
        "messages": conversation(),
        "constraints": ["no new dependencies", "token lifetime 15 minutes"],
        "decisions": ["JWT with HS256, key from PAYMENTS_JWT_KEY"],
        "changed_artifacts": ["src/payments/auth.py", "tests/test_auth.py"],
        "commands_and_results": ["pytest tests/test_auth.py -q: 5 passed, 1 failed"],
        "verified": ["POST /login returns a token (test_login_ok)"],
        "not_verified": ["refresh of an expired token", "load under 100 rps"],
        "assumptions_risks": ["clock skew under 30 s\nbetween services"],
        "blockers": [],
        "source_of_truth": ["docs/auth-spec.md"],
        "memory_keys": ["decisions/auth-jwt", "payments/conventions"],
        "parent_session": "s0",
    }
    values.update(changes)
    return SessionState(**values)  # type: ignore[arg-type]


# --- estimate -----------------------------------------------------------------------------


def test_estimate_is_characters_over_four_rounded_up() -> None:
    assert estimate_tokens("abcd" * 100) == 100
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcde") == 2
    messages = [
        Message(role=MessageRole.USER, content="ab"),
        Message(role=MessageRole.USER, content="cd"),
    ]
    assert estimate_message_tokens(messages) == 1


# --- summary ------------------------------------------------------------------------------


def test_summary_is_deterministic() -> None:
    first = build_summary(rich_state())
    assert build_summary(rich_state()) == first
    again = parse_state(json.dumps(rich_state().as_dict()), "state.json")
    assert build_summary(again) == first.encode().decode()


def test_summary_holds_every_fact_of_the_state() -> None:
    state = rich_state()
    text = build_summary(state)
    assert state.goal in text
    for name in LIST_FIELDS:
        for item in getattr(state, name):
            first_line = item.splitlines()[0]
            assert first_line in text, (name, item)
    assert "  between services" in text  # a multi-line item continues under its bullet
    assert "handed off from session s0" in text
    assert "earlier compactions: 1" in text
    assert f"## Next safe action\n\n{next_safe_action(state)}\n" in text


def test_summary_sections_in_order() -> None:
    headings = re.findall(r"^## (.+)$", build_summary(rich_state()), flags=re.M)
    assert headings == [
        "Goal",
        "Constraints",
        "Source of truth",
        "Decisions",
        "Changed artifacts",
        "Commands and results",
        "Verified",
        "Not verified",
        "Assumptions and risks",
        "Blockers",
        "Next safe action",
        "Memory keys",
        "Recent messages",
    ]


def test_summary_of_an_empty_state_keeps_every_section() -> None:
    text = build_summary(SessionState(session_id="e"))
    assert text.count("(none)") == 12
    assert f"## Next safe action\n\n{unknown_next_step(None)}\n" in text


def test_recent_messages_are_the_last_few_non_system_ones_cut_to_one_line() -> None:
    text = build_summary(rich_state(), recent=3, width=40)
    recent = text.split("## Recent messages\n\n")[1]
    assert recent.splitlines() == [
        "The last 3 of 8 conversation messages:",
        "",
        "- **assistant**: Wrote the login handler; running the te…",
        "- **tool (pytest)**: 5 passed, 1 failed xxxxxxxxxxxxxxxxxxxx…",
        "- **assistant**: test_refresh_expired fails; looking at…",
    ]
    assert "careful coding agent" not in text  # the system prompt is no fact of the task


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"blockers": ["CI secret missing", "review pending"]},
            "Resolve the blocker: CI secret missing (then 1 more blocker)",
        ),
        ({"blockers": ["CI secret missing"]}, "Resolve the blocker: CI secret missing"),
        (
            {"blockers": ["a", "b", "c"]},
            "Resolve the blocker: a (then 2 more blockers)",
        ),
        (
            {},
            "Verify: refresh of an expired token (then 1 more unverified item)",
        ),
        # the last assistant message is context, never the next step
        ({"not_verified": []}, unknown_next_step(None)),
        (
            {
                "not_verified": [],
                "messages": [Message(role=MessageRole.ASSISTANT, content="All done: tests pass.")],
            },
            unknown_next_step(None),
        ),
        ({"not_verified": [], "messages": []}, unknown_next_step(None)),
        # the agent's own next step first; then blockers, remaining tasks, open failures
        (
            {"next_action": "Add the\nescaped-quote test", "blockers": ["CI secret missing"]},
            "Add the escaped-quote test",
        ),
        (
            {"remaining": ["Write the docs", "Tag the release"], "blockers": []},
            "Continue with: Write the docs (then 1 more task)",
        ),
        (
            {"open_failures": ["pytest -q: failed (2 failed in 0.1s)"]},
            "Fix the failing check: pytest -q: failed (2 failed in 0.1s)",
        ),
        (
            {"open_failures": ["pytest -q: failed (2 failed in 0.1s)"], "remaining": ["Fix it"]},
            "Continue with: Fix it",
        ),
    ],
)
def test_next_safe_action(changes: dict[str, object], expected: str) -> None:
    assert next_safe_action(rich_state(**changes)) == expected


def test_a_task_that_ends_a_sentence_is_no_double_stop_before_what_was_last_done() -> None:
    state = rich_state(remaining=["Summarize the findings."], blockers=[])
    assert next_safe_action(state, "ran `rg x` (no match (exit 1))") == (
        "Continue with: Summarize the findings. Last being done: ran `rg x` (no match (exit 1))"
    )


def test_an_unknown_next_step_is_said_as_unknown_never_a_boilerplate_step() -> None:
    assert unknown_next_step(None) == (
        "Unknown: the session states no next step; ask the user before acting"
    )
    assert unknown_next_step("ran `npm run build` (failed (exit 1))") == (
        "Unknown: the session states no next step. Last being done: ran `npm run build` "
        "(failed (exit 1))"
    )
    state = SessionState(session_id="s", commands_and_results=["pytest -q: 3 passed"])
    assert build_manifest(state, "why", now=NOW).next_safe_action == (
        "Unknown: the session states no next step. Last being done: ran pytest -q: 3 passed"
    )


# --- compaction ---------------------------------------------------------------------------


def test_compaction_keeps_exactly_the_last_n_non_system_messages() -> None:
    state = rich_state()
    result = compact(state, retain=3, now=NOW, trigger="soft_compact")
    non_system = [m for m in state.messages if m.role is not MessageRole.SYSTEM]
    assert list(result.messages[1:]) == non_system[-3:]
    hint = result.messages[0]
    assert (hint.role, hint.name, hint.content) == (MessageRole.SYSTEM, HINT_NAME, result.hint)
    assert result.state.messages == list(result.messages)


def test_compaction_updates_counters_and_lowers_the_context() -> None:
    state = rich_state()
    result = compact(state, retain=3, now=NOW)
    new = result.state
    assert (new.last_compact_step, new.compact_count) == (40, 2)
    assert result.context_before == 262_000
    assert result.context_after == estimate_message_tokens(result.messages)
    assert new.tokens.context_tokens == result.context_after < state.tokens.context_tokens
    assert new.tokens.estimated is True
    figures = ("input_tokens", "output_tokens", "total_tokens", "context_window", "model")
    assert [getattr(new.tokens, f) for f in figures] == [getattr(state.tokens, f) for f in figures]
    for name in [*LIST_FIELDS, "goal", "status", "step_index", "parent_session", "profile"]:
        assert getattr(new, name) == getattr(state, name)


def test_compaction_leaves_the_callers_state_alone() -> None:
    state = rich_state()
    before = state.as_dict()
    result = compact(state, retain=2, now=NOW)
    assert state.as_dict() == before
    result.state.constraints.append("new")
    result.state.messages[-1].content = "changed"
    assert state.as_dict() == before


def test_a_state_compacted_as_often_as_it_counts_is_refused() -> None:
    last = compact(rich_state(compact_count=2**63 - 2), retain=2, now=NOW)
    assert last.state.compact_count == 2**63 - 1
    with pytest.raises(StateError) as caught:
        compact(last.state, retain=2, now=NOW)
    assert str(caught.value) == (
        "compact_count: the state has compacted 9223372036854775807 times, the most a state counts"
    )


def test_compaction_with_fewer_messages_than_retain_keeps_them_all() -> None:
    state = rich_state()
    result = compact(state, retain=50, now=NOW)
    assert len(result.messages) == 1 + 8
    assert "the last 8 messages follow" in result.hint
    none_kept = compact(state, retain=0, now=NOW)
    assert [m.name for m in none_kept.messages] == [HINT_NAME]
    assert "no earlier message was kept" in none_kept.hint
    empty = compact(SessionState(session_id="e"), retain=6, now=NOW)
    assert len(empty.messages) == 1


def test_a_later_compaction_replaces_the_earlier_hint() -> None:
    once = compact(rich_state(), retain=4, now=NOW).state
    twice = compact(once.replace(step_index=50), retain=4, now=NOW)
    assert [m.name for m in twice.messages].count(HINT_NAME) == 1
    assert twice.state.compact_count == 3


def test_the_hint_carries_goal_next_action_and_memory_keys() -> None:
    state = rich_state(blockers=["CI secret missing"])
    hint = compact(state, retain=3, now=NOW).hint
    assert state.goal in hint
    assert "**Next safe action:** Resolve the blocker: CI secret missing" in hint
    for item in [*state.constraints, *state.verified, *state.not_verified, *state.blockers]:
        assert f"- {item}" in hint
    assert "- `decisions/auth-jwt`" in hint
    assert compaction_path("s1", 40) in hint
    assert "**Blockers:**" not in compact(rich_state(), retain=3, now=NOW).hint


def test_compaction_document_front_matter() -> None:
    result = compact(rich_state(), retain=3, now=NOW, trigger="soft_compact")
    _, front, body = result.document.split("---\n", 2)
    assert YAML(typ="safe").load(front) == {
        "session": "s1",
        "step": 40,
        "trigger": "soft_compact",
        "context_before": 262_000,
        "context_after": result.context_after,
        "messages_before": 9,
        "messages_after": 4,
        "compaction": 2,
        "timestamp": "2026-08-04T12:00:00Z",
        "summarizer": "deterministic",
        "recall": 1.0,
        "facts_found": 13,
        "facts_asked": 13,
        "recall_by_kind": {
            "goal": [1, 1],
            "constraints": [2, 2],
            "decisions": [1, 1],
            "changed_artifacts": [2, 2],
            "commands_and_results": [1, 1],
            "verified": [1, 1],
            "not_verified": [2, 2],
            "next_safe_action": [1, 1],
            "memory_keys": [2, 2],
        },
    }
    assert body.startswith("\n" + result.summary)
    assert body.endswith(result.hint)
    without = compact(rich_state(), retain=3, now=NOW).document
    assert "trigger:" not in without


def test_compaction_document_golden() -> None:
    golden(
        "compaction.md", compact(rich_state(), retain=3, now=NOW, trigger="soft_compact").document
    )


def test_compaction_is_deterministic() -> None:
    a = compact(rich_state(), retain=3, now=NOW)
    b = compact(rich_state(), retain=3, now=NOW)
    assert (a.document, a.state) == (b.document, b.state)


def test_a_summarizer_plugs_in() -> None:
    class Fixed:
        def summarize(self, state: SessionState) -> str:
            return f"LLM summary of {state.session_id}"

    summarizer: Summarizer = Fixed()
    result = compact(rich_state(), retain=1, summarizer=summarizer, now=NOW)
    assert result.summary == "LLM summary of s1\n"
    assert "\nLLM summary of s1\n" in result.document
    assert DeterministicSummarizer().summarize(rich_state()) == build_summary(rich_state())


def test_compaction_refuses_bad_arguments() -> None:
    with pytest.raises(InputError) as caught:
        compact(rich_state(), retain=-1, now=NOW)
    assert str(caught.value) == "retain must be 0 or more, got -1"
    with pytest.raises(InputError, match="timezone-aware"):
        compact(rich_state(), retain=1, now=datetime(2026, 8, 4))


# --- handoff ------------------------------------------------------------------------------


def test_manifest_from_state() -> None:
    state = rich_state(memory_keys=["a/b", "c", "a/b"])
    manifest = build_manifest(state, "context 352000 >= hard limit 350000", now=NOW)
    assert validate_manifest(manifest) == manifest  # pydantic and the JSON schema
    assert manifest.goal == state.goal
    assert manifest.status is ManifestStatus.IN_PROGRESS
    for name in LIST_FIELDS:
        if name in HandoffManifest.FIELDS and name != "memory_keys":
            assert getattr(manifest, name) == getattr(state, name), name
    assert manifest.memory_keys == ["a/b", "c"]
    assert manifest.token_snapshot == state.tokens
    assert manifest.next_safe_action == next_safe_action(state)
    assert manifest.timestamp == "2026-08-04T12:00:00Z"
    assert manifest.decision_rationale == "context 352000 >= hard limit 350000"
    explicit = build_manifest(state, "r", now=NOW, status=ManifestStatus.PARTIAL_COMPLETE)
    assert explicit.status is ManifestStatus.PARTIAL_COMPLETE


@pytest.mark.parametrize(
    ("status", "blockers", "expected"),
    [
        (TaskStatus.RUNNING, [], ManifestStatus.IN_PROGRESS),
        (TaskStatus.WAITING, [], ManifestStatus.IN_PROGRESS),
        (TaskStatus.PHASE_BOUNDARY, [], ManifestStatus.PARTIAL_COMPLETE),
        (TaskStatus.COMPLETED, [], ManifestStatus.COMPLETED),
        (TaskStatus.BLOCKED, [], ManifestStatus.BLOCKED),
        (TaskStatus.FAILED, [], ManifestStatus.BLOCKED),
        (TaskStatus.RUNNING, ["CI secret missing"], ManifestStatus.BLOCKED),
        (TaskStatus.COMPLETED, ["CI secret missing"], ManifestStatus.BLOCKED),
    ],
)
def test_derived_status(status: TaskStatus, blockers: list[str], expected: ManifestStatus) -> None:
    state = rich_state(status=status, blockers=blockers)
    assert derive_status(state) is expected
    assert build_manifest(state, "r", now=NOW).status is expected


def test_manifest_of_a_session_without_goal() -> None:
    manifest = build_manifest(rich_state(goal="  "), "r", now=NOW)
    assert manifest.goal == NO_GOAL


def test_manifest_errors_name_the_field() -> None:
    with pytest.raises(InputError) as caught:
        build_manifest(rich_state(), " ", now=NOW)
    assert str(caught.value) == (
        "handoff manifest: decision_rationale: string should have at least 1 character"
    )
    with pytest.raises(InputError) as caught:
        build_manifest(rich_state(memory_keys=["ok", "../x"]), "r", now=NOW)
    assert str(caught.value).startswith("handoff manifest: memory_keys[1]: string should match")


def manifest() -> HandoffManifest:
    return build_manifest(rich_state(), "context 352000 >= hard limit 350000", now=NOW)


def test_manifest_markdown_golden() -> None:
    text = render_manifest_markdown(manifest(), session_id="s1", step=40)
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    # a heading per seed-plan field (not the document's version); the constraints, decisions
    # and last message of the state; the agent's words and the record (always present)
    assert len(headings) == 19
    golden("handoff.md", text)
    full = manifest().replace(
        requests=["r"],
        constraints=["c"],
        decisions=["d"],
        done=["x"],
        remaining=["y"],
        open_failures=["pytest: failed (1 failed in 0.1s)"],
        moved_artifacts=["a.py -> b.py"],
        deleted_artifacts=["c.py"],
        transcript="~/.claude/projects/p/s1.jsonl",
    )
    text = render_manifest_markdown(full, session_id="s1", step=40)
    # every field filled: a heading per field but the document's version (people read
    # content) and agent_id (linkage, as the session and the step in the title are)
    assert len(re.findall(r"^## (.+)$", text, flags=re.M)) == len(HandoffManifest.FIELDS) - 2


def test_the_seed_holds_the_manifest_and_memory_but_no_transcript() -> None:
    hits = [
        ("decisions/auth-jwt", "Use HS256; key from PAYMENTS_JWT_KEY."),
        ("payments/conventions", "Handlers live in src/payments/;\n" + "y" * 3000),
    ]
    m = manifest()
    seed = seed_text(m, memory=hits)
    assert TRANSCRIPT_ONLY not in seed
    # no transcript: nothing of the conversation
    for message in conversation()[1:]:
        assert message.content not in seed
    assert f"**Next step:** {m.next_safe_action}" in seed
    assert "**Status (recorded):** in progress" in seed
    assert "- topic `decisions/auth-jwt`:\n> Use HS256; key from PAYMENTS_JWT_KEY." in seed
    assert (
        "> Handlers live in src/payments/;\n> [… cut here: read the memory topic "
        "`payments/conventions` for the rest]"
    ) in seed
    golden("seed_messages.txt", seed)


def test_manifest_filename() -> None:
    m = manifest()
    assert manifest_filename(m, "s1") == "20260804T120000Z_s1.json"
    assert manifest_filename(m, "../a b/ü:c") == "20260804T120000Z_..-a-b---c.json"
    assert manifest_filename(m, "demo.2") == "20260804T120000Z_demo.2.json"  # not demo-2's
    assert manifest_filename(m, "a" * 300) == "20260804T120000Z_" + "a" * 100 + ".json"
    fraction = m.replace(timestamp="2026-08-04T12:00:00.25Z")
    assert manifest_filename(fraction, "s1") == "20260804T120000.25Z_s1.json"


# --- docs ---------------------------------------------------------------------------------


def test_docs_examples_are_current() -> None:
    text = (Path(__file__).parents[2] / "docs" / "manifest.md").read_text()
    _, state_json = re.findall(r"```json\n(.*?)```", text, flags=re.S)
    (document,) = re.findall(r"```markdown\n(.*?)```", text, flags=re.S)
    state = parse_state(state_json, "manifest.md")
    result = compact(state, retain=2, now=NOW, trigger="soft_compact")
    assert document == result.document
    fixture = Path(__file__).parents[1] / "fixtures" / "sample_manifest.json"
    m = validate_manifest(json.loads(fixture.read_text()))
    hit = ("decisions/auth-jwt", "HS256, key from PAYMENTS_JWT_KEY; 15-minute access tokens.")
    seed = seed_text(m, memory=[hit], read_more=MANIFEST_READ_MORE)
    assert seed in re.findall(r"```text\n(.*?)```", text, flags=re.S)


def conversations() -> list[list[Message]]:
    """Conversations of every shape the cut meets: empty, system messages only, system
    messages between and after the others, fewer and more messages than are read."""
    m, base = Message, conversation()
    system = m(role=MessageRole.SYSTEM, content="hint: earlier context", name=HINT_NAME)
    said = [m(role=MessageRole.USER, content=f"request {i}: see secret-{i}") for i in range(14)]
    return [
        [],
        [system],
        base,
        base[:3],
        [*base, system, *said],
        [*said[:4], system, *said[4:], system],
        [system, *said, m(role=MessageRole.TOOL, content="", name="empty")],
    ]


@pytest.mark.parametrize("retain", [0, 1, 3, 5, 6, 9, 20])
@pytest.mark.parametrize("index", range(len(conversations())))
def test_the_deterministic_compaction_reads_only_what_it_keeps_or_quotes(
    retain: int, index: int
) -> None:
    from clm_policy.lifecycle.compaction import what_it_reads

    state = rich_state(messages=conversations()[index])
    read = what_it_reads(state, retain)
    assert len(read.messages) == len(state.messages)
    assert [m.role for m in read.messages] == [m.role for m in state.messages]
    # the same compaction, field for field, from either
    assert compact(read, retain=retain, now=NOW) == compact(state, retain=retain, now=NOW)
    left_out = [m for m in read.messages if not m.content and m.name is None]
    conversation_read = [m for m in read.messages if m.role is not MessageRole.SYSTEM][
        -max(retain, 5) :
    ]
    assert all(m.content for m in conversation_read if m.name != "empty")
    if index == 4:  # 2 system messages and 22 others: all but the last read are left out
        assert len(left_out) == 2 + max(0, 22 - max(retain, 5))
