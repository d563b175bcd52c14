"""The names a policy expression may read, with their types.

Every name is resolved when a policy is loaded, so evaluation never meets an unknown name.
The names read straight from a state field are declared with the field
(models/shapes/state.py; generated into models/state.py); the derived ones and the profile's
are here. The values are computed from a state by
:meth:`clm_policy.policy.engine.Policy.namespace` — plain numbers, strings, booleans and None.
"""

from __future__ import annotations

from clm_policy.models.fields import NameInfo
from clm_policy.models.state import DIRECT_NAMES

__all__ = [
    "DERIVED_NAMES",
    "GROUPS",
    "PROFILE_NAMES",
    "SIGNAL_TYPES",
    "STATE_NAMES",
    "WINDOW_NAMES",
    "NameInfo",
    "known_names",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


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

WINDOW_NAMES = ("tokens.window", "tokens.ratio", "profile.context_window")
"""The names that are None when no window is known: the state gives none, nor the policy's
``models`` for its model, nor the profile (they are the names whose type may be None; a test
holds the two equal)."""

SIGNAL_TYPES = {"bool": "bool", "int": "int", "float": "float", "str": "str"}


def known_names(signal_types: Mapping[str, str]) -> dict[str, NameInfo]:
    """All names a policy with these declared signals may read."""
    names = dict(STATE_NAMES)
    names.update(PROFILE_NAMES)
    for signal, kind in signal_types.items():
        names[f"signals.{signal}"] = NameInfo(SIGNAL_TYPES[kind], f"signal {signal}")
    return names
