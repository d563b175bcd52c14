"""An agent's own handoff or summary read into fields (clm_policy.transcripts.notes): headings,
bold labels, ``Label:`` lines, numbered headings, lists, checkboxes and "none"."""

from __future__ import annotations

import pytest

from clm_policy.transcripts.notes import AgentNotes, label_field, parse_notes

HEADINGS = """\
I renamed the helper and re-ran the suite.

## Goal
Make the CSV parser keep quoted commas.

## Done and verified
- `parse_line` uses `csv.reader` (csvtool/parse.py)
- `python -m pytest -q`: 4 passed

## Not verified
- Windows line endings

## Blockers
None.

## Next safe action
Add a test for escaped quotes in tests/test_quoted.py, then run `pytest -q`.
"""

BOLD = """\
**Goal:** ship the ledger export without zero-amount rows
**Status:** in progress
**Done:**
1. Skipped zero rows in ledger/export.py
2. Added tests/test_export_zero.py
**What is verified:** `pytest -q tests/test_export_zero.py` passes
**Not yet verified:** the full suite
**Blockers:** `pytest -q` fails in test_totals (3 failures)
**Next step:** fix test_totals, then run the full suite
"""

LABELS = """\
Goal: Rename the config key `timeout` to `timeout_s` everywhere.
Decisions: keep a deprecation alias for one release
Remaining:
  - update docs/config.md
  - [x] update config.py
  - [ ] update the CLI's --timeout help
Next: update docs/config.md
"""

CLAUDE_COMPACT = """\
This session is being continued from a previous conversation that ran out of context. The \
summary below covers the earlier portion of the conversation.

<analysis>
The user asked for several things; let me go through them.
Blockers: this analysis line must not count.
</analysis>

<summary>
1. Primary Request and Intent:
   The user asked to build a TODO app with /orchestrator, then to "tackle them" (the failing
   tests), with no fallbacks.

2. Key Technical Concepts:
   - Phoenix LiveView
   - Ecto

3. Files and Code Sections:
   - lib/todo/items.ex
      - Added `toggle/1`
      ```elixir
      def toggle(item), do: ...
      ```

4. Errors and fixes:
   - `mix test` had 11 failures; fixed 8 of them.

7. Pending Tasks:
   - Fix the remaining 3 failures in test/todo/items_test.exs
   - Run `mix credo`

8. Current Work:
   Fixing `Items.toggle/1`.

9. Optional Next Step:
   Fix the failure in test/todo/items_test.exs:42 ("expected done: true").
</summary>
"""

CODEX_COMPACT = """\
Another language model started to solve this problem and produced a summary of its thinking \
process. You also have access to the state of the tools that were used by that language \
model. Use this to build on the work that has already been done and avoid duplicating work. \
Here is the summary produced by the other language model, use the information in this \
summary to assist with your own analysis:
**Current progress and key decisions made**
- notes.txt written; decided to keep the draft status until review
**What remains to be done (clear next steps)**
1. Set notes.txt to final
2. Run the tests
"""


def test_markdown_headings() -> None:
    notes = parse_notes(HEADINGS)
    assert notes == AgentNotes(
        goal="Make the CSV parser keep quoted commas.",
        verified=[
            "`parse_line` uses `csv.reader` (csvtool/parse.py)",
            "`python -m pytest -q`: 4 passed",
        ],
        not_verified=["Windows line endings"],
        blockers=[],
        next_action=(
            "Add a test for escaped quotes in tests/test_quoted.py, then run `pytest -q`."
        ),
    )


def test_bold_labels() -> None:
    notes = parse_notes(BOLD)
    assert notes.goal == "ship the ledger export without zero-amount rows"
    assert notes.status == "in_progress"
    assert notes.done == [
        "Skipped zero rows in ledger/export.py",
        "Added tests/test_export_zero.py",
    ]
    assert notes.verified == ["`pytest -q tests/test_export_zero.py` passes"]
    assert notes.not_verified == ["the full suite"]
    assert notes.blockers == ["`pytest -q` fails in test_totals (3 failures)"]
    assert notes.next_action == "fix test_totals, then run the full suite"


def test_label_lines_and_checkboxes() -> None:
    notes = parse_notes(LABELS)
    assert notes.goal == "Rename the config key `timeout` to `timeout_s` everywhere."
    assert notes.decisions == ["keep a deprecation alias for one release"]
    assert notes.done == ["update config.py"]
    assert notes.remaining == ["update docs/config.md", "update the CLI's --timeout help"]
    assert notes.next_action == "update docs/config.md"
    assert notes.blockers is None  # not mentioned: unknown, not "none"


def test_claude_code_compact_summary() -> None:
    notes = parse_notes(CLAUDE_COMPACT)
    assert notes.goal.startswith("The user asked to build a TODO app with /orchestrator")
    assert "no fallbacks" in notes.goal
    assert notes.remaining == [
        "Fix the remaining 3 failures in test/todo/items_test.exs",
        "Run `mix credo`",
    ]
    assert notes.next_action == (
        'Fix the failure in test/todo/items_test.exs:42 ("expected done: true").'
    )
    assert notes.files == ["lib/todo/items.ex; Added `toggle/1`"]
    assert notes.blockers is None  # the analysis is not the summary


def test_codex_compaction() -> None:
    notes = parse_notes(CODEX_COMPACT)
    assert notes.done == ["notes.txt written; decided to keep the draft status until review"]
    assert notes.next_action == "Set notes.txt to final"
    assert notes.remaining == ["Run the tests"]


@pytest.mark.parametrize(
    ("text", "next_action"),
    [
        (
            "Done with the parser. Next, I'll add the escaped-quote test.",
            "add the escaped-quote test.",
        ),
        ("All set.\nNext step: run the migration on staging.", "run the migration on staging."),
        ("The agent updated notes.txt.", ""),
    ],
)
def test_prose_without_headings(text: str, next_action: str) -> None:
    assert parse_notes(text).next_action == next_action


@pytest.mark.parametrize(
    ("label", "field"),
    [
        ("Done and verified", "verified"),
        ("What is NOT verified", "not_verified"),
        ("Unverified", "not_verified"),
        ("Blockers / open issues", "blockers"),
        ("7. Pending Tasks", "remaining"),
        ("9. Optional Next Step", "next_action"),
        ("Next safe action", "next_action"),
        ("What remains to be done (clear next steps)", "next_action"),
        ("Current progress and key decisions made", "done"),
        ("1. Primary Request and Intent", "goal"),
        ("Key decisions", "decisions"),
        ("Important context, constraints, or user preferences", "constraints"),
        ("8. Current Work", "context"),
        ("Status", "status"),
        ("Changed files", "files"),
        ("Thoughts", None),
    ],
)
def test_label_field(label: str, field: str | None) -> None:
    assert label_field(label) == field


def test_status_words() -> None:
    assert parse_notes("Status: completed — all 389 tests pass").status == "completed"
    assert parse_notes("Status: blocked on the API key").status == "blocked"
    assert parse_notes("Status: phase 1 of 3 done").status == "partial_complete"


def test_labels_on_one_line() -> None:
    notes = parse_notes("Goal: quoted commas. Done: parser, tests. Next: release notes.")
    assert (notes.goal, notes.done, notes.next_action) == (
        "quoted commas.",
        ["parser, tests."],
        "release notes.",
    )
    # a label inside a sentence is no heading
    assert parse_notes("Goal: keep it simple. It says: no.").goal == "keep it simple. It says: no."


@pytest.mark.parametrize(
    "text",
    [
        "None",
        "none.",
        "None — the 2 failing tests fail on main too",
        "n/a",
        "No blockers.",
        "none: all green",
        "Nothing.",
    ],
)
def test_none_says_there_are_none(text: str) -> None:
    assert parse_notes(f"## Blockers\n{text}\n").blockers == []


def test_nothing_to_read() -> None:
    assert parse_notes("").empty
    assert parse_notes("Thanks!").empty


def test_an_item_that_starts_with_an_option_is_no_none() -> None:
    # the recorded handoffs (benchmarks/fidelity/recorded/): "- --json added to ..." was read
    # as "-" followed by a dash, an item saying there is nothing, and dropped
    notes = parse_notes(
        "## Done and verified\n"
        "- --verbose added to report/cli.py; `python -m report.cli --verbose x.csv` prints "
        "`3 rows`\n"
        "- -v is its short form\n\n"
        "## Blockers\n- —\n\n"
        "## Not verified\n-\n"
    )
    assert notes.verified == [
        "--verbose added to report/cli.py; `python -m report.cli --verbose x.csv` prints `3 rows`",
        "-v is its short form",
    ]
    assert notes.blockers == []  # a dash alone still says there are none
    assert notes.not_verified == []


def test_a_wrapped_item_reads_as_one_sentence_and_a_nested_one_as_a_part() -> None:
    notes = parse_notes(
        "## Tasks\n"
        "- Phase 1, the server side: done (the middleware reads the Authorization header, token\n"
        "refresh fixed)\n"
        "- Phase 2, the web client:\n"
        "  - api.ts sends the bearer token\n"
        "    on every call\n"
        "  - login page: not started\n"
    )
    assert notes.done == [
        "Phase 1, the server side: done (the middleware reads the Authorization header, "
        "token refresh fixed)"
    ]
    assert notes.remaining == [
        "Phase 2, the web client: api.ts sends the bearer token on every call; "
        "login page: not started"
    ]
