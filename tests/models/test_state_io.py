"""Reading a SessionState from JSON: a state that does not validate is refused at the place of
its first problem, and narrowing a large state down before pydantic sees it (long lists cut to
the first item the reader refuses) says exactly what validating the whole says; a state the
program built is checked before it is written."""

from __future__ import annotations

import json
from typing import Any

import pytest

from clm_policy.base.errors import StateError
from clm_policy.models.state import SessionState, TokenSnapshot, read_state
from clm_policy.models.state_io import LONG, parse_state, state_from


def large(count: int = 3 * LONG) -> dict[str, Any]:
    return {
        "session_id": "big",
        "step_index": 40,
        "tokens": {"context_tokens": 150_000, "context_window": 200_000},
        "messages": [
            {"role": ("user", "assistant", "tool")[i % 3], "content": f"message {i}", "tokens": i}
            for i in range(count)
        ],
        "decisions": [f"decision {i}" for i in range(count)],
        "changed_artifacts": ["a.py"],
    }


def spoiled(*edits: tuple[tuple[Any, ...], Any]) -> dict[str, Any]:
    """The large state with a value set at each path (a path ending in "-": the key removed)."""
    data = large()
    for path, value in edits:
        *parents, last = path
        here: Any = data
        for step in parents:
            here = here[step]
        if value == "-":
            del here[last]
        else:
            here[last] = value
    return data


BAD = {
    "the last message's role": spoiled((("messages", 3 * LONG - 1, "role"), "robot")),
    "a middle message's tokens": spoiled((("messages", LONG + 5, "tokens"), -3)),
    "a message with an unknown key": spoiled((("messages", 70, "mood"), "sad")),
    "a message without content": spoiled((("messages", 100, "content"), "-")),
    "a message that is no mapping": spoiled((("messages", 150), "hello")),
    "two bad messages": spoiled(
        (("messages", 180, "role"), "robot"), (("messages", 90, "tokens"), "many")
    ),
    "a bad message and a bad decision": spoiled(
        (("messages", 180, "role"), "robot"), (("decisions", 7), 5)
    ),
    "a bad decision only": spoiled((("decisions", 150), None)),
    "a bad top-level field and a bad message": spoiled(
        (("step_index",), "x"), (("messages", 150, "role"), "robot")
    ),
    "a bad token figure": spoiled((("tokens", "context_tokens"), -1)),
    "compacted after the step it is at": spoiled((("last_compact_step",), 41)),
    "a nested list in a message": spoiled((("messages", 120, "content"), [[["deep"]]])),
}


@pytest.mark.parametrize("name", list(BAD))
def test_narrowing_says_what_the_whole_says(name: str) -> None:
    text = json.dumps(BAD[name], indent=1)
    with pytest.raises(StateError) as whole:
        parse_state(text, "s.json", narrow=False)
    with pytest.raises(StateError) as narrowed:
        parse_state(text, "s.json")
    assert (str(narrowed.value), narrowed.value.location) == (
        str(whole.value),
        whole.value.location,
    )


def narrowed(data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, int]] | None:
    """What pydantic is asked about ``data``: narrowed by where the reader refused items."""
    from clm_policy.models.state_io import _narrowed

    refused: dict[str, int] = {}
    assert read_state(data, refused) is None
    return _narrowed(data, refused)


def test_the_reader_says_which_item_it_refused() -> None:
    refused: dict[str, int] = {}
    assert read_state(BAD["two bad messages"], refused) is None
    assert refused == {"messages": 90}  # the first, not the one named first
    refused = {}
    assert read_state(BAD["a bad message and a bad decision"], refused) is None
    assert refused == {"messages": 180, "decisions": 7}
    refused = {}
    assert read_state(BAD["compacted after the step it is at"], refused) is None
    assert refused == {}  # no item is refused: the state as a whole is
    assert read_state(large(), refused) is not None
    assert refused == {}


def test_what_pydantic_is_asked_about() -> None:
    found = narrowed(BAD["a bad message and a bad decision"])
    assert found is not None
    reduced, where = found
    assert where == {"messages": 180, "decisions": 7}
    assert (reduced["messages"], reduced["decisions"]) == (
        [{"role": "robot", "content": "message 180", "tokens": 180}],
        [5],
    )
    assert reduced["changed_artifacts"] == ["a.py"]  # a short list stays as it is
    # nothing to narrow: the rest of the state is refused, or no item is
    assert narrowed(BAD["a bad top-level field and a bad message"]) is None
    assert narrowed(BAD["compacted after the step it is at"]) is None


def test_the_place_is_the_items_in_the_whole_text() -> None:
    text = json.dumps(BAD["the last message's role"], indent=1)
    with pytest.raises(StateError) as err:
        parse_state(text, "s.json")
    line = 1 + text[: text.index('"robot"')].count("\n")
    assert str(err.value) == (
        f"s.json:{line}:12: messages[{3 * LONG - 1}].role: input should be 'system', 'user', "
        "'assistant' or 'tool', got string 'robot'"
    )


def test_a_state_the_program_built_is_checked() -> None:
    good = SessionState(session_id="s", step_index=3, last_compact_step=2)
    assert state_from(good.as_dict()) == good
    with pytest.raises(StateError) as err:
        state_from(good.replace(compact_count=2**63).as_dict(), "the compacted state")
    assert str(err.value) == (
        "the compacted state: compact_count: input should be less than or equal to "
        "9223372036854775807, got integer 9223372036854775808"
    )
    with pytest.raises(StateError) as err:
        state_from(SessionState(session_id="s", tokens=TokenSnapshot(context_window=0)).as_dict())
    assert str(err.value) == (
        "the state: tokens.context_window: input should be greater than 0, got integer 0"
    )


def test_a_valid_large_state_is_read_whole() -> None:
    state = parse_state(json.dumps(large()), "s.json")
    assert (len(state.messages), len(state.decisions)) == (3 * LONG, 3 * LONG)
    assert isinstance(state, SessionState)
    assert state.as_dict()["messages"][5] == large()["messages"][5] | {"name": None}
