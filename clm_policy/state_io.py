"""Read a SessionState from JSON (a file or standard input), with errors at file:line:col."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from clm_policy.errors import Location, StateError
from clm_policy.models.state import SessionState
from clm_policy.textio import read_text


def parse_state(text: str, file: str) -> SessionState:
    """Validate JSON ``text`` as a SessionState (strict JSON types: "5" is no integer)."""
    if not text.strip():
        raise StateError("empty input: expected a SessionState JSON object", Location(file, 1, 1))
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        raise StateError(
            f"invalid JSON: {exc.msg}", Location(file, exc.lineno, exc.colno)
        ) from None
    try:
        return SessionState.model_validate_json(text, strict=True)
    except ValidationError as exc:
        # Only on failure: re-read with positions to say where the problem is. (Imported
        # here to keep the YAML parser off the fast path.)
        from clm_policy.validate import located_errors
        from clm_policy.yamlio import parse_yaml

        errors = located_errors(parse_yaml(text, file), exc, SessionState)
    raise StateError(errors[0].message, errors[0].location)


@dataclass(frozen=True)
class StateSource:
    """A state with the text it was read from, to place later errors in that text."""

    state: SessionState
    text: str
    file: str

    def locate(self, exc: StateError) -> StateError:
        """``exc`` with the location of its ``path`` in this state's file, when it has one."""
        if exc.location is not None or exc.path is None:
            return exc
        from clm_policy.yamlio import parse_yaml

        where = parse_yaml(self.text, self.file).location(exc.path, key=True)
        return StateError(exc.message, where, exc.path)


def read_state(source: str) -> StateSource:
    """Read a SessionState from a JSON file, or from standard input when ``source`` is '-'."""
    if source == "-":
        text, file = sys.stdin.read(), "<stdin>"
    else:
        text, file = read_text(Path(source)), source
    return StateSource(parse_state(text, file), text, file)
