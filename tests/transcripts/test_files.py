"""Files made by commands (``transcripts/files.py``): git's own output and arguments are no
file made or changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clm_policy.transcripts.files import Paths, created_in_output, shell_file_ops, shell_reads
from clm_policy.transcripts.reading import read_transcript

COMMITTED = (
    "[001-enterprise 443ae20] feat: enterprise features\n"
    " 66 files changed, 9594 insertions(+), 1334 deletions(-)\n"
    " create mode 100644 .env.example\n"
    " create mode 100755 scripts/build-search-index.js\n"
    " create mode 100644 src/middleware.ts\n"
)
STATUS = (
    "On branch main\nChanges to be committed:\n"
    '  (use "git restore --staged <file>..." to unstage)\n'
    "\tnew file:   .env.example\n\tnew file:   .specify/scripts/bash/create-new-feature.sh\n"
    "\tnew file:   src/middleware.ts\n\tmodified:   package.json\n"
)


@pytest.mark.parametrize(
    ("command", "output"),
    [
        ('git commit -m "feat: enterprise features"', COMMITTED),
        ("git status", STATUS),
        ("git add .env.example src/middleware.ts && git status", STATUS),
        ('cd /p && git commit -m "x" | tail -5', COMMITTED),
        ("git log --format=%s -3", "created src/app.ts with the router\ncreate utils/x.py"),
    ],
)
def test_git_output_names_no_file_made(command: str, output: str) -> None:
    assert created_in_output(output, "/p", Paths("/p"), command) == []
    assert shell_file_ops(command, "/p", Paths("/p")) == []


def test_a_commits_create_mode_lines_are_no_generators_lines() -> None:
    # a generator and a commit in one chain: the generator's files only
    output = "CREATE src/app/x.ts (12 bytes)\n" + COMMITTED
    command = "npx ng generate component x && git add -A && git commit -m x"
    assert created_in_output(output, "/p", Paths("/p"), command) == ["/p/src/app/x.ts"]


BASE = {"cwd": "/w/p", "sessionId": "s1", "isSidechain": False, "timestamp": "t"}


def _call(
    tool_id: str, name: str, args: dict[str, str], output: str, error: bool = False
) -> list[dict[str, Any]]:
    """A Claude Code tool call and its result (``error``: the tool refused)."""
    call = {"type": "tool_use", "id": tool_id, "name": name, "input": args}
    result = {"tool_use_id": tool_id, "type": "tool_result", "content": output, "is_error": error}
    return [
        {**BASE, "type": "assistant", "message": {"id": tool_id, "content": [call]}},
        {**BASE, "type": "user", "message": {"role": "user", "content": [result]}},
    ]


def _session(tmp_path: Path, calls: list[list[dict[str, Any]]]) -> Path:
    """A Claude Code session of ``calls`` after one request."""
    lines = [{**BASE, "type": "user", "message": {"content": "Do it."}}]
    lines += [line for call in calls for line in call]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def _bash_session(tmp_path: Path, runs: list[tuple[str, str, str]]) -> Path:
    """A Claude Code session of Bash calls (id, command, output) after one request."""
    return _session(tmp_path, [_call(i, "Bash", {"command": c}, out) for i, c, out in runs])


def test_staging_and_committing_changes_no_file(tmp_path: Path) -> None:
    path = _bash_session(
        tmp_path,
        [
            ("t1", "git add .env.example src/middleware.ts", ""),
            ("t2", "git status", STATUS),
            ("t3", 'git commit -m "feat: enterprise features"', COMMITTED),
        ],
    )
    reading = read_transcript(path)
    assert reading.work is not None
    assert reading.work.changed == []
    assert reading.work.made == []


@pytest.mark.parametrize(
    ("command", "read"),
    [
        ("cat README.md", ["/p/README.md"]),
        ("sed -n '1,80p' src/a.py", ["/p/src/a.py"]),  # the script is no file
        ("sed -n -e '1p' src/b.py", ["/p/src/b.py"]),
        ("head -n 40 notes.txt | tail -5", ["/p/notes.txt"]),  # 40 is no file
        ("cd web && nl -ba app.ts | sed -n '1,160p'", ["/p/web/app.ts"]),
        ("Get-Content -Path src/App.tsx -First 200", ["/p/src/App.tsx"]),
        ("sed -i 's/a/b/' conf.ini", []),  # an edit, not a read
        ("cat > plan.md <<'EOF'", []),  # a write
        ("cat $OUT", []),  # a path the shell expands
        ("ls src", []),
    ],
)
def test_the_files_a_command_reads(command: str, read: list[str]) -> None:
    assert shell_reads(command, "/p", Paths("/p")) == read


def test_a_file_written_over_after_it_was_read_is_changed_not_made(tmp_path: Path) -> None:
    # `cat > plan.md` over the plan.md it read: the file was there, the agent changed it;
    # notes.md, read only after it was written, is a file the command made
    path = _bash_session(
        tmp_path,
        [
            ("t1", "sed -n '1,80p' plan.md", "# Plan"),
            ("t2", "cat > plan.md <<'EOF'\n# Plan v2\nEOF", ""),
            ("t3", "cat > notes.md <<'EOF'\nnotes\nEOF", ""),
            ("t4", "cat notes.md", "notes"),
        ],
    )
    work = read_transcript(path).work
    assert work is not None
    assert (work.changed, work.made) == (["plan.md"], ["notes.md"])


def test_a_failed_edit_done_by_a_script_is_no_open_failure(tmp_path: Path) -> None:
    # the Edit tool failed on app.js; a `node -e` script then wrote it: the edit is done, and
    # app.js (there all along) is changed, not made
    args = {"file_path": "/w/p/app.js", "old_string": "a", "new_string": "b"}
    refused = "<tool_use_error>String to replace not found in file.</tool_use_error>"
    failed = _call("e1", "Edit", args, refused, error=True)
    script = "node -e \"const fs = require('fs'); fs.writeFileSync('app.js', 'b')\""
    done = _call("t1", "Bash", {"command": script}, "")
    for calls, failures, changed in [
        ([failed], ["the edit of `app.js` failed — String to replace not found in file."], []),
        ([failed, done], [], ["app.js"]),
    ]:
        work = read_transcript(_session(tmp_path, calls)).work
        assert work is not None
        assert (work.failures, work.changed, work.made) == (failures, changed, [])
