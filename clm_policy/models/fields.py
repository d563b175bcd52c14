"""What the state's declaration says besides pydantic's types: which fields rules read.

A field the engine reads carries a :class:`Reads` in its ``Annotated`` metadata (pydantic
ignores it), from which :mod:`clm_policy.models.generate` writes the names rules read. The
rules a state obeys across fields (:data:`STATE_CHECKS`) live here too, as plain functions, so
that the pydantic model and the generated reader apply the same ones.
"""

from __future__ import annotations

from clm_policy.base.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class Reads(Record):
    """Marks a field the engine reads. ``name``: the name rules read it as (None when rules
    see it only through a derived name, e.g. ``messages`` as ``message_count``); ``doc``:
    what that name means (the policy docs' table)."""

    name: str | None = None
    doc: str = ""


class NameInfo(Record):
    """A name rules may read: its type (``int``, ``float``, ``bool`` or ``str``, with
    ``|None`` when it may be missing) and what it means."""

    type: str
    doc: str


def compact_not_in_future(state: Any) -> str | None:
    """A compaction cannot have happened after the step the session is at."""
    last, step = state.last_compact_step, state.step_index
    if last is not None and last > step:
        return f"last_compact_step ({last}) is after step_index ({step})"
    return None


STATE_CHECKS: tuple[Callable[[Any], str | None], ...] = (compact_not_in_future,)
"""Checks of a state across its fields (read by attribute: the declaration's model or the
plain class): each returns what is wrong, or None."""


def default_misfit(kind: str, value: object) -> str | None:
    """Why ``value`` cannot be the default of a signal of type ``kind`` (with what to write
    when it is the right value quoted), or None when it fits."""
    if signal_value_fits(kind, value):
        return None
    from clm_policy.base.errors import quote

    named = {"int": "an int", "bool": "a bool", "float": "a float"}.get(kind, "a string")
    text = value.strip() if isinstance(value, str) else None
    hint = ""
    if (
        text is not None
        and kind in ("int", "float")
        and text.lstrip("-").replace(".", "", 1).isdigit()
    ):
        hint = f" (write it without quotes: {text})"
    elif text is not None and kind == "bool" and text.lower() in ("true", "false"):
        hint = f" (write it without quotes: {text.lower()})"
    return f"default {quote(value)} is not {named}{hint}"


def signal_value_fits(kind: str, value: object) -> bool:
    """Whether ``value`` is of signal type ``kind`` (an int is a float; a bool is no int)."""
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "float":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, str)
