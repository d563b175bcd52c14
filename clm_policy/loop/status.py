"""The persisted sessions of a memory repository, one row each (``clm-policy status``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clm_policy.base.errors import InputError

if TYPE_CHECKING:
    from clm_policy.memory.audit import AuditEntry
    from clm_policy.memory.git.write import MemoryRepo
    from clm_policy.memory.sessions import PersistedSession


@dataclass
class Status:
    rows: list[dict[str, Any]]
    skipped: list[tuple[str, InputError]] = field(default_factory=list)
    """Sessions left out because they cannot be read, and why."""
    notes: list[str] = field(default_factory=list)
    """One line per document read in an older schema version."""


def session_status(memory: str, session: str | None = None) -> Status:
    """Every persisted session of ``memory``, or only ``session`` (with five decisions rather
    than the last; one that cannot be read raises its :class:`InputError`)."""
    from clm_policy.memory.audit import read_log
    from clm_policy.memory.git.write import MemoryRepo
    from clm_policy.memory.sessions import last_decisions, load_session, session_ids

    out = Status(rows=[])
    with MemoryRepo(memory) as repo:
        ids = [session] if session else session_ids(repo)
        log = read_log(repo, rev="--all")
        for sid in ids:
            mine = [e for e in log if e.session == sid]
            try:
                persisted = load_session(repo, sid)
            except InputError as exc:
                if any(e.event == "agent" for e in mine):
                    out.rows.append(_row(sid, mine))
                    continue  # a hook session with its agents' records, no snapshot yet
                if session is not None:
                    raise
                out.skipped.append((sid, exc))
                continue
            if persisted.note:
                out.notes.append(persisted.note)
            s = persisted.state
            window = s.tokens.context_window
            out.rows.append(
                _row(
                    sid,
                    mine,
                    status=s.status.value,
                    step=s.step_index,
                    context_tokens=s.tokens.context_tokens,
                    context_window=window,
                    fill=round(s.tokens.context_tokens / window, 3) if window else None,
                    stopped=persisted.stopped,
                    parent_session=s.parent_session,
                    pending=persisted.pending,
                    last_decisions=last_decisions(repo, sid, 5 if session else 1, s.step_index),
                    goal=s.goal,
                    blockers=s.blockers,
                    not_verified=s.not_verified,
                )
            )
    return out


MOVED_ON = ("handoff", "start", "compact", "summary")


def handed_off(stopped: str | None, entries: list[AuditEntry]) -> bool:
    """Whether a session has handed off: its run stopped at a handoff, or its newest commit
    that moved it on (:data:`MOVED_ON`; ``entries``: newest first) is a handoff."""
    if stopped == "handoff":
        return True
    # a start, compaction or summary after any earlier handoff: the session went on
    moved = (e.event for e in entries if e.event in MOVED_ON)
    return next(moved, None) == "handoff"


ENDED = ("completed", "failed", "handoff")
"""How a session stops for good; any other stop (interrupted, max_steps, ...) can resume."""


def why_ended(repo: MemoryRepo, session_id: str, persisted: PersistedSession) -> str | None:
    """How ``session_id`` (persisted as ``persisted``) ended for good, one clause that
    ``run --resume`` and ``signal`` refuse it with: its run ended, or it was handed off after
    its run stopped (by hand, or by a hook); None while it can go on."""
    from clm_policy.memory.audit import read_log

    if persisted.stopped in ENDED:
        return f"session '{session_id}' ended ({persisted.stopped})"
    # the newest commit that moved the session on: a handoff there ended it
    moved = read_log(repo, session=session_id, event=MOVED_ON, limit=1)
    if handed_off(persisted.stopped, moved):
        return (
            f"session '{session_id}' was handed off after its run stopped (commit "
            f"{moved[0].commit[:12]})"
        )
    return None


def agents_of(entries: list[AuditEntry]) -> list[dict[str, Any]]:
    """The agents a session started, from their ``agent`` commits (newest record of each,
    oldest agent first)."""
    seen: dict[str, dict[str, Any]] = {}
    for e in reversed(entries):  # oldest first: a later record of an agent replaces it
        if e.event == "agent" and e.agent_id:
            seen[e.agent_id] = {
                "agent_id": e.agent_id,
                "agent_type": e.trailers.get("Clm-Agent-Type"),
                "memory_key": e.trailers.get("Clm-Key"),
                "commit": e.commit,
            }
    return list(seen.values())


def _row(sid: str, entries: list[AuditEntry], **known: Any) -> dict[str, Any]:
    """A session's row: what its commits record, and ``known``, what its state says (none
    for a hook session known only from its agents' records)."""
    events = [e.event for e in entries]
    return {
        "session": sid,
        "status": "unknown",
        "step": 0,
        "context_tokens": 0,
        "context_window": None,
        "fill": None,
        "compactions": events.count("compact"),
        "handoffs": events.count("handoff"),
        "handed_off": handed_off(known.get("stopped"), entries),
        "stopped": None,
        "parent_session": None,
        "pending": None,
        "last_decisions": [],
        "goal": "",
        "blockers": [],
        "not_verified": [],
        "agents": agents_of(entries),
        **last_recall(entries),
    } | known


RECALLS = ("Clm-Recall", "Clm-Recall-Agent")
"""The trailers that measure a summary: a model's summary (or the agent's own, at a
compaction) against the facts the state holds; an agent's handoff against the record."""


def last_recall(entries: list[AuditEntry]) -> dict[str, Any]:
    """``recall``, ``recall_facts`` (``"13/14"``), ``recall_event`` and ``recall_missing`` of
    the newest of ``entries`` with a readable recall trailer; all None when none has one."""

    import re

    for e in entries:
        key = next((k for k in RECALLS if k in e.trailers), RECALLS[0])
        m = re.fullmatch(r"[0-9.]+ \(([0-9]{1,9})/([0-9]{1,9})\)", e.trailers.get(key, ""))
        if m is None:
            continue  # none, or not written by clm-policy: commit messages are untrusted
        found, asked = int(m[1]), int(m[2])
        if found > asked:
            continue
        return {
            "recall": round(found / asked, 4) if asked else 1.0,
            "recall_facts": f"{found}/{asked}",
            "recall_event": e.event,
            "recall_missing": e.trailers.get(f"{key}-Missing") or None,
        }
    return {"recall": None, "recall_facts": None, "recall_event": None, "recall_missing": None}
