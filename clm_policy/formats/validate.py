"""Validate a YAML document against a pydantic model, with every error at file:line:col.

Every YAML file clm-policy reads is validated here, so schema errors read the same everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from clm_policy.base.errors import InputError, LoadCheck, Location, quote, shorten
from clm_policy.base.suggest import closest, suggest
from clm_policy.formats.textio import with_article
from clm_policy.formats.yamlio import PathKey, YamlDocument

M = TypeVar("M", bound=BaseModel)

_TYPE_NAMES = {
    "int_type": "an integer",
    "int_from_float": "an integer",
    "bool_type": "true or false",
    "string_type": "a string",
    "float_type": "a number",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "list_type": "a list",
}


class Located(Protocol):
    """A parsed document that can say where a path into it is written (YAML or JSON)."""

    @property
    def root(self) -> Any: ...

    def location(self, path: Sequence[PathKey], *, key: bool = False) -> Location: ...


_KINDS = {bool: "boolean", int: "integer", float: "number", str: "string"}


def kind_of(value: Any) -> str:
    """What kind of value this is ("a list", "a string", ...), without the value: for a file
    whose content should not be shown (it may be any file at all)."""
    return _describe(value, show=False)


def _describe(value: Any, *, show: bool = True) -> str:
    """What a value is, for a message: its kind and (cut short, when ``show``) the value."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    kind = _KINDS.get(type(value)) or type(value).__name__
    if not show:
        return with_article(kind)
    return f"{kind} {quote(value)}"


def _display(path: Sequence[PathKey]) -> str:
    out = ""
    for step in path:
        if isinstance(step, str):
            step = shorten(step)  # a key as long as a document
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


def _real_path(doc: Located, loc: Sequence[Any]) -> tuple[list[PathKey], bool]:
    """The part of a pydantic ``loc`` that exists in the document; whether it names a key."""
    node = doc.root
    path: list[PathKey] = []
    for step in loc:
        if step == "[key]":
            return path, True
        in_map = isinstance(node, dict) and isinstance(step, str) and step in node
        in_seq = isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node)
        if not (in_map or in_seq):
            continue  # a union branch name ('int', 'constrained-str') or a missing field
        node = node[step]
        path.append(step)
    return path, False


def document_errors(
    doc: YamlDocument, model: type[M], what: str
) -> tuple[M | None, list[InputError]]:
    """Validate ``doc``; return the model (or None) and all errors, sorted by position."""
    if not isinstance(doc.root, dict):
        # the kind only, never the value: this may be any file at all (extends: ~/.netrc)
        err = InputError(
            f"expected a mapping at the top of the {what}, got {kind_of(doc.root)}",
            doc.location([]),
            check=LoadCheck.SCHEMA,
        )
        return None, [err]
    try:
        return model.model_validate(doc.root), []
    except ValidationError as exc:
        return None, locate_errors(doc, exc.errors(include_url=False), model)


def validate_document(doc: YamlDocument, model: type[M], what: str) -> M:
    """Validate ``doc`` and return the model; raise the first error by position."""
    result, errors = document_errors(doc, model, what)
    if errors:
        raise errors[0]
    assert result is not None
    return result


def locate_errors(
    doc: Located,
    errors: list[ErrorDetails],
    model: type[BaseModel],
    prefix: tuple[PathKey, ...] = (),
) -> list[InputError]:
    """Pydantic's ``errors`` (``exc.errors(include_url=False)``) for ``doc`` as located errors,
    one per place, sorted by position. ``doc`` may be the part at ``prefix`` of a file that
    ``model`` describes (messages name places from the top of the file). A message quotes a
    value the user wrote at most :data:`~clm_policy.base.errors.QUOTE_LIMIT` characters long."""
    seen: set[tuple[tuple[PathKey, ...], bool]] = set()
    out: list[InputError] = []
    # A threshold is "integer or share": report the union once, as that, not as "integer";
    # a signal is "bool, int, float or str": an infinity is reported as not finite.
    errors = sorted(errors, key=lambda e: (not _share(e), e["type"] != "finite_number"))
    for err in errors:
        loc = list(err["loc"])
        kind = err["type"]
        path, is_key = _real_path(doc, loc)
        if kind == "extra_forbidden":
            is_key = True
        key = (tuple(path), is_key)
        if key in seen:
            continue  # one message per place (unions report once per branch)
        seen.add(key)
        full = (*prefix, *path)
        field = _display(full) if full else "document"
        value = err.get("input")
        if kind == "missing":
            name = loc[-1]
            where = _display(full) or "the top level"
            message = f"missing required key '{name}' in {where}{_misspelt(doc, path, name)}"
        elif kind == "extra_forbidden":
            name = str(loc[-1])
            allowed = _allowed_keys(model, [*prefix, *loc[:-1]])
            message = f"unknown key {quote(name)}{suggest(name, allowed)}"
            if allowed:
                message += f" (allowed: {', '.join(allowed)})"
        elif kind in _TYPE_NAMES:
            message = f"{field}: expected {_TYPE_NAMES[kind]}, got {_describe(value)}"
            if kind == "string_type" and isinstance(value, dict | list):
                message += (
                    " (a value that starts with '{' or '[' is a YAML mapping or list: quote it)"
                )
            threshold = bool(full) and full[-1] in ("soft_compact", "hard_handoff")
            if threshold and type(value) is float and 0 < value < 1:
                message += f" (a share is written as '{value * 100:g}%')"
        elif kind == "literal_error":
            expected = err.get("ctx", {}).get("expected", "")
            message = f"{field}: expected {expected}, got {_describe(value)}"
        elif kind == "string_pattern_mismatch" and is_key:
            message = (
                f"{field}: name {quote(value)} is not allowed (ASCII letters, digits, '_', "
                "'-'; a letter first)"
            )
        elif kind == "string_pattern_mismatch" and _share(err):
            message = (
                f"{field}: expected tokens (an integer) or a share like '70%', got "
                f"{_describe(value)}{_share_hint(value)}"
            )
        elif kind == "string_pattern_mismatch":
            message = (
                f"{field}: {quote(value)} is not a valid id (ASCII letters, digits, '_' and "
                "'-', starting with a letter, at most 64 characters)"
            )
        elif kind == "value_error":
            detail = str(err["msg"]).removeprefix("Value error, ")
            message = f"{field}: {detail}" if full else detail
        else:
            message = f"{field}: {err['msg'][:1].lower()}{err['msg'][1:]}"
            # (a json_invalid error's input is the whole text)
            if kind != "json_invalid" and value is not None and not isinstance(value, dict | list):
                message += f", got {_describe(value)}"
        out.append(InputError(message, doc.location(path, key=is_key), check=LoadCheck.SCHEMA))
    out.sort(key=lambda e: (e.location.line, e.location.col) if e.location else (0, 0))
    return out


def _misspelt(doc: Located, path: Sequence[PathKey], name: object) -> str:
    """``; is 'case' it, misspelt?`` when the mapping at ``path`` has a key close to the
    missing ``name`` (it is reported as unknown only once the required ones are there).
    ``path`` is one :func:`_real_path` found: every step of it is there."""
    node: Any = doc.root
    for step in path:
        node = node[step]
    if not isinstance(node, dict):
        return ""
    close = closest(str(name), [str(key) for key in node])
    return f"; is '{close}' it, misspelt?" if close is not None else ""


def _share_hint(value: object) -> str:
    """What a threshold written almost right means: a share over 100%, a number quoted, or
    digits grouped with commas or underscores."""
    text = str(value).strip()
    if text.endswith("%") and text[:-1].replace(".", "", 1).isdigit():
        return " (a share is at most 100%)"
    if text.replace(",", "").replace("_", "").isdigit():
        return f" (tokens are written as a plain number: {text.replace(',', '').replace('_', '')})"
    return ""


def _share(err: ErrorDetails) -> bool:
    """Whether a pattern ``err`` names is a threshold's (an integer or a share: ``70%``)."""
    return "%" in str(err.get("ctx", {}).get("pattern", ""))


def _allowed_keys(model: type[BaseModel], loc: Sequence[Any]) -> list[str]:
    """Field names of the (sub)model at ``loc``, for a 'did you mean' on unknown keys."""
    current: type[BaseModel] | None = model
    for step in loc:
        if isinstance(step, int) or not (
            isinstance(current, type) and issubclass(current, BaseModel)
        ):
            continue
        field = current.model_fields.get(str(step))
        if field is None:
            continue  # a dict key such as a profile name
        current = _model_in(field.annotation)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_in(arg)
        if found is not None:
            return found
    return None
