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
    from typing import Any

    from clm_policy.models.plain import FigureState, PlainMessage, PlainState
    from clm_policy.models.state import Message, SessionState

    AnyState = SessionState | PlainState
    """A whole state, either kind: what reads only its fields takes both."""
    AnyMessage = Message | PlainMessage


def parse_state(text: str, file: str) -> SessionState:
    """Validate JSON ``text`` as a SessionState (strict JSON types: "5" is no integer)."""
    if not text.strip():
        raise StateError("empty input: expected a SessionState JSON object", Location(file, 1, 1))
    try:
        data = parse_json(text, file)
    except InputError as exc:
        raise StateError(exc.message, exc.location) from None
    from pydantic import ValidationError

    from clm_policy.models.state import SessionState

    try:
        return SessionState.model_validate_json(text, strict=True)
    except ValidationError as exc:
        # Only on failure: find where in the text. (Imported here: the validation helpers
        # bring the YAML parser, which the fast path does without.)
        from clm_policy.formats.validate import located_errors

        if any(
            e["type"] == "json_invalid" or isinstance(e["input"], dict | list)
            for e in exc.errors(include_url=False)
        ):
            # a container where the model has none (or pydantic's own recursion limit): the
            # document may nest deeper than any state does
            try:
                check_depth(data, text, file)
            except InputError as deep:
                raise StateError(deep.message, deep.location) from None
        errors = located_errors(JsonDocument(file, text, data), exc, SessionState)
    raise StateError(errors[0].message, errors[0].location)


def plain_state_of(text: str, file: str) -> FigureState | None:
    """The state in JSON ``text`` when it is plainly valid — what :func:`parse_state` would
    accept, checked without pydantic (clm_policy.models.plain) —, else None: then
    :func:`parse_state` validates it and says what is wrong."""
    from clm_policy.models.plain import plain_state

    try:
        data = parse_json(text, file)
    except InputError:
        return None
    return plain_state(data)


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
