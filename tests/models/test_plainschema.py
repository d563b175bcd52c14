"""A policy file is plainly valid (clm_policy.models.plainschema, read from the shipped schema)
exactly when pydantic's strict validation of PolicyFile accepts it — on every policy of the
project and on every variation of them below."""

from __future__ import annotations

import copy
import inspect
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from clm_policy.formats.yamlio import parse_yaml
from clm_policy.models import policy as models
from clm_policy.models.plainschema import MODEL_CHECKS, plainly_valid
from clm_policy.models.policy import PolicyFile

ROOT = Path(__file__).resolve().parents[2]
POLICIES = sorted(
    p
    for p in [
        *(ROOT / "policies").rglob("*.yaml"),
        *(ROOT / "examples").rglob("*.yaml"),
        *(ROOT / "tests" / "fixtures").rglob("*.yaml"),
    ]
    if p.name != "syntax.yaml"  # (no YAML)
)
DOCS = [parse_yaml(p.read_text(encoding="utf-8"), str(p)).root for p in POLICIES]
ODD: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    2,
    101,
    2**63 - 1,
    2**63,
    0.5,
    1.0,
    -0.5,
    1e7,
    float("inf"),
    float("nan"),
    "",
    "x",
    "coding",
    "x y",
    "a" * 65,
    "abc\n",
    "60%",
    "100%",
    "101%",
    "60.5%",
    "1e3",
    "compact",
    "handoff",
    "continue",
    "block",
    "warn",
    "bool",
    "int",
    "float",
    "str",
    [],
    ["compact"],
    ["x"],
    [1],
    {},
    {"x": 1},
    {"id": "r"},
    {"type": "int", "default": 1},
    {"type": "bool", "default": 1},
    {"type": "float", "default": 1},
    {"type": "int", "default": True},
    {"input": 1, "output": 2.5},
    {"input": -1, "output": 1},
    {"soft_compact": 10, "hard_handoff": "90%"},
]


def pydantic_accepts(data: Any) -> bool:
    try:
        PolicyFile.model_validate(data)
    except ValidationError:
        return False
    return True


def paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in ``data`` (the root excluded)."""
    found = []
    items: Any = []
    if isinstance(data, dict):
        items = data.items()
    elif isinstance(data, list):
        items = enumerate(data)
    for key, value in items:
        found.append((*prefix, key))
        found += paths(value, (*prefix, key))
    return found


def put(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    changed = copy.deepcopy(data)
    node = changed
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return changed


def drop(data: Any, path: tuple[Any, ...]) -> Any:
    changed = copy.deepcopy(data)
    node = changed
    for step in path[:-1]:
        node = node[step]
    del node[path[-1]]
    return changed


def variations() -> list[Any]:
    found: list[Any] = [None, [], "x", {}, {"version": 1}, {"version": True}]
    for doc in DOCS:
        found.append(doc)
        for path in paths(doc):
            found.append(drop(doc, path))
            found += [put(doc, path, value) for value in ODD]
            if isinstance(path[-1], str):  # an unknown key beside it, a key of another name
                found.append(put(doc, (*path[:-1], "unknown"), 1))
                found.append(put(doc, (*path[:-1], "Bad key!"), copy.deepcopy(doc)))
    return found


VARIATIONS = variations()


def test_there_are_enough_variations() -> None:
    accepted = sum(map(pydantic_accepts, VARIATIONS))
    assert len(VARIATIONS) > 5000
    assert 1000 < accepted < len(VARIATIONS) - 1000


def test_plainly_valid_is_what_pydantic_accepts() -> None:
    wrong = [v for v in VARIATIONS if plainly_valid("policy", v) != pydantic_accepts(v)]
    assert wrong == []


def test_every_model_check_is_in_the_table() -> None:
    """An @model_validator no schema expresses must be in MODEL_CHECKS, by its model's name."""
    checked = set()
    for _, model in inspect.getmembers(models, inspect.isclass):
        if issubclass(model, BaseModel) and model.__pydantic_decorators__.model_validators:
            checked.add(model.__name__)
    assert checked == set(MODEL_CHECKS)


@pytest.mark.parametrize("path", POLICIES, ids=lambda p: p.name)
def test_the_project_s_policies(path: Path) -> None:
    data = parse_yaml(path.read_text(encoding="utf-8"), str(path)).root
    assert plainly_valid("policy", data) == pydantic_accepts(data)
