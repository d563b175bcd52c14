"""A SessionState from JSON text, with errors at file:line:col.

The text (read with the state size limit by :mod:`clm_policy.lifecycle.sources`, the one
reader of a command's state) is parsed strictly (:mod:`clm_policy.formats.jsonio`: no duplicate
keys, NaN or infinities, at most 64 levels) and validated by pydantic; only when validation
fails is the text scanned again to say where. :func:`plain_state_of` checks a plainly valid
state without pydantic, and :func:`read_plain_session` reads a whole one so (pydantic only
says what is wrong with one it refuses). :func:`plain_of` and :func:`model_of` turn a
:class:`~clm_policy.models.state.SessionState` into the
:class:`~clm_policy.models.plain.PlainState` the compaction works on, and back.
"""

from __future__ import annotations

from clm_policy.base.errors import InputError, Location, StateError
from clm_policy.formats.jsonio import JsonDocument, check_depth, parse_json

TYPE_CHECKING = False
if TYPE_CHECKING:  # pydantic is imported where a state is validated in full
    from typing import Any, NoReturn

    from pydantic_core import ErrorDetails

    from clm_policy.models.plain import FigureState, PlainMessage, PlainState
    from clm_policy.models.state import Message, SessionState

    AnyState = SessionState | PlainState
    """A whole state, either kind: what reads only its fields takes both."""
    AnyMessage = Message | PlainMessage


LONG = 64
"""A list longer than this is narrowed down before pydantic says what is wrong with it."""
_REFUSED: list[tuple[str, object]] = []
"""The text :func:`plain_state_of` parsed and refused, with its data, for the
:func:`parse_state` that follows it (the one reader of a command's state calls the two in
turn): a large state is parsed once, not twice."""


def parse_state(text: str, file: str, *, narrow: bool = True) -> SessionState:
    """Validate JSON ``text`` as a SessionState (strict JSON types: "5" is no integer).

    A state that does not validate is refused at the ``file:line:col`` of its first problem,
    in pydantic's words. With ``narrow`` (the default), pydantic is asked about a smaller
    document first: each long list cut to the first item the generated check refuses
    (clm_policy.models.plain) — what it says of that item is what it says of the whole, and
    a state of 40,000 messages with one bad one is refused about as fast as a valid one is
    read. When that does not find the problem (the check is stricter than the model, or the
    problem is not in a list), the whole document is validated."""
    if not text.strip():
        raise StateError("empty input: expected a SessionState JSON object", Location(file, 1, 1))
    refused = _REFUSED.pop() if _REFUSED else None
    if refused is not None and refused[0] is text:
        data = refused[1]
    else:
        try:
            data = parse_json(text, file)
        except InputError as exc:
            raise StateError(exc.message, exc.location) from None
    from pydantic import ValidationError

    from clm_policy.models.state import SessionState

    narrowed = _narrowed(data) if narrow else None
    if narrowed is not None:
        import json

        reduced, where = narrowed
        try:
            SessionState.model_validate_json(json.dumps(reduced), strict=True)
        except ValidationError as exc:
            _refuse(text, file, data, _placed(exc.errors(include_url=False), where))
        # accepted cut down: the problem is elsewhere, the whole document says where
    try:
        return SessionState.model_validate_json(text, strict=True)
    except ValidationError as exc:
        _refuse(text, file, data, exc.errors(include_url=False))


def _refuse(text: str, file: str, data: Any, errors: list[ErrorDetails]) -> NoReturn:
    """Raise the first of pydantic's ``errors`` about ``data`` (the JSON ``text``) by its
    place in the text."""
    # (Imported here: the validation helpers bring the YAML parser, which the fast path does
    # without.)
    from clm_policy.formats.validate import locate_errors
    from clm_policy.models.state import SessionState

    if any(e["type"] == "json_invalid" or isinstance(e["input"], dict | list) for e in errors):
        # a container where the model has none (or pydantic's own recursion limit): the
        # document may nest deeper than any state does
        try:
            check_depth(data, text, file)
        except InputError as deep:
            raise StateError(deep.message, deep.location) from None
    located = locate_errors(JsonDocument(file, text, data), errors, SessionState)
    raise StateError(located[0].message, located[0].location)


def _narrowed(data: object) -> tuple[dict[str, Any], dict[str, int]] | None:
    """``data`` with every long list cut to the first item the plain check refuses (a list
    it accepts whole, emptied), and the index each kept item had; None when that says
    nothing (no long list, the rest of the state refused, or no item refused)."""
    from clm_policy.models.plain import plain_state

    if type(data) is not dict:
        return None
    lists = {k: v for k, v in data.items() if type(v) is list and len(v) > LONG}
    if not lists:
        return None
    base = {**data, **{key: [] for key in lists}}
    if plain_state(base) is None:
        return None
    reduced, where = dict(base), {}
    for key, items in lists.items():
        first = _first_refused(base, key, items)
        if first is not None:
            reduced[key], where[key] = [items[first]], first
    return (reduced, where) if where else None


def _first_refused(base: dict[str, Any], key: str, items: list[Any]) -> int | None:
    """The index of the first of ``items`` the plain check refuses as ``base``'s ``key``
    (checked in runs of 4,096, then 64, then one: each item about once), or None."""
    from clm_policy.models.plain import plain_state

    lo, hi = 0, len(items)
    for size in (4096, 64, 1):
        for start in range(lo, hi, size):
            if plain_state({**base, key: items[start : start + size]}) is None:
                lo, hi = start, min(start + size, hi)
                break
        else:
            return None
    return lo


def _placed(errors: list[ErrorDetails], where: dict[str, int]) -> list[ErrorDetails]:
    """Pydantic's ``errors`` about a narrowed state, each at its place in the whole one."""
    out = []
    for error in errors:
        loc = error["loc"]
        if len(loc) >= 2 and loc[0] in where and loc[1] == 0:
            error = {**error, "loc": (loc[0], where[str(loc[0])], *loc[2:])}
        out.append(error)
    return out


def plain_state_of(text: str, file: str) -> FigureState | None:
    """The state in JSON ``text`` when it is plainly valid — what :func:`parse_state` would
    accept, checked without pydantic (clm_policy.models.plain) —, else None: then
    :func:`parse_state` validates it and says what is wrong."""
    from clm_policy.models.plain import plain_state

    try:
        data = parse_json(text, file)
    except InputError:
        return None
    found = plain_state(data)
    if found is None:
        _REFUSED[:] = [(text, data)]  # parse_state says why, without parsing it again
    return found


def read_plain_session(text: str, file: str) -> PlainState:
    """The whole state in JSON ``text``: what :func:`parse_state` accepts, read without
    pydantic when it is plainly valid (always, for a state clm-policy wrote); otherwise
    :func:`parse_state` says where it is wrong (or, accepting it, gives the model read
    here)."""
    from clm_policy.models.plain import plain_session

    try:
        data = parse_json(text, file)
    except InputError:
        data = None
    found = plain_session(data) if data is not None else None
    if found is None:
        found = plain_of(parse_state(text, file))
    return found


def plain_of(state: SessionState | PlainState) -> PlainState:
    """``state`` as a :class:`~clm_policy.models.plain.PlainState` (itself when it is one)."""
    from clm_policy.models.plain import PlainState, plain_session

    if isinstance(state, PlainState):
        return state
    data = state.model_dump(mode="json")
    found = plain_session(data)
    if found is None:  # a model changed after it was validated: pydantic says what is wrong
        import json

        parse_state(json.dumps(data), "<state>")
        raise StateError("the state is not plainly valid", Location("<state>"))
    return found


def model_of(state: PlainState) -> SessionState:
    """The :class:`~clm_policy.models.state.SessionState` of a plain one."""
    from clm_policy.models.state import SessionState

    return SessionState.model_validate(state.as_dict())


def dump_state(state: AnyState) -> dict[str, Any]:
    """``state`` as JSON data: exactly its ``model_dump(mode="json")``, for either kind."""
    from clm_policy.models.plain import PlainState

    if isinstance(state, PlainState):
        return state.as_dict()
    return state.model_dump(mode="json")
