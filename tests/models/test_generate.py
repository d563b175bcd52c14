"""Each document is declared once (models/shapes/); the program works with the plain classes
generated from it (models/state.py, models/decision.py).

The generated modules must be up to date; the state's reader accepts exactly the states
pydantic accepts (on plain JSON), and they decide the same; every plain class dumps what its
declaration dumps and reads back what it dumped; a field added to the declaration reaches the
names rules read, their values, the reader and a decision — from that one line.
"""

from __future__ import annotations

import copy
import json
import types
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field, ValidationError

from clm_policy import load_policy
from clm_policy.base.errors import Location
from clm_policy.models import decision, shapes, state
from clm_policy.models.enums import MessageRole
from clm_policy.models.fields import Reads
from clm_policy.models.generate import DOCUMENTS, FOLDER, main, render
from clm_policy.models.shapes import decision as declared_decision
from clm_policy.models.shapes import state as declared_state
from clm_policy.models.shapes.state import SessionState as Declared
from clm_policy.policy import engine, names
from clm_policy.policy.expr import SourceSpan, compile_expression

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = json.loads((ROOT / "docs" / "examples" / "session-state.json").read_text())


def test_the_generated_modules_are_up_to_date() -> None:
    for document in DOCUMENTS:
        assert (FOLDER / f"{document}.py").read_text(encoding="utf-8") == render(document), (
            f"clm_policy/models/{document}.py is stale: run python -m clm_policy.models.generate "
            "--write"
        )
    assert main(["--check"]) == 0
    assert shapes.__doc__  # the declarations say what they are for


def test_every_name_of_a_field_is_known_to_rules() -> None:
    for name, info in state.DIRECT_NAMES.items():
        assert names.STATE_NAMES[name] == info
    assert set(names.STATE_NAMES) == set(state.DIRECT_NAMES) | set(names.DERIVED_NAMES)


def test_the_fields_a_decision_reads() -> None:
    assert state.READ_FIELDS == (
        "status",
        "step_index",
        "last_compact_step",
        "compact_count",
        "profile",
        "tokens",
        "signals",
        "messages",
        "human_interventions",
        "blockers",
    )
    assert state.COUNTED_FIELDS == ("messages", "blockers")


def pydantic_accepts(data: object) -> Declared | None:
    try:
        return Declared.model_validate_json(json.dumps(data), strict=True)
    except ValidationError:
        return None


ODD = [
    None,
    -1,
    0,
    1,
    2**63 - 1,
    2**63,
    1.5,
    float("1e308"),
    True,
    False,
    "",
    "x",
    "running",
    [],
    ["a"],
    [1],
    {},
    {"a": 1},
    {"role": "user", "content": "hi"},
]


def mutations() -> list[Any]:
    found: list[Any] = [EXAMPLE, {"session_id": "s"}, {}, [], "x", None, 5]
    for key in [*Declared.model_fields, "extra"]:
        for value in ODD:
            data = copy.deepcopy(EXAMPLE)
            data[key] = value
            found.append(data)
        data = copy.deepcopy(EXAMPLE)
        data.pop(key, None)
        found.append(data)
    for key in ["context_tokens", "context_window", "model", "estimated", "extra"]:
        for value in ODD:
            data = copy.deepcopy(EXAMPLE)
            data["tokens"] = {**data.get("tokens", {}), key: value}
            found.append(data)
    for message in [
        {"role": "tool", "content": "x", "name": None, "tokens": 3},
        {"role": "robot", "content": "x"},
        {"role": "user"},
        {"role": "user", "content": "x", "tokens": -1},
        {"role": "user", "content": "x", "extra": 1},
        "hello",
    ]:
        found.append({**EXAMPLE, "messages": [message]})
    for signals in [{"a": 1.5}, {"a": [1]}, {"a": None}, {"a": {"b": 1}}, {"a": "x", "b": True}]:
        found.append({**EXAMPLE, "signals": signals})
    found.append({**EXAMPLE, "step_index": 3, "last_compact_step": 4})
    found.append({**EXAMPLE, "step_index": 4, "last_compact_step": 4})
    return found


MUTATIONS = mutations()


@pytest.mark.parametrize("index", range(len(MUTATIONS)))
def test_the_reader_accepts_what_pydantic_accepts(index: int) -> None:
    data = MUTATIONS[index]
    full = pydantic_accepts(data)
    read = state.read_state(copy.deepcopy(data))
    assert (read is not None) == (full is not None), data
    if full is None or read is None:
        return
    # the plain state is the model, field for field, and dumps as it does
    assert read.as_dict() == full.model_dump(mode="json")
    assert json.dumps(read.as_dict(), separators=(",", ":")) == full.model_dump_json()
    assert state.SessionState.from_dict(read.as_dict()) == read
    policy = load_policy("default")
    for profile in policy.profiles:
        try:
            expected = policy.decide(full, profile).as_dict()
        except Exception as exc:  # the same failure from both
            with pytest.raises(type(exc)):
                policy.decide(read, profile)
            continue
        assert policy.decide(read, profile).as_dict() == expected


def test_the_defaults_are_the_declarations() -> None:
    pairs: list[tuple[Any, BaseModel]] = [
        (state.SessionState(session_id="s"), declared_state.SessionState(session_id="s")),
        (state.TokenSnapshot(), declared_state.TokenSnapshot()),
        (state.AgentStepResult(), declared_state.AgentStepResult()),
        (
            state.Message(role=MessageRole.USER, content="hi"),
            declared_state.Message(role="user", content="hi"),
        ),
    ]
    for plain, model in pairs:
        assert plain.as_dict() == model.model_dump(mode="json")
        assert tuple(type(model).model_fields) == type(plain).FIELDS
    first, second = state.SessionState(session_id="a"), state.SessionState(session_id="b")
    first.requests.append("x")
    assert second.requests == []  # a default list is new for each object
    assert first.tokens is not second.tokens


def test_a_decision_and_its_trace_are_what_the_declaration_reads() -> None:
    policy = load_policy("policies/examples/option_b.yaml")
    data = copy.deepcopy(EXAMPLE)
    data["tokens"]["context_tokens"] = 800_000  # over the soft limit: a guard blocks
    data["signals"] = {"open_subagent_calls": 2}
    for force in (False, True):
        read = state.read_state(data)
        assert read is not None
        explanation = policy.explain(read, "coding", force=force)
        dumped = explanation.as_dict()
        model = declared_decision.Explanation.model_validate_json(json.dumps(dumped), strict=True)
        assert model.model_dump(mode="json") == dumped
        assert not hasattr(decision.Explanation, "from_dict")  # a decision is only written
        assert explanation.decision.blocked_by or explanation.decision.overridden
        assert tuple(declared_decision.Decision.model_fields) == decision.Decision.FIELDS


def test_plain_objects_copy_and_compare() -> None:
    read = state.read_state(EXAMPLE)
    assert read is not None
    again = read.replace(goal="another")
    assert (again.goal, read.goal) == ("another", EXAMPLE["goal"])
    assert again.messages is read.messages  # a copy is shallow, as model_copy was
    assert read == state.read_state(copy.deepcopy(EXAMPLE))
    assert read != again
    with pytest.raises(TypeError, match="unhashable type: 'SessionState'"):
        hash(read)


# -- one line adds a field rules can read ---------------------------------------------------


class Urgent(Declared):
    """The state with one more field, declared as any field is."""

    urgency: Annotated[int, Reads("urgency", "how urgent the task is, 0 to 9")] = Field(
        default=0, ge=0, le=9
    )


def test_a_field_declared_once_reaches_every_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    source = render("state", Urgent)
    assert "'urgency'" in source
    generated = types.ModuleType("clm_policy.models.state_urgent")
    exec(compile(source, "state_urgent.py", "exec"), generated.__dict__)
    # the generated module stands in for state.py: the names table and the engine use it
    monkeypatch.setattr(names, "STATE_NAMES", {**generated.DIRECT_NAMES, **names.DERIVED_NAMES})
    monkeypatch.setattr(engine, "direct_values", generated.direct_values)

    # 1. rules may name it, with its type and meaning
    known = names.known_names({})
    assert known["urgency"] == names.NameInfo("int", "how urgent the task is, 0 to 9")
    when = compile_expression("urgency >= 7", SourceSpan(Location("p.yaml", 1, 1)), known)

    # 2. the reader checks it, with its bounds, and the plain class carries and dumps it
    data = {"session_id": "s", "urgency": 8, "tokens": {"context_tokens": 10}}
    read = generated.read_state(data)
    assert read is not None
    assert read.urgency == 8
    assert read.as_dict() == Urgent.model_validate(data).model_dump(mode="json")
    assert generated.read_state({**data, "urgency": 10}) is None
    assert generated.read_state({**data, "urgency": "8"}) is None
    assert "urgency" in generated.READ_FIELDS

    # 3. its value reaches the names of a decision
    policy = load_policy("default")
    values, _, _ = policy.namespace(read, policy.profile("coding"))
    assert values["urgency"] == 8
    assert when.evaluate(values) is True

    # 4. a policy's rule reads it, and decides on it
    team = tmp_path / "team.yaml"
    team.write_text(
        "version: 1\nname: team\nextends: default\nrules:\n"
        "  - {id: urgent, when: urgency >= 7, action: handoff, before: hard_handoff}\n"
    )
    decided = load_policy(team).decide(read, "coding")
    assert (decided.action.value, decided.trigger) == ("handoff", "urgent")
