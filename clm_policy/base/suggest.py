"""``did you mean`` for a misspelt name: the one place that guesses."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

_LONGEST_GUESS = 200


def suggest(name: str, candidates: Iterable[str]) -> str:
    """A ``; did you mean 'x'?`` suffix, or an empty string when nothing is close."""
    close = closest(name, candidates)
    return f"; did you mean '{close}'?" if close is not None else ""


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate ``name`` most likely misspells, or None when nothing is close."""
    if len(name) > _LONGEST_GUESS:
        return None  # no name is that long; difflib would only take its time to say so
    import difflib  # only when a name is wrong

    pool = list(candidates)
    close = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    if not close and "." in name:
        # a misspelt group or field alone: compare the last part too
        tail = name.rsplit(".", 1)[1]
        by_tail = {c.rsplit(".", 1)[-1]: c for c in pool}
        hit = difflib.get_close_matches(tail, list(by_tail), n=1, cutoff=0.75)
        close = [by_tail[hit[0]]] if hit else []
    return close[0] if close else None
