"""clm_policy.lifecycle.sources: the one resolver of a command's state — which source was
given (one wording for none or several), what each gives, where a later error is, and
standard input read once."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from clm_policy.base.errors import InputError, StateError, UsageError
from clm_policy.base.stdin import read_stdin_kept
from clm_policy.lifecycle.sources import Request, check, resolve
from clm_policy.models.enums import FIGURES
from clm_policy.models.shapes.state import SessionState as Declared
from clm_policy.models.state import SessionState

from conftest import FIXTURES, REPO, invoke, state_file

EXAMPLE = REPO / "docs" / "examples" / "session-state.json"
ALL = "give exactly one of --state FILE|-, --tokens N, --session ID or --transcript PATH"


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (Request(), ALL),
        (Request(state="s.json", tokens=5), f"{ALL}; got --state and --tokens"),
        (
            Request(state="s", tokens=5, session="x", transcript="t"),
            f"{ALL}; got --state, --tokens, --session and --transcript",
        ),
        (
            Request(state="s.json", step=3),
            "--step goes with --tokens: a state file carries its own figures",
        ),
        (
            Request(transcript="t.jsonl", window=5, signals=("a=1",)),
            "--window and --signal go with --tokens: a transcript carries its own figures",
        ),
        (
            Request(session="s", status="phase_boundary"),
            "--status goes with --tokens: a persisted session carries its own figures",
        ),
    ],
)
def test_one_source_one_wording(request_: Request, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        check(request_)
    assert caught.value.message == message


def test_the_sources_a_command_takes_are_the_ones_it_lists() -> None:
    hand = ("state", "session", "transcript")
    with pytest.raises(UsageError) as caught:
        check(Request(tokens=5), hand)
    assert caught.value.message == (
        "give exactly one of --state FILE|-, --session ID or --transcript PATH; got --tokens"
    )
    assert check(Request(session="s"), hand) == "session"


def test_figures_from_tokens() -> None:
    got = resolve(Request(tokens=5, window=10, step=4, last_compact_step=1, signals=("a=1", "b=x")))
    state = got.state
    assert isinstance(state, SessionState)
    assert state.session_id == FIGURES
    assert (state.tokens.context_tokens, state.tokens.context_window) == (5, 10)
    assert (state.step_index, state.last_compact_step, dict(state.signals)) == (
        4,
        1,
        {"a": 1, "b": "x"},
    )
    assert (got.reading, got.text, got.file) == (None, None, None)
    for bad, message in (
        (Request(tokens=5, last_compact_step=1), "--last-compact-step cannot be after --step"),
        (Request(tokens=5, signals=("=1",)), "--signal expects NAME=VALUE, got '=1'"),
    ):
        with pytest.raises(UsageError) as caught:
            resolve(bad)
        assert caught.value.message == message
    with pytest.raises(UsageError):
        resolve(Request(tokens=5), full=True)  # figures are no session


def test_a_state_file_is_the_whole_state(tmp_path: Path) -> None:
    full = resolve(Request(state=str(EXAMPLE)), full=True)
    assert resolve(Request(state=str(EXAMPLE))).state == full.state
    # the whole state, read without pydantic: the declaration's fields, dumped as it dumps
    assert isinstance(full.state, SessionState)
    assert full.state.session_id == "auth-refactor-7"
    model = Declared.model_validate_json(EXAMPLE.read_text(), strict=True)
    assert full.state.as_dict() == model.model_dump(mode="json")
    assert full.file == str(EXAMPLE)
    # a state pydantic refuses is refused as before, where it is wrong
    bad = state_file(tmp_path, step_index="5")
    with pytest.raises(StateError) as caught:
        resolve(Request(state=str(bad)), full=True)
    assert caught.value.location is not None
    assert str(caught.value) == f"{bad}:1:55: step_index: expected an integer, got string '5'"


def test_a_later_error_is_placed_in_the_state_s_file(tmp_path: Path) -> None:
    path = state_file(tmp_path, signals={"degradation": "yes"})
    got = resolve(Request(state=str(path)))
    error = StateError("wrong type", path=("signals", "degradation"))
    located = got.locate(error)
    assert (str(located.location), located.message) == (f"{path}:1:108", "wrong type")
    assert resolve(Request(tokens=1)).locate(error) is error  # no file: nothing to place


def test_a_transcript_s_tail_or_the_whole_of_it() -> None:
    path = str(FIXTURES / "transcripts" / "codex_rollout.jsonl")
    tail = resolve(Request(transcript=path))
    assert tail.state.session_id == FIGURES  # the figures of its tail, no session
    assert tail.reading is not None
    assert tail.reading.format == "codex"
    whole = resolve(Request(transcript=path), full=True)
    assert isinstance(whole.state, SessionState)
    assert whole.state.tokens.context_tokens == tail.state.tokens.context_tokens


def test_a_persisted_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert invoke("run", "--max-steps", "3").exit_code == 0
    got = resolve(Request(session="demo", memory=str(tmp_path / "clm-memory")))
    assert isinstance(got.state, SessionState)
    assert got.state.step_index == 3
    with pytest.raises(UsageError):
        resolve(Request(session="demo"))  # where is it?


def test_standard_input_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    text = json.dumps({"session_id": "s", "tokens": {"context_tokens": 7}})
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    first = resolve(Request(state="-"))
    second = resolve(Request(state="-"), full=True)  # the stream is at its end: the same bytes
    assert first.state.tokens.context_tokens == second.state.tokens.context_tokens == 7
    assert (first.file, first.text) == ("<stdin>", text)
    assert read_stdin_kept(3) == text.encode()[:4]  # bounded: at most limit + 1 bytes
    # another stream is read anew
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"{}")))
    with pytest.raises(InputError) as caught:
        resolve(Request(state="-"), full=True)
    assert caught.value.location is not None
    assert caught.value.location.file == "<stdin>"


def test_standard_input_read_in_parts_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"0123456789")))
    assert read_stdin_kept(3) == b"0123"
    assert read_stdin_kept(5) == b"012345"  # what the first read left is read now, once
    assert read_stdin_kept(100) == b"0123456789"
    assert read_stdin_kept(100) == b"0123456789"
    assert sys.stdin.buffer.read() == b""


def test_no_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", None)
    with pytest.raises(InputError) as caught:
        resolve(Request(state="-"))
    assert str(caught.value) == "<stdin>: no standard input to read"


def test_request_of_a_command_s_parameters() -> None:
    params = {"state_src": "s.json", "tokens": None, "fmt": "json", "memory": "m"}
    assert Request.of(params) == Request(state="s.json", memory="m")
