"""A handoff written by a model when the agent wrote none (lifecycle/model_handoff), against a
real HTTP server on 127.0.0.1 that each test starts: ``clm-policy handoff --transcript`` as a
process with ``CLM_POLICY_SUMMARIZER=openai`` commits the model's handoff whole, labelled as a
model's, beside the record; the agent's own reply is never replaced; a failing model leaves
the handoff as it is without one, and the commit says why; what the model is sent passes the
redactor, and the key reaches the server and nothing else. Nothing here reaches the network."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chatserver import ChatServer, chat_reply, serve

from clm_policy.lifecycle.model_handoff import MAX_PROMPT_CHARS, SYSTEM_PROMPT, prompt
from clm_policy.lifecycle.request import SECTIONS
from clm_policy.lifecycle.seed import PART_1, PART_1_MODEL, WITHOUT_WORDS
from clm_policy.transcripts.reading import read_transcript

from conftest import REPO, git, read_terminal, run_process

FIXTURES = REPO / "tests" / "fixtures" / "transcripts"
SESSION = FIXTURES / "claude_session.jsonl"
KEY = "sk-test-HANDOFFMODEL-0123456789abcdef"
MODEL = "handoff-model-1"
HANDOFF = """## Goal

Make the CSV parser keep quoted commas; the user asked for no new dependencies.

## Tasks

- quoted commas in `csvtool/parse.py`: done

## Decisions

- the csv module's reader rather than a regex (MODEL-DECISION-7)

## Verification

- `python -m pytest -q`: passed

## Open questions and blockers

none

## Environment

unknown

## Next step

Run `python -m pytest -q tests/test_quoted.py` once more, then commit.
"""


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatServer]:
    """A model that answers with :data:`HANDOFF`, configured in the environment the command
    inherits."""
    with serve(ChatServer(then=chat_reply(HANDOFF))) as chat:
        monkeypatch.setenv("CLM_POLICY_SUMMARIZER", "openai")
        monkeypatch.setenv("CLM_POLICY_SUMMARIZER_MODEL", MODEL)
        monkeypatch.setenv("CLM_POLICY_SUMMARIZER_BASE_URL", chat.url)
        monkeypatch.setenv("CLM_POLICY_SUMMARIZER_API_KEY", KEY)
        monkeypatch.setenv("CLM_POLICY_SUMMARIZER_TIMEOUT", "0.5")
        yield chat


def handoff(memory: Path, transcript: Path, *more: str) -> dict[str, Any]:
    done = run_process(
        "handoff", "-m", str(memory), "--transcript", str(transcript), "--format", "json", *more
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def trailers(memory: Path) -> dict[str, str]:
    out = git(memory, "log", "-1", "--format=%(trailers:only,unfold)")
    return dict(line.split(": ", 1) for line in out.splitlines() if line)


def manifest(memory: Path) -> dict[str, Any]:
    """The manifest the latest commit added."""
    names = git(memory, "show", "--name-only", "--format=", "HEAD").split()
    (name,) = [n for n in names if n.startswith("manifests/") and n.endswith(".json")]
    return dict(json.loads(git(memory, "show", f"HEAD:{name}")))


def test_a_model_writes_the_handoff_the_agent_did_not(server: ChatServer, memory: Path) -> None:
    out = handoff(memory, SESSION)
    seed = out["seed"][0]["content"]
    assert out["written_by"] == trailers(memory)["Clm-Summarizer"] == f"openai:{MODEL}"
    people = git(memory, "show", f"HEAD:{out['handoff_path']}")
    assert "Written by a model from the transcript (the agent wrote no handoff):" in people
    words = manifest(memory)["agent_words"]
    assert words == {"source": "model", "text": HANDOFF.strip(), "step": None}
    assert PART_1_MODEL in seed
    assert PART_1 not in seed
    assert "MODEL-DECISION-7" in seed  # the model's words, whole
    assert "Run `python -m pytest -q tests/test_quoted.py` once more, then commit." in seed
    # one request: the handoff asked for heading by heading, the record and the conversation
    (body,) = server.bodies()
    assert body["model"] == MODEL
    system, user = (m["content"] for m in body["messages"])
    assert system == SYSTEM_PROMPT
    assert all(f"`## {s.heading}`" in user for s in SECTIONS)
    assert "# clm-policy's record of the session" in user
    assert "**The person:** Fix the CSV parser so quoted commas survive, and add a test." in user
    assert "- ran `python -m pytest -q`" in user
    # `log` says who wrote the words its recall measures
    shown = run_process("log", "-m", str(memory)).stdout
    assert "the model's handoff holds of the record" in shown
    assert "the agent's words hold of the record" not in shown
    assert f"summarizer openai:{MODEL}" in shown
    # the key went to the server as a bearer token, and nowhere else
    (request,) = server.requests
    assert request["headers"]["Authorization"] == f"Bearer {KEY}"
    assert "HANDOFFMODEL" not in git(memory, "log", "--all", "-p", "--format=%B")


def test_the_agents_own_reply_is_kept_and_no_model_is_asked(
    server: ChatServer, memory: Path, tmp_path: Path
) -> None:
    reply = tmp_path / "reply.md"
    reply.write_text(HANDOFF.replace("MODEL-DECISION-7", "AGENT-DECISION-3"))
    out = handoff(memory, SESSION, "--reply", str(reply))
    seed = out["seed"][0]["content"]
    assert "written_by" not in out
    assert server.requests == []
    assert "Clm-Summarizer" not in trailers(memory)
    assert PART_1 in seed
    assert "AGENT-DECISION-3" in seed


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (lambda body: (500, b'{"error": "down"}'), "http 500"),
        (chat_reply(""), "empty"),
        (lambda body: None, "timeout"),  # the server never answers
    ],
)
def test_a_failing_model_leaves_the_handoff_without_it(
    server: ChatServer, memory: Path, answer: Any, reason: str, tmp_path: Path
) -> None:
    from clm_policy.memory.init import init_memory

    server.script(then=answer)
    seed = handoff(memory, SESSION)["seed"][0]["content"]
    assert trailers(memory)["Clm-Summarizer"] == (
        f"deterministic (fallback: {reason}; tried openai:{MODEL})"
    )
    # the text output, of the same session handed off in a memory of its own (handed off
    # again here, at the same step, nothing new would be committed)
    other = init_memory(tmp_path / "other").path
    text = run_process("handoff", "-m", str(other), "--transcript", str(SESSION))
    assert f"  handoff   written by deterministic (fallback: {reason};" in text.stdout
    assert manifest(memory)["agent_words"] is None
    assert WITHOUT_WORDS in seed


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        (
            "CLM_POLICY_SUMMARIZER_MODEL",
            "",
            "no model for the summarizer: set CLM_POLICY_SUMMARIZER_MODEL",
        ),
        ("CLM_POLICY_SUMMARIZER", "gpt", "CLM_POLICY_SUMMARIZER: 'gpt' is no summarizer"),
    ],
)
def test_a_bad_configuration_stops_the_command_before_anything_is_written(
    server: ChatServer,
    memory: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    value: str,
    message: str,
) -> None:
    monkeypatch.setenv(name, value)
    before = git(memory, "rev-parse", "HEAD")
    done = run_process("handoff", "-m", str(memory), "--transcript", str(SESSION))
    assert done.returncode == 2
    assert message in done.stderr
    assert git(memory, "rev-parse", "HEAD") == before
    assert server.requests == []


def test_what_the_model_is_sent_passes_the_redactor(
    server: ChatServer, memory: Path, tmp_path: Path
) -> None:
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    lines = SESSION.read_text().splitlines()
    for n, line in enumerate(lines):
        if "so quoted commas survive" in line:
            lines[n] = line.replace("quoted commas", f"quoted commas (token {secret})", 1)
            break
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(lines) + "\n")
    handoff(memory, transcript)
    (body,) = server.bodies()
    sent = json.dumps(body)
    assert "token [REDACTED:" in sent
    assert secret not in sent


def test_the_prompt_keeps_the_first_request_and_the_newest_items(tmp_path: Path) -> None:
    lines = SESSION.read_text().splitlines()
    reading = read_transcript(SESSION)
    small = prompt(reading, "RECORD")
    assert "RECORD" in small
    assert "earlier items left out" not in small
    # a long session: 200 more requests of the person's after the first
    rows = [json.loads(line) for line in lines]
    template = next(d for d in rows if "so quoted commas survive" in json.dumps(d))
    parent = next(d["uuid"] for d in reversed(rows) if d.get("uuid"))
    extra = []
    for n in range(200):
        text = f"Request note {n}: " + "x" * 2000
        message = {"role": "user", "content": text}
        extra.append(json.dumps(dict(template, uuid=f"x{n}", parentUuid=parent, message=message)))
        parent = f"x{n}"
    path = tmp_path / "long.jsonl"
    path.write_text("\n".join(lines + extra) + "\n")
    text = prompt(read_transcript(path), "RECORD")
    assert len(text) <= MAX_PROMPT_CHARS
    assert "earlier items left out" in text
    assert "Fix the CSV parser so quoted commas survive" in text  # the first request, always
    assert "Request note 199:" in text  # the newest
    assert "Request note 0:" not in text


def test_a_terminal_is_told_while_the_model_writes_and_ctrl_c_stops_it(memory: Path) -> None:
    """The model may take its whole timeout: a terminal is told who writes the handoff and
    for how long at most (the command was silent), Ctrl-C stops it (exit 130, nothing
    committed), and the line is erased."""
    import os
    import pty
    import signal
    import subprocess
    import sys

    head = git(memory, "rev-parse", "HEAD")
    with serve(ChatServer(then=lambda body: None)) as chat:  # a model that never answers
        env = {
            **os.environ,
            "CLM_POLICY_SUMMARIZER": "openai",
            "CLM_POLICY_SUMMARIZER_MODEL": MODEL,
            "CLM_POLICY_SUMMARIZER_BASE_URL": chat.url,
            "CLM_POLICY_SUMMARIZER_API_KEY": KEY,
            "CLM_POLICY_SUMMARIZER_TIMEOUT": "300",
        }
        launch = (
            "import os, signal, sys\nsignal.signal(signal.SIGINT, signal.SIG_DFL)\n"
            "os.execv(sys.executable, [sys.executable, '-m', 'clm_policy', *sys.argv[1:]])\n"
        )
        terminal, side = pty.openpty()
        args = ["handoff", "-m", str(memory), "--transcript", str(SESSION)]
        proc = subprocess.Popen(
            [sys.executable, "-c", launch, *args],
            stdout=subprocess.PIPE,
            stderr=side,
            text=True,
            env=env,
            start_new_session=True,
        )
        os.close(side)
        try:
            shown = read_terminal(terminal, "nothing committed)", proc)
            os.killpg(proc.pid, signal.SIGINT)
            out, _ = proc.communicate(timeout=120)
            rest = read_terminal(terminal, "interrupted", proc)
        finally:
            os.close(terminal)
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
    said = (
        f"clm-policy: openai:{MODEL} is writing the handoff the agent did not (at most 300 s; "
        "Ctrl-C stops, nothing committed)"
    )
    assert shown == "\r" + said, shown
    assert rest.startswith("\r" + " " * len(said) + "\r")
    assert "clm-policy: interrupted" in rest
    assert (proc.returncode, out) == (130, "")
    assert git(memory, "rev-parse", "HEAD") == head
