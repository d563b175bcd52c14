"""Claude Code's hooks hand a session off exactly once, and say so where the person sees it.

What the real Claude Code 2.1.328 does, and these tests replay as processes (the end-to-end
suite, tests/agents_e2e, runs the binary itself): it tries a blocked automatic compaction
again before every request; it shows nothing of a blocked PreCompact (exit 2), neither in
``-p`` nor in the TUI, but shows a Stop hook's ``systemMessage``; it writes the transcript
asynchronously (every 100 ms), so at Stop the reply may not be there yet; the prompt hook and
the Stop hooks of one turn share its ``prompt_id``.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from test_claude_hooks import SESSION, hook, make_project, memory_of, transcript

from clm_policy.agents.hooks.claude_code import STOP_LINE

from conftest import empty_commits, git


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return make_project(tmp_path, monkeypatch)


def events(memory: Path) -> list[str]:
    """The Clm-Event of every commit, oldest first (init excluded); none where no memory
    repository was made (SessionStart makes none)."""
    if not (memory / ".git").exists():
        return []
    out = git(memory, "log", "--all", "--reverse", "--format=%(trailers:key=Clm-Event,valueonly)")
    return [e for e in out.split() if e != "init"]


def reply(done: Any) -> dict[str, Any]:
    assert (done.returncode, done.stderr) == (0, ""), done
    return json.loads(done.stdout) if done.stdout else {}


def test_an_automatic_compaction_hands_off_once_then_goes_ahead(project: Path) -> None:
    path = transcript(project / "t.jsonl", 170_000)
    pre = {"hook_event_name": "PreCompact", "trigger": "auto", "transcript_path": str(path)}
    blocked = hook(project, {**pre, "prompt_id": "p1"})
    assert blocked.returncode == 2
    assert blocked.stdout == ""  # Claude Code would add it to the compaction's instructions
    memory = memory_of(project)
    assert events(memory) == ["handoff"]
    listed = git(memory, "ls-tree", "--name-only", "HEAD", "manifests/").split()
    (manifest,) = [m for m in listed if m.endswith(".json")]
    # Claude Code retries the compaction before its next request, at the same position: the
    # session has handed off, so it goes ahead, with a snapshot
    again = hook(project, {**pre, "prompt_id": "p1"})
    assert (again.returncode, again.stdout, again.stderr) == (0, "", "")
    assert events(memory) == ["handoff", "compact"]
    # what the context is after Claude Code's own compaction, the snapshot cannot know
    assert git(memory, "log", "-1", "--format=%b").startswith(
        "Goal: Make the CSV parser keep quoted commas.\nContext: 170000 tokens before the "
        "compaction; after it: unknown until the agent's next response\n"
    )
    # ... and once more at that position: nothing new to commit
    assert hook(project, {**pre, "prompt_id": "p1"}).returncode == 0
    assert events(memory) == ["handoff", "compact"]
    # the turn's Stop tells the person, once: the blocked compaction showed them nothing
    stop = {
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "prompt_id": "p1",
        "transcript_path": str(path),
        "last_assistant_message": "Quoted commas survive now; tests pass.",
    }
    assert reply(hook(project, stop)) == {
        "systemMessage": (
            f"clm-policy: this session has handed off: the handoff is committed ({manifest}). "
            "Run /clear: the next session starts from it."
        )
    }
    assert reply(hook(project, stop)) == {}
    # the next prompt, past the handoff point: no request for another handoff
    later = transcript(project / "t.jsonl", 172_000, steps=4)
    prompt = {"hook_event_name": "UserPromptSubmit", "prompt_id": "p2", "prompt": "go on"}
    assert reply(hook(project, {**prompt, "transcript_path": str(later)})) == {}
    # the automatic compaction at the new position goes ahead, with its snapshot
    assert hook(project, {**pre, "transcript_path": str(later)}).returncode == 0
    assert events(memory) == ["handoff", "compact", "compact"]
    assert reply(hook(project, {**stop, "prompt_id": "p2", "transcript_path": str(later)})) == {}
    assert events(memory) == ["handoff", "compact", "compact"]
    assert empty_commits(memory) == []


def test_a_handoff_at_a_blocked_compaction_is_told_at_the_next_prompt(project: Path) -> None:
    """Interrupted after the blocked compaction (no Stop): the next prompt's hook tells."""
    path = transcript(project / "t.jsonl", 170_000)
    pre = {"hook_event_name": "PreCompact", "trigger": "auto", "transcript_path": str(path)}
    assert hook(project, pre).returncode == 2
    prompt = {
        "hook_event_name": "UserPromptSubmit",
        "prompt": "go on",
        "transcript_path": str(path),
    }
    told = reply(hook(project, {**prompt, "prompt_id": "p2"}))
    assert told["systemMessage"].startswith("clm-policy: this session has handed off: the ")
    assert told["systemMessage"].endswith(". Run /clear: the next session starts from it.")
    assert reply(hook(project, {**prompt, "prompt_id": "p3"})) == {}
    assert events(memory_of(project)) == ["handoff"]


def test_stop_commits_the_handoff_the_prompt_hook_asked_for(project: Path) -> None:
    """The prompt hook asked the model to end its reply with a handoff: that turn's Stop
    commits the reply, without asking again."""
    path = transcript(project / "t.jsonl", 155_000)
    asked = reply(
        hook(
            project,
            {
                "hook_event_name": "UserPromptSubmit",
                "prompt_id": "p1",
                "prompt": "next",
                "transcript_path": str(path),
            },
        )
    )
    assert "end your reply with a handoff" in asked["hookSpecificOutput"]["additionalContext"]
    note = "Handoff. Goal: quoted commas. Next safe action: release notes."
    done = transcript(project / "t.jsonl", 156_000, steps=4, last=note)
    stop = {
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "transcript_path": str(done),
        "last_assistant_message": note,
    }
    committed = reply(hook(project, {**stop, "prompt_id": "p1"}))
    assert committed["systemMessage"].startswith("clm-policy: handoff committed (manifests/")
    memory = memory_of(project)
    assert events(memory) == ["handoff"]
    handoff = git(memory, "show", f"HEAD:sessions/{SESSION}/handoffs/001.md")
    # the reply read into the manifest: its next step
    assert "## Next safe action\n\nrelease notes.\n" in handoff
    # the window the decision used (the policy's models table) is the snapshot's
    assert "- context: 156000 tokens of a 200000 window (claude-sonnet-4-6)" in handoff
    # a later turn's stop asks for nothing more
    assert reply(hook(project, {**stop, "prompt_id": "p2"})) == {}


def test_stop_waits_for_the_reply_it_is_told_of(project: Path) -> None:
    """At Stop Claude Code may not have written the final reply yet: the hook waits for it
    (briefly), and decides on its figure, not the one before it."""
    path = transcript(project / "t.jsonl", 100_000, last="Step three is done.")
    final = json.loads(path.read_text().splitlines()[-1])
    final["message"]["id"] = "msg_final"
    final["message"]["content"] = [{"type": "text", "text": "All done; the handoff point."}]
    final["message"]["usage"]["cache_read_input_tokens"] = 160_000 - 1010

    def write_later() -> None:
        time.sleep(0.2)
        with path.open("a") as fh:
            fh.write(json.dumps(final) + "\n")

    writer = threading.Thread(target=write_later)
    writer.start()
    try:
        done = hook(
            project,
            {
                "hook_event_name": "Stop",
                "stop_hook_active": False,
                "prompt_id": "p1",
                "transcript_path": str(path),
                "last_assistant_message": "All done; the handoff point.",
            },
        )
    finally:
        writer.join()
    # decided on the reply's 160,000 (the policy hands off), not the 100,000 before it
    assert reply(done) == {"systemMessage": STOP_LINE}


def test_stop_decides_no_handoff_without_a_usage_figure(project: Path) -> None:
    """A session's first reply not yet in the transcript, and no usage line before it: the
    figure would be an estimate of the prompt alone — no handoff is decided on it (the next
    prompt's hook has Claude Code's figure)."""
    path = project / "t.jsonl"
    prompt = {
        "type": "user",
        "isSidechain": False,
        "uuid": "u1",
        "sessionId": SESSION,
        "cwd": str(project),
        "message": {"role": "user", "content": "x" * 700_000},  # ~175,000 tokens by estimate
    }
    path.write_text(json.dumps(prompt) + "\n")
    # the model (a 200K window) as SessionStart names it: the estimate is past the hard limit
    start = {"hook_event_name": "SessionStart", "source": "startup", "model": "claude-sonnet-4-6"}
    assert hook(project, {**start, "transcript_path": str(path)}).returncode == 0
    started = time.monotonic()
    done = hook(
        project,
        {
            "hook_event_name": "Stop",
            "stop_hook_active": False,
            "prompt_id": "p1",
            "transcript_path": str(path),
            "last_assistant_message": "A reply Claude Code has not written yet.",
        },
    )
    assert reply(done) == {}
    assert time.monotonic() - started >= 0.5  # it waited for the reply, then gave up
    assert events(memory_of(project)) == []  # nothing was committed


def test_stop_far_from_the_handoff_point_does_not_wait(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """40,000 of 200,000 tokens: no reply Claude Code has still to write can bring the session
    to its handoff point (150,000), so Stop does not wait for it (the wait for Claude Code's
    next write is most of a Stop hook's time); at 140,000 it can, and Stop waits."""
    from clm_policy.agents.hooks import events
    from clm_policy.agents.hooks.claude_code import run_claude_hook

    waited: list[str] = []
    monkeypatch.setattr(events, "wait_for_reply", lambda path, reply: waited.append("x"))
    stop = {
        "session_id": SESSION,
        "cwd": str(project),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "prompt_id": "p1",
        "last_assistant_message": "A reply Claude Code has not written yet.",
    }
    for context, expected in ((40_000, []), (140_000, ["x"])):
        path = transcript(project / "t.jsonl", context)
        reply = run_claude_hook(json.dumps({**stop, "transcript_path": str(path)}).encode())
        assert (reply.exit_code, reply.stdout) == (0, "")
        assert waited == expected


@pytest.mark.parametrize("written", [False, True])
def test_stop_far_from_the_handoff_point_does_not_wait_on_a_long_transcript(
    project: Path, monkeypatch: pytest.MonkeyPatch, written: bool
) -> None:
    """A long session (half a megabyte of transcript) at 40,000 of 200,000 tokens: what follows
    the last figure in the file and the reply Claude Code may still have to write are a few
    kilobytes, far from the handoff point (150,000) — Stop answers without waiting, whether
    the reply is in the file yet or not. (The bytes the reader happened to read, 128 KiB and
    more, are no measure of it: counted as tokens they kept every Stop of a 200K window
    waiting.)"""
    from clm_policy.agents.hooks import events
    from clm_policy.agents.hooks.claude_code import run_claude_hook

    waited: list[str] = []
    monkeypatch.setattr(events, "wait_for_reply", lambda *args: waited.append("waited"))
    last = "The parser keeps quoted commas; all 212 tests pass."
    path = transcript(project / "t.jsonl", 40_000, steps=700, last=last if written else "Step.")
    assert path.stat().st_size > 512 * 1024
    stop = {
        "session_id": SESSION,
        "cwd": str(project),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "prompt_id": "p1",
        "transcript_path": str(path),
        "last_assistant_message": last,
    }
    answered = run_claude_hook(json.dumps(stop).encode())
    assert (answered.exit_code, answered.stdout, answered.stderr) == (0, "", "")
    assert waited == []
    # near the handoff point, the same reply could reach it: Stop waits for it
    path = transcript(project / "t.jsonl", 80_000, steps=700, last=last if written else "Step.")
    run_claude_hook(json.dumps(stop).encode())
    assert waited == ["waited"]
