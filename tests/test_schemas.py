"""The shipped JSON schemas equal the ones generated from the models, and accept what we ship."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from ruamel.yaml import YAML

from clm_policy import SessionState, TokenSnapshot
from clm_policy.schemas import MODELS, render

from conftest import POLICIES, REPO


@pytest.mark.parametrize("name", list(MODELS))
def test_shipped_schema_is_generated_from_the_model(name: str) -> None:
    shipped = (REPO / "schemas" / f"{name}.schema.json").read_text()
    assert shipped == render(name), "run: python -m clm_policy.schemas"
    schema = json.loads(shipped)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def _policy_files() -> list[Path]:
    return sorted(POLICIES.rglob("*.yaml"))


@pytest.mark.parametrize("path", _policy_files(), ids=lambda p: p.name)
def test_shipped_policies_validate_and_carry_the_modeline(path: Path) -> None:
    schema = json.loads((REPO / "schemas" / "policy.schema.json").read_text())
    data = YAML(typ="safe").load(path.read_text())
    jsonschema.Draft202012Validator(schema).validate(data)
    first = path.read_text().splitlines()[0]
    rel = (
        Path("../" * (len(path.relative_to(POLICIES).parts) - 1)) / "../schemas/policy.schema.json"
    )
    assert first == f"# yaml-language-server: $schema={rel.as_posix()}"
    assert (path.parent / rel).resolve() == (REPO / "schemas" / "policy.schema.json").resolve()


def test_session_state_schema_accepts_a_dumped_state() -> None:
    schema = json.loads((REPO / "schemas" / "session-state.schema.json").read_text())
    state = SessionState(
        session_id="s",
        tokens=TokenSnapshot(context_tokens=5, model="m"),
        signals={"a": True, "b": 2, "c": "x"},
    )
    jsonschema.Draft202012Validator(schema).validate(json.loads(state.model_dump_json()))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate({"session_id": "s", "extra": 1})


def test_documented_example_state_is_valid() -> None:
    text = (REPO / "docs" / "examples" / "session-state.json").read_text()
    state = SessionState.model_validate_json(text, strict=True)
    assert state.tokens.context_tokens > 0
