"""Whether data read from a file is plainly valid against one of the shipped JSON schemas, as
pydantic's strict validation of the model the schema was generated from reads it — without
pydantic or jsonschema.

The schemas in ``schemas/`` are generated from the pydantic models (clm_policy.models.schemas;
a test keeps them equal), so they are the models' declaration in a form that needs no library
to read. :func:`plainly_valid` walks the keywords those schemas use, with pydantic's meaning
for its own output: ``integer`` is an ``int`` and never a ``bool``, ``number`` an ``int`` or a
``float``, a ``const`` or ``enum`` (a ``Literal``) is matched by equality whatever the type
(``version: 1``, ``1.0`` and ``true`` are alike to pydantic), a ``pattern`` matches the whole
string (``$`` is its end, as in pydantic's regular expressions), and ``patternProperties``
are a dict's keys — every key must match one. What a
model checks in code (an ``@model_validator``) no schema says: those checks are in
:data:`MODEL_CHECKS`, by the model's name, and a test holds that table to the models.

It answers yes or no, and only "yes" is trusted: a document it refuses is validated by pydantic
(clm_policy.formats.validate), which says where and why — or, should this module be stricter
than pydantic somewhere, accepts it. A test holds the two equal on every variation of the
policies it can make.
"""

from __future__ import annotations

import json
import os
import re

from clm_policy.models.fields import signal_value_fits

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


def _signal_default_fits(data: Mapping[str, Any]) -> bool:
    return signal_value_fits(data["type"], data["default"])


MODEL_CHECKS: dict[str, Callable[[Mapping[str, Any]], bool]] = {
    # the schema's $defs name -> what the model's @model_validator checks (True: valid)
    "SignalSpec": _signal_default_fits,
}

_SCHEMAS: dict[str, Any] = {}
_PATTERNS: dict[str, re.Pattern[str]] = {}


def _schema(name: str) -> Any:
    """The shipped schema ``name`` (``policy``, ``policy-test``, ...), read once."""
    found = _SCHEMAS.get(name)
    if found is None:
        from clm_policy.base.resources import bundled_folder

        path = os.path.join(bundled_folder("schemas"), f"{name}.schema.json")
        with open(path, encoding="utf-8") as fh:
            found = _SCHEMAS[name] = json.load(fh)
    return found


def plainly_valid(name: str, data: Any) -> bool:
    """Whether ``data`` (plain data: dict, list, str, int, float, bool, None) is valid against
    the shipped schema ``name`` as pydantic reads it (see the module docstring)."""
    root = _schema(name)
    return _valid(data, root, root.get("$defs", {}), None)


def _pattern(text: str) -> re.Pattern[str]:
    found = _PATTERNS.get(text)
    if found is None:
        # pydantic's (Rust) regular expressions: `$` is the end of the text, never before a
        # final line break as in Python's
        body = text[:-1] + r"\Z" if text.endswith("$") and not text.endswith("\\$") else text
        found = _PATTERNS[text] = re.compile(body)
    return found


_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: v.__class__ is dict,
    "array": lambda v: v.__class__ is list,
    "string": lambda v: v.__class__ is str,
    "integer": lambda v: v.__class__ is int,
    "number": lambda v: v.__class__ in (int, float),
    "boolean": lambda v: v.__class__ is bool,
    "null": lambda v: v is None,
}


def _equal(value: Any, wanted: Any) -> bool:
    """``value`` equals ``wanted`` as a Literal's value (a container never does)."""
    return value.__class__ in (str, int, float, bool) and value == wanted


def _valid(
    value: Any, schema: Mapping[str, Any], defs: Mapping[str, Any], model: str | None
) -> bool:
    ref = schema.get("$ref")
    if ref is not None:
        name = ref.rsplit("/", 1)[-1]
        if not _valid(value, defs[name], defs, name):
            return False
    if "const" in schema or "enum" in schema:  # a Literal: equality, not the type
        return any(_equal(value, e) for e in schema.get("enum", [schema.get("const")]))
    kind = schema.get("type")
    if kind is not None and not _TYPES[kind](value):
        return False
    any_of = schema.get("anyOf")
    if any_of is not None and not any(_valid(value, s, defs, None) for s in any_of):
        return False
    if value.__class__ is str and not _string(value, schema):
        return False
    if value.__class__ in (int, float) and not _number(value, schema):
        return False
    if value.__class__ is list and "items" in schema:
        item = schema["items"]
        if not all(_valid(v, item, defs, None) for v in value):
            return False
    if value.__class__ is dict and not _object(value, schema, defs):
        return False
    check = MODEL_CHECKS.get(model) if model is not None else None
    return check is None or check(value)


def _string(value: str, schema: Mapping[str, Any]) -> bool:
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        return False
    if "minLength" in schema and len(value) < schema["minLength"]:
        return False
    pattern = schema.get("pattern")
    return pattern is None or _pattern(pattern).search(value) is not None


def _number(value: float, schema: Mapping[str, Any]) -> bool:
    # (written so that NaN, which compares false, is outside every bound, as in pydantic)
    if "minimum" in schema and not value >= schema["minimum"]:
        return False
    if "maximum" in schema and not value <= schema["maximum"]:
        return False
    return "exclusiveMinimum" not in schema or value > schema["exclusiveMinimum"]


def _object(value: dict[Any, Any], schema: Mapping[str, Any], defs: Mapping[str, Any]) -> bool:
    properties = schema.get("properties", {})
    if any(k not in value for k in schema.get("required", ())):
        return False
    names = schema.get("propertyNames")
    patterns = schema.get("patternProperties")
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key.__class__ is not str:
            return False
        if names is not None and not _valid(key, names, defs, None):
            return False
        if key in properties:
            if not _valid(item, properties[key], defs, None):
                return False
        elif patterns is not None:  # a dict whose keys have a pattern (pydantic's key type)
            matched = [s for p, s in patterns.items() if _pattern(p).search(key)]
            if not matched or not all(_valid(item, s, defs, None) for s in matched):
                return False
        elif extra is False or (extra is not True and not _valid(item, extra, defs, None)):
            return False
    return True
