"""The policy check by pydantic-core alone (clm_policy/policy/schemacheck.py) accepts exactly
what pydantic's PolicyFile accepts, is kept once per install in the cache folder, and is never
trusted from a file that is not the user's own."""

from __future__ import annotations

import copy
import json
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from clm_policy.formats.yamlio import load_yaml
from clm_policy.models.policy import PolicyFile
from clm_policy.policy import schemacheck

from conftest import data_paths

ROOT = Path(__file__).resolve().parents[2]
POLICIES = sorted([*ROOT.glob("policies/*.yaml"), *ROOT.glob("policies/examples/*.yaml")])

ODD_VALUES: list[Any] = [
    None, True, False, 0, -1, 1, 7, 2**63 - 1, 2**63, 0.5, 1.0, -0.5, 1e6, 1e7,
    math.inf, -math.inf, math.nan, "", "x", "70%", "100%", "101%", "5.5%", "a" * 64,
    "a" * 65, "1abc", "bad id", "\ud800", "compact", "handoff", "continue", "block", "warn",
    "bool", "int", "float", "str", [], ["compact"], ["x"], {}, {"x": 1}, {"id": "r"},
]  # fmt: skip


def plain_validator() -> Any:
    PolicyFile.model_rebuild()
    stored = json.loads(json.dumps(schemacheck.plain_schema(PolicyFile.__pydantic_core_schema__)))
    return schemacheck.validator(stored)


def pydantic_accepts(data: Any) -> bool:
    try:
        PolicyFile.model_validate(data)
    except ValidationError:
        return False
    return True


def core_accepts(check: Any, data: Any) -> bool:
    try:
        check.validate_python(data)
    except ValueError:  # pydantic-core's ValidationError is one
        return False
    return True


def replaced(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    out = copy.deepcopy(doc)
    node = out
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return out


def mutations(doc: dict[str, Any]) -> Iterator[Any]:
    """Every place of ``doc`` given each odd value, a key too many and a key less."""
    for path in data_paths(doc):
        if not path:
            continue
        for value in ODD_VALUES:
            yield replaced(doc, path, value)
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        if isinstance(parent, dict):
            less = replaced(doc, path, None)
            node = less
            for step in path[:-1]:
                node = node[step]
            del node[path[-1]]
            yield less
    for path in data_paths(doc):
        node = doc
        for step in path:
            node = node[step]
        if isinstance(node, dict):
            for key in ("unknown", "id", "when", "type", "default", "input", "soft_compact"):
                for value in (1, "x", "50%", None, {"type": "int", "default": 3}):
                    yield replaced(doc, (*path, key), value) if path else {**doc, key: value}


SEEDS: list[dict[str, Any]] = [
    {"version": 1},
    {
        "version": 1,
        "signals": {
            "tests_green": {"type": "bool", "default": True},
            "budget": {"type": "float", "default": 2},
            "label": {"type": "str", "default": "a"},
        },
        "prices": {"default": {"input": 3, "output": 15.0}},
        "models": {"claude": 200000},
        "confirm": ["handoff"],
        "guards": {"compact": [{"id": "g", "when": "x", "severity": "warn"}]},
    },
]


@pytest.mark.parametrize("source", POLICIES, ids=lambda p: p.name)
def test_it_accepts_exactly_what_pydantic_accepts(source: Path) -> None:
    check = plain_validator()
    doc = load_yaml(source).root
    assert core_accepts(check, doc)
    assert pydantic_accepts(doc)
    differ = [m for m in mutations(doc) if core_accepts(check, m) != pydantic_accepts(m)]
    assert differ == []


@pytest.mark.parametrize("seed", range(len(SEEDS)))
def test_it_agrees_on_signals_prices_and_guards(seed: int) -> None:
    check = plain_validator()
    doc = SEEDS[seed]
    assert core_accepts(check, doc)
    differ = [m for m in mutations(doc) if core_accepts(check, m) != pydantic_accepts(m)]
    assert differ == []


def test_a_signal_default_of_another_type_is_refused_by_both() -> None:
    check = plain_validator()
    for kind, default in (("int", True), ("bool", 1), ("str", 2), ("float", "x"), ("int", 1.5)):
        doc = {"version": 1, "signals": {"s": {"type": kind, "default": default}}}
        assert not core_accepts(check, doc)
        assert not pydantic_accepts(doc)


def test_the_stored_schema_names_no_code() -> None:
    text = json.dumps(schemacheck.plain_schema(PolicyFile.__pydantic_core_schema__))
    assert '"function": "signal_default"' in text
    assert "clm_policy.models" not in text.replace("clm_policy.models.policy.", "")
    with pytest.raises(schemacheck.Unsupported):
        schemacheck.validator({"type": "function-after", "function": {"type": "no-info",
                              "function": "os.system"}, "schema": {"type": "any"}})  # fmt: skip


def test_an_unknown_validator_is_not_stored() -> None:
    def check(value: Any) -> Any:
        return value

    schema = {"type": "function-after", "function": {"type": "no-info", "function": check},
              "schema": {"type": "int"}}  # fmt: skip
    with pytest.raises(schemacheck.Unsupported):
        schemacheck.plain_schema(schema)


LOAD_TWICE = """
import sys
from clm_policy.policy.compile import load_policy
load_policy(sys.argv[1])
print("pydantic" in sys.modules)
"""


def run_load(policy: Path, env: dict[str, str]) -> str:
    out = subprocess.run(
        [sys.executable, "-c", LOAD_TWICE, str(policy)],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return out.stdout.strip()


def test_the_schema_is_kept_once_and_then_pydantic_is_not_imported(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {**os.environ, "CLM_POLICY_CACHE_DIR": str(cache)}
    policy = tmp_path / "p.yaml"
    policy.write_text("version: 1\nextends: default\n")
    assert run_load(policy, env) == "True"  # the first: pydantic checks, the schema is kept
    kept = sorted(cache.glob("policy-check-*.json"))
    assert len(kept) == 1
    assert oct(kept[0].stat().st_mode & 0o777) == "0o600"
    policy.write_text("version: 1\nextends: default\ndescription: edited\n")
    assert run_load(policy, env) == "False"  # a valid edit: pydantic-core alone
    policy.write_text("version: 1\nextends: default\ndescription: 3\n")
    out = subprocess.run(
        [sys.executable, "-m", "clm_policy", "lint", str(policy)],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert out.returncode == 1
    assert f"{policy}:3:14: " in out.stdout + out.stderr  # pydantic says where


def test_a_schema_someone_else_could_write_is_not_used(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {**os.environ, "CLM_POLICY_CACHE_DIR": str(cache)}
    policy = tmp_path / "p.yaml"
    policy.write_text("version: 1\nextends: default\n")
    run_load(policy, env)
    (kept,) = cache.glob("policy-check-*.json")
    kept.chmod(0o666)
    policy.write_text("version: 1\nextends: default\ndescription: edited\n")
    assert run_load(policy, env) == "True"  # not the user's alone: pydantic checks
    kept.chmod(0o600)
    kept.write_text('{"type": "any"}')  # a planted schema that accepts anything
    policy.write_text("version: 1\nrules: 3\n")
    out = subprocess.run(
        [sys.executable, "-m", "clm_policy", "lint", str(policy)],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert out.returncode == 1  # lint asks pydantic, whatever is kept
    assert "rules" in out.stdout + out.stderr


def test_without_the_cache_nothing_is_kept(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {**os.environ, "CLM_POLICY_CACHE_DIR": str(cache), "CLM_POLICY_NO_CACHE": "1"}
    policy = tmp_path / "p.yaml"
    policy.write_text("version: 1\nextends: default\n")
    assert run_load(policy, env) == "True"
    assert not list(cache.glob("policy-check-*.json"))
