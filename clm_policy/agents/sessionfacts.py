"""What clm-policy learns about a running agent session between two of its calls.

Each session's facts are a small JSON object in a private file of the cache directory
(``sessions/<sha256 of the session id>.<kind>.json``: the user's own, ``0600``, atomic). Two
kinds, one writer each, so a status-line refresh and a hook never overwrite each other's
facts: ``window`` (the status line: the window, which hooks never get) and ``hook`` (what the
hooks note for each other). Best effort: a fact that cannot be read is unknown; nothing here
raises.
"""

from __future__ import annotations

import json
import os
import time

from clm_policy.base.digest import sha256_hex
from clm_policy.base.privatefiles import cache_dir, private_dir, read_private, write_private

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

KINDS = ("window", "hook")
LIMIT = 16 * 1024
KEEP_SECONDS = 30 * 24 * 3600  # facts untouched this long go when a new session's are written


def _where(session_id: str, kind: str) -> tuple[str, str] | None:
    if kind not in KINDS:
        raise ValueError(f"unknown kind of session facts: {kind!r}")
    base = cache_dir()
    if base is None or not session_id:
        return None
    key = sha256_hex(session_id.encode("utf-8", "surrogateescape"))[:32]
    return os.path.join(base, "sessions"), f"{key}.{kind}.json"


def read_facts(session_id: str, kind: str) -> dict[str, Any]:
    where = _where(session_id, kind)
    if where is None or not private_dir(where[0]):
        return {}
    return json_object(read_private(os.path.join(*where), LIMIT), LIMIT)


def json_object(raw: bytes | None, limit: int) -> dict[str, Any]:
    """The JSON object ``raw`` holds, up to ``limit`` bytes; else ``{}``."""
    if raw is None or len(raw) > limit:
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def update_facts(session_id: str, kind: str, **changes: Any) -> None:
    """Record ``changes`` among the session's ``kind`` facts (None removes the fact)."""
    where = _where(session_id, kind)
    if where is None:
        return
    folder, name = where
    current = read_facts(session_id, kind)
    updated = {k: v for k, v in {**current, **changes}.items() if v is not None}
    if updated == current:
        return
    fresh = not current and not os.path.lexists(os.path.join(folder, name))
    if write_private(folder, name, json.dumps(updated, separators=(",", ":"))) and fresh:
        _prune(folder, name)


def _prune(folder: str, keep: str) -> None:

    cutoff = time.time() - KEEP_SECONDS
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name == keep or not entry.name.endswith(".json"):
                    continue
                if entry.is_file(follow_symlinks=False) and entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)
    except OSError:
        pass
