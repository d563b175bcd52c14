"""Git facts of a session's commands (``transcripts/environment.py``): a push is refused only
by its own output, a commit makes an earlier ``git status`` stale, a push's output marks the
commits it pushed; and Claude Code's ``gitBranch: "HEAD"`` names no branch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clm_policy.transcripts.environment import facts_of, settle
from clm_policy.transcripts.reading import read_transcript
from clm_policy.transcripts.record import record_of
from clm_policy.transcripts.results import FAILED, PASSED


def _never_elsewhere(fact: str) -> bool:
    return False


def _settled(command: str, output: str, status: str) -> list[str]:
    return settle([], facts_of(command, output, status), _never_elsewhere)


def _bash(
    tool_id: str, command: str, output: str, *, error: bool = False, cwd: str = "/w/p"
) -> list[dict[str, Any]]:
    """A Bash call and its result as Claude Code writes them (an error result when it exited
    non-zero)."""
    base = {"cwd": cwd, "sessionId": "s1", "isSidechain": False, "timestamp": "t"}
    call = {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": command}}
    result = {"tool_use_id": tool_id, "type": "tool_result", "content": output, "is_error": error}
    return [
        {**base, "type": "assistant", "message": {"id": tool_id, "content": [call]}},
        {**base, "type": "user", "message": {"role": "user", "content": [result]}},
    ]


def _environment(tmp_path: Path, lines: list[dict[str, Any]]) -> list[str]:
    path = tmp_path / "t.jsonl"
    start = {"cwd": "/w/p", "sessionId": "s1", "type": "user", "message": {"content": "Ship."}}
    path.write_text("".join(json.dumps(x) + "\n" for x in [start, *lines]))
    reading = read_transcript(path)
    assert reading.work is not None
    return record_of(reading.work).environment


# -- 1. a push is refused only by its own output -------------------------------------------


CHAIN = 'git add apps/*/package.json && git commit -m "fix: heap" && git push origin main'


@pytest.mark.parametrize(
    "output",
    [
        "(eval):1: no matches found: apps/*/package.json",  # zsh's glob, before git add ran
        "warning: could not open directory 'apps/member-portal/apps/': No such file or "
        "directory\nfatal: pathspec 'apps/*/package.json' did not match any files",
    ],
)
def test_a_push_after_a_stage_that_failed_did_not_run(output: str) -> None:
    # neither "push refused" nor "git commit failed": git add failed, nothing after it ran
    assert facts_of(CHAIN, output, FAILED) == []


def test_a_push_in_a_chain_is_refused_by_its_own_output() -> None:
    output = (
        "[main 6b22a09e] fix: heap\n 3 files changed, 3 insertions(+), 3 deletions(-)\n"
        "To https://github.com/o/r.git\n ! [rejected]        main -> main (fetch first)\n"
        "error: failed to push some refs to 'https://github.com/o/r.git'"
    )
    assert facts_of(CHAIN, output, FAILED) == [
        "committed on main: 6b22a09e fix: heap",
        "push refused (non-fast-forward): `git push origin main` — [rejected] main -> main "
        "(fetch first)",
    ]


def test_a_push_alone_that_failed_is_refused() -> None:
    output = "fatal: The current branch main has no upstream branch."
    assert facts_of("git push", output, FAILED) == [
        "push refused (failed): `git push` — fatal: The current branch main has no upstream branch."
    ]


# -- 2. a commit makes an earlier `git status` stale ----------------------------------------


def test_a_commit_later_in_the_chain_makes_its_status_stale() -> None:
    command = 'git restore --staged README.md && git status -s && git commit -m "fix(cli): x"'
    output = (
        " M README.md\nA  opk/cli/__init__.py\nM  opk/cli/__main__.py\n?? plan.md\n"
        "[main d802b87] fix(cli): x\n 2 files changed, 119 insertions(+), 19 deletions(-)\n"
        " create mode 100644 opk/cli/__init__.py\n"
    )
    assert _settled(command, output, PASSED) == ["committed on main: d802b87 fix(cli): x"]


def test_a_later_commit_makes_the_last_status_stale(tmp_path: Path) -> None:
    status = (
        "On branch main\nChanges not staged for commit:\n\tmodified:   history.jsonl\n\n"
        "Untracked files:\n\tUSER-GUIDE.md\n"
    )
    committed = (
        "[main 513c16d] Backup\n 2 files changed, 10 insertions(+)\n"
        " create mode 100644 USER-GUIDE.md"
    )
    lines = [
        *_bash("t1", "git status", status),
        *_bash("t2", "git add .", ""),
        *_bash("t3", 'git commit -m "Backup"', committed),
    ]
    assert _environment(tmp_path, lines) == ["committed on main: 513c16d Backup"]


def test_a_commit_in_another_repository_leaves_the_status(tmp_path: Path) -> None:
    status = "On branch main\nUntracked files:\n\tnotes.md\n"
    lines = [
        *_bash("t1", "git status", status),
        *_bash("t2", 'cd /w/other && git commit -am "x"', "[main 1a2b3c4] x\n 1 file changed"),
    ]
    assert _environment(tmp_path, lines) == [
        "committed on main: 1a2b3c4 x",
        "uncommitted at the last `git status` on branch main: notes.md",
    ]


# -- 3. a push's output marks the commits it pushed ----------------------------------------


def test_a_chained_push_marks_its_commit_pushed() -> None:
    output = (
        "[main 2935d342] Permanent magic links\n 2 files changed\n"
        "To https://github.com/o/r.git\n   f8158f11..2935d342  main -> main"
    )
    command = 'git add -A && git commit -m "Permanent magic links" && git push'
    assert _settled(command, output, PASSED) == [
        "committed on main: 2935d342 Permanent magic links (pushed)",
        "pushed: `git push`",
    ]


def test_a_push_marks_the_commits_before_it_and_its_line_is_the_last(tmp_path: Path) -> None:
    lines = [
        *_bash("t1", 'git commit -am "one"', "[main aaaaaaa] one\n 1 file changed"),
        *_bash("t2", "git push", "To github.com:o/r.git\n   1111111..aaaaaaa  main -> main"),
        *_bash("t3", 'git commit -am "two"', "[main bbbbbbb] two\n 1 file changed"),
        *_bash("t4", 'git commit -am "three"', "[main ccccccc] three\n 1 file changed"),
        *_bash("t5", "git push", "To github.com:o/r.git\n   aaaaaaa..ccccccc  main -> main"),
        *_bash("t6", 'git commit -am "four"', "[main ddddddd] four\n 1 file changed"),
    ]
    assert _environment(tmp_path, lines) == [
        "committed on main: aaaaaaa one (pushed)",
        "committed on main: bbbbbbb two (pushed)",
        "committed on main: ccccccc three (pushed)",
        "pushed: `git push`",
        "committed on main: ddddddd four",  # after the last push, and not pushed
    ]


def test_a_push_of_commits_not_recorded_says_where_the_branch_is() -> None:
    output = "To https://github.com/o/r.git\n   496a50d0..f8158f11  main -> main"
    assert _settled("git push --set-upstream origin main", output, PASSED) == [
        "pushed: `git push --set-upstream origin main` (main up to f8158f11)"
    ]


def test_a_fetch_in_the_same_output_is_no_push() -> None:
    output = (
        "From github.com:o/r\n   d4976df5..733a66fc  main       -> origin/main\n"
        "Everything up-to-date"
    )
    assert _settled("git pull --rebase && git push", output, PASSED) == ["pushed: `git push`"]


# -- 4. Claude Code's "HEAD" is no branch ----------------------------------------------------


def test_a_detached_head_names_no_branch(tmp_path: Path) -> None:
    def said(branch: str) -> dict[str, Any]:
        return {
            "cwd": "/w/p",
            "sessionId": "s1",
            "gitBranch": branch,
            "type": "assistant",
            "message": {"id": branch, "content": [{"type": "text", "text": "On it."}]},
        }

    path = tmp_path / "t.jsonl"
    lines = [said("feature/x"), said("HEAD")]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    reading = read_transcript(path)
    assert reading.work is not None
    # neither "HEAD" nor the branch it left: Claude Code last saw no branch
    assert reading.work.context == []
    path.write_text("".join(json.dumps(x) + "\n" for x in [*lines, said("dev")]))
    reading = read_transcript(path)
    assert reading.work is not None
    assert reading.work.context == [
        "git branch: dev (as Claude Code last saw it; before: feature/x)"
    ]


def test_a_script_that_switched_the_branch_says_so_after_the_status() -> None:
    status = facts_of("git status -sb", "## 001-scaffold\n M README.md\n", "passed")
    switched = facts_of(
        ".specify/scripts/bash/create-new-feature.sh --json 'stt api'",
        'Switched to a new branch \'001-stt-api\'\n{"BRANCH_NAME":"001-stt-api"}\n',
        "passed",
    )
    assert switched == ["created and switched to branch 001-stt-api"]
    # the uncommitted files go along to the new branch: the status stays, the switch after it
    assert settle(status, switched, lambda _fact: False) == [*status, *switched]
