"""What a new user reads when something is wrong: impossible figures refused, long values
quoted short, one truncation mark, counts said in words, paths as the user typed them."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_process


def test_tokens_over_the_window_are_refused(tmp_path: Path) -> None:
    """A context cannot be larger than its window: --tokens over --window is a usage error
    (exit 2) naming both values, and nothing is decided."""
    done = run_process("decide", "--tokens", "500", "--window", "100", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        "clm-policy decide: --tokens 500 is more than --window 100: a context cannot be larger "
        "than its window; give the window the model has (try 'clm-policy decide --help')\n"
    )
    full = run_process("decide", "--tokens", "100", "--window", "100", cwd=tmp_path)
    assert full.returncode == 0, full.stderr
    assert "context:   100 tokens of 100 (100%, window from --window)\n" in full.stdout


def test_a_state_over_its_window_is_decided_and_said(tmp_path: Path) -> None:
    """A state file's figures may be real (read from a transcript, its window guessed): it is
    decided, and the context line says the figures do not fit."""
    state = tmp_path / "over.json"
    state.write_text(
        json.dumps({"session_id": "s", "tokens": {"context_tokens": 500, "context_window": 100}})
    )
    done = run_process("decide", "--state", "over.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (
        "context:   500 tokens of 100 (500%, window from the state file); more than its "
        "window: check the window the state gives\n"
    ) in done.stdout


def test_migrate_says_plainly_when_there_is_nothing(tmp_path: Path) -> None:
    """A new memory repository holds no document: migrate says there was nothing, not "all 0
    document(s) are current"."""
    assert run_process("init", "mem", cwd=tmp_path).returncode == 0
    done = run_process("migrate", "--memory", "mem", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "mem: no documents yet; nothing to migrate\n"


def test_counts_are_said_in_words(tmp_path: Path) -> None:
    """One error is "1 error", none are "0 warnings": no "(s)"."""
    (tmp_path / "p.yaml").write_text("version: 1\nprofiles: [a\n")
    done = run_process("lint", "p.yaml", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == "clm-policy lint: 1 error, 0 warnings in 1 file\n"


def test_a_json_syntax_error_shows_its_line_and_a_caret(tmp_path: Path) -> None:
    """`decide --state` on broken JSON names file:line:col, then the line and a caret under
    the column (it named the place and showed nothing of the line)."""
    (tmp_path / "bad.json").write_text('{"a": 1,, }\n')
    done = run_process("decide", "--state", "bad.json", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        "bad.json:1:9: invalid JSON: Expecting property name enclosed in double quotes\n"
        '  {"a": 1,, }\n'
        "          ^\n"
    )


def test_an_invalid_field_shows_its_line(tmp_path: Path) -> None:
    """A valid JSON document that is no valid state: the field's line and a caret too."""
    (tmp_path / "v.json").write_text(
        '{\n  "session_id": "s",\n  "status": "runing"\n}\n', encoding="utf-8"
    )
    done = run_process("decide", "--state", "v.json", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines()[1:] == ['    "status": "runing"', "              ^"]
    assert done.stderr.startswith("v.json:3:13: status: input should be 'running'")


def test_a_minified_document_shows_a_short_excerpt(tmp_path: Path) -> None:
    """A megabyte on one line: the excerpt is about 100 characters around the column, cut
    with the one mark, the caret under the bad value."""
    data = {"session_id": "s", "messages": [{"role": "user", "content": "x" * 300}] * 3000}
    text = json.dumps(data)[:-1] + ', "tokens": {"context_tokens": "5"}}'
    (tmp_path / "big.json").write_text(text)
    done = run_process("decide", "--state", "big.json", cwd=tmp_path)
    assert done.returncode == 2
    message, line, caret = done.stderr.splitlines()
    assert message.endswith(": tokens.context_tokens: expected an integer, got string '5'")
    assert len(line) <= 104
    assert line.startswith("  …")
    assert line.endswith('"5"}}')
    assert line[caret.index("^")] == '"'
    assert line[caret.index("^") :] == '"5"}}'


def test_a_line_that_looks_secret_is_not_shown(tmp_path: Path) -> None:
    """A file that was not a state at all (credentials): the error says where, and that the
    line is not shown."""
    (tmp_path / "creds").write_text('password = "Xk29vLq8Zp3Rt7Wm"\n')
    done = run_process("decide", "--state", "creds", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        "creds:1:1: invalid JSON: Expecting value\n"
        "  (the line is not shown: it looks like it holds a secret)\n"
    )
    assert "Xk29" not in done.stderr + done.stdout


def test_claude_settings_json_errors_show_the_line(tmp_path: Path) -> None:
    """.claude/settings.json is a file people edit: its syntax error shows the line too."""
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text('{\n  "hooks": {,}\n}\n')
    done = run_process("hook", "claude-code", "--install", "--project", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines()[1:] == ['    "hooks": {,}', "              ^"]


LONG = "a/" * 2500 + "x.json"


def test_a_long_path_is_named_by_its_end(tmp_path: Path) -> None:
    """A missing --state of 5,000 characters was printed whole: it is cut to its last 200,
    after the one truncation mark, as every path a message names."""
    done = run_process("decide", "--state", LONG, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(f"…{LONG[-200:]}: ")
    assert len(done.stderr) < 300


def test_a_long_memory_folder_is_named_by_its_end(tmp_path: Path) -> None:
    """`--memory` of 5,000 characters: named by its end, and init suggested without it."""
    done = run_process("log", "--memory", LONG, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        f"clm-policy: …{LONG[-200:]}: no such memory repository (create one: clm-policy init DIR)\n"
    )


def test_a_long_session_id_is_quoted_as_every_value(tmp_path: Path) -> None:
    """A session id is quoted as every user value is (it was cut at 40 with "...'")."""
    assert run_process("init", "mem", cwd=tmp_path).returncode == 0
    done = run_process("decide", "--memory", "mem", "--session", "s/" * 100, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        f"clm-policy: invalid session id '{('s/' * 30)}…' for the memory repository: use "
        "letters, digits, '.', '_' and '-' (at most 128, starting with a letter or digit)\n"
    )


def test_paths_are_named_as_typed_or_from_the_working_folder(tmp_path: Path) -> None:
    """A project set up from its folder: the files written are named from there, the memory
    under the home folder with ~, a file trusted as typed (all were absolute)."""
    project = tmp_path / "shop"
    project.mkdir()
    done = run_process("init", "--claude-code", cwd=project)
    assert done.returncode == 0, done.stderr
    said = done.stdout.splitlines()
    assert said[0] == "wrote .clm-policy.yaml (policy claude-code, profile coding)"
    assert said[1].startswith("created memory repository ~/.local/share/clm-policy/projects/")
    hooks = run_process("hook", "claude-code", "--install", "--project", cwd=project)
    assert hooks.stdout.splitlines()[0] == "wrote .claude/settings.json"
    trusted = run_process("trust", "shop/.clm-policy.yaml", cwd=tmp_path)
    assert trusted.stdout.startswith("trusted shop/.clm-policy.yaml (sha256 ")
    (project / ".claude" / "settings.json").write_text('{\n  "hooks": {,}\n}\n')
    broken = run_process("hook", "claude-code", "--install", "--project", cwd=project)
    assert broken.stderr.startswith(".claude/settings.json:2:13: invalid JSON: ")


def test_a_memory_given_relative_is_named_relative(tmp_path: Path) -> None:
    """`--memory mem`: a session it does not hold is said of `mem`, not of its absolute path."""
    assert run_process("init", "mem", cwd=tmp_path).returncode == 0
    done = run_process("decide", "--memory", "mem", "--session", "nope", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("clm-policy: mem: no persisted session 'nope'")


def test_an_error_at_the_end_of_the_file_points_at_nothing(tmp_path: Path) -> None:
    """A document cut short is wrong past its last line: there is no line to show, and no
    caret under an empty one."""
    (tmp_path / "cut.json").write_text('{"session_id": "s",\n')
    done = run_process("decide", "--state", "cut.json", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        "cut.json:2:1: invalid JSON: Expecting property name enclosed in double quotes\n"
    )
