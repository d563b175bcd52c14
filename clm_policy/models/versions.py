"""The schema versions of the documents a memory repository keeps — handoff manifests and
``sessions/<id>/state.json`` — and how a document of an older version is read as the current
one (a document without ``schema_version`` is version 1).

:data:`UPGRADES` is the one table: for each kind, the function that turns version ``n`` into
``n + 1``, in order. A new optional field is one line, the upgrade that fills its default::

    MANIFEST: (added(), added(done=[])),   # version 3: manifests gain `done`

Readers call :func:`upgrade` before validating; ``clm-policy migrate`` rewrites a repository's
documents in the current version.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from clm_policy.base.errors import InputError

MANIFEST = "handoff-manifest"
STATE = "session-state"
KEY = "schema_version"

Upgrade = Callable[[dict[str, Any]], dict[str, Any]]


def added(**defaults: Any) -> Upgrade:
    """An upgrade that adds ``defaults`` as fields (a field already there is kept)."""

    def upgrade(data: dict[str, Any]) -> dict[str, Any]:
        return {**data, **{k: copy.deepcopy(v) for k, v in defaults.items() if k not in data}}

    return upgrade


UPGRADES: dict[str, tuple[Upgrade, ...]] = {
    # version 1 -> 2 (2026-12): the version itself; the fields a handoff from a real session
    # adds (requests, done, remaining, open failures, moved and deleted files, …) are optional,
    # their defaults come from the model
    MANIFEST: (
        added(),
        # version 2 -> 3 (2026-12): the agent's words whole (agent_words) and the record beside
        # them (record); both optional
        added(),
    ),
    STATE: (added(),),
}


def current(kind: str) -> int:
    """The version clm-policy writes documents of ``kind`` in."""
    return len(UPGRADES[kind]) + 1


MANIFEST_VERSION = current(MANIFEST)
STATE_VERSION = current(STATE)


class Upgraded:
    """A document read as the current version: its data, the version it was written in, and
    whether that is older (``upgraded``)."""

    __slots__ = ("data", "found", "kind")

    def __init__(self, kind: str, data: dict[str, Any], found: int) -> None:
        self.kind = kind
        self.data = data
        self.found = found

    @property
    def upgraded(self) -> bool:
        return self.found < current(self.kind)

    def note(self, where: str) -> str:
        """The one line a reader says when it upgraded the document at ``where``."""
        return (
            f"{where}: schema version {self.found}, read as version {current(self.kind)} "
            "(clm-policy migrate rewrites the repository's documents)"
        )


def upgrade(kind: str, data: Mapping[str, Any], where: str) -> Upgraded:
    """``data`` (a document of ``kind``, JSON data) as the current version. The version it was
    written in is 1 without ``schema_version``; one this clm-policy cannot read is an
    :class:`InputError` naming ``where``."""
    found = data.get(KEY, 1)
    newest = current(kind)
    if type(found) is not int or found < 1:
        raise InputError(f"{where}: schema_version must be a whole number from 1, got {found!r}")
    if found > newest:
        raise InputError(
            f"{where}: schema version {found} is newer than this clm-policy reads (up to "
            f"{newest}): upgrade clm-policy"
        )
    result = dict(data)
    for version in range(found, newest):
        result = UPGRADES[kind][version - 1](result)
        result[KEY] = version + 1
    return Upgraded(kind, result, found)
