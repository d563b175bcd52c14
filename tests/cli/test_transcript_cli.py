"""`decide`, `compact` and `handoff` with --transcript: a real agent's session file, no
hand-written state. The fixtures are tests/fixtures/transcripts (written in the real shapes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import REPO, git, invoke, message_of

FIXTURES = REPO / "tests" / "fixtures" / "transcripts"


@pytest.mark.parametrize(
    ("name", "fmt", "estimated"),
    [
        ("claude_session.jsonl", "claude-code", False),
        ("claude_compact_end.jsonl", "claude-code", True),
        ("codex_rollout.jsonl", "codex", False),
        ("openai_with_usage.json", "openai", False),
        ("openai_no_usage.json", "openai", True),
    ],
)
def test_decide_reads_the_figure(name: str, fmt: str, estimated: bool) -> None:
    result = invoke("decide", "--transcript", str(FIXTURES / name), "--format", "json")
    assert result.exit_code == 0, message_of(result.stderr)
    out = json.loads(result.stdout)
    assert out["transcript"]["format"] == fmt
    assert out["context_estimated"] is estimated
    assert out["context_tokens"] > 0
    from clm_policy.transcripts.reading import read_context

    assert out["context_tokens"] == read_context(FIXTURES / name).context_tokens


def test_decide_uses_the_models_window() -> None:
    result = invoke(
        "decide", "-p", "claude-code", "--transcript", str(FIXTURES / "claude_session.jsonl")
    )
    assert result.exit_code == 0
    assert "window from model claude" in result.stdout
    assert "read:      claude-code transcript" in result.stdout
    codex = json.loads(
        invoke(
            "decide", "--transcript", str(FIXTURES / "codex_rollout.jsonl"), "--format", "json"
        ).stdout
    )
    assert (codex["context_window"], codex["window_source"]) == (258400, "state")


def test_compact_and_handoff_build_the_state_from_the_transcript(tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    assert invoke("init", str(memory)).exit_code == 0
    path = str(FIXTURES / "claude_session.jsonl")
    compacted = invoke("compact", "-m", str(memory), "--transcript", path, "--format", "json")
    assert compacted.exit_code == 0, compacted.stderr
    handed = invoke("handoff", "-m", str(memory), "--transcript", path, "--format", "json")
    assert handed.exit_code == 0, handed.stderr
    manifest = json.loads(handed.stdout)["manifest"]
    assert manifest["goal"] == "Fix the CSV parser so quoted commas survive, and add a test."
    assert any(p.endswith("csvtool/parse.py") for p in manifest["changed_artifacts"])
    # results read from the output; the failing run was followed by a passing run of the suite
    assert (
        "python -m pytest -q tests/test_quoted.py: failed "
        "(1 failed in 0.05s; first: tests/test_quoted.py::test_quoted_comma - ImportError: "
        "cannot import name 'parse_line')" in manifest["commands_and_results"]
    )
    assert manifest["open_failures"] == []
    assert manifest["verified"] == ["python -m pytest -q: passed (4 passed in 0.05s)"]
    # its last words say the work is done, nothing remains or fails: completed; the last
    # message is no next step
    assert manifest["status"] == "completed"
    assert manifest["next_safe_action"] == (
        "The task is complete: report what was done and wait for the user's next request"
    )
    session = json.loads(handed.stdout)["session"]
    assert session == "7c1e4a52-93d0-4b8e-a6f1-2d5c8e90b3a7"
    # the transcript itself is never committed
    history = git(memory, "log", "-p", "--all")
    assert "Caveat: The messages below were generated" not in history


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("nosuch.jsonl", "no such file"),
        (".", "is a directory"),
    ],
)
def test_bad_transcripts_are_exit_2(tmp_path: Path, path: str, message: str) -> None:
    target = path if path == "." else str(tmp_path / path)
    result = invoke("decide", "--transcript", target)
    assert result.exit_code == 2
    assert message in result.stderr
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("this is not a transcript\n")
    result = invoke("decide", "--transcript", str(garbage))
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr
    wrong = invoke(
        "decide",
        "--transcript",
        str(FIXTURES / "codex_rollout.jsonl"),
        "--transcript-format",
        "openai",
    )
    assert wrong.exit_code == 2


def test_an_estimate_says_why_once() -> None:
    result = invoke("decide", "--transcript", str(FIXTURES / "openai_no_usage.json"))
    assert result.exit_code == 0, message_of(result.stderr)
    lines = result.stdout.splitlines()
    why = lines[lines.index(next(x for x in lines if x.startswith("read:"))) + 1]
    assert why.strip().startswith("no usage found; context estimated (characters / 4")
    assert result.stdout.count("context estimated") == 1


def test_a_reply_that_is_empty_or_no_text_file_is_refused(tmp_path: Path) -> None:
    """`handoff --reply`: an empty standard input (a pipe that gave nothing) is no handoff,
    and the file is read as every other input file is (no FIFO blocks, no device is read);
    nothing is committed."""
    from conftest import run_process

    memory = tmp_path / "mem"
    assert invoke("init", str(memory)).exit_code == 0
    before = git(memory, "rev-parse", "HEAD")
    (tmp_path / "blank.md").write_text(" \n\n")
    args = ["handoff", "-m", str(memory), "--transcript", str(FIXTURES / "claude_session.jsonl")]
    for reply, stdin, said in (
        ("-", "", "clm-policy: --reply <stdin>: empty (the agent's handoff is its text)\n"),
        (
            str(tmp_path / "blank.md"),
            None,
            f"clm-policy: --reply {tmp_path / 'blank.md'}: empty (the agent's handoff is its text)\n",
        ),
        ("/dev/zero", None, "/dev/zero: is a device, not a reply file\n"),
        (str(tmp_path), None, f"{tmp_path}: is a directory, not a reply file\n"),
    ):
        done = run_process(*args, "--reply", reply, stdin=stdin)
        assert (done.returncode, done.stdout, message_of(done.stderr)) == (2, "", said), reply
    assert git(memory, "rev-parse", "HEAD") == before


def test_a_reply_that_is_a_state_a_policy_or_json_is_refused(tmp_path: Path) -> None:
    """`handoff --reply` took a session state, a policy or any JSON object as the agent's
    words and committed them: almost surely the wrong file. Refused (exit 2, nothing
    committed) as `--transcript state.json` is, with the option that takes it."""
    from conftest import POLICIES, run_process

    memory = tmp_path / "mem"
    assert invoke("init", str(memory)).exit_code == 0
    before = git(memory, "rev-parse", "HEAD")
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"session_id": "s1", "tokens": {"context_tokens": 400000}}))
    policy = tmp_path / "team.yaml"
    policy.write_text((POLICIES / "examples" / "team.yaml").read_text())
    other = tmp_path / "other.json"
    other.write_text('{"goal": "ship it"}\n')
    args = ["handoff", "-m", str(memory), "--transcript", str(FIXTURES / "claude_session.jsonl")]
    words = "not the agent's handoff (its Markdown or plain text)"
    state_is = "a session state (SessionState JSON: clm-policy schema session-state)"
    for reply, stdin, said in (
        (str(state), None, f"{state}:1: {state_is}, {words}: pass it as --state {state}"),
        (
            "-",
            state.read_text(),
            f"<stdin>:1: {state_is}, {words}: save it to a file, then pass that as --state FILE",
        ),
        (
            str(policy),
            None,
            f"{policy}:1: a policy (YAML with rules: and version:), {words}: pass it as "
            f"--policy {policy}",
        ),
        (str(other), None, f"{other}:1: a JSON object, {words}"),
        (
            str(FIXTURES / "claude_session.jsonl"),
            None,
            f"{FIXTURES / 'claude_session.jsonl'}:1: a Claude Code transcript, {words}: pass it "
            f"as --transcript {FIXTURES / 'claude_session.jsonl'}",
        ),
    ):
        done = run_process(*args, "--reply", reply, stdin=stdin)
        assert (done.returncode, done.stdout) == (2, ""), (reply, done.stderr)
        assert done.stderr.splitlines()[0] == said, reply
    assert git(memory, "rev-parse", "HEAD") == before
    (tmp_path / "reply.md").write_text("## Goal\nship it\n\n## Next step\nthe notes\n")
    done = run_process(*args, "--reply", str(tmp_path / "reply.md"))
    assert done.returncode == 0, done.stderr  # the agent's words still go in


def test_a_reply_saved_with_a_byte_order_mark_keeps_the_agents_goal(tmp_path: Path) -> None:
    """A reply saved by an editor (or PowerShell) that writes UTF-8 with a BOM: the mark hid
    the first heading, so the manifest's goal was the record's, not the agent's, and the words
    began with U+FEFF. Now the mark is the file's encoding, not the agent's text: file or pipe."""
    from conftest import run_process

    memory = tmp_path / "mem"
    assert invoke("init", str(memory)).exit_code == 0
    reply = "## Goal\nKeep quoted commas in the CSV parser.\n\n## Next step\nRun the tests.\n"
    (tmp_path / "reply.md").write_bytes(b"\xef\xbb\xbf" + reply.encode())
    path = str(FIXTURES / "claude_session.jsonl")
    for source, stdin in ((str(tmp_path / "reply.md"), None), ("-", "\ufeff" + reply)):
        done = run_process(
            *("handoff", "-m", str(memory), "--transcript", path, "--format", "json"),
            *("--reply", source),
            stdin=stdin,
        )
        assert done.returncode == 0, message_of(done.stderr)
        manifest = json.loads(done.stdout)["manifest"]
        assert manifest["agent_words"]["text"] == reply.strip(), source
        assert manifest["goal"] == "Keep quoted commas in the CSV parser.", source
        git(memory, "reset", "-q", "--hard", "HEAD~1")  # the same session handed off again


@pytest.mark.parametrize("command", ["compact", "handoff", "decide"])
def test_a_session_state_given_as_a_transcript_is_refused(tmp_path: Path, command: str) -> None:
    """`--transcript STATE.json` read the state as an OpenAI chat (it has `messages`) and
    compacted a session named after the file; now: exit 2, naming the option to use."""
    from clm_policy.memory.init import init_memory

    from conftest import run_process

    init_memory(tmp_path / "mem")
    state = REPO / "docs" / "examples" / "session-state.json"
    memory = [] if command == "decide" else ["--memory", "mem"]
    done = run_process(command, *memory, "--transcript", str(state), cwd=tmp_path)
    assert done.returncode == 2, message_of(done.stderr)
    assert message_of(done.stderr) == (
        f"{state}:1: a session state (SessionState JSON: clm-policy schema session-state), not "
        f"a transcript: pass it as --state {state}\n"
    )
    assert git(tmp_path / "mem", "log", "--format=%s") == "clm(init): memory repository\n"


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("claude_session.jsonl", "Claude Code transcript"),
        ("codex_rollout.jsonl", "Codex rollout"),
        ("openai_with_usage.json", "OpenAI chat transcript"),
    ],
)
@pytest.mark.parametrize("command", ["compact", "decide"])
def test_a_transcript_given_as_a_state_is_refused(
    tmp_path: Path, command: str, name: str, kind: str
) -> None:
    """`--state SESSION.jsonl` said `invalid JSON: Extra data` (or what a state lacks): now it
    says what the file is and to pass it as --transcript."""
    from clm_policy.memory.init import init_memory

    from conftest import run_process

    init_memory(tmp_path / "mem")
    path = FIXTURES / name
    memory = [] if command == "decide" else ["--memory", "mem"]
    done = run_process(command, *memory, "--state", str(path), cwd=tmp_path)
    assert done.returncode == 2, message_of(done.stderr)
    assert message_of(done.stderr) == (
        f"{path}:1: a {kind}, not a session state: pass it as --transcript {path}\n"
    )
    piped = run_process("decide", "--state", "-", stdin=path.read_text(), cwd=tmp_path)
    assert piped.returncode == 2, piped.stderr
    assert piped.stderr == (
        f"<stdin>:1: a {kind}, not a session state: save it to a file, then pass that as "
        "--transcript FILE\n"
    )
    assert git(tmp_path / "mem", "log", "--format=%s") == "clm(init): memory repository\n"


def test_a_state_that_does_not_validate_is_still_said_to_be_one(tmp_path: Path) -> None:
    """A state with messages and a wrong field is a state, not an OpenAI chat."""
    from conftest import run_process, state_file

    path = state_file(tmp_path, step_index="5", messages=[{"role": "user", "content": "hi"}])
    done = run_process("decide", "--state", str(path), cwd=tmp_path)
    assert done.returncode == 2
    assert "step_index: expected an integer" in done.stderr
    assert "--transcript" not in done.stderr
