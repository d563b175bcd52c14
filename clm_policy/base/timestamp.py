"""The one way a time is written into a memory repository: ``2026-08-04T12:00:00Z``.

Manifests, compaction documents and session records carry it; it lives here, free of the
models, so that a compaction written without pydantic writes the same text.
"""

from __future__ import annotations

from clm_policy.base.errors import InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import UTC, datetime
else:
    try:  # the C module itself: `datetime` defines its pure-Python twin first
        from _datetime import UTC, datetime
    except ImportError:  # an interpreter without it
        from datetime import UTC, datetime


def utc_now() -> datetime:
    """The time now, aware, in UTC: ``datetime.now(UTC)``."""
    return datetime.now(UTC)


def format_timestamp(now: datetime) -> str:
    """``now`` as a manifest timestamp, ``2026-08-04T12:00:00Z`` (UTC, whole seconds).

    A naive datetime is refused: its zone is unknown, and guessing the local one would make
    the same call give different text on different machines.
    """
    if now.tzinfo is None or now.utcoffset() is None:
        raise InputError(f"timestamp needs a timezone-aware datetime, got naive {now.isoformat()}")
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
