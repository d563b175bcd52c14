"""The one road of every handoff (clm_policy.lifecycle.compose): the agent's words kept whole
whatever their form, the record beside them, the contradictions between the two, and a seed
from every kind of bad input."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from clm_policy.lifecycle.agent_handoff import AgentHandoff
from clm_policy.lifecycle.compose import (
    compose,
    words_of_fields,
    words_of_reply,
    words_of_transcript,
)
from clm_policy.lifecycle.handoff import preview
from clm_policy.lifecycle.seed import PART_1, PART_2
from clm_policy.transcripts.notes import parse_notes
from clm_policy.transcripts.reading import read_transcript

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


def transcript(
    path: Path,
    *,
    test_output: str = "1 failed, 4 passed in 0.2s",
    code: int = 1,
    command: str = "python -m pytest -q",
) -> Path:
    """A Claude Code session: a request, an edit, a passing then a failing pytest run."""
    lines: list[dict[str, Any]] = []

    def add(kind: str, content: Any, **extra: Any) -> None:
        lines.append(
            {
                "type": kind,
                "uuid": f"u{len(lines)}",
                "sessionId": "s1",
                "cwd": str(path.parent),
                "timestamp": f"2026-12-01T10:00:{len(lines):02d}.000Z",
                "message": {"role": kind, "content": content, **extra},
            }
        )

    add("user", "Make the parser keep quoted commas. Do not add a dependency.")
    add(
        "assistant",
        [
            {
                "type": "tool_use",
                "id": "e1",
                "name": "Edit",
                "input": {"file_path": str(path.parent / "parse.py")},
            },
            {
                "type": "tool_use",
                "id": "b1",
                "name": "Bash",
                "input": {"command": command},
            },
        ],
        id="m1",
        usage={"input_tokens": 10, "cache_read_input_tokens": 50_000, "output_tokens": 5},
    )
    add("user", [{"type": "tool_result", "tool_use_id": "e1", "content": "ok"}])
    add("user", [{"type": "tool_result", "tool_use_id": "b1", "content": "5 passed in 0.2s"}])
    add(
        "assistant",
        [
            {
                "type": "tool_use",
                "id": "b2",
                "name": "Bash",
                "input": {"command": command},
            }
        ],
        id="m2",
        usage={"input_tokens": 10, "cache_read_input_tokens": 60_000, "output_tokens": 5},
    )
    add(
        "user",
        [
            {
                "type": "tool_result",
                "tool_use_id": "b2",
                "content": f"Exit code {code}\n{test_output}",
                "is_error": code != 0,
            }
        ],
    )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def seed_of(path: Path, reply: str | None) -> tuple[Any, str]:
    reading = read_transcript(path)
    composed = compose(reading, words_of_reply(reply), session_id="s1")
    return preview(composed, now=NOW, budget=9000, read_more="`clm-policy show x`.")


@pytest.mark.parametrize(
    "reply",
    [
        "Quoted commas work now; the next thing is the release notes.",  # no headings at all
        "## 次のステップ\nリリースノートを書く\n\n## 目標\nparse.py のクォート対応\n",  # noqa: RUF001 (another language, order)
        "**Next**: notes\n**Goal** — commas\n",  # labels of another form
    ],
)
def test_the_words_are_kept_whole_whatever_their_form(tmp_path: Path, reply: str) -> None:
    manifest, seed = seed_of(transcript(tmp_path / "t.jsonl"), reply)
    assert manifest.agent_words is not None
    assert manifest.agent_words.text == reply.strip()
    part1 = seed.split(PART_1 + "\n\n")[1].split("\n\n" + PART_2)[0]
    assert [line.removeprefix("> ").removeprefix(">") for line in part1.splitlines()] == (
        reply.strip().splitlines()
    )
    assert "1.\n> Make the parser keep quoted commas. Do not add a dependency." in seed


def test_a_long_section_stays_in_the_manifest_and_the_seed_is_cut_between_sections(
    tmp_path: Path,
) -> None:
    huge = "\n".join(f"- note {n}: " + "x" * 90 for n in range(500))  # about 50,000 characters
    reply = f"## Goal\nquoted commas\n\n## Decisions\n{huge}\n\n## Next step\nwrite the notes\n"
    manifest, seed = seed_of(transcript(tmp_path / "t.jsonl"), reply)
    assert manifest.agent_words.text == reply.strip()  # nothing the agent wrote is lost
    assert len(seed) <= 9000
    assert "> write the notes" in seed  # the next step is the section kept first
    assert "> quoted commas" in seed
    assert "note 0:" not in seed
    assert "the agent's sections 'Decisions'" in seed.splitlines()[-1]


def test_the_same_words_as_fields_or_as_a_reply_are_one(tmp_path: Path) -> None:
    fields = AgentHandoff(
        goal="quoted commas",
        tasks=["parser: done", "notes: not started"],
        verification=["`python -m pytest -q`: 1 failed, 4 passed"],
        next_step="fix the failing test",
        plan=["write the notes"],
    )
    words = words_of_fields(fields)
    assert words is not None
    path = transcript(tmp_path / "t.jsonl")
    by_tool = preview(compose(read_transcript(path), words, session_id="s1"), now=NOW)
    by_reply = preview(
        compose(read_transcript(path), words_of_reply(words.text), session_id="s1"), now=NOW
    )
    assert by_tool[1] == by_reply[1]
    notes = parse_notes(words.text)
    assert (notes.goal, notes.next_action) == ("quoted commas", "fix the failing test")
    assert notes.done == ["parser: done"]
    assert notes.remaining == ["write the notes", "notes: not started"]
    assert words_of_fields(AgentHandoff(goal=" ", next_step="")) is None


def test_the_record_says_where_it_disagrees_with_the_agent(tmp_path: Path) -> None:
    reply = "## Verification\n- `python -m pytest -q`: all tests pass\n\n## Next step\nship it\n"
    manifest, seed = seed_of(transcript(tmp_path / "t.jsonl"), reply)
    (said,) = manifest.record.contradictions
    assert said == (
        'the agent\'s words say "- `python -m pytest -q`: all tests pass", but the latest run '
        "of `python -m pytest -q` failed (1 failed, 4 passed in 0.2s)."
    )
    assert f"**Note:** {said}" in seed.split(PART_1)[0]
    # a narrower run, or words that aim at a pass, are no contradiction
    for fine in (
        "- `python -m pytest -q tests/test_json.py`: 1 passed",
        "Fix the parser so that the tests pass, then run `python -m pytest -q`.",
        # the words say it failed, in the session's language: 1-10 PASS, 11-14 failed
        "- `python -m pytest -q`: 1-10 PASS; 11-14 因 import 失败",
    ):
        manifest, _ = seed_of(transcript(tmp_path / "t.jsonl"), f"## Next step\n{fine}\n")
        assert manifest.record.contradictions == [], fine


def test_an_earlier_pass_is_no_pass_once_the_check_fails(tmp_path: Path) -> None:
    manifest, seed = seed_of(transcript(tmp_path / "t.jsonl"), None)
    (check,) = manifest.record.checks
    assert (check.command, check.status, check.earlier) == (
        "python -m pytest -q",
        "failed",
        "passed (5 passed in 0.2s)",
    )
    assert manifest.status.value != "completed"
    assert "- `python -m pytest -q`: failed — 1 failed, 4 passed in 0.2s" in seed
    assert "**Status (recorded):** in progress" in seed


def test_a_check_run_after_a_here_document_is_shown_by_what_it_ran(tmp_path: Path) -> None:
    """Agents edit through ``python - <<'PY'`` and test in the same command: the seed names
    the check by its lines outside the document, in the manifest's record as in the seed
    (which held the document's first lines before)."""
    body = "\n".join(f"line_{i} = {i}" for i in range(40))
    command = f"python - <<'PY'\n{body}\nPY\npython -m pytest -q tests/test_parse.py"
    manifest, seed = seed_of(transcript(tmp_path / "t.jsonl", command=command), None)
    (check,) = manifest.record.checks
    assert check.command == "python - <<'PY' …; python -m pytest -q tests/test_parse.py"
    assert (
        "- `python - <<'PY' …; python -m pytest -q tests/test_parse.py`: failed — 1 failed, "
        "4 passed in 0.2s" in seed
    )
    assert "line_1 = 1" not in seed


def test_a_transcript_with_broken_lines_still_gives_a_seed(tmp_path: Path) -> None:
    path = transcript(tmp_path / "t.jsonl")
    lines = path.read_text().splitlines()
    lines.insert(2, "this line is not JSON {")
    path.write_text("\n".join(lines) + '\n{"type": "assistant", "mess')  # cut mid-line
    manifest, seed = seed_of(path, "## Next step\nfix it\n")
    assert manifest.agent_words.text == "## Next step\nfix it"
    assert "> fix it" in seed
    assert "1.\n> Make the parser keep quoted commas." in seed


def test_a_reply_in_the_transcript_counts_only_after_the_request(tmp_path: Path) -> None:
    handoffish = "## Goal\ncommas\n\n## Next step\nnotes\n\n## Open questions and blockers\nnone"
    path = transcript(tmp_path / "t.jsonl", test_output="5 passed in 0.2s", code=0)
    lines = path.read_text()
    said = {"type": "assistant", "uuid": "u9", "sessionId": "s1", "timestamp": "2026-12-01T10:01:00.000Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": handoffish}], "id": "m9"}}  # fmt: skip
    path.write_text(lines + json.dumps(said) + "\n")
    assert words_of_transcript(read_transcript(path)) is None  # an ordinary last message
    asked = {"type": "user", "uuid": "u8", "sessionId": "s1", "isMeta": True, "timestamp": "2026-12-01T10:00:59.000Z",
             "message": {"role": "user", "content": "Stop hook feedback:\nclm-policy: the policy hands off. Finish the step you are on, start no new work, and end your reply with a handoff for the next session."}}  # fmt: skip
    path.write_text(lines + json.dumps(asked) + "\n" + json.dumps(said) + "\n")
    words = words_of_transcript(read_transcript(path))
    assert words is not None
    assert (words.source, words.text) == ("reply", handoffish)


def test_a_recorded_item_the_agent_says_again_is_listed_once() -> None:
    from clm_policy.models.state import SessionState

    state = SessionState(
        session_id="s",
        decisions=["tokens expire after 15 minutes", "refresh tokens rotate"],
        verified=["login returns 200"],
    )
    reply = (
        "## Decisions\n- Access tokens expire after 15 minutes.\n"
        "## Verification\n- `pytest`: 212 passed; login returns 200\n"
        "## Next step\nThe web client."
    )
    done = compose(state, words_of_reply(reply))
    assert done.state.decisions == [
        "refresh tokens rotate",
        "Access tokens expire after 15 minutes.",
    ]
    assert done.state.verified == ["`pytest`: 212 passed; login returns 200"]


def test_a_compaction_summary_older_than_the_record_says_what_changed_since(
    tmp_path: Path,
) -> None:
    base = {"cwd": "/w/p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}

    def write(n: int, path: str) -> list[dict[str, Any]]:
        call = {"type": "tool_use", "id": f"w{n}", "name": "Write"}
        call["input"] = {"file_path": path, "content": "x"}
        result = {"type": "tool_result", "tool_use_id": f"w{n}", "content": "File created"}
        return [
            {**base, "type": "assistant", "message": {"id": f"m{n}", "content": [call]}},
            {**base, "type": "user", "message": {"role": "user", "content": [result]}},
        ]

    summary = (
        "1. Primary Request and Intent:\n   Unify the roles.\n\n"
        "7. Pending Tasks:\n   - Decide to keep `organizationRole`\n   - Add `parse_config`\n"
        "   - Test src/parse_config.py\n"
    )
    path = tmp_path / "t.jsonl"
    path.write_text(
        "".join(
            json.dumps(line) + "\n"
            for line in [
                {**base, "type": "user", "message": {"role": "user", "content": "Unify roles."}},
                {**base, "type": "system", "subtype": "compact_boundary"},
                {**base, "type": "user", "isCompactSummary": True, "message": {"content": summary}},
                *write(1, "/w/p/src/ChangeOrganizationRoleDialogue.vue"),
                *write(2, "/w/p/src/parse_config.py"),
            ]
        )
    )
    reading = read_transcript(path)
    words = words_of_transcript(reading)
    assert words is not None
    assert words.source == "summary"
    composed = compose(reading, words, session_id="s1")
    # the record shows what changed, not that the step is done; a file that only holds the
    # word (ChangeOrganizationRoleDialogue.vue) is no sign of "Decide to keep organizationRole"
    # (one line for a file, whatever the steps call it)
    assert composed.contradictions == [
        "part 1 is older than the record: since it was written, `src/parse_config.py` changed "
        '(its steps "Add `parse_config`"; "Test src/parse_config.py").'
    ]


def test_a_message_given_when_rejecting_a_tool_call_says_so_in_the_seed(tmp_path: Path) -> None:
    """The reason a person gives when rejecting a tool call is their message; the seed says
    it answered a call that never ran, beside its number and outside their quoted words."""
    base = {"cwd": str(tmp_path), "sessionId": "s1", "isSidechain": False, "timestamp": "t"}
    write = {"type": "tool_use", "id": "w1", "name": "Write"}
    write["input"] = {"file_path": str(tmp_path / "plan.md"), "content": "x"}
    rejected = (
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. "
        "if it was a file edit, the new_string was NOT written to the file). To tell you how "
        "to proceed, the user said:\nput the plan in a Linear comment"
    )
    result = {"type": "tool_result", "tool_use_id": "w1", "is_error": True, "content": rejected}
    lines = [
        {**base, "type": "user", "message": {"role": "user", "content": "Write the plan."}},
        {**base, "type": "assistant", "message": {"id": "m1", "content": [write]}},
        {**base, "type": "user", "message": {"role": "user", "content": [result]}},
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    manifest, seed = seed_of(path, None)
    assert manifest.requests == [
        "Write the plan.",
        "(rejecting a tool call) put the plan in a Linear comment",
    ]
    assert "1.\n> Write the plan.\n" in seed
    assert (
        "2. (rejecting a tool call: the call did not run)\n> put the plan in a Linear comment\n"
    ) in seed


def test_a_task_list_older_than_the_latest_request_says_so(tmp_path: Path) -> None:
    base = {"cwd": "/w/p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}

    def call(n: int, name: str, args: dict[str, Any], out: str) -> list[dict[str, Any]]:
        use = {"type": "tool_use", "id": f"c{n}", "name": name, "input": args}
        result = {"type": "tool_result", "tool_use_id": f"c{n}", "content": out}
        return [
            {**base, "type": "assistant", "message": {"id": f"m{n}", "content": [use]}},
            {**base, "type": "user", "message": {"role": "user", "content": [result]}},
        ]

    todos = [
        {"content": "Draft the spec", "status": "completed", "activeForm": "Drafting"},
        {"content": "Validate the spec", "status": "in_progress", "activeForm": "Validating"},
    ]

    def prompt(text: str) -> dict[str, Any]:
        return {**base, "type": "user", "message": {"role": "user", "content": text}}

    def session(*later: dict[str, Any]) -> Path:
        lines = [
            prompt("Write the spec for the upload page."),
            *call(1, "TodoWrite", {"todos": todos}, "Todos have been modified successfully."),
            *later,
        ]
        path = tmp_path / f"s{len(later)}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        return path

    label = "**Task list (the agent's own, last updated before the user's latest request"
    # a new request, then work on it without touching the list: the list may be the earlier one's
    stale = session(
        prompt("Now implement phase 3: the two-pane layout."),
        *call(2, "Write", {"file_path": "/w/p/src/Pane.tsx", "content": "x"}, "File created"),
    )
    manifest, seed = seed_of(stale, None)
    assert manifest.record.tasks_before_request
    assert label in seed
    assert "[~] Validate the spec" in seed
    # work under the request the list was made for: the list is current
    current = session(
        *call(2, "Write", {"file_path": "/w/p/spec.md", "content": "x"}, "File created")
    )
    manifest, seed = seed_of(current, None)
    assert not manifest.record.tasks_before_request
    assert "**Task list (the agent's own, as last updated)" in seed
    # what the person says when rejecting a call corrects the task: no new request
    refusal = (
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. "
        "if it was a file edit, the new_string was NOT written to the file). To tell you how "
        "to proceed, the user said:\nonly scrape the leod.chen mailbox, nothing else"
    )
    use = {"type": "tool_use", "id": "c3", "name": "Bash", "input": {"command": "node x.js"}}
    rejected = {"type": "tool_result", "tool_use_id": "c3", "is_error": True, "content": refusal}
    corrected = session(
        {**base, "type": "assistant", "message": {"id": "m3", "content": [use]}},
        {**base, "type": "user", "message": {"role": "user", "content": [rejected]}},
        *call(4, "Write", {"file_path": "/w/p/spec.md", "content": "x"}, "File created"),
    )
    manifest, _seed = seed_of(corrected, None)
    assert not manifest.record.tasks_before_request
