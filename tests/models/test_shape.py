"""The state is declared once (models/state.py); every path sees what it declares.

clm_policy/models/plain.py is generated from the declaration and must be up to date; its
validator accepts exactly the states pydantic accepts (on plain JSON), and decides the same;
a field added to the declaration reaches the names rules read, their values, the plain
validator and a decision — from that one line.
"""

from __future__ import annotations

import copy
import json
import types
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import Field, ValidationError

from clm_policy import load_policy
from clm_policy.base.errors import Location
from clm_policy.models import plain
from clm_policy.models.fields import Reads
from clm_policy.models.shape import TARGET, main, render
from clm_policy.models.state import SessionState
from clm_policy.policy import engine, names
from clm_policy.policy.expr import SourceSpan, compile_expression

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = json.loads((ROOT / "docs" / "examples" / "session-state.json").read_text())


def test_the_generated_module_is_up_to_date() -> None:
    assert TARGET.read_text(encoding="utf-8") == render(), (
        "clm_policy/models/plain.py is stale: run python -m clm_policy.models.shape --write"
    )
    assert main(["--check"]) == 0


def test_every_name_of_a_field_is_known_to_rules() -> None:
    for name, info in plain.DIRECT_NAMES.items():
        assert names.STATE_NAMES[name] == info
    assert set(names.STATE_NAMES) == set(plain.DIRECT_NAMES) | set(names.DERIVED_NAMES)


def pydantic_accepts(data: object) -> SessionState | None:
    try:
        return SessionState.model_validate_json(json.dumps(data), strict=True)
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
    for key in [*SessionState.model_fields, "extra"]:
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
def test_the_plain_validator_accepts_what_pydantic_accepts(index: int) -> None:
    data = MUTATIONS[index]
    full = pydantic_accepts(data)
    quick = plain.plain_state(copy.deepcopy(data))
    whole = plain.plain_session(copy.deepcopy(data))
    assert (quick is not None) == (full is not None), data
    assert (whole is not None) == (full is not None), data
    if full is None or quick is None or whole is None:
        return
    # the whole plain state is the model, field for field, and dumps as it does
    assert whole.as_dict() == full.model_dump(mode="json")
    assert json.dumps(whole.as_dict(), separators=(",", ":")) == full.model_dump_json()
    assert whole.tokens.context_tokens == full.tokens.context_tokens
    assert [m.role for m in whole.messages] == [m.role for m in full.messages]
    policy = load_policy("default")
    for profile in policy.profiles:
        try:
            expected = policy.outcome(full, profile).as_dict()
        except Exception as exc:  # the same failure from both
            with pytest.raises(type(exc)):
                policy.outcome(quick, profile)
            continue
        assert policy.outcome(quick, profile).as_dict() == expected
        assert policy.outcome(whole, profile).as_dict() == expected


# -- one line adds a field rules can read ---------------------------------------------------


class Urgent(SessionState):
    """The state with one more field, declared as any field is."""

    urgency: Annotated[int, Reads("urgency", "how urgent the task is, 0 to 9")] = Field(
        default=0, ge=0, le=9
    )


def test_a_field_declared_once_reaches_every_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    source = render(Urgent)
    assert "'urgency'" in source
    generated = types.ModuleType("clm_policy.models.plain_urgent")
    exec(compile(source, "plain_urgent.py", "exec"), generated.__dict__)
    # the generated module stands in for plain.py: the names table and the engine use it
    monkeypatch.setattr(names, "STATE_NAMES", {**generated.DIRECT_NAMES, **names.DERIVED_NAMES})
    monkeypatch.setattr(engine, "direct_values", generated.direct_values)

    # 1. rules may name it, with its type and meaning
    known = names.known_names({})
    assert known["urgency"] == names.NameInfo("int", "how urgent the task is, 0 to 9")
    when = compile_expression("urgency >= 7", SourceSpan(Location("p.yaml", 1, 1)), known)

    # 2. the plain validator checks it, with its bounds
    data = {"session_id": "s", "urgency": 8, "tokens": {"context_tokens": 10}}
    quick = generated.plain_state(data)
    assert quick is not None
    assert quick.urgency == 8
    assert generated.plain_state({**data, "urgency": 10}) is None
    assert generated.plain_state({**data, "urgency": "8"}) is None
    whole = generated.plain_session(data)
    assert whole.urgency == 8
    assert whole.as_dict() == Urgent.model_validate(data).model_dump(mode="json")
    assert generated.plain_session({**data, "urgency": 10}) is None

    # 3. its value reaches the names of a decision, from the pydantic state and the plain one
    full = Urgent.model_validate(data)
    policy = load_policy("default")
    for state in (full, quick):
        values, _, _ = policy.namespace(state, policy.profile("coding"))
        assert values["urgency"] == 8
        assert when.evaluate(values) is True

    # 4. a policy's rule reads it, and decides on it, from either state
    team = tmp_path / "team.yaml"
    team.write_text(
        "version: 1\nname: team\nextends: default\nrules:\n"
        "  - {id: urgent, when: urgency >= 7, action: handoff, before: hard_handoff}\n"
    )
    policy = load_policy(team)
    for state in (full, quick):
        decision = policy.outcome(state, "coding")
        assert (decision.action.value, decision.trigger) == ("handoff", "urgent")
