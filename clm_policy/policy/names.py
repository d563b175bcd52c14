"""The names a policy expression may read, with their types.

Every name is resolved when a policy is loaded, so evaluation never meets an unknown name.
The names read straight from a state field are declared with the field (models/state.py;
generated into models/plain.py); the derived ones and the profile's are here. The values are
computed from a state by :meth:`clm_policy.policy.engine.Policy.namespace` — plain numbers,
strings, booleans and None.
"""

from __future__ import annotations

from clm_policy.models.fields import NameInfo
from clm_policy.models.plain import DIRECT_NAMES

__all__ = [
    "DERIVED_NAMES",
    "GROUPS",
    "PROFILE_NAMES",
    "SIGNAL_TYPES",
    "STATE_NAMES",
    "NameInfo",
    "known_names",
    "signal_value_fits",
    "suggest",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping


DERIVED_NAMES: Mapping[str, NameInfo] = {
    "tokens.window": NameInfo(
        "int|None", "context window: state, else the policy's models table, else the profile"
    ),
    "tokens.ratio": NameInfo("float|None", "tokens.context / tokens.window"),
    "steps_since_compact": NameInfo(
        "int", "steps since the last compaction, or since the session start if none"
    ),
    "compacted_before": NameInfo("bool", "whether this session has compacted before"),
    "message_count": NameInfo("int", "messages in the context"),
    "blocker_count": NameInfo("int", "open blockers recorded in the state"),
}
"""Names the engine works out from several fields (:meth:`Policy.namespace`)."""

STATE_NAMES: Mapping[str, NameInfo] = {**DIRECT_NAMES, **DERIVED_NAMES}
"""Every name of a state: read straight from a field (declared in models/state.py, see
models/plain.py), or derived."""

PROFILE_NAMES: Mapping[str, NameInfo] = {
    "profile.name": NameInfo("str", "the task profile deciding"),
    "profile.soft_compact": NameInfo("int", "compaction threshold, in tokens"),
    "profile.hard_handoff": NameInfo("int", "handoff threshold, in tokens"),
    "profile.min_steps_between_compacts": NameInfo("int", "steps to wait between compactions"),
    "profile.prefer_handoff_on_phase": NameInfo("bool", "hand off at phase boundaries"),
    "profile.retain_recent_messages": NameInfo("int", "messages a compaction keeps"),
    "profile.context_window": NameInfo("int|None", "the profile's declared context window"),
}

GROUPS = ("tokens", "profile", "signals")

SIGNAL_TYPES = {"bool": "bool", "int": "int", "float": "float", "str": "str"}


def known_names(signal_types: Mapping[str, str]) -> dict[str, NameInfo]:
    """All names a policy with these declared signals may read."""
    names = dict(STATE_NAMES)
    names.update(PROFILE_NAMES)
    for signal, kind in signal_types.items():
        names[f"signals.{signal}"] = NameInfo(SIGNAL_TYPES[kind], f"signal {signal}")
    return names


_LONGEST_GUESS = 200


def suggest(name: str, candidates: Iterable[str]) -> str:
    """A ``; did you mean 'x'?`` suffix, or an empty string when nothing is close."""
    if len(name) > _LONGEST_GUESS:
        return ""  # no name is that long; difflib would only take its time to say so
    import difflib  # only when a name is wrong

    pool = list(candidates)
    close = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    if not close and "." in name:
        # a misspelt group or field alone: compare the last part too
        tail = name.rsplit(".", 1)[1]
        by_tail = {c.rsplit(".", 1)[-1]: c for c in pool}
        hit = difflib.get_close_matches(tail, list(by_tail), n=1, cutoff=0.75)
        close = [by_tail[hit[0]]] if hit else []
    return f"; did you mean '{close[0]}'?" if close else ""


def signal_value_fits(kind: str, value: object) -> bool:
    """Whether ``value`` is of signal type ``kind`` (an int is a float; a bool is no int)."""
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "float":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, str)
