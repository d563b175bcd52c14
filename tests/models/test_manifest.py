"""The handoff manifest: the seed's fields, required, and the handoff's additions, optional;
pydantic and the JSON schema agree; a manifest written before the additions still reads."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import jsonschema
import pytest
from pydantic import ValidationError

from clm_policy.base.errors import InputError
from clm_policy.base.timestamp import format_timestamp
from clm_policy.models import manifest as plain
from clm_policy.models.enums import ManifestStatus
from clm_policy.models.shapes.manifest import HandoffManifest, validate_manifest

from conftest import REPO
from probes import probe_code

FIXTURE = REPO / "tests" / "fixtures" / "sample_manifest.json"
SEED_FIELDS = [
    "goal",
    "status",
    "source_of_truth",
    "changed_artifacts",
    "commands_and_results",
    "verified",
    "not_verified",
    "assumptions_risks",
    "blockers",
    "next_safe_action",
    "memory_keys",
    "token_snapshot",
    "timestamp",
    "decision_rationale",
]
ADDED_FIELDS = [
    "requests",
    "constraints",
    "decisions",
    "done",
    "remaining",
    "open_failures",
    "moved_artifacts",
    "deleted_artifacts",
    "transcript",
    "last_message",
    "agent_words",
    "record",
    "agent_id",
]


def sample() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text())
    return data


def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(
        (REPO / "schemas" / "handoff-manifest.schema.json").read_text()
    )
    return loaded


def pydantic_accepts(data: dict[str, Any]) -> bool:
    try:
        HandoffManifest.model_validate_json(json.dumps(data), strict=True)
    except ValidationError:
        return False
    return True


def schema_accepts(data: dict[str, Any]) -> bool:
    return jsonschema.Draft202012Validator(schema()).is_valid(data)


def test_fields_are_the_version_and_the_seed_list_required_then_the_additions_optional() -> None:
    fields = HandoffManifest.model_fields
    required = ["schema_version", *SEED_FIELDS]
    assert list(fields) == required + ADDED_FIELDS
    assert [name for name, f in fields.items() if f.is_required()] == required
    assert schema()["required"] == required
    assert list(schema()["properties"]) == required + ADDED_FIELDS
    assert schema()["additionalProperties"] is False
    assert tuple(required + ADDED_FIELDS) == plain.HandoffManifest.FIELDS
    assert tuple(required) == plain.HandoffManifest.REQUIRED
    older = {k: v for k, v in sample().items() if k != "agent_id"}
    assert validate_manifest(older).agent_id is None
    for bad in ("", "../main", "a b", "x" * 65):
        assert not pydantic_accepts({**sample(), "agent_id": bad})
        assert not schema_accepts({**sample(), "agent_id": bad})


def test_a_manifest_without_the_additions_reads_with_empty_defaults() -> None:
    old = {k: v for k, v in sample().items() if k in SEED_FIELDS or k == "schema_version"}
    manifest = validate_manifest(old)
    assert (manifest.requests, manifest.remaining, manifest.transcript) == ([], [], None)


def test_status_values() -> None:
    assert [s.value for s in ManifestStatus] == [
        "in_progress",
        "blocked",
        "partial_complete",
        "completed",
    ]


def test_fixture_validates_and_round_trips() -> None:
    manifest = validate_manifest(sample(), source=str(FIXTURE))
    assert manifest.status is ManifestStatus.IN_PROGRESS
    assert manifest.token_snapshot.context_tokens == 352_000
    assert manifest.token_snapshot.total_tokens == 4_241_000
    assert isinstance(manifest, plain.HandoffManifest)  # the plain class, not pydantic's
    dumped = manifest.as_dict()
    assert {k: v for k, v in dumped.items() if k in sample()} == sample()
    assert validate_manifest(manifest) == manifest  # a manifest is checked against the schema too
    assert plain.HandoffManifest.from_dict(dumped) == manifest
    full = HandoffManifest.model_validate_json(json.dumps(sample()), strict=True)
    assert dumped == full.model_dump(mode="json")  # the declaration's dump, key for key


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    *parents, last = path.split(".")

    def change(data: dict[str, Any]) -> None:
        for key in parents:
            data = data[key]
        data[last] = value

    return change


def _drop(key: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        del data[key]

    return change


INVALID = [
    ("empty goal", _set("goal", ""), "goal: string should have at least 1 character"),
    (
        "blank goal",
        _set("goal", "  \n "),
        "goal: string should have at least 1 character",
    ),
    (
        "blank next action",
        _set("next_safe_action", "\t"),
        "next_safe_action: string should have at least 1 character",
    ),
    (
        "empty rationale",
        _set("decision_rationale", ""),
        "decision_rationale: string should have at least 1 character",
    ),
    ("missing field", _drop("next_safe_action"), "missing required field 'next_safe_action'"),
    ("missing object", _drop("token_snapshot"), "missing required field 'token_snapshot'"),
    ("unknown field", _set("session_id", "s1"), "unknown field 'session_id'"),
    ("list as string", _set("verified", "all of it"), "verified: input should be a valid array"),
    ("item not a string", _set("blockers", [3]), "blockers[0]: input should be a valid string"),
    (
        "unknown status",
        _set("status", "done"),
        "status: input should be 'in_progress', 'blocked', 'partial_complete' or 'completed'",
    ),
    (
        "token snapshot as int (the seed's type)",
        _set("token_snapshot", 1000),
        "token_snapshot: input should be an object",
    ),
    (
        "tokens as string",
        _set("token_snapshot.context_tokens", "5"),
        "token_snapshot.context_tokens: input should be a valid integer",
    ),
    (
        "negative tokens",
        _set("token_snapshot.total_tokens", -1),
        "token_snapshot.total_tokens: input should be greater than or equal to 0",
    ),
    (
        "unknown token field",
        _set("token_snapshot.cost", 1),
        "unknown field 'token_snapshot.cost'",
    ),
    (
        "memory key with ..",
        _set("memory_keys", ["ok", "../etc/passwd"]),
        "memory_keys[1]: string should match pattern '^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$'",
    ),
    (
        "absolute memory key",
        _set("memory_keys", ["/topics/x"]),
        "memory_keys[0]: string should match pattern '^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$'",
    ),
]
BAD_TIMESTAMPS = [
    "2026-08-04 12:00:00Z",
    "2026-08-04T12:00:00",
    "2026-08-04T14:00:00+02:00",
    "2026-13-01T00:00:00Z",
    "2026-08-04T24:00:00Z",
    "yesterday",
    "",
]


@pytest.mark.parametrize(
    ("change", "message"), [(c, m) for _, c, m in INVALID], ids=[i for i, _, _ in INVALID]
)
def test_invalid_examples_fail_both_and_name_the_field(
    change: Callable[[dict[str, Any]], None], message: str
) -> None:
    data = sample()
    change(data)
    assert not pydantic_accepts(data)
    assert not schema_accepts(data)
    with pytest.raises(InputError) as caught:
        validate_manifest(data)
    assert str(caught.value) == f"handoff manifest: {message}"


@pytest.mark.parametrize("timestamp", BAD_TIMESTAMPS)
def test_bad_timestamps_fail_both(timestamp: str) -> None:
    data = sample()
    data["timestamp"] = timestamp
    assert not pydantic_accepts(data)
    assert not schema_accepts(data)
    with pytest.raises(InputError, match=r"^handoff manifest: timestamp: string should match"):
        validate_manifest(data)


@pytest.mark.parametrize(
    "change",
    [
        _set("timestamp", "2026-08-04T12:00:00.123456Z"),
        _set("timestamp", "2024-02-29T23:59:59Z"),
        _set("status", "completed"),
        _set("memory_keys", ["a/b-c_d/E9"]),
        _set("token_snapshot", {}),
        _set("verified", []),
        _set("token_snapshot.context_window", None),
    ],
)
def test_valid_variants_pass_both(change: Callable[[dict[str, Any]], None]) -> None:
    data = sample()
    change(data)
    assert pydantic_accepts(data)
    assert schema_accepts(data)
    validate_manifest(data)


def test_text_fields_are_stripped() -> None:
    data = sample()
    data["goal"] = "  Ship it \n"
    assert validate_manifest(data).goal == "Ship it"


def test_an_impossible_date_is_caught_by_pydantic() -> None:
    """The schema's pattern checks the shape only; 30 February gets past it, not past us."""
    data = sample()
    data["timestamp"] = "2026-02-30T12:00:00Z"
    assert schema_accepts(data)
    assert not pydantic_accepts(data)
    with pytest.raises(InputError) as caught:
        validate_manifest(data)
    assert str(caught.value) == ("handoff manifest: timestamp: day is out of range for month")


def test_schema_errors_are_reported_by_field() -> None:
    """Should the schema ever be stricter than the model, its error names the field too."""
    from clm_policy.models.shapes.manifest import _best_schema_error

    data = sample()
    assert _best_schema_error(data) is None
    del data["goal"]
    assert _best_schema_error(data) == "missing required field 'goal'"
    data = sample()
    data["token_snapshot"]["input_tokens"] = "many"
    assert (
        _best_schema_error(data) == "token_snapshot.input_tokens: 'many' is not of type 'integer'"
    )


def test_errors_carry_the_source_and_refuse_non_json() -> None:
    data = sample()
    data["goal"] = ""
    with pytest.raises(InputError) as caught:
        validate_manifest(data, source="manifests/x.json")
    assert str(caught.value).startswith("manifests/x.json: handoff manifest: goal: ")
    data = sample()
    data["timestamp"] = datetime(2026, 8, 4, tzinfo=UTC)
    with pytest.raises(InputError, match=r"^handoff manifest: not JSON data \(Object of type"):
        validate_manifest(data)


def test_input_is_not_changed() -> None:
    data = sample()
    data["goal"] = " padded "
    before = copy.deepcopy(data)
    validate_manifest(data)
    assert data == before


def test_format_timestamp() -> None:
    assert format_timestamp(datetime(2026, 8, 4, 12, 0, 5, 999, tzinfo=UTC)) == (
        "2026-08-04T12:00:05Z"
    )
    cest = timezone(timedelta(hours=2))
    assert format_timestamp(datetime(2026, 8, 4, 14, 0, tzinfo=cest)) == "2026-08-04T12:00:00Z"
    with pytest.raises(InputError) as caught:
        format_timestamp(datetime(2026, 8, 4, 12, 0))
    assert str(caught.value) == (
        "timestamp needs a timezone-aware datetime, got naive 2026-08-04T12:00:00"
    )


def test_manifest_and_lifecycle_imports_stay_off_jsonschema() -> None:
    code = (
        "import clm_policy\n"
        "assert 'jsonschema' not in sys.modules and 'pydantic' not in sys.modules\n"
        "import clm_policy.models.manifest, clm_policy.lifecycle.compaction\n"
        "import clm_policy.lifecycle.handoff, clm_policy.lifecycle.pipelines\n"
        "assert 'pydantic' not in sys.modules  # the plain classes: pydantic is for the edges\n"
        "import clm_policy.models.shapes.manifest\n"
    )
    done = probe_code("lifecycle", code)
    assert (done.loaded, done.stderr) == ([], "")


def test_docs_example_is_the_fixture_and_every_field_is_in_the_table() -> None:
    text = (REPO / "docs" / "manifest.md").read_text()
    blocks = re.findall(r"```json\n(.*?)```", text, flags=re.S)
    assert json.loads(blocks[0]) == sample()
    for name in ["schema_version", *SEED_FIELDS]:
        assert f"| `{name}` |" in text, name
