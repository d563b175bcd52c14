"""Where things live in a memory repository, and which memory keys are allowed."""

from __future__ import annotations

import functools
import os
import re

from clm_policy.base.errors import InputError, quote

EVENTS = (
    "init",
    "start",
    "compact",
    "handoff",
    "summary",
    "agent",
    "memory",
    "signal",
    "session",
    "migrate",
)
"""Every ``Clm-Event`` a clm-policy commit can carry (docs/memory.md)."""

MARKER = ".clm-memory"
INDEX = "MEMORY.md"
TOPICS = "topics"
SESSIONS = "sessions"
MANIFESTS = "manifests"

_KEY = re.compile(r"[A-Za-z0-9_-]+(?:/[A-Za-z0-9_-]+)*")
_SESSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
MAX_KEY = 200


def is_memory_repo(directory: str | os.PathLike[str]) -> bool:
    """Whether ``directory`` is a memory repository: it holds :data:`MARKER` and ``.git``."""
    return os.path.isfile(os.path.join(directory, MARKER)) and os.path.exists(
        os.path.join(directory, ".git")
    )


def is_key(key: str) -> bool:
    """Whether ``key`` is a valid memory key (see :func:`check_key`)."""
    return isinstance(key, str) and len(key) <= MAX_KEY and _KEY.fullmatch(key) is not None


def check_key(key: str) -> str:
    """``key`` if it is a valid memory key: ``[A-Za-z0-9_-]`` parts joined by ``/``.

    No ``..``, no absolute paths, no empty parts, nothing outside the topics folder, nothing
    a secret rule matches (a key is committed as written: it cannot be redacted).
    """
    if not is_key(key):
        close = _key_meant(key)
        meant = f" (did you mean {close!r}?)" if close is not None else ""
        raise InputError(
            f"invalid memory key {quote(key)}{meant}: use letters, digits, '_' and '-', parts "
            f"joined by '/' (at most {MAX_KEY} characters, no '..', no leading '/')"
        )
    return _not_secret("memory key", key)


def _key_meant(key: str) -> str | None:
    """The key of the file ``key`` names (``topics/decisions/db.md``,
    ``sessions/<id>/handoffs/001.md``: the key is the file's name without ``.md``, a topic's
    without ``topics/``), when it is a valid one; else None."""
    if not isinstance(key, str) or not key.endswith(".md"):
        return None
    stem = key.removesuffix(".md")
    stem = stem if handoff_of_key(stem) is not None else stem.removeprefix(f"{TOPICS}/")
    return stem if is_key(stem) else None


def is_session(session_id: str) -> bool:
    """Whether ``session_id`` is a valid session id (see :func:`check_session`)."""
    return (
        isinstance(session_id, str)
        and _SESSION.fullmatch(session_id) is not None
        and ".." not in session_id
    )


def check_session(session_id: str) -> str:
    """``session_id`` if it can name a folder: letters, digits, '.', '_', '-'; no '..'; and
    no secret rule matches it (it is committed as written)."""
    if not is_session(session_id):
        raise InputError(
            f"invalid session id {quote(session_id)} for the memory repository: use letters, "
            "digits, '.', '_' and '-' (at most 128, starting with a letter or digit)"
        )
    return _not_secret("session id", session_id)


@functools.lru_cache(maxsize=256)
def _not_secret(kind: str, value: str) -> str:
    from clm_policy.memory.change import check_identifier

    return check_identifier(kind, value)


def topic_path(key: str) -> str:
    return f"{TOPICS}/{check_key(key)}.md"


def session_dir(session_id: str) -> str:
    return f"{SESSIONS}/{check_session(session_id)}"


LOG_STEPS = 1000
"""Steps a session's log file holds (``decisions.jsonl``, ``metrics.jsonl``): a commit rewrites
only the newest file, so a long run's commits stay as quick as its first ones."""
_LOG = re.compile(r"(decisions|metrics)(?:\.steps-(\d{9}))?\.jsonl")


def log_file(kind: str, step: int) -> str:
    """The file of a session's log ``kind`` (``decisions`` or ``metrics``) that holds the
    record of ``step``: ``decisions.jsonl`` for the first :data:`LOG_STEPS` steps, then
    ``decisions.steps-000001000.jsonl`` and so on (names that sort in the order of the steps)."""
    first = step // LOG_STEPS * LOG_STEPS
    return f"{kind}.jsonl" if first <= 0 else f"{kind}.steps-{first:09d}.jsonl"


def log_kind(name: str) -> str | None:
    """The log a session file's ``name`` is a part of (:func:`log_file`), else None."""
    match = _LOG.fullmatch(name)
    return match[1] if match else None


def compaction_path(session_id: str, step: int) -> str:
    return f"{session_dir(session_id)}/compactions/{step:06d}.md"


def handoff_path(session_id: str, number: int) -> str:
    return f"{session_dir(session_id)}/handoffs/{number:03d}.md"


def handoff_key(path: str) -> str:
    """The key the MCP tool ``memory_read`` reads a handoff's file for people by
    (``sessions/<id>/handoffs/001.md`` -> ``sessions/<id>/handoffs/001``)."""
    return path.removesuffix(".md")


def handoff_of_key(key: str) -> str | None:
    """The handoff file a ``memory_read`` key names, or None when it names a topic (its
    number as the file has it, ``001``, or as a person counts, ``1``)."""
    parts = key.split("/")
    if len(parts) == 4 and parts[0] == SESSIONS and parts[2] == "handoffs" and parts[3].isdigit():
        return f"{SESSIONS}/{parts[1]}/handoffs/{int(parts[3]):03d}.md"
    return None


def manifest_path(filename: str) -> str:
    return f"{MANIFESTS}/{filename}"
