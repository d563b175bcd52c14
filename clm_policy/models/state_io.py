"""A SessionState from JSON text, with errors at file:line:col.

The text (read with the state size limit by :mod:`clm_policy.lifecycle.sources`, the one
reader of a command's state) is parsed strictly (:mod:`clm_policy.formats.jsonio`: no duplicate
keys, NaN or infinities, at most 64 levels) and validated by pydantic; only when validation
fails is the text scanned again to say where. :func:`plain_state_of` checks a plainly valid
state without pydantic.
"""

from __future__ import annotations

from clm_policy.base.errors import InputError, Location, StateError
from clm_policy.formats.jsonio import JsonDocument, check_depth, parse_json

TYPE_CHECKING = False
if TYPE_CHECKING:  # pydantic is imported where a state is validated in full
    from clm_policy.models.plain import FigureState
    from clm_policy.models.state import SessionState


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
