"""What the hooks note about a session between two of their calls, and what they have said.

A hook call sees one event: whether this turn's prompt hook asked for a handoff, whether the
person was told of one, the model SessionStart named — each is noted here by one call and read
by a later one (:class:`Notes`, the session's ``hook`` facts of
:mod:`clm_policy.agents.sessionfacts`). What the project's configuration may not choose until
the person trusts it is said once per session and content of the file (:func:`not_said`).
Best effort, like the facts: nothing here raises for a file it cannot read.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from clm_policy.config.trust import IgnoredSettings

KIND = "hook"
NOTICES_NAME = "trust-notices.json"


class Notes:
    """The hooks' facts of one session (none when the agent names no session)."""

    __slots__ = ("session",)

    def __init__(self, session: str) -> None:
        self.session = session

    def facts(self) -> dict[str, Any]:
        """What the hooks noted about this session (``{}`` when nothing)."""
        from clm_policy.agents.sessionfacts import read_facts

        return read_facts(self.session, KIND) if self.session else {}

    def note(self, **changes: Any) -> None:
        """Note ``changes`` among this session's facts (a value None removes the fact)."""
        from clm_policy.agents.sessionfacts import update_facts

        if self.session:
            update_facts(self.session, KIND, **changes)


def not_said(session: str, ignored: list[IgnoredSettings]) -> list[IgnoredSettings]:
    """Those of ``ignored`` this session has not been told of (for the file's content now),
    marked as told. Kept in a private file of the user's state; without it, said again."""
    import json

    from clm_policy.agents.logfile import log_path as path_of
    from clm_policy.base.digest import sha256_hex
    from clm_policy.base.privatefiles import read_private, write_private

    where = path_of(NOTICES_NAME)
    try:
        said = json.loads(read_private(where, 64 * 1024) or b"[]")
    except ValueError:
        said = []
    said = [k for k in said if isinstance(k, str)] if isinstance(said, list) else []
    fresh = []
    for found in ignored:
        key = sha256_hex(
            "\0".join((session, found.path, found.digest, *found.keys)).encode("utf-8")
        )[:32]
        if key not in said:
            fresh.append(found)
            said.append(key)
    if fresh:
        write_private(os.path.dirname(where), NOTICES_NAME, json.dumps(said[-500:]))
    return fresh
