"""The quick paths' parser of their option tables (see :mod:`clm_policy.cli.fast`).

A table maps each option (long and short) to its destination and kind: ``"flag"``, ``"str"``,
``"multi"`` (repeatable), an int range ``(low, high)`` (``high`` None: unbounded), or a tuple
of choices. It takes ``--opt value``, ``--opt=value`` and ``-oVALUE`` as click does; anything
else — an option it does not know, ``--help``, an argument, a value click would refuse —
raises :class:`Declined`, and click runs the command from the start and reports it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


class Declined(Exception):
    """Not a command line a quick path answers: click takes it from the start."""


def defaults(options: Mapping[str, tuple[str, Any]], **given: Any) -> dict[str, Any]:
    """Each destination's value when no option sets it: ``given``'s, else False for a flag
    and None for the rest."""
    return {
        dest: given.get(dest, False if kind == "flag" else None) for dest, kind in options.values()
    }


def parse(
    args: list[str], options: Mapping[str, tuple[str, Any]], defaults: Mapping[str, Any]
) -> dict[str, Any]:
    """The values of ``args`` by destination, as click would give them."""
    values = dict(defaults)
    words = iter(args)
    for arg in words:
        name, eq, attached = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if not eq and len(arg) > 2 and arg[0] == "-" and arg[1] != "-":
            name, attached, eq = arg[:2], arg[2:], "="  # -t260000
        spec = options.get(name)
        if spec is None:
            raise Declined(arg)  # --help, an option for click alone, a typo, an argument
        dest, kind = spec
        if kind == "flag":
            if eq:
                raise Declined(arg)
            values[dest] = True
            continue
        raw = attached if eq else next(words, None)
        if raw is None:
            raise Declined(arg)  # click: "requires an argument"
        values[dest] = _convert(raw, kind, values[dest])
    return values


def _convert(raw: str, kind: Any, before: Any) -> Any:
    if kind == "str":
        if not raw.strip():
            raise Declined(raw)  # an empty value: click says what is wrong with it
        return raw
    if kind == "multi":
        return (*before, raw)
    if isinstance(kind, tuple) and len(kind) == 2 and isinstance(kind[0], int):
        try:
            number = int(raw)  # what click's INT does, so "1_000" and " 5" alike
        except ValueError:
            raise Declined(raw) from None
        low, high = kind
        if number < low or (high is not None and number > high):
            raise Declined(raw)
        return number
    if raw not in kind:
        raise Declined(raw)
    return raw
