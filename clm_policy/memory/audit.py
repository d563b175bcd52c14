"""The audit trail: the memory repository's commits, read with one ``git log`` call.

Each clm-policy commit carries ``Clm-*`` trailers; git formats them itself
(``%(trailers:key=...,valueonly)``), so reading 10,000 commits is one process and no
per-commit object access.
"""

from __future__ import annotations

from dataclasses import dataclass

from clm_policy.memory.gitwrite import MemoryRepo
from clm_policy.memory.trailers import TRAILER_KEYS

_FIELD = "\x1f"
_RECORD = "\x1e"


@dataclass(frozen=True)
class AuditEntry:
    commit: str
    date: str
    subject: str
    trailers: dict[str, str]

    @property
    def event(self) -> str:
        return self.trailers.get("Clm-Event", "")

    @property
    def session(self) -> str:
        return self.trailers.get("Clm-Session", "")

    def as_dict(self) -> dict[str, object]:
        return {
            "commit": self.commit,
            "date": self.date,
            "subject": self.subject,
            "event": self.event,
            "session": self.session,
            "trailers": dict(self.trailers),
        }


def read_log(
    repo: MemoryRepo,
    *,
    session: str | None = None,
    event: str | None = None,
    limit: int | None = None,
    rev: str = "HEAD",
) -> list[AuditEntry]:
    """clm-policy commits, newest first, filtered by session and event."""
    placeholders = [f"%(trailers:key={k},valueonly,separator=%x2C)" for k in TRAILER_KEYS]
    fmt = _FIELD.join(["%H", "%aI", "%s", *placeholders]) + _RECORD
    args = ["log", f"--format={fmt}", rev]
    if session is not None:
        args.insert(1, f"--grep=^Clm-Session: {session}$")
    if event is not None:
        args.insert(1, f"--grep=^Clm-Event: {event}$")
        if session is not None:
            args.insert(1, "--all-match")
    if repo.head() is None:
        return []
    out = repo.git(*args)
    entries: list[AuditEntry] = []
    for record in out.split(_RECORD):
        record = record.strip("\n")
        if not record:
            continue
        commit, date, subject, *values = record.split(_FIELD)
        trailers = {k: v.strip() for k, v in zip(TRAILER_KEYS, values, strict=False) if v.strip()}
        if "Clm-Event" not in trailers:
            continue  # not written by clm-policy
        if session is not None and trailers.get("Clm-Session") != session:
            continue
        if event is not None and trailers.get("Clm-Event") != event:
            continue
        entries.append(AuditEntry(commit, date, subject, trailers))
        if limit is not None and len(entries) >= limit:
            break
    return entries
