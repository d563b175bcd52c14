"""A state from JSON text, with errors at file:line:col; a state the program built, checked.

The text is parsed strictly (:mod:`clm_policy.formats.jsonio`) and read by the generated
reader (:func:`~clm_policy.models.state.read_state`), without pydantic. Only a state it
refuses is shown to pydantic, which says where it is wrong.
"""

from __future__ import annotations

from clm_policy.base.errors import InputError, Location, StateError
from clm_policy.formats.jsonio import JsonDocument, check_depth, parse_json
from clm_policy.models.state import read_state

TYPE_CHECKING = False
if TYPE_CHECKING:  # pydantic is imported where a state is refused
    from collections.abc import Mapping
    from typing import Any, NoReturn

    from pydantic_core import ErrorDetails

    from clm_policy.models.state import SessionState


LONG = 64
"""A list longer than this is narrowed down before pydantic says what is wrong with it."""


def parse_state(text: str, file: str, *, narrow: bool = True) -> SessionState:
    """The state in JSON ``text`` (strict JSON types: "5" is no integer).

    A state that is not valid is refused at the ``file:line:col`` of its first problem, in
    pydantic's words. With ``narrow`` (the default), pydantic is asked about a smaller
    document first: each long list cut to the first item the reader refused (what it says
    of that item is what it says of the whole). When that does not find the problem (it is
    not in a list), the whole document is validated."""
    if not text.strip():
        raise StateError("empty input: expected a SessionState JSON object", Location(file, 1, 1))
    try:
        data = parse_json(text, file)
    except InputError as exc:
        error = StateError(exc.message, exc.location)
        error.excerpt = exc.excerpt
        raise error from None
    refused: dict[str, int] = {}
    found = read_state(data, refused)
    if found is None:
        refuse(text, file, data, refused if narrow else None)
    return found


def refuse(text: str, file: str, data: Any, refused: dict[str, int] | None) -> NoReturn:
    """Raise what is wrong with the state ``data`` (parsed from ``text``), which the reader
    refused, at its place in ``file``; ``refused``: where the reader refused an item of a
    list (``read_state``'s), to narrow the document down by, or None to validate it whole."""
    import json

    from pydantic import ValidationError

    from clm_policy.models.shapes.state import SessionState as Declared

    narrowed = _narrowed(data, refused) if refused else None
    if narrowed is not None:
        reduced, where = narrowed
        try:
            Declared.model_validate_json(json.dumps(reduced), strict=True)
        except ValidationError as exc:
            _refuse(text, file, data, _placed(exc.errors(include_url=False), where))
        # accepted cut down: the problem is elsewhere, the whole document says where
    try:
        Declared.model_validate_json(text, strict=True)
    except ValidationError as exc:
        _refuse(text, file, data, exc.errors(include_url=False))
    # the declaration accepts what the reader refused: a test holds that this never happens
    raise StateError("the state is valid, but clm-policy cannot read it", Location(file))


def state_from(data: Mapping[str, Any], what: str = "the state") -> SessionState:
    """The state of JSON ``data`` (a compacted state, a state about to be written, a caller's
    dict); a :class:`StateError` naming ``what`` and the field when it is not valid."""
    found = read_state(data)
    if found is None:
        import json

        try:
            refuse(json.dumps(data), what, data, None)
        except StateError as exc:
            raise StateError(f"{what}: {exc.message}") from None
    return found


def _refuse(text: str, file: str, data: Any, errors: list[ErrorDetails]) -> NoReturn:
    """Raise the first of pydantic's ``errors`` about ``data`` (the JSON ``text``) by its
    place in the text."""
    from clm_policy.formats.validate import locate_errors  # (brings the YAML parser)
    from clm_policy.models.shapes.state import SessionState as Declared

    if any(e["type"] == "json_invalid" or isinstance(e["input"], dict | list) for e in errors):
        # a container where the model has none (or pydantic's own recursion limit): the
        # document may nest deeper than any state does
        try:
            check_depth(data, text, file)
        except InputError as deep:
            raise StateError(deep.message, deep.location).quoting(text) from None
    located = locate_errors(JsonDocument(file, text, data), errors, Declared)
    raise StateError(located[0].message, located[0].location).quoting(text)


def _narrowed(
    data: object, refused: dict[str, int]
) -> tuple[dict[str, Any], dict[str, int]] | None:
    """``data`` with every long list cut to the item the reader ``refused`` in it (a list
    it accepted whole, emptied), and the index each kept item had; None when that says
    nothing (no long list refused, or the rest of the state refused too)."""
    if type(data) is not dict:
        return None
    lists = {k: v for k, v in data.items() if type(v) is list and len(v) > LONG}
    where = {key: refused[key] for key in lists if key in refused}
    if not where:
        return None
    reduced = {**data, **{key: [] for key in lists}}
    if read_state(reduced) is None:
        return None
    for key, index in where.items():
        reduced[key] = [lists[key][index]]
    return reduced, where


def _placed(errors: list[ErrorDetails], where: dict[str, int]) -> list[ErrorDetails]:
    """Pydantic's ``errors`` about a narrowed state, each at its place in the whole one."""
    out = []
    for error in errors:
        loc = error["loc"]
        if len(loc) >= 2 and loc[0] in where and loc[1] == 0:
            error = {**error, "loc": (loc[0], where[str(loc[0])], *loc[2:])}
        out.append(error)
    return out
