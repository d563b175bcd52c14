"""What a session did, read for a handoff (clm_policy.transcripts.work, files, takeover): every
request, the task list, runs judged from their output, files as they are, the status and the
next step — on the project's own fidelity sessions (benchmarks/fidelity/, in the real
agents' shapes) and on small sessions written here for one rule each."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from clm_policy.models.enums import TaskStatus
from clm_policy.transcripts.files import FileLog, Paths, created_in_output, shell_file_ops
from clm_policy.transcripts.notes import parse_notes
from clm_policy.transcripts.reading import read_transcript
from clm_policy.transcripts.record import record_of
from clm_policy.transcripts.takeover import (
    asked_user,
    build_state,
    constraints_of,
    goal_of,
    intention,
    state_of,
    substantive,
)

from conftest import REPO, real_fixtures, spec_kit_message

FIDELITY = REPO / "benchmarks" / "fidelity" / "sessions"


def session(name: str) -> Path:
    direct = FIDELITY / f"{name}.jsonl"
    return direct if direct.exists() else next((FIDELITY / name).glob("*.jsonl"))


def jsonl(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


RECORDED = REPO / "benchmarks" / "fidelity" / "recorded"


def recorded(name: str) -> Path:
    (path,) = (RECORDED / name).glob("*.jsonl")
    return path


# -- the fidelity sessions ---------------------------------------------------------------------


def test_a_plan_kept_in_todowrite_and_a_hidden_failure() -> None:
    reading = read_transcript(session("claude-todo-handoff"))
    state = state_of(reading, "s")
    assert state.done == ["Write a failing test for --json", "Implement --json in csvtool/cli.py"]
    # the task in progress first, then the pending ones
    assert state.remaining == ["Run the full test suite", "Document --json in README.md"]
    # tail exits 0; the output says 1 failed
    assert state.open_failures == [
        "python -m pytest -q 2>&1 | tail -3: failed (1 failed, 5 passed in 0.12s; first: "
        "tests/test_quoted.py::test_escaped_quotes - AssertionError: assert ['a\"b'] == "
        "['a\"\"b'])"
    ]
    # a failing check is work to do, not a blocker (a refusal, a login, an answer is)
    assert state.blockers == []
    assert state.status is TaskStatus.RUNNING
    # rg with no match is the answer; the red test run was followed by a green one
    assert 'rg -n "json" csvtool/: no match (exit 1)' in state.commands_and_results
    assert state.verified == ["python -m pytest -q tests/test_json.py: passed (1 passed in 0.05s)"]
    assert state.constraints == [
        "Write the test first.",
        "No new dependencies: use the standard library json module only.",
    ]
    assert state.changed_artifacts == ["tests/test_json.py", "csvtool/cli.py"]


def test_the_handoff_reply_is_read_over_the_transcript() -> None:
    reading = read_transcript(session("claude-todo-handoff"))
    assert reading.work is not None
    reply = reading.work.last_message
    base = build_state(reading, "s")
    state = build_state(reading, "s", parse_notes(reply))
    assert base.next_action == ""  # before the reply: no next step stated
    assert state.next_action == (
        "Fix the escaped-quote handling that test_escaped_quotes checks, then run "
        "`python -m pytest -q`."
    )
    assert state.blockers == [
        "`python -m pytest -q` fails: tests/test_quoted.py::test_escaped_quotes (1 failed, 5 passed)"
    ]
    assert state.not_verified == ["the README has no --json example yet"]


def test_requests_queued_and_slash_commands_and_a_closing_thanks() -> None:
    reading = read_transcript(session("claude-queued-slash"))
    assert reading.work is not None
    assert [(r.text, r.source) for r in reading.work.requests] == [
        ("/orchestrator create TODO app", "command"),
        ("also add a due date to each todo", "queued"),  # only in a queue-operation line
        (
            "Now add a POST /todos/{id}/done endpoint. Keep everything in memory, never add a "
            "database.",
            "prompt",
        ),
        ("Thanks!", "prompt"),
    ]
    state = state_of(reading, "s")
    assert state.goal.startswith("Now add a POST /todos/{id}/done endpoint.")
    assert state.constraints == ["Keep everything in memory, never add a database."]
    # its last words on the request say the work is complete: "Thanks!" changes nothing
    assert state.status is TaskStatus.COMPLETED


def test_subagent_edits_moves_deletions_and_a_notice() -> None:
    reading = read_transcript(session("claude-pipeline-subagent"))
    work = reading.work
    assert work is not None
    # the subagent's edit is in its own transcript beside the session's
    assert reading.changed_artifacts == ["lib/todo/items.ex", "lib/todo_web/live/index.ex"]
    assert (work.moved, work.deleted) == (
        [("lib/todo/legacy.ex", "lib/todo/items.ex")],
        ["priv/repo/legacy_seeds.exs"],
    )
    assert work.last_answers_notice  # "Noted: …" answers the task notification
    # and is still among the agent's words to the user (an answer after a notification is
    # often the turn's summary)
    assert [text for _, text in work.said][-2:] == [
        "The rename is in; mix test reports failures to look at.",
        "Noted: the formatting check finished.",
    ]
    state = state_of(reading, "s")
    assert [r for r in state.requests if "task-notification" in r] == []
    assert state.next_action == ""  # the last message is no next step
    assert state.moved_artifacts == ["lib/todo/legacy.ex -> lib/todo/items.ex"]
    assert state.open_failures == [
        "mix test 2>&1 | tail -30: failed (297 tests, 11 failures; first: toggles done "
        "(Todo.ItemsTest))"
    ]
    assert state.done == ["subagent 'Update references': edited lib/todo_web/live/index.ex"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_place_of_a_subagents_meta_file_is_not_waited_on(tmp_path: Path) -> None:
    """A plain open of a FIFO named like a subagent's ``.meta.json`` waited for a writer for
    ever: the hook that read the session hung. It is no meta file: the subagent is named by
    its file, and its work is read as before."""
    copy = tmp_path / "s"
    shutil.copytree(session("claude-pipeline-subagent").parent, copy)
    (meta,) = copy.glob("*/subagents/*.meta.json")
    meta.unlink()
    os.mkfifo(meta)
    done: list[list[str]] = []
    reader = threading.Thread(
        target=lambda: done.append(read_transcript(next(copy.glob("*.jsonl"))).changed_artifacts),
        daemon=True,
    )
    reader.start()
    reader.join(timeout=120)  # (seconds, on a busy machine; the old reader never returned)
    assert done == [["lib/todo/items.ex", "lib/todo_web/live/index.ex"]]


def test_task_tools_and_a_stale_compact_summary() -> None:
    reading = read_transcript(session("claude-tasks-compact"))
    state = state_of(reading, "s")
    assert state.done == [
        "Filter zero-amount rows in ledger/export.py",
        "Add tests/test_export_zero.py",
    ]
    assert state.remaining == ["Update CHANGELOG.md"]
    # what the agent wrote of a task beside its title (TaskCreate's description) stays with it
    # while the task is open, through the TaskList that renamed them
    assert reading.work is not None
    assert record_of(reading.work).tasks == [
        "[x] Filter zero-amount rows in ledger/export.py",
        "[x] Add tests/test_export_zero.py",
        "[~] Update CHANGELOG.md — one line under Unreleased",
    ]
    # the summary's "write the test and run pytest" was done after it: no next step
    assert state.next_action == ""
    assert state.goal.startswith("Implement the rest of the plan phase by phase")
    assert state.constraints == ["Do not change the CSV column order."]


def test_codex_plan_patches_generators_and_compaction() -> None:
    reading = read_transcript(session("codex-plan-compact"))
    work = reading.work
    assert work is not None
    assert work.made == ["ledger-cli/Cargo.toml"]  # cargo new; main.rs was edited after
    assert (work.moved, work.deleted) == ([("NOTES.md", "docs/NOTES.md")], ["legacy/ledger.py"])
    state = state_of(reading, "s")
    assert state.open_failures == []  # failed, then passed: closed
    assert state.decisions == ["Keep parsing in its own module (src/parse.rs)"]
    # the request says it, and the summary: once
    assert state.constraints == ["Rust only, no unsafe code."]
    assert state.goal.startswith("Create the ledger-cli Rust crate")  # not "continue"


def test_codex_handoff_reply_says_the_failure_is_no_blocker() -> None:
    reading = read_transcript(session("codex-handoff"))
    assert reading.work is not None
    state = build_state(reading, "s", parse_notes(reading.work.last_message))
    assert state.open_failures == [
        "npm test: failed (Tests 2 failed | 10 passed (12); first: src/legacy/date.test.ts)"
    ]
    assert state.blockers == []  # "none — … known, unrelated"
    assert state.status is TaskStatus.RUNNING
    assert "diff -u src/theme/light.css src/theme/dark.css: differences (exit 1)" in (
        state.commands_and_results
    )
    assert "npm run build: passed (✓ built in 2.41s)" in state.verified


# -- rules, one at a time ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("thanks!", False),
        ("ok, go ahead", False),
        ("yes please", False),
        ("continue", False),
        ("LGTM 👍", False),
        ("1", False),
        ("tackle them", True),
        ("fix the flaky test", True),
    ],
)
def test_substantive(text: str, expected: bool) -> None:
    assert substantive(text) is expected


def test_goal_and_constraints() -> None:
    requests = [
        "Port the handlers to async.",
        "Keep the names; do not touch shop/legacy/.",
        "Thanks!",
    ]
    assert goal_of(requests) == "Port the handlers to async."
    assert constraints_of(requests) == ["Keep the names", "do not touch shop/legacy/."]
    # a question that says "don't" is no constraint
    assert constraints_of(["Why don't we cache it?", "No fallbacks.", "Write it in Rust."]) == [
        "No fallbacks.",
        "Write it in Rust.",
    ]
    # "<something> only" ends a clause: a constraint (the recorded codex-plan-compact's request;
    # its compaction snapshot listed no constraint); "only" inside a clause is none
    assert constraints_of(
        [
            "Create the wordcount package. Standard library only, no third-party packages.",
            "Rust only. The tests only fail on CI.",
        ]
    ) == ["Standard library only, no third-party packages.", "Rust only."]
    # "keep going" asks to continue (a real session's manifest listed it as a constraint);
    # "keep it simple" constrains the work
    assert constraints_of(["keep going", "Keep going with the tests.", "keep it simple"]) == [
        "keep it simple"
    ]


def test_a_prompt_template_as_the_goal_is_what_the_person_typed() -> None:
    # spec-kit's command as Codex records it: the template expanded around the person's input
    step = "1. Run `.specify/scripts/bash/check-prerequisites.sh --json` from repo root."
    rest = [f"{n}. More of the command's instructions." for n in range(2, 80)]

    def template(typed: str) -> str:
        return spec_kit_message(typed, [step, *rest])

    spec = "Build a lotto web app: one page issues tickets, one page draws the numbers."
    assert goal_of([template(spec)]) == f"{spec} (a prompt template: {step})"
    # a short input ("phase 1") refines the task before it, as a short follow-up does
    assert goal_of([template(spec), template("phase 1")]) == (
        f"{spec} (a prompt template: {step}) (then: phase 1 (a prompt template: {step}))"
    )
    assert goal_of([template("")]) == f"(no input) (a prompt template: {step})"


def test_a_question_or_a_mid_turn_intention() -> None:
    assert asked_user("Done.\n\nWant me to commit this?") == "Want me to commit this?"
    assert asked_user("Pushed. Let me know when you want the docs commit.") == (
        "Let me know when you want the docs commit."
    )
    assert asked_user("All done.") == ""
    assert intention("Exported. Now I'll draft the grant fields from the README.") == (
        "Now I'll draft the grant fields from the README."
    )


@pytest.mark.parametrize("edit_after", [True, False])
def test_a_mid_turn_intention_says_how_far_the_agent_got_since(
    tmp_path: Path, edit_after: bool
) -> None:
    # the agent said what it was about to do and acted: the next step is its words and what
    # it did since; an edit from before its words is no part of it
    base = {"cwd": "/w/p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}
    intent = "Now let me add the delete button with a double confirmation:"
    edit = _claude_call(
        "t1",
        "Edit",
        {"file_path": "/w/p/app/members/page.tsx", "old_string": "a", "new_string": "b"},
        "The file /w/p/app/members/page.tsx has been updated.",
    )
    said = {**base, "type": "assistant", "message": {"id": "m1", "content": [
        {"type": "text", "text": f"Found the member page. {intent}"}
    ]}}  # fmt: skip
    look = _claude_call("t2", "Read", {"file_path": "/w/p/app/lib/db.ts"}, "")[:1]  # no result
    turn = [said, *edit] if edit_after else [*edit, said, *look]
    lines = [
        {**base, "type": "user", "message": {"content": "Add a way to delete a member."}},
        *turn,
    ]
    state = state_of(read_transcript(jsonl(tmp_path / "t.jsonl", lines)), "s")
    step = "Now let me add the delete button with a double confirmation"
    if edit_after:
        step += ". Last being done: edited `app/members/page.tsx`"
    assert state.next_action == step


def test_a_subagent_whose_model_request_failed_did_nothing(tmp_path: Path) -> None:
    # Claude Code answers the call with the API's error (as in a real session: the subagent's
    # model was not supported) and a usage of 0 tokens: the agent failed, it was not started
    error = (
        'API Error: 400 {"error":{"message":"{\\"error\\":{\\"message\\":\\"The requested model '
        'is not supported.\\",\\"code\\":\\"model_not_supported\\"}}\\n","type":"error"}}'
    )
    usage = "agentId: ab12 (for resuming)\n<usage>total_tokens: 0\ntool_uses: 0</usage>"
    base = {"cwd": "/w/p", "sessionId": "s1", "type": "user"}
    lines = [
        {**base, "message": {"content": "Explore the project, then plan the MX kernel."}},
        *_claude_call(
            "t1",
            "Task",
            {"description": "Explore the project", "subagent_type": "Explore"},
            f"{error}\n{usage}",
        ),
        *_claude_call(
            "t2",
            "Task",
            {"description": "Review the plan", "subagent_type": "Plan"},
            "The plan is sound.\nagentId: cd34\n<usage>total_tokens: 900</usage>",
        ),
    ]
    failed = "API Error 400: The requested model is not supported. (model_not_supported)"
    alone = read_transcript(jsonl(tmp_path / "alone.jsonl", lines[:3])).work
    assert alone is not None
    assert alone.last_activity == f"an agent failed: Explore the project — {failed}"
    assert not alone.active_after(-1)  # it did nothing: no work done since the request
    assert alone.done_since(-1, "Start a subagent to explore") is None
    work = read_transcript(jsonl(tmp_path / "t.jsonl", lines)).work
    assert work is not None
    assert record_of(work).subagents == [
        f"Explore the project — failed: {failed}",
        "Review the plan",
    ]
    assert work.last_activity == "started an agent: Review the plan"
    assert work.active_after(-1)  # the second one worked


def test_a_command_retried_from_another_folder_closes_its_failure(tmp_path: Path) -> None:
    # Claude Code's shell stays where a `cd` left it: `git add apps/web/x.json` failed there and
    # worked as `cd /w/p && git add …`; `cd apps/web && vercel --prod` failed at its `cd` and
    # ran again from where the shell stood, failing for another reason — the one open failure
    def there(lines: list[Any]) -> list[Any]:
        return [{**line, "cwd": "/w/p/apps/web"} for line in lines]

    pathspec = "fatal: pathspec 'apps/web/x.json' did not match any files"
    no_cd = "(eval):cd:1: no such file or directory: apps/web"
    lines = [
        {"cwd": "/w/p", "sessionId": "s1", "type": "user", "message": {"content": "Deploy."}},
        *there(_claude_failed_bash("t1", "git add apps/web/x.json", pathspec)),
        *there(_claude_call("t2", "Bash", {"command": "cd /w/p && git add apps/web/x.json"}, "")),
        *there(_claude_failed_bash("t3", "cd apps/web && vercel --prod 2>&1 | head", no_cd)),
        *there(
            _claude_failed_bash(
                "t4",
                "vercel --prod --yes 2>&1 | tail",
                'npm error Tracker "idealTree" already exists',
            )
        ),
    ]
    work = read_transcript(jsonl(tmp_path / "t.jsonl", lines)).work
    assert work is not None
    assert work.failures == [
        '`vercel --prod --yes 2>&1 | tail` failed — npm error Tracker "idealTree" already exists'
    ]


def test_a_task_list_from_before_the_latest_message_gives_no_next_step(tmp_path: Path) -> None:
    # the list's open item is what the person's latest message may have changed ("do not
    # delete env files"): the next step is unknown, with the item and what was last done
    todos = [
        {"content": "Remove the legacy Docker files", "status": "in_progress"},
        {"content": "Point the app at /api/ocr", "status": "pending"},
    ]
    base = {"cwd": "/w/p", "sessionId": "s1", "type": "user"}
    edit = {"file_path": "/w/p/src/api.ts", "old_string": "a", "new_string": "b"}
    lines = [
        {**base, "message": {"content": "Move the app to Vercel."}},
        *_claude_call("t1", "TodoWrite", {"todos": todos}, "Todos have been modified"),
        {**base, "message": {"content": "Do not delete env files without asking me first."}},
        *_claude_call("t2", "Edit", edit, "The file /w/p/src/api.ts has been updated."),
    ]
    state = state_of(read_transcript(jsonl(tmp_path / "t.jsonl", lines)), "s")
    assert state.next_action == (
        "Unknown: the agent's task list was last updated before the user's latest message "
        "(its first open item: Remove the legacy Docker files). Last being done: edited "
        "`src/api.ts`"
    )
    # the list kept since the message: its item is the next step, as before
    lines.insert(4, _claude_call("t3", "TodoWrite", {"todos": todos}, "ok")[0])
    lines.insert(5, _claude_call("t3", "TodoWrite", {"todos": todos}, "ok")[1])
    state = state_of(read_transcript(jsonl(tmp_path / "t.jsonl", lines)), "s")
    assert state.next_action == ""
    assert state.remaining[0] == "Remove the legacy Docker files"


def test_claude_tool_rejection_carries_a_request(tmp_path: Path) -> None:
    base = {"cwd": "/w/p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}
    lines = [
        {**base, "type": "user", "message": {"role": "user", "content": "Write the plan."}},
        {
            **base,
            "type": "assistant",
            "message": {
                "id": "m1",
                "model": "x",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Write",
                        "input": {"file_path": "/w/p/plan.md", "content": "x"},
                    }
                ],
            },
        },
        {
            **base,
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "is_error": True,
                        "content": "The user doesn't want to proceed with this tool use. "
                        "The tool use was rejected (eg. if it was a file edit, the "
                        "new_string was NOT written to the file). To tell you how to "
                        "proceed, the user said:\nput the plan in a Linear comment",
                    }
                ],
            },
        },
    ]
    reading = read_transcript(jsonl(tmp_path / "t.jsonl", lines))
    assert reading.work is not None
    assert [(r.text, r.source) for r in reading.work.requests] == [
        ("Write the plan.", "prompt"),
        ("put the plan in a Linear comment", "rejection"),
    ]
    assert reading.changed_artifacts == []  # the rejected write did not happen


def test_claude_subagent_streamed_as_progress_lines(tmp_path: Path) -> None:
    base = {"cwd": "/w/p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}
    inner = {
        "type": "assistant",
        "message": {
            "id": "m9",
            "content": [
                {
                    "type": "tool_use",
                    "id": "t9",
                    "name": "Edit",
                    "input": {"file_path": "/w/p/config.go", "old_string": "a", "new_string": "b"},
                }
            ],
        },
    }
    result = {
        "type": "user",
        "message": {"content": [{"type": "tool_result", "tool_use_id": "t9", "content": "ok"}]},
    }
    lines = [
        {**base, "type": "user", "message": {"role": "user", "content": "Do task 1."}},
        {
            **base,
            "type": "assistant",
            "message": {
                "id": "m1",
                "model": "x",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "task1",
                        "name": "Task",
                        "input": {"description": "Task 1", "prompt": "p"},
                    }
                ],
            },
        },
        *(
            {
                **base,
                "type": "progress",
                "parentToolUseID": "task1",
                "data": {"type": "agent_progress", "agentId": "a1", "message": m},
            }
            for m in (inner, result)
        ),
    ]
    reading = read_transcript(jsonl(tmp_path / "t.jsonl", lines))
    assert reading.changed_artifacts == ["config.go"]
    assert state_of(reading, "s").done == ["subagent 'Task 1': edited config.go"]


def test_codex_code_mode_cells(tmp_path: Path) -> None:
    def item(payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "t", "type": "response_item", "payload": payload}

    plan = {
        "plan": [{"step": "Build it", "status": "completed"}, {"step": "Ship", "status": "pending"}]
    }
    cell = (
        f"await tools.update_plan({json.dumps(plan)});\n"
        'const r = await tools.exec_command({"cmd": "cargo test 2>&1 | tail -3", "workdir": "/w"});\n'
        "text(r.output);"
    )
    lines = [
        {"timestamp": "t", "type": "session_meta", "payload": {"id": "c1", "cwd": "/w"}},
        item(
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
        ),
        item({"type": "custom_tool_call", "call_id": "c1", "name": "exec", "input": cell}),
        item(
            {
                "type": "custom_tool_call_output",
                "call_id": "c1",
                "output": [
                    {"type": "input_text", "text": "Script completed\nOutput:\n"},
                    {
                        "type": "input_text",
                        "text": "test result: FAILED. 2 passed; 1 failed; "
                        "0 ignored; 0 measured; 0 filtered out; finished in 0.0s\n",
                    },
                ],
            }
        ),
        {
            "timestamp": "t",
            "type": "event_msg",
            "payload": {
                "type": "patch_apply_end",
                "call_id": "exec-1",
                "success": True,
                "changes": {
                    "/w/src/lib.rs": {"type": "add", "content": "x"},
                    "/w/old.rs": {"type": "delete", "content": ""},
                },
            },
        },
    ]
    reading = read_transcript(jsonl(tmp_path / "r.jsonl", lines))
    work = reading.work
    assert work is not None
    assert [(t.text, t.status) for t in work.tasks or []] == [
        ("Build it", "completed"),
        ("Ship", "pending"),
    ]
    assert reading.changed_artifacts == ["src/lib.rs"]
    assert work.deleted == ["old.rs"]
    assert reading.commands_and_results == [
        "cargo test 2>&1 | tail -3: failed (test result: FAILED. 2 passed; 1 failed; 0 ignored; "
        "0 measured; 0 filtered out; finished in 0.0s)"
    ]


def test_codex_patch_that_failed_verification_changed_nothing(tmp_path: Path) -> None:
    def item(payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "t", "type": "response_item", "payload": payload}

    def patch(call: str, path: str, output: str) -> list[dict[str, Any]]:
        body = f"*** Begin Patch\n*** Update File: {path}\n@@\n-a\n+b\n*** End Patch"
        return [
            item(
                {"type": "custom_tool_call", "call_id": call, "name": "apply_patch", "input": body}
            ),
            item({"type": "custom_tool_call_output", "call_id": call, "output": output}),
        ]

    lines = [
        {"timestamp": "t", "type": "session_meta", "payload": {"id": "c1", "cwd": "/w"}},
        item(
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
        ),
        *patch(
            "p1",
            "src/page.tsx",
            "apply_patch verification failed: Failed to find expected "
            "lines in /w/src/page.tsx:\n  <h2>?B?e</h2>",
        ),
        *patch("p2", "src/api.ts", "Success. Updated the following files:\nM src/api.ts\n"),
    ]
    reading = read_transcript(jsonl(tmp_path / "p.jsonl", lines))
    assert reading.changed_artifacts == ["src/api.ts"]  # the refused patch changed nothing
    assert reading.work is not None
    (failure,) = reading.work.failures
    assert failure.startswith(
        "the patch of `src/page.tsx` failed — apply_patch verification failed"
    )


# -- files ----------------------------------------------------------------------------------------


def test_file_log_applies_moves_and_deletions() -> None:
    log = FileLog()
    log.edit("/p/a.py")
    log.edit("/p/new.py", created=True)
    log.move("/p/a.py", "/p/b.py")  # edited, then renamed
    log.move("/p/README", "/p/docs/README")  # untouched, renamed
    log.delete("/p/new.py")  # made here, gone again: nowhere
    log.delete("/p/old.py")  # existed before
    log.made("/p/Cargo.toml")
    log.move("/p/dir", "/p/lib")  # nothing under it touched
    log.delete("/p/wt")  # a folder removed and made again (rm -rf wt && git worktree add wt)
    log.edit("/p/wt/src/x.vue")
    log.delete("/p/out")  # a folder removed, a redirection writes into it again
    log.made("/p/out/log.txt")
    assert log.changed() == ["/p/b.py", "/p/wt/src/x.vue"]
    assert log.made_files() == ["/p/Cargo.toml", "/p/out/log.txt"]
    assert log.moved() == [
        ("/p/a.py", "/p/b.py"),
        ("/p/README", "/p/docs/README"),
        ("/p/dir", "/p/lib"),
    ]
    assert log.deleted() == ["/p/old.py"]


def test_files_changed_run_from_the_one_changed_longest_ago_to_the_last() -> None:
    log = FileLog()
    for path in ("/p/justfile", "/p/src/model.rs", "/p/README.md", "/p/src/model.rs"):
        log.edit(path)
    log.made("/p/out.txt")
    log.made("/p/justfile")  # a command wrote it again: the agent's file still, not reordered
    assert log.changed() == ["/p/justfile", "/p/README.md", "/p/src/model.rs"]


@pytest.mark.parametrize(
    ("command", "ops"),
    [
        ("git mv lib/old.ex lib/new.ex", [("move", "/p/lib/old.ex", "/p/lib/new.ex")]),
        (
            "mv a.py b.py c.py pkg/",
            [
                ("move", "/p/a.py", "/p/pkg/a.py"),
                ("move", "/p/b.py", "/p/pkg/b.py"),
                ("move", "/p/c.py", "/p/pkg/c.py"),
            ],
        ),
        (
            "cd sub && rm -rf build x.txt",
            [("delete", "/p/sub/build", None), ("delete", "/p/sub/x.txt", None)],
        ),
        ("git rm --cached secrets.env", [("delete", "/p/secrets.env", None)]),
        ("pushd sub && rm x.txt", [("delete", "/p/sub/x.txt", None)]),
        (
            "sed -i 's/a/b/' src/x.py src/y.py",
            [("edit", "/p/src/x.py", None), ("edit", "/p/src/y.py", None)],
        ),
        ("echo hi > notes.txt 2> /tmp/log", [("made", "/p/notes.txt", None)]),
        ("echo hi > /tmp/out.txt", []),
        ("touch a.txt /tmp/b.txt", [("made", "/p/a.txt", None)]),
        (
            "cargo new calc --lib",
            [("made", "/p/calc/Cargo.toml", None), ("made", "/p/calc/src/lib.rs", None)],
        ),
        ("cat <<'EOF' > docs/notes.md\nmv a b\nEOF", [("made", "/p/docs/notes.md", None)]),
        # a heredoc's delimiter and a here-string's word are no files
        (
            "sudo tee conf/site.conf << 'EOF'\nlisten 80;\nEOF",
            [("made", "/p/conf/site.conf", None)],
        ),
        ("tee out.txt <<< hello", [("made", "/p/out.txt", None)]),
        # a variable the shell expands names no file we can tell; $HOME is the home folder
        ("rm -rf $TEST_DIR/out && touch $TEST_DIR/a.txt", []),
        ("rm -rf $HOME/.cfg/modules", [("delete", "~/.cfg/modules", None)]),
        ("git status", []),
        # an inline script's writes, by their literal paths (not what it only reads)
        (
            "python - <<'PY'\nfrom pathlib import Path\npath = Path('src/model.rs')\n"
            "old = Path('src/old.rs').read_text()\npath.write_text(old)\nPY",
            [("edit", "/p/src/model.rs", None)],
        ),
        (
            "node -e \"require('fs').writeFileSync('scripts/x.js', s)\"",
            [("edit", "/p/scripts/x.js", None)],
        ),
        (
            "python -c \"open('out.txt', 'w').write(open('in.txt').read())\"",
            [("edit", "/p/out.txt", None)],
        ),
        ("python -c \"json.dump(d, open(f'{name}.json', 'w'))\"", []),
    ],
)
def test_shell_file_ops(command: str, ops: list[tuple[str, str, str | None]]) -> None:
    assert shell_file_ops(command, "/p", Paths("/p")) == ops


@pytest.mark.parametrize(
    ("command", "ops"),
    [
        # PowerShell's Set-Location with a Windows path: its backslashes separate folders
        (
            r"Set-Location -Path C:\Users\a\app\backend; Remove-Item .env",
            [("delete", "C:/Users/a/app/backend/.env", None)],
        ),
        (r"cd C:\Users\a\app && rm -rf nginx", [("delete", "C:/Users/a/app/nginx", None)]),
    ],
)
def test_a_windows_folder_change_keeps_its_backslashes(
    command: str, ops: list[tuple[str, str, str | None]]
) -> None:
    assert shell_file_ops(command, "C:/Users/a/app", Paths("C:/Users/a/app")) == ops


def test_generators_say_what_they_created() -> None:
    output = (
        "      create  app/models/user.rb\n* creating lib/app.ex\n"
        "CREATE src/app/app.component.ts (1024 bytes)\nWrote to /p/package.json:\n"
        "create https://example.com/x\n"
    )
    assert created_in_output(output, "/p", Paths("/p")) == [
        "/p/app/models/user.rb",
        "/p/lib/app.ex",
        "/p/src/app/app.component.ts",
        "/p/package.json",
    ]


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        ("/home/dev/shop/src/a.py", "src/a.py"),
        ("/home/dev/.claude/projects/x/memory/m.md", "~/.claude/projects/x/memory/m.md"),
        ("/tmp/out.txt", "/tmp/out.txt"),
        ("/Users/ann/other/x.py", "~/other/x.py"),
    ],
)
def test_paths_as_a_person_reads_them(path: str, shown: str) -> None:
    assert Paths("/home/dev/shop").shown(path) == shown


@pytest.mark.parametrize(
    ("path", "shown"),
    [  # however the transcript writes them, against a project at X:\\work\\shop
        ("X:/work/shop/src/a.py", "src/a.py"),
        ("x:\\work\\shop\\src\\a.py", "src/a.py"),
        ("src\\a.py", "src/a.py"),
        ("C:/Users/ann/.claude/projects/m/MEMORY.md", "~/.claude/projects/m/MEMORY.md"),
        ("X:\\other\\b.py", "X:/other/b.py"),
    ],
)
def test_windows_paths_as_a_person_reads_them(path: str, shown: str) -> None:
    paths = Paths("X:\\work\\shop")
    assert paths.shown(paths.absolute(path)) == shown


@pytest.mark.parametrize(
    ("path", "project", "expected"),
    [
        ("/work/shop/calc.py", "/work/shop", "calc.py"),
        ("/work/shop/src/../calc.py", "/work/shop/", "calc.py"),
        ("/work/shop", "/work/shop", "."),
        ("/work/shopping/list.txt", "/work/shop", "/work/shopping/list.txt"),  # not inside
        ("/etc/hosts", "/work/shop", "/etc/hosts"),
        ("calc.py", "/work/shop", "calc.py"),  # relative already (a Codex patch's path)
        ("./src//calc.py", "/work/shop", "src/calc.py"),
        ("../other/x.py", "/work/shop", "/work/other/x.py"),  # relative to the project
        ("/work/shop/calc.py", None, "/work/shop/calc.py"),
        ("/work/shop/calc.py", "shop", "/work/shop/calc.py"),  # a relative project: unknown
        ("  /work/shop/calc.py ", "/work/shop", "calc.py"),
        ("/home/me/notes/todo.md", "/home/me/src/shop", "~/notes/todo.md"),
        ("/home/me/src/shop/a.py", "/home/me/src/shop", "a.py"),
        ("~/x.md", "/home/me/src/shop", "~/x.md"),
    ],
)
def test_a_path_as_committed(path: str, project: str | None, expected: str) -> None:
    paths = Paths(project)
    assert paths.shown(paths.absolute(path)) == expected
    # idempotent: a committed name stays what it is
    assert paths.shown(paths.absolute(expected)) == expected


def _compacted_session(tmp_path: Path, after: list[dict[str, Any]]) -> Path:
    base = {"cwd": "/w/p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}
    summary = (
        "This session is being continued from a previous conversation that ran out of context."
        "\n\nSummary:\n1. Primary Request and Intent: refactor the auth module\n"
        "9. Optional Next Step: Continue refactoring the auth module"
    )
    lines = [
        {**base, "type": "user", "message": {"role": "user", "content": "Refactor auth."}},
        {
            **base,
            "type": "system",
            "subtype": "compact_boundary",
            "compactMetadata": {"trigger": "auto", "preTokens": 160000},
        },
        {
            **base,
            "type": "user",
            "isCompactSummary": True,
            "message": {"role": "user", "content": summary},
        },
        *({**base, **line} for line in after),
    ]
    return jsonl(tmp_path / "t.jsonl", lines)


def _edit(n: int) -> list[dict[str, Any]]:
    use = {
        "type": "tool_use",
        "id": f"e{n}",
        "name": "Edit",
        "input": {"file_path": f"/w/p/auth{n}.py", "old_string": "a", "new_string": "b"},
    }
    done = {"type": "tool_result", "tool_use_id": f"e{n}", "content": "ok"}
    return [
        {"type": "assistant", "message": {"id": f"m{n}", "model": "x", "content": [use]}},
        {"type": "user", "message": {"role": "user", "content": [done]}},
    ]


def test_a_compact_summarys_next_step_only_while_it_still_stands(tmp_path: Path) -> None:
    step = "Continue refactoring the auth module"
    # nothing happened since the compaction: it stands
    assert state_of(read_transcript(_compacted_session(tmp_path, [])), "s").next_action == step
    # work went on after it and the step names nothing to check: it may be done
    worked = _compacted_session(tmp_path, _edit(1))
    assert state_of(read_transcript(worked), "s").next_action == ""
    # a request after it: the request is what the agent works on now
    later = [{"type": "user", "message": {"role": "user", "content": "Now add logging."}}]
    assert state_of(read_transcript(_compacted_session(tmp_path, later)), "s").next_action == ""


def test_claude_codes_own_commands_queued_are_no_requests(tmp_path: Path) -> None:
    """`claude -p "/compact keep calc.py"` enqueues the command like a prompt (Claude Code
    2.1.328): it is an instruction to Claude Code, never the task's goal."""
    path = jsonl(
        tmp_path / "s.jsonl",
        [
            {
                "type": "user",
                "sessionId": "s",
                "cwd": "/p",
                "message": {"role": "user", "content": "Write calc.py with add()."},
            },
            {
                "type": "queue-operation",
                "operation": "enqueue",
                "sessionId": "s",
                "content": "/compact keep calc.py",
            },
            {
                "type": "queue-operation",
                "operation": "enqueue",
                "sessionId": "s",
                "content": "/review the parser",
            },
        ],
    )
    reading = read_transcript(path)
    assert reading.work is not None
    assert [(r.text, r.source) for r in reading.work.requests] == [
        ("Write calc.py with add().", "prompt"),
        ("/review the parser", "queued"),
    ]


def test_a_stop_hooks_reason_codex_hands_back_is_no_request() -> None:
    """Codex 0.171 gives the model a Stop hook's reason as the next user message, wrapped in
    ``<hook_prompt …>`` (a real rollout): it is clm-policy's own words, never the goal."""
    rollout = real_fixtures("codex") / "rollouts" / "stop-handoff.jsonl"
    reading = read_transcript(rollout)
    assert reading.work is not None
    assert [r.text for r in reading.work.requests] == [
        "Write notes.txt, check it, then mark it final."
    ]
    assert state_of(reading, "s").goal == "Write notes.txt, check it, then mark it final."


def _claude_bash(tool_id: str, command: str, output: str, interpretation: str) -> list[Any]:
    """A Bash call and its result as Claude Code 2.1.328 writes them when it reads exit status
    1 as an answer (``returnCodeInterpretation``): no error, no "Exit code 1" line."""
    base = {"cwd": "/w/p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}
    call = {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": command}}
    result = {
        "tool_use_id": tool_id,
        "type": "tool_result",
        "content": output or "(Bash completed with no output)",
        "is_error": False,
    }
    return [
        {**base, "type": "assistant", "message": {"id": tool_id, "content": [call]}},
        {
            **base,
            "type": "user",
            "message": {"role": "user", "content": [result]},
            "toolUseResult": {
                "stdout": output,
                "stderr": "",
                "interrupted": False,
                "isImage": False,
                "returnCodeInterpretation": interpretation,
                "noOutputExpected": False,
            },
        },
    ]


def test_claude_codes_reading_of_exit_status_1_is_the_answer(tmp_path: Path) -> None:
    # grep with no match, a false test, files that differ: Claude Code says so in the result
    # (returnCodeInterpretation) and reports no error; they are answers, not passes
    lines = [
        {"cwd": "/w/p", "sessionId": "s1", "type": "user", "message": {"content": "Look."}},
        *_claude_bash("t1", 'grep -rn "json" csvtool/', "", "No matches found"),
        *_claude_bash("t2", "test -f README.md", "", "Condition is false"),
        *_claude_bash("t3", "diff a.txt b.txt", "1c1\n< a\n---\n> b", "Files differ"),
        *_claude_bash("t4", "grep -c x a.txt", "2", ""),
    ]
    reading = read_transcript(jsonl(tmp_path / "t.jsonl", lines))
    assert reading.commands_and_results == [
        'grep -rn "json" csvtool/: no match (exit 1)',
        "test -f README.md: false (exit 1)",
        "diff a.txt b.txt: differences (exit 1)",
        "grep -c x a.txt: passed",
    ]


def test_a_constraint_said_in_a_request_and_in_a_summary_is_listed_once() -> None:
    # recorded with Codex: the request says "Standard library only, no third-party packages."
    # and the compaction's summary "- Standard library only, no third-party packages"
    state = state_of(read_transcript(recorded("codex-plan-compact")), "s")
    assert state.constraints == ["Standard library only, no third-party packages."]


def _claude_failed_bash(tool_id: str, command: str, error: str) -> list[Any]:
    """A Bash call that exited non-zero, as Claude Code writes it (an error result)."""
    base = {"cwd": "/w/p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}
    call = {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": command}}
    result = {"tool_use_id": tool_id, "type": "tool_result", "content": error, "is_error": True}
    return [
        {**base, "type": "assistant", "message": {"id": tool_id, "content": [call]}},
        {**base, "type": "user", "message": {"role": "user", "content": [result]}},
    ]


def test_a_look_that_found_nothing_is_no_failure(tmp_path: Path) -> None:
    """A read-only command that fails (a file not there, no match) is exploration: it is no
    open failure and never the next step; a command that changes something and fails is."""

    lines = [
        {"cwd": "/w/p", "sessionId": "s1", "type": "user", "message": {"content": "Fix it."}},
        *_claude_failed_bash("t1", "mkdir out && cp a.txt out/", "Exit code 1\ncp: cannot stat"),
        *_claude_failed_bash(
            "t2",
            "cd src && sed -n '1,80p' gone.py | head -5",
            "Exit code 2\nsed: can't read gone.py: No such file or directory",
        ),
        *_claude_failed_bash("t3", "git show HEAD:gone.py", "Exit code 128\nfatal: no such path"),
    ]
    reading = read_transcript(jsonl(tmp_path / "t.jsonl", lines))
    assert reading.work is not None
    assert record_of(reading.work).failures == [
        "`mkdir out && cp a.txt out/` failed — cp: cannot stat"
    ]
    assert reading.work.last_failure is None  # the latest failure is no longer the last step
    assert reading.work.last_activity == "ran `git show HEAD:gone.py` (failed (exit 128))"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("sed -n '1,80p' a.py", True),
        ("cat a | head -5", True),
        ("cd src && rg parse", True),
        ("git show HEAD:a.py", True),
        ("Get-Content a.txt", True),
        ("find . -name '*.py'", True),
        ("sed -i 's/a/b/' a.py", False),
        ("find . -name '*.pyc' -delete", False),
        ("cat a > b", False),
        ("git commit -m x", False),
        ("pytest -q", False),
        ("ls && rm -rf build", False),
        ("", False),
    ],
)
def test_reads_only(command: str, expected: bool) -> None:
    from clm_policy.transcripts.results import reads_only

    assert reads_only(command) is expected


def test_the_agents_reasoning_is_kept_as_its_notes(tmp_path: Path) -> None:
    """Claude Code's thinking and Codex's reasoning summaries since the latest request are the
    record's ``reasoning`` (a subagent's are its own)."""

    base = {"cwd": "/w/p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}
    thinking = {"type": "thinking", "thinking": "The split ignores quotes; csv.reader fixes it."}
    claude = [
        {**base, "type": "user", "message": {"content": "Plan the parser."}},
        {**base, "type": "assistant", "message": {"id": "a0", "content": [thinking]}},
        {**base, "type": "user", "message": {"content": "Now fix the parser."}},
        {
            **base,
            "type": "assistant",
            "message": {"id": "a1", "content": [{**thinking, "thinking": "Use csv.reader."}]},
        },
    ]
    reading = read_transcript(jsonl(tmp_path / "c.jsonl", claude))
    assert reading.work is not None
    assert record_of(reading.work).reasoning == ["Use csv.reader."]

    def item(payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "t", "type": "response_item", "payload": payload}

    summary = [
        {"type": "summary_text", "text": "**Choosing the reader**"},
        {"type": "summary_text", "text": "csv.reader keeps quoted commas."},
    ]
    codex = [
        {"timestamp": "t", "type": "session_meta", "payload": {"id": "c1", "cwd": "/w"}},
        item(
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
        ),
        item({"type": "reasoning", "summary": summary, "encrypted_content": "x"}),
    ]
    reading = read_transcript(jsonl(tmp_path / "x.jsonl", codex))
    assert reading.work is not None
    assert record_of(reading.work).reasoning == [
        "**Choosing the reader**\n\ncsv.reader keeps quoted commas."
    ]


def _claude_call(
    tool_id: str, name: str, args: dict[str, Any], output: str, *, error: bool = False
) -> list[Any]:
    """A tool call and its result (``error``: an error result), as Claude Code writes them."""
    base = {"cwd": "/w/p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}
    call = {"type": "tool_use", "id": tool_id, "name": name, "input": args}
    result: dict[str, Any] = {"tool_use_id": tool_id, "type": "tool_result", "content": output}
    if error:
        result["is_error"] = True
    return [
        {**base, "type": "assistant", "message": {"id": tool_id, "content": [call]}},
        {**base, "type": "user", "message": {"role": "user", "content": [result]}},
    ]


def test_where_a_background_server_serves_is_one_line_with_its_shell(tmp_path: Path) -> None:
    # the output of a background shell, read back with BashOutput or from its output file
    # (Claude Code writes it to …/tasks/<id>.output), names where the server listens

    started = "Command running in background with ID: {}. Output is being written to: /tmp/x"
    vite = "> vite\n\nPort 5173 is in use, trying another one...\n  ➜  Local:   http://localhost:5174/\n"
    lines = [
        {"cwd": "/w/p", "sessionId": "s1", "type": "user", "message": {"content": "Run it."}},
        *_claude_call(
            "t1",
            "Bash",
            {"command": "npm run dev", "run_in_background": True},
            started.format("b98"),
        ),
        *_claude_call("t2", "BashOutput", {"bash_id": "b98"}, f"<stdout>{vite}</stdout>"),
        *_claude_call("t3", "BashOutput", {"bash_id": "b98"}, f"<stdout>{vite}</stdout>"),
        *_claude_call(
            "t4",
            "Bash",
            {"command": "uvicorn app:app", "run_in_background": True},
            started.format("c12"),
        ),
        *_claude_call(
            "t5",
            "Bash",
            {"command": "cat /tmp/claude/-w-p/tasks/c12.output"},
            "INFO:     Uvicorn running on http://127.0.0.1:8000 (Press CTRL+C to quit)",
        ),
        *_claude_call(  # a curl's output names a local address too: no server of the session
            "t6",
            "Bash",
            {"command": "curl -s http://localhost:8000/health"},
            '{"status": "ok", "server": "http://localhost:8000"}',
        ),
        *_claude_call(
            "t7",
            "Bash",
            {"command": "python -m http.server", "run_in_background": True},
            started.format("d34"),
        ),
        *_claude_call("t8", "KillShell", {"shell_id": "d34"}, "Successfully killed shell d34"),
        *_claude_call(  # the Read tool on an output file: no file of the project read
            "t9", "Read", {"file_path": "/tmp/claude/-w-p/tasks/c12.output"}, "INFO: started"
        ),
        *_claude_call(
            "t10",
            "Bash",
            {"command": "npm run worker", "run_in_background": True},
            started.format("e56"),
        ),
        {  # Claude Code's notice that it ended: the shell's one line says so
            "cwd": "/w/p",
            "sessionId": "s1",
            "type": "user",
            "message": {
                "content": "<task-notification>\n<task-id>e56</task-id>\n<status>failed</status>"
                '\n<summary>Background command "Start the worker" failed with exit code 1.'
                "</summary>\n</task-notification>"
            },
        },
    ]
    reading = read_transcript(jsonl(tmp_path / "t.jsonl", lines))
    assert reading.work is not None
    assert reading.work.read == []
    assert record_of(reading.work).environment == [
        "started in the background (shell b98): `npm run dev` serves http://localhost:5174/ "
        "(port 5173 was in use)",
        "started in the background (shell c12): `uvicorn app:app` serves http://127.0.0.1:8000",
        "stopped background shell d34: `python -m http.server`",  # one line: started, stopped
        'started in the background (shell e56): `npm run worker` — ended: "Start the worker" '
        "failed with exit code 1",
    ]


def test_a_later_shell_serving_the_same_address_replaces_the_earlier(tmp_path: Path) -> None:
    # the session resumed a day later and started the server again: two shells cannot serve
    # one address, so the earlier one's line goes; a kill that matched nothing stopped nothing

    started = "Command running in background with ID: {}. Output is being written to: /tmp/x"
    ready = "<stdout>  - Local:        http://localhost:3000\n</stdout>"
    lines = [
        {"cwd": "/w/p", "sessionId": "s1", "type": "user", "message": {"content": "Run it."}},
        *_claude_call("t1", "Bash", {"command": "pkill -f 'next dev'"}, "Error", error=True),
        *_claude_call(
            "t2",
            "Bash",
            {"command": "npm run dev", "run_in_background": True},
            started.format("a1"),
        ),
        *_claude_call("t3", "BashOutput", {"bash_id": "a1"}, ready),
        *_claude_call(
            "t4",
            "Bash",
            {"command": "npm run dev", "run_in_background": True},
            started.format("b2"),
        ),
        *_claude_call("t5", "BashOutput", {"bash_id": "b2"}, ready),
    ]
    reading = read_transcript(jsonl(tmp_path / "t.jsonl", lines))
    assert reading.work is not None
    assert record_of(reading.work).environment == [
        "no process stopped: `pkill -f 'next dev'` failed",
        "started in the background (shell b2): `npm run dev` serves http://localhost:3000",
    ]


def test_what_a_failed_run_found_missing_until_a_later_run_installs_it(tmp_path: Path) -> None:

    lines = [
        {"cwd": "/w/p", "sessionId": "s1", "type": "user", "message": {"content": "Go."}},
        *_claude_failed_bash(
            "t1", "pnpm --version", "Exit code 127\nbash: pnpm: command not found"
        ),
        *_claude_failed_bash(
            "t2",
            "node scrape.js",
            "Exit code 1\nError: Cannot find module 'ws'\nRequire stack:\n- /w/p/scrape.js",
        ),
        *_claude_failed_bash(  # a script that is not there is no missing module
            "t3", "node gone.js", "Exit code 1\nError: Cannot find module '/w/p/gone.js'"
        ),
        *_claude_failed_bash(
            "t4", "python check.py", "Exit code 1\nModuleNotFoundError: No module named 'yaml'"
        ),
        *_claude_bash("t5", "npm install ws", "added 1 package", ""),
        *_claude_failed_bash(
            "t6", "git status --short", "Exit code 128\nfatal: not a git repository (or any…)"
        ),
        *_claude_failed_bash(
            "t7", "git log -1", "Exit code 128\nfatal: not a git repository (or any…)"
        ),
        *_claude_bash("t8", "git log -1", "commit 1a2b3c", ""),  # the same command passes now
        *_claude_failed_bash(
            "t9", "python load.py", "Exit code 1\nModuleNotFoundError: No module named 'attr'"
        ),
        *_claude_bash("t10", "pip install attrs", "Successfully installed attrs-25.1.0", ""),
        *_claude_bash("t11", "python load.py", "loaded", ""),  # the run that found it passes
    ]
    reading = read_transcript(jsonl(tmp_path / "t.jsonl", lines))
    assert reading.work is not None
    assert record_of(reading.work).environment == [
        "not found here (a run failed on it): the command `pnpm`",
        "not found here (a run failed on it): Python module `yaml`",
        "not a git repository: `git status --short` in /w/p",
    ]


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("/bin/bash: line 1: pwsh: command not found", ["the command `pwsh`"]),
        ("zsh: command not found: npm", ["the command `npm`"]),
        ("/bin/sh: 1: uv: not found", ["the command `uv`"]),
        (
            "'rg' is not recognized as an internal or external command,\noperable program",
            ["the command `rg`"],
        ),
        (
            "sed : The term 'sed' is not recognized as the name of a cmdlet, function",
            ["the command `sed`"],
        ),
        (
            "Error [ERR_MODULE_NOT_FOUND]: Cannot find package '@scope/ui' imported",
            ["Node module `@scope/ui`"],
        ),
        ("Error: Cannot find module './local'", []),
        ("docker: Error response from daemon: manifest for x:1 not found", []),
        ("npm ERR! 404 Not Found - GET https://registry.npmjs.org/x", []),
    ],
)
def test_missing_of(output: str, expected: list[str]) -> None:
    from clm_policy.transcripts.environment import missing_of

    assert missing_of(output) == expected


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (
            "   ▲ Next.js 14.1.0\n   - Local:        http://localhost:3001\n",
            "http://localhost:3001",
        ),
        (
            "[I 10:00] Jupyter Server is running at:\n http://localhost:8888/lab?token=abc123",
            None,  # the URL is on the next line; the token is never taken
        ),
        (
            "Jupyter Server is running at http://localhost:8888/lab?token=abc",
            "http://localhost:8888/lab",
        ),
        ("Serving HTTP on 0.0.0.0 port 8000 (http://0.0.0.0:8000/) ...", "http://0.0.0.0:8000/"),
        ("Compiled successfully.\nGET http://localhost:3000/api 200", None),
        ("", None),
    ],
)
def test_served_at(output: str, expected: str | None) -> None:
    from clm_policy.transcripts.environment import served_at

    assert served_at(output) == expected


def test_git_init_makes_the_folder_a_repository(tmp_path: Path) -> None:

    lines = [
        {"cwd": "/w/p", "sessionId": "s1", "type": "user", "message": {"content": "Go."}},
        *_claude_failed_bash("t1", "git status", "Exit code 128\nfatal: not a git repository"),
        *_claude_bash("t2", "git init -q && git add -A", "", ""),
    ]
    reading = read_transcript(jsonl(tmp_path / "t.jsonl", lines))
    assert reading.work is not None
    assert record_of(reading.work).environment == []


def test_a_rejected_call_did_not_run_and_its_reason_is_a_request(tmp_path: Path) -> None:
    # Claude Code's two forms of a rejection (with the person's reason, and a bare one): the
    # command did not run, so it is no failure and no next step

    rejected = (
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. "
        "if it was a file edit, the new_string was NOT written to the file). "
    )
    lines = [
        {"cwd": "/w/p", "sessionId": "s1", "type": "user", "message": {"content": "Scrape it."}},
        *_claude_failed_bash(
            "t1",
            "node scrape-all.js",
            rejected + "The user provided the following reason for the rejection:  only the "
            "inbox of a@example.com",
        ),
        *_claude_failed_bash(
            "t2",
            "rm -rf data/",
            rejected + "STOP what you are doing and wait for the user to tell you how to proceed.",
        ),
    ]
    plan = {"plan": "# Assessment plan\n\n1. Read everything."}
    call = {"type": "tool_use", "id": "t3", "name": "ExitPlanMode", "input": plan}
    base = {"cwd": "/w/p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}
    result = {"tool_use_id": "t3", "type": "tool_result", "content": rejected, "is_error": True}
    lines += [
        {**base, "type": "assistant", "message": {"id": "t3", "content": [call]}},
        {**base, "type": "user", "message": {"role": "user", "content": [result]}},
    ]
    reading = read_transcript(jsonl(tmp_path / "t.jsonl", lines))
    assert reading.work is not None
    assert [(r.text, r.source) for r in reading.work.requests] == [
        ("Scrape it.", "prompt"),
        ("only the inbox of a@example.com", "rejection"),
    ]
    assert reading.work.runs == []
    assert record_of(reading.work).failures == []
    assert reading.work.decisions == [  # what was rejected, with the reason given
        "the person rejected running `node scrape-all.js` — only the inbox of a@example.com",
        "the person rejected running `rm -rf data/`",
        "the person rejected the plan (ExitPlanMode): Assessment plan",
    ]
    assert reading.work.plan is None  # a rejected plan is not the plan


def test_claude_codes_powershell_tool_runs_commands(tmp_path: Path) -> None:
    # Claude Code on Windows has a PowerShell tool beside Bash; its results have Bash's shape
    base = {"cwd": "X:\\p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}
    call = {
        "type": "tool_use",
        "id": "t1",
        "name": "PowerShell",
        "input": {"command": "npm.cmd run build"},
    }
    result = {
        "tool_use_id": "t1",
        "type": "tool_result",
        "content": "Exit code 1\nerror TS2304: Cannot find name 'x'.",
        "is_error": True,
    }
    lines = [
        {**base, "type": "user", "message": {"content": "Build it."}},
        {**base, "type": "assistant", "message": {"id": "t1", "content": [call]}},
        {**base, "type": "user", "message": {"role": "user", "content": [result]}},
    ]
    reading = read_transcript(jsonl(tmp_path / "t.jsonl", lines))
    assert reading.work is not None
    assert [(r.command, r.verdict.status, r.check) for r in reading.work.runs] == [
        ("npm.cmd run build", "failed", True)
    ]


def test_a_codex_command_the_person_rejected_did_not_run(tmp_path: Path) -> None:
    def item(payload: dict[str, Any]) -> dict[str, Any]:
        return {
            "timestamp": "2025-09-29T07:40:23.898Z",
            "type": "response_item",
            "payload": payload,
        }

    lines = [
        {"timestamp": "2025-09-29T07:40:00Z", "type": "session_meta", "payload": {"id": "s"}},
        item(
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Go."}]}
        ),
        item(
            {
                "type": "function_call",
                "name": "shell",
                "arguments": json.dumps({"command": ["bash", "-lc", "rm -rf build"]}),
                "call_id": "c1",
            }
        ),
        item(
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": "exec command rejected by user",
            }
        ),
    ]
    reading = read_transcript(jsonl(tmp_path / "t.jsonl", lines))
    assert reading.work is not None
    assert reading.work.runs == []
    assert not reading.work.in_flight


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        (  # node: the error line, not the source line it echoes nor its stack or code
            "Exit code 1\nnode:internal/errors:542\r\n      throw error;\r\n      ^\r\n\r\n"
            "TypeError [ERR_INVALID_ARG_VALUE]: The argument 'path' must be a string without "
            "null bytes.\r\n    at Object.readdirSync (node:fs:1561:10)\r\n  code: "
            "'ERR_INVALID_ARG_VALUE'\r\n}\r\n\r\nNode.js v22.1.0",
            "TypeError [ERR_INVALID_ARG_VALUE]: The argument 'path' must be a string without "
            "null bytes.",
        ),
        (
            'Exit code 1\nTraceback (most recent call last):\n  File "a.py", line 1, in <module>\n'
            "    import yaml\nModuleNotFoundError: No module named 'yaml'",
            "ModuleNotFoundError: No module named 'yaml'",
        ),
        ("Exit code 2\nsomething went sideways\nsee the log", "see the log"),
        ("Exit code 1", "exit 1"),  # no output: the exit code (not "failed (exit 1)")
        (  # Claude Code's tags around a tool's refusal are not part of the reason
            "<tool_use_error>File has not been read yet. Read it first.</tool_use_error>",
            "File has not been read yet. Read it first.",
        ),
    ],
)
def test_a_failures_reason_is_the_line_that_says_why(
    tmp_path: Path, output: str, reason: str
) -> None:

    lines = [
        {"cwd": "/w/p", "sessionId": "s1", "type": "user", "message": {"content": "Run it."}},
        *_claude_failed_bash("t1", "node list.js", output),
    ]
    reading = read_transcript(jsonl(tmp_path / "t.jsonl", lines))
    assert reading.work is not None
    assert record_of(reading.work).failures == [f"`node list.js` failed — {reason}"]


def test_a_call_the_permission_settings_denied_is_a_blocker_not_a_failure(tmp_path: Path) -> None:

    denied = "Permission to use Bash with command cp ../main/.husky/_/husky.sh .husky/_/ has been denied."
    lines = [
        {"cwd": "/w/p", "sessionId": "s1", "type": "user", "message": {"content": "Lint it."}},
        *_claude_failed_bash("t1", "cp ../main/.husky/_/husky.sh .husky/_/", denied),
    ]
    reading = read_transcript(jsonl(tmp_path / "t.jsonl", lines))
    assert reading.work is not None
    line = "the permission settings denied running `cp ../main/.husky/_/husky.sh .husky/_/`"
    assert record_of(reading.work).environment == [line]
    assert record_of(reading.work).failures == []
    assert state_of(reading, "s").blockers == [line]


@pytest.mark.parametrize("pushed_later", [False, True])
def test_a_refused_push_is_a_blocker_until_a_push_goes_through(
    tmp_path: Path, pushed_later: bool
) -> None:
    refused = (
        "Exit code 1\nremote: error: GH013: Repository rule violations found for "
        "refs/heads/main.\nremote: - Push cannot contain secrets\n ! [remote rejected] main -> "
        "main (push declined due to repository rule violations)"
    )
    lines = [
        {"cwd": "/w/p", "sessionId": "s1", "type": "user", "message": {"content": "Push."}},
        *_claude_failed_bash("t1", "git push origin main", refused),
    ]
    if pushed_later:
        lines += _claude_bash("t2", "git push origin main", "To github.com:o/r.git", "")
    state = state_of(read_transcript(jsonl(tmp_path / "t.jsonl", lines)), "s")
    if pushed_later:
        assert state.blockers == []
    else:
        assert [b.split(" — ")[0] for b in state.blockers] == [
            "push refused (push protection): `git push origin main`"
        ]


def test_an_offer_in_a_numbered_list_is_no_step_of_a_plan(tmp_path: Path) -> None:
    base = {"cwd": "/w/p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}
    said = (
        "Done with the cleanup. Next steps:\n\n1. Update `CLAUDE.md` to drop the old folders.\n"
        "2. If you want, I can also add an ownership matrix to the DB contract.\n"
        "3. Would you like me to open a PR?"
    )
    lines = [
        {**base, "type": "user", "message": {"content": "Clean up the legacy folders."}},
        {
            **base,
            "type": "assistant",
            "message": {"id": "m1", "content": [{"type": "text", "text": said}]},
        },
        *_claude_call(  # Claude Code keeps a long result in a file; reading it back is no read
            "t1",
            "Read",
            {"file_path": "/home/u/.claude/projects/-w-p/s1/tool-results/toolu_1.txt"},
            "…",
        ),
    ]
    reading = read_transcript(jsonl(tmp_path / "t.jsonl", lines))
    assert reading.work is not None
    assert [t.text for t in reading.work.plan or []] == [
        "Update `CLAUDE.md` to drop the old folders."
    ]
    assert reading.work.read == []


def test_a_terminals_colours_are_no_part_of_a_result(tmp_path: Path) -> None:
    # jest and ng colour their output: the record reads the words, and shows no escape codes
    jest = (
        "Exit code 1\n\x1b[1mTests:\x1b[22m       \x1b[1m\x1b[31m1 failed\x1b[39m\x1b[22m, "
        "\x1b[1m\x1b[32m11 passed\x1b[39m\x1b[22m, 12 total\n"
    )
    ng = "Exit code 1\n\x1b[1m\x1b[31mCannot read properties of undefined\x1b[39m\x1b[22m"
    lines = [
        {"cwd": "/w/p", "sessionId": "s1", "type": "user", "message": {"content": "Test."}},
        *_claude_failed_bash("t1", "npx jest", jest),
        *_claude_failed_bash("t2", "npx ng add @angular/material", ng),
    ]
    reading = read_transcript(jsonl(tmp_path / "t.jsonl", lines))
    assert reading.work is not None
    verdict = reading.work.runs[0].verdict
    assert (verdict.status, verdict.text) == ("failed", "Tests: 1 failed, 11 passed, 12 total")
    assert reading.work.failures == [
        "`npx ng add @angular/material` failed — Cannot read properties of undefined"
    ]


@pytest.mark.parametrize(
    ("command", "folder"),
    [
        ("npx ng generate service app/x", "/p"),
        ("cd frontend && npx ng generate service app/x", "/p/frontend"),
        ("pwsh -NoProfile -Command 'cd frontend; npx ng generate service app/x'", "/p/frontend"),
        ("Set-Location -Path ui; npm run gen", "/p/ui"),
        ("cd a && cd ../b && make", "/p/b"),
    ],
)
def test_a_generators_files_are_where_its_command_went(command: str, folder: str) -> None:
    from clm_policy.transcripts.files import folder_after

    paths = Paths("/p")
    assert folder_after(command, "/p", paths) == folder
    made = created_in_output("CREATE src/app/x.ts (1 bytes)\n", folder, paths)
    assert made == [f"{folder}/src/app/x.ts"]


def test_a_codex_message_the_ide_wrapped_is_the_request_under_its_heading(tmp_path: Path) -> None:
    # the Codex IDE extension puts the active file and the open tabs before the request
    text = (
        "# Context from my IDE setup:\n\n## Active file: specs/backlog.md\n\n## Open tabs:\n"
        "- .env: .env\n- backlog.md: specs/backlog.md\n\n## My request for Codex:\n"
        "continue la tache T-1.7 si elle n'est pas finie\n"
    )
    lines = [
        {"timestamp": "2025-09-29T07:40:00Z", "type": "session_meta", "payload": {"id": "s"}},
        {
            "timestamp": "2025-09-29T07:40:01Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": text}],
            },
        },
    ]
    reading = read_transcript(jsonl(tmp_path / "t.jsonl", lines))
    assert reading.work is not None
    assert [r.text for r in reading.work.requests] == [
        "continue la tache T-1.7 si elle n'est pas finie"
    ]
    assert reading.goal == "continue la tache T-1.7 si elle n'est pas finie"
    assert reading.work.context == ["IDE active file: specs/backlog.md"]


def test_a_summary_step_is_done_by_the_file_named_after_it_not_one_that_holds_the_word(
    tmp_path: Path,
) -> None:
    base = {"cwd": "/w/p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}

    def edit(n: int, path: str) -> list[dict[str, Any]]:
        call = {"type": "tool_use", "id": f"e{n}", "name": "Write"}
        call["input"] = {"file_path": path, "content": "x"}
        result = {"type": "tool_result", "tool_use_id": f"e{n}", "content": "File created"}
        return [
            {**base, "type": "assistant", "message": {"id": f"m{n}", "content": [call]}},
            {**base, "type": "user", "message": {"role": "user", "content": [result]}},
        ]

    summary = (
        "Summary.\n\nPending Tasks:\n- Decide to keep `organizationRole`\n- Add `parse_config`"
    )
    lines = [
        {**base, "type": "user", "message": {"role": "user", "content": "Unify the roles."}},
        {**base, "type": "system", "subtype": "compact_boundary"},
        {**base, "type": "user", "isCompactSummary": True, "message": {"content": summary}},
        *edit(1, "/w/p/src/ChangeOrganizationRoleDialogue.vue"),
        *edit(2, "/w/p/src/parse_config.py"),
    ]
    work = read_transcript(jsonl(tmp_path / "t.jsonl", lines)).work
    assert work is not None
    assert work.summaries
    order = work.summaries[-1][0]
    assert not work.done_after(order, "Decide to keep `organizationRole`")
    assert work.done_after(order, "Add `parse_config`")
    assert not work.done_after(len(lines) + 10, "Add `parse_config`")  # nothing after that


# -- the user's messages: each once, at its latest place; queued ones --------------------------


def _codex_turns(*prompts: str) -> list[dict[str, Any]]:
    """A Codex rollout: each prompt a user message, the agent's answer after it."""

    def item(payload: dict[str, Any]) -> dict[str, Any]:
        return {
            "timestamp": "2025-09-29T07:40:23.898Z",
            "type": "response_item",
            "payload": payload,
        }

    lines = [{"timestamp": "2025-09-29T07:40:00Z", "type": "session_meta", "payload": {"id": "s"}}]
    for n, prompt in enumerate(prompts):
        lines.append(
            item(
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": prompt}],
                }
            )
        )
        lines.append(
            item(
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": f"Answer {n}."}],
                }
            )
        )
    return lines


def test_a_message_said_again_counts_where_it_was_said_last(tmp_path: Path) -> None:
    """The spec-kit prompts run once per feature, the same answer to another question: the
    list ends with the prompt the agent was working on at the cut, and keeps the order the
    person gave them in (an earlier occurrence first kept the list at an old answer)."""
    specify = "## User Input\n\n```text\n{}\n```\n\nFollow the specify flow."
    plan = "## User Input\n\n```text\n\n```\n\nFollow the plan flow."
    implement = "## User Input\n\n```text\n\n```\n\nFollow the implement flow."
    prompts = [
        specify.format("a voice assistant backend"),
        "B",
        "A",
        plan,
        implement,
        specify.format("a speech-to-text API"),
        "B, A",
        "A",
        plan,
        implement,
    ]
    reading = read_transcript(jsonl(tmp_path / "t.jsonl", _codex_turns(*prompts)))
    assert reading.work is not None
    assert len(reading.work.requests) == 10  # the record holds every one
    assert state_of(reading, "s").requests == [
        specify.format("a voice assistant backend"),
        "B",
        specify.format("a speech-to-text API"),
        "B, A",
        "A",
        plan,
        implement,
    ]


@pytest.mark.parametrize(
    ("said", "listed"),
    [
        (  # "keep going" twice, "lets continue" twice: the latest is the last
            ["Build the parser.", "keep going", "Add tests.", "keep going"],
            ["Build the parser.", "Add tests.", "keep going"],
        ),
        (
            ["lets continue", "run the site before we continue", "lets continue"],
            ["lets continue", "run the site before we continue", "lets continue"],
        ),  # the first stays first (how the task began), and the latest is the latest
        (  # a conversation Claude Code 2.0 wrote again on a resume: each message once
            ["Design the sync.", "Use option 2.", "Design the sync.", "Use option 2.", "Go."],
            ["Design the sync.", "Use option 2.", "Go."],
        ),
        (["run the app", "run the app", "test it"], ["run the app", "test it"]),
    ],
)
def test_claude_messages_said_again_are_listed_once_at_the_latest(
    tmp_path: Path, said: list[str], listed: list[str]
) -> None:
    base = {"cwd": "/w/p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}
    lines: list[dict[str, Any]] = []
    for n, text in enumerate(said):
        lines.append({**base, "type": "user", "message": {"role": "user", "content": text}})
        answer = [{"type": "text", "text": f"Answer {n}."}]
        lines.append({**base, "type": "assistant", "message": {"id": f"m{n}", "content": answer}})
    state = state_of(read_transcript(jsonl(tmp_path / "t.jsonl", lines)), "s")
    assert state.requests == listed
    assert state.requests[-1] == said[-1]


def _queued(prompt: object, mode: str = "prompt") -> dict[str, Any]:
    attachment = {"type": "queued_command", "prompt": prompt, "commandMode": mode}
    return {"type": "attachment", "attachment": attachment, "sessionId": "s1", "timestamp": "t"}


def _claude_bash_turn(n: int) -> list[dict[str, Any]]:
    base = {"cwd": "/w/p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}
    call = {"type": "tool_use", "id": f"b{n}", "name": "Bash", "input": {"command": "ls"}}
    result = {"type": "tool_result", "tool_use_id": f"b{n}", "content": "a.py"}
    return [
        {**base, "type": "assistant", "message": {"id": f"m{n}", "content": [call]}},
        {**base, "type": "user", "message": {"role": "user", "content": [result]}},
    ]


def test_claudes_queued_prompts_as_attachments_are_requests(tmp_path: Path) -> None:
    """Claude Code 2.1.12x hands a prompt typed while the agent worked to the model as a
    ``queued_command`` attachment whose prompt is a list of content blocks (its
    ``queue-operation`` lines hold no content); a notification travels the same way and is
    no request, nor is one of Claude Code's own commands."""
    base = {"cwd": "/w/p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}
    notification = (
        "<task-notification>\n<task-id>bx1</task-id>\n<status>failed</status>\n"
        '<summary>Background command "Launch the browser" failed with exit code 1</summary>\n'
        "</task-notification>"
    )
    lines = [
        {**base, "type": "user", "message": {"role": "user", "content": "Scrape 50 customers."}},
        {"type": "queue-operation", "operation": "enqueue", "sessionId": "s1", "timestamp": "t"},
        *_claude_bash_turn(1),
        _queued([{"type": "text", "text": "The browser is already open and logged in."}]),
        {"type": "queue-operation", "operation": "remove", "sessionId": "s1", "timestamp": "t"},
        *_claude_bash_turn(2),
        _queued(notification, "task-notification"),
        _queued([{"type": "text", "text": "/compact"}]),
        *_claude_bash_turn(3),
    ]
    reading = read_transcript(jsonl(tmp_path / "t.jsonl", lines))
    assert reading.work is not None
    assert [(r.text, r.source) for r in reading.work.requests] == [
        ("Scrape 50 customers.", "prompt"),
        ("The browser is already open and logged in.", "queued"),
    ]
    # the notification is the harness's word on a background task
    assert reading.work.environment == [
        'background task: Background command "Launch the browser" failed with exit code 1'
    ]


def test_a_queued_prompt_met_again_is_one_request(tmp_path: Path) -> None:
    """Claude Code 2.1.33x writes a queued prompt as a ``queue-operation`` line when typed and
    as an attachment when handed over; taken as the next turn, it is that turn's user line:
    one request each time, where it was met last."""
    base = {"cwd": "/w/p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}

    def enqueue(text: str) -> dict[str, Any]:
        return {"type": "queue-operation", "operation": "enqueue", "content": text, **base}

    lines = [
        {**base, "type": "user", "message": {"role": "user", "content": "Build the app."}},
        enqueue("also add a due date"),
        enqueue("and a priority"),
        *_claude_bash_turn(1),
        _queued("also add a due date"),
        _queued([{"type": "text", "text": "and a priority"}]),
        *_claude_bash_turn(2),
        _queued([{"type": "text", "text": "use SQLite"}]),
        {**base, "type": "user", "message": {"role": "user", "content": "use SQLite"}},
        {**base, "type": "user", "message": {"role": "user", "content": "Thanks!"}},
    ]
    reading = read_transcript(jsonl(tmp_path / "t.jsonl", lines))
    assert reading.work is not None
    assert [(r.text, r.source) for r in reading.work.requests] == [
        ("Build the app.", "prompt"),
        ("also add a due date", "queued"),
        ("and a priority", "queued"),
        ("use SQLite", "prompt"),
        ("Thanks!", "prompt"),
    ]


def _bash(
    base: dict[str, Any], n: int, command: str, output: str, error: bool
) -> list[dict[str, Any]]:
    """A Claude Code Bash call and its result (``error``: flagged as an error)."""
    call = {"type": "tool_use", "id": f"b{n}", "name": "Bash", "input": {"command": command}}
    result = {"type": "tool_result", "tool_use_id": f"b{n}", "content": output}
    if error:
        result["is_error"] = True
    return [
        {**base, "type": "assistant", "message": {"id": f"m{n}", "content": [call]}},
        {**base, "type": "user", "message": {"role": "user", "content": [result]}},
    ]


def test_the_same_check_in_two_folders_of_a_monorepo_is_two_checks(tmp_path: Path) -> None:
    base = {"cwd": "/w/mono", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}

    lines = [
        {**base, "type": "user", "message": {"role": "user", "content": "Build both apps."}},
        *_bash(base, 1, "cd apps/admin && npm run build", "Exit code 1\nType error: x", True),
        *_bash(base, 2, "cd apps/site && npm run build", "✓ Compiled successfully", False),
        *_bash(base, 3, "npm run build", "✓ Compiled successfully", False),
    ]
    state = state_of(read_transcript(jsonl(tmp_path / "m.jsonl", lines)), "s")
    # the site's pass is not the admin app's: its failure stays open
    assert state.open_failures == ["cd apps/admin && npm run build: failed (Type error: x)"]


def test_a_script_that_passes_run_another_way_undoes_its_failure(tmp_path: Path) -> None:
    base = {"cwd": "/w/p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}

    lines = [
        {**base, "type": "user", "message": {"role": "user", "content": "Run the recon."}},
        *_bash(
            base, 1, r"cd d:\w\Okki && node scripts/recon.js", "Exit code 1\nNo such file", True
        ),
        *_bash(base, 2, "python manage.py migrate", "Exit code 1\nno such table", True),
        *_bash(base, 3, 'node "d:/w/Okki/scripts/recon.js"', "recon done", False),
        *_bash(base, 4, "python manage.py runserver --noreload", "started", False),
    ]
    work = read_transcript(jsonl(tmp_path / "s.jsonl", lines)).work
    assert work is not None
    # the same script by another path passed; another subcommand of a script is another run
    assert work.failures == ["`python manage.py migrate` failed — no such table"]
    assert work.environment == [
        r"`cd d:\w\Okki && node scripts/recon.js` failed — No such file; run as "
        '`node "d:/w/Okki/scripts/recon.js"` it worked'
    ]


def test_the_branch_line_names_the_branches_seen_before(tmp_path: Path) -> None:
    def line(text: str, branch: str) -> dict[str, Any]:
        message = {"role": "user", "content": text}
        return {"type": "user", "cwd": "/w/p", "gitBranch": branch, "message": message}

    lines = [
        line("Migrate the login screen.", "feature/login"),
        line("keep going", "feature/login"),
        line("keep going", "HEAD"),  # detached for a while: no branch to name
        line("now the register screen", "dev"),
    ]
    work = read_transcript(jsonl(tmp_path / "b.jsonl", lines)).work
    assert work is not None
    assert work.context == ["git branch: dev (as Claude Code last saw it; before: feature/login)"]


def test_a_failing_run_the_person_pasted_is_what_failed_last(tmp_path: Path) -> None:
    base = {"cwd": "/w/p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}
    ci_log = (
        "CI is red again:\n"
        "FAILED tests/test_cli.py::test_init - argparse.ArgumentError: conflicting subparser\n"
        "5 failed, 29 passed in 0.63s\nError: Process completed with exit code 1."
    )

    def prompt(text: str) -> dict[str, Any]:
        return {**base, "type": "user", "message": {"role": "user", "content": text}}

    def pytest_run(n: int) -> list[dict[str, Any]]:
        call = {"type": "tool_use", "id": f"b{n}", "name": "Bash"}
        call["input"] = {"command": "pytest -q"}
        result = {"type": "tool_result", "tool_use_id": f"b{n}", "content": "34 passed in 0.5s"}
        return [
            {**base, "type": "assistant", "message": {"id": f"m{n}", "content": [call]}},
            {**base, "type": "user", "message": {"role": "user", "content": [result]}},
        ]

    pasted = [prompt("Fix the CLI."), *pytest_run(1), prompt(ci_log)]
    work = read_transcript(jsonl(tmp_path / "a.jsonl", pasted)).work
    assert work is not None
    said = (
        "the test run in the user's latest message failed — 5 failed, 29 passed in 0.63s; "
        "first: tests/test_cli.py::test_init - argparse.ArgumentError: conflicting subparser"
    )
    assert (work.failures, work.last_failure) == ([said], said)
    # the same runner passing after the paste answers it
    work = read_transcript(jsonl(tmp_path / "b.jsonl", [*pasted, *pytest_run(2)])).work
    assert work is not None
    assert (work.failures, work.last_failure) == ([], None)


def test_a_look_that_went_fine_has_no_result_in_the_last_activity(tmp_path: Path) -> None:
    base = {"cwd": "/w/p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}
    call = {"type": "tool_use", "id": "b1", "name": "Bash"}
    call["input"] = {"command": "sed -n '132,208p' cli/main.py"}
    result = {"type": "tool_result", "tool_use_id": "b1", "content": "def main():"}
    lines = [
        {**base, "type": "user", "message": {"role": "user", "content": "Fix the CLI."}},
        {**base, "type": "assistant", "message": {"id": "m1", "content": [call]}},
        {**base, "type": "user", "message": {"role": "user", "content": [result]}},
    ]
    work = read_transcript(jsonl(tmp_path / "r.jsonl", lines)).work
    assert work is not None
    assert work.last_activity == "ran `sed -n '132,208p' cli/main.py`"  # not "(passed)"


def test_an_agent_notification_carries_its_results_first_line(tmp_path: Path) -> None:
    """An agent Claude Code reports "completed" may have done nothing (its tools denied): the
    fact carries the first line of its result."""
    base = {"cwd": "/w/p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}
    notification = (
        "<task-notification>\n<task-id>a49b</task-id>\n<status>completed</status>\n"
        '<summary>Agent "Run the quant tests" completed</summary>\n'
        "<result>I don't have permission to run Bash commands right now.\n\n"
        "**What I was trying to do:** run the tests.</result>\n</task-notification>"
    )
    lines = [
        {**base, "type": "user", "message": {"role": "user", "content": "Test it."}},
        {**base, "type": "user", "message": {"role": "user", "content": notification}},
    ]
    work = read_transcript(jsonl(tmp_path / "n.jsonl", lines)).work
    assert work is not None
    assert work.environment == [
        'background task: Agent "Run the quant tests" completed — its result: I don\'t have '
        "permission to run Bash commands right now."
    ]


def test_a_failure_is_its_cause_not_the_line_that_reports_a_step_failed(tmp_path: Path) -> None:
    """A build log says why before the line that says only that a step failed (Vercel's
    ``Error: Command "…" exited with 1``, make's ``*** … Error 2``, npm's ``code 1``); its
    lines' leading times are no part of what they say. The wrapper line stands when nothing
    before it says why."""

    vercel = (
        "Exit code 1\n"
        '2025-10-09T08:11:44.177Z  Running "install" command: `npm install`...\n'
        '2025-10-09T08:11:44.879Z  npm error Tracker "idealTree" already exists\n'
        "2025-10-09T08:11:44.881Z  npm error A complete log of this run can be found in: x.log\n"
        '2025-10-09T08:11:44.915Z  Error: Command "npm install" exited with 1'
    )
    make = "Exit code 2\nscp out.tar web:\nscp: web: Permission denied\nmake: *** [deploy] Error 1"
    bare = 'Exit code 1\nError: Command "npm install" exited with 1'
    lines = [
        {"cwd": "/w/p", "sessionId": "s1", "type": "user", "message": {"content": "Deploy."}},
        *_claude_failed_bash("t1", "vercel --prod", vercel),
        *_claude_failed_bash("t2", "./deploy.sh", make),
        *_claude_failed_bash("t3", "npm run deploy", bare),
    ]
    reading = read_transcript(jsonl(tmp_path / "t.jsonl", lines))
    assert reading.work is not None
    assert record_of(reading.work).failures == [
        '`vercel --prod` failed — npm error Tracker "idealTree" already exists',
        "`./deploy.sh` failed — scp: web: Permission denied",
        '`npm run deploy` failed — Error: Command "npm install" exited with 1',
    ]


def _claude_tool(n: int, name: str, args: dict[str, Any], out: str, made: bool) -> list[Any]:
    """A tool call and its result as Claude Code writes them (``toolUseResult.type`` says
    whether a Write made the file new)."""
    base = {"cwd": "/w/p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}
    use = {"type": "tool_use", "id": f"c{n}", "name": name, "input": args}
    result = {"type": "tool_result", "tool_use_id": f"c{n}", "content": out}
    structured = {"type": "create" if made else "update", "filePath": args.get("file_path")}
    return [
        {**base, "type": "assistant", "message": {"id": f"m{n}", "content": [use]}},
        {
            **base,
            "type": "user",
            "message": {"role": "user", "content": [result]},
            "toolUseResult": structured if name == "Write" else None,
        },
    ]


def test_a_task_whose_deliverable_was_written_after_the_list_is_probably_done(
    tmp_path: Path,
) -> None:
    """The list marks "Create realtime-systems agent" in progress, then the agent writes
    ``agents/realtime-systems.md`` new and the list is not updated: the next step is the next
    task, and the task shows as probably done. A file only edited, one made before the list
    changed, or a name too short to name a task leave the task where the list puts it."""
    todos = [
        {"content": "Create mobile-expert agent", "status": "completed", "activeForm": "x"},
        {"content": "Create realtime-systems agent", "status": "in_progress", "activeForm": "x"},
        {"content": "Create data-engineer agent", "status": "pending", "activeForm": "x"},
    ]
    ask = {"cwd": "/w/p", "sessionId": "s1", "type": "user", "message": {"content": "Add them."}}
    listed = _claude_tool(1, "TodoWrite", {"todos": todos}, "Todos have been modified.", False)

    def state(*later: list[Any]) -> Any:
        lines = [ask, *listed, *(line for pair in later for line in pair)]
        return state_of(read_transcript(jsonl(tmp_path / f"t{len(lines)}.jsonl", lines)), "s")

    def write(n: int, path: str, made: bool) -> list[Any]:
        return _claude_tool(n, "Write", {"file_path": path, "content": "x"}, "File written", made)

    done = state(write(2, "/w/p/agents/realtime-systems.md", True))
    assert done.remaining == ["Create data-engineer agent"]
    assert done.done[-1] == (
        "Create realtime-systems agent (probably done: `agents/realtime-systems.md` was "
        "written after the task list last showed it in progress)"
    )
    assert done.next_action == ""  # the seed's next step comes from remaining
    todos_done = [{**t, "status": "completed"} for t in todos[:1]] + todos[1:2]
    lines = [ask, *_claude_tool(1, "TodoWrite", {"todos": todos_done}, "ok", False)]
    lines += write(2, "/w/p/agents/realtime-systems.md", True)
    said = {"type": "text", "text": "The realtime-systems agent is written."}
    lines.append({**ask, "type": "assistant", "message": {"id": "m9", "content": [said]}})
    only = state_of(read_transcript(jsonl(tmp_path / "only.jsonl", lines)), "s")
    assert only.remaining == []
    assert only.status is not TaskStatus.COMPLETED  # probably done is not done
    removed = _claude_bash("t3", "rm agents/realtime-systems.md", "", "")
    gone = state(write(2, "/w/p/agents/realtime-systems.md", True), removed)
    assert gone.remaining[0] == "Create realtime-systems agent"  # deleted since: not made
    edited = state(write(2, "/w/p/agents/realtime-systems.md", False))
    assert edited.remaining[0] == "Create realtime-systems agent"
    lines = [ask, *write(2, "/w/p/agents/realtime-systems.md", True), *listed]
    before = state_of(read_transcript(jsonl(tmp_path / "before.jsonl", lines)), "s")
    assert before.remaining[0] == "Create realtime-systems agent"
    todos[1]["content"] = "Create the agent"
    listed[:] = _claude_tool(1, "TodoWrite", {"todos": todos}, "Todos have been modified.", False)
    short = state(write(2, "/w/p/agent.md", True))
    assert short.remaining[0] == "Create the agent"
