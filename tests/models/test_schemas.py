"""The shipped JSON schemas equal the ones generated from the models, and accept what we ship."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from ruamel.yaml import YAML

from clm_policy import SessionState, TokenSnapshot
from clm_policy.models.schemas import MODELS, render
from clm_policy.models.state_io import parse_state

from conftest import POLICIES, REPO


@pytest.mark.parametrize("name", list(MODELS))
def test_shipped_schema_is_generated_from_the_model(name: str) -> None:
    shipped = (REPO / "schemas" / f"{name}.schema.json").read_text()
    assert shipped == render(name), "run: python -m clm_policy.models.schemas"
    schema = json.loads(shipped)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def _shipped(kind: str) -> list[Path]:
    """Shipped policies (``policy``) or policy test files (``policy-test``)."""
    tests = kind == "policy-test"
    return sorted(p for p in POLICIES.rglob("*.yaml") if p.name.endswith(".test.yaml") == tests)


@pytest.mark.parametrize(
    ("kind", "path"),
    [(kind, path) for kind in ("policy", "policy-test") for path in _shipped(kind)],
    ids=lambda v: v if isinstance(v, str) else v.name,
)
def test_shipped_files_validate_and_carry_the_modeline(kind: str, path: Path) -> None:
    schema = json.loads((REPO / "schemas" / f"{kind}.schema.json").read_text())
    data = YAML(typ="safe").load(path.read_text())
    jsonschema.Draft202012Validator(schema).validate(data)
    first = path.read_text().splitlines()[0]
    rel = (
        Path("../" * (len(path.relative_to(POLICIES).parts) - 1)) / f"../schemas/{kind}.schema.json"
    )
    assert first == f"# yaml-language-server: $schema={rel.as_posix()}"
    assert (path.parent / rel).resolve() == (REPO / "schemas" / f"{kind}.schema.json").resolve()


def test_every_shipped_policy_has_a_test_file() -> None:
    tested = {p.name.removesuffix(".test.yaml") for p in _shipped("policy-test")}
    assert tested == {p.stem for p in _shipped("policy")}


def test_session_state_schema_accepts_a_dumped_state() -> None:
    schema = json.loads((REPO / "schemas" / "session-state.schema.json").read_text())
    state = SessionState(
        session_id="s",
        tokens=TokenSnapshot(context_tokens=5, model="m"),
        signals={"a": True, "b": 2, "c": "x"},
    )
    jsonschema.Draft202012Validator(schema).validate(json.loads(json.dumps(state.as_dict())))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate({"session_id": "s", "extra": 1})


def test_documented_example_state_is_valid() -> None:
    text = (REPO / "docs" / "examples" / "session-state.json").read_text()
    state = parse_state(text, "session-state.json")
    assert state.tokens.context_tokens > 0
    schema = json.loads((REPO / "schemas" / "session-state.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(json.loads(text))
