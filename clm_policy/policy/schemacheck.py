"""A policy file checked by pydantic's validator alone, without building pydantic's models.

Checking a file against :class:`~clm_policy.models.policy.PolicyFile` imports pydantic and
builds its models: most of what the first hook after a policy change waits for
(benchmarks/README.md, bench_hook). The validator pydantic builds is pydantic-core's, made from
a *core schema*, which is plain data. The first time pydantic checks a policy file with
caching on, :func:`remember` keeps that schema in the cache folder (JSON, ``0600``, keyed by
clm-policy's and pydantic-core's versions and the model's source), each model turned into the
typed dict of its fields, and the one model validator into :func:`signal_default` by name.
From then on :func:`valid` checks a file with pydantic-core alone.

It only ever says "valid". A file it refuses — and any problem with the stored schema:
missing, someone else's, unreadable, of another pydantic-core — goes to pydantic, which says
where the file is wrong, exactly as before. A test holds that it accepts exactly what pydantic
accepts (tests/policy/test_schemacheck.py). A stored schema is data: nothing in it names code
(the one function is looked up in :data:`FUNCTIONS` by a fixed name), and pydantic-core builds
no validator that runs code from JSON.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clm_policy.base.digest import files_fingerprint, sha256
from clm_policy.base.privatefiles import cache_dir, private_dir, read_private, write_private

if TYPE_CHECKING:  # pydantic-core is imported where a file is checked
    from pydantic_core import CoreSchema, SchemaValidator

_FORMAT = b"clm-policy-policy-check-1"
_LIMIT = 1024 * 1024  # the schema of today's PolicyFile is ~11 KB
_SOURCES = ("models/policy.py", "models/fields.py", "models/enums.py", "policy/schemacheck.py")


class Unsupported(ValueError):
    """A part of the core schema this module does not turn into plain data (a new kind of
    validator in the model: teach :func:`plain_schema` about it; until then pydantic checks)."""


def signal_default(data: dict[str, Any]) -> dict[str, Any]:
    """A signal's default is of its type (``SignalSpec``'s model validator, on its fields)."""
    from clm_policy.models.fields import default_misfit

    misfit = default_misfit(data["type"], data["default"])
    if misfit is not None:
        raise ValueError(misfit)
    return data


FUNCTIONS = {"SignalSpec._default_matches_type": ("signal_default", signal_default)}
"""The model's validators, by qualified name: the name each has in a stored schema and the
function that checks the same on a typed dict."""
_BY_NAME = dict(FUNCTIONS.values())


# -- the check ---------------------------------------------------------------------------------

_VALIDATORS: list[SchemaValidator] = []  # this process's, once built


def valid(data: object) -> bool:
    """Whether ``data`` is a valid policy file, by the stored schema; False when there is none
    (or it cannot be used) as when the file is refused: pydantic then decides and explains."""
    try:
        if not _VALIDATORS:
            validator = _load()
            if validator is None:
                return False
            _VALIDATORS.append(validator)
        _VALIDATORS[0].validate_python(data)
    except Exception:  # refused, or a stored schema this pydantic-core cannot use
        return False
    return True


def _load() -> SchemaValidator | None:
    directory = cache_dir()
    if directory is None or not hasattr(os, "geteuid") or not private_dir(directory):
        return None
    raw = read_private(Path(directory, _entry_name()), _LIMIT)
    return None if raw is None or len(raw) > _LIMIT else validator(json.loads(raw))


def validator(plain: Any) -> SchemaValidator:
    """pydantic-core's validator of a stored schema (:func:`plain_schema`'s JSON data)."""
    from pydantic_core import SchemaValidator

    return SchemaValidator(_with_functions(plain))


def _with_functions(node: Any) -> Any:
    """A stored schema with each validator's name replaced by its function (an unknown name
    is refused: the schema is data)."""
    if isinstance(node, list):
        return [_with_functions(item) for item in node]
    if not isinstance(node, dict):
        return node
    if node.get("type") == "no-info" and isinstance(node.get("function"), str):
        function = _BY_NAME.get(node["function"])
        if function is None:
            raise Unsupported(f"no validator named {node['function']!r}")
        return {"type": "no-info", "function": function}
    return {key: _with_functions(value) for key, value in node.items()}


def _entry_name() -> str:
    from pydantic_core import __version__ as core_version

    from clm_policy import __version__

    h = sha256(_FORMAT)
    for part in (__version__, core_version, sys.version):
        h.update(part.encode() + b"\0")
    package = Path(__file__).resolve().parent.parent
    h.update(files_fingerprint(str(package / source) for source in _SOURCES).encode())
    return f"policy-check-{h.hexdigest()[:32]}.json"


# -- keeping pydantic's schema -----------------------------------------------------------------


def remember(core_schema: CoreSchema) -> None:
    """Keep ``core_schema`` (``PolicyFile.__pydantic_core_schema__``, which pydantic has just
    built) for :func:`valid`, unless it is kept already. Best effort: never raises."""
    directory = cache_dir()
    if directory is None or not hasattr(os, "geteuid") or _VALIDATORS:
        return
    try:
        name = _entry_name()
        if os.path.lexists(Path(directory, name)):  # a symlink too: no pathlib call before 3.12
            return
        text = json.dumps(plain_schema(core_schema), separators=(",", ":"))
    except Exception:  # Unsupported, or anything else: pydantic goes on checking
        return
    write_private(directory, name, text)


_DROPPED = {"metadata", "serialization", "cls", "custom_init", "root_model", "post_init"}


def plain_schema(node: Any) -> Any:
    """``node``, a pydantic-core schema, as JSON data that validates the same: a model as the
    typed dict of its fields (``extra="forbid"``, its config), a field's default left out (the
    check's result is not used), a model validator by its name in :data:`FUNCTIONS`. Raises
    :class:`Unsupported` for anything else that is not plain data."""
    if isinstance(node, list):
        return [plain_schema(item) for item in node]
    if isinstance(node, str | bool | int | float) or node is None:
        return node
    if not isinstance(node, dict):
        raise Unsupported(f"not plain data: {type(node).__name__}")
    kind = node.get("type")
    if kind == "model":
        return _typed_dict(node)
    if kind in ("no-info", "with-info") and "function" in node:
        name = getattr(node["function"], "__qualname__", None)
        if kind != "no-info" or name not in FUNCTIONS:
            raise Unsupported(f"a validator clm-policy does not know: {name}")
        return {"type": "no-info", "function": FUNCTIONS[name][0]}
    return {key: plain_schema(value) for key, value in node.items() if key not in _DROPPED}


def _typed_dict(model: dict[str, Any]) -> dict[str, Any]:
    fields = model["schema"]
    if fields.get("type") != "model-fields" or fields.get("computed_fields"):
        raise Unsupported("a model that is not a plain set of fields")
    config = model.get("config", {})
    typed: dict[str, Any] = {}
    for name, field in fields["fields"].items():
        if set(field) - {"type", "schema", "metadata"}:
            raise Unsupported(f"field {name}: aliases or exclusions")
        schema = field["schema"]
        required = schema.get("type") != "default"
        if not required:
            schema = schema["schema"]
        typed[name] = {"type": "typed-dict-field", "schema": plain_schema(schema)}
        typed[name]["required"] = required
    out: dict[str, Any] = {
        "type": "typed-dict",
        "fields": typed,
        "extra_behavior": config.get("extra_fields_behavior", "ignore"),
        "config": plain_schema(config),
    }
    if "ref" in model:
        out["ref"] = model["ref"]
    return out
