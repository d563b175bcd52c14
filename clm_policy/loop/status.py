"""The persisted sessions of a memory repository, summed up (``clm-policy status``).

One row per session: its status, step and context fill, the compactions and handoffs its
commits record, how the run stopped, a decision awaiting a person, and the last decisions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from clm_policy.errors import InputError


@dataclass
class Status:
    rows: list[dict[str, Any]]
    """One per session, in the repository's order (the one asked for alone, with five
    decisions rather than the last)."""
    skipped: list[tuple[str, InputError]] = field(default_factory=list)
    """Sessions left out of the overview because they cannot be read, and why."""


def session_status(memory: str, session: str | None = None) -> Status:
    """Every persisted session of ``memory``, or only ``session`` (then one that cannot be
    read raises its :class:`InputError` rather than being skipped)."""
    from clm_policy.memory.audit import read_log
    from clm_policy.memory.gitwrite import MemoryRepo
    from clm_policy.memory.sessions import last_decisions, load_session, session_ids

    out = Status(rows=[])
    with MemoryRepo(memory) as repo:
        ids = [session] if session else session_ids(repo)
        log = read_log(repo, rev="--all")
        for sid in ids:
            try:
                persisted = load_session(repo, sid)
            except InputError as exc:
                if session is not None:
                    raise
                out.skipped.append((sid, exc))
                continue
            s = persisted.state
            events = [e.event for e in log if e.session == sid]
            window = s.tokens.context_window
            out.rows.append(
                {
                    "session": sid,
                    "status": s.status.value,
                    "step": s.step_index,
                    "context_tokens": s.tokens.context_tokens,
                    "context_window": window,
                    "fill": round(s.tokens.context_tokens / window, 3) if window else None,
                    "compactions": events.count("compact"),
                    "handoffs": events.count("handoff"),
                    "stopped": persisted.stopped,
                    "parent_session": s.parent_session,
                    "pending": persisted.pending,
                    "last_decisions": last_decisions(repo, sid, 5 if session else 1),
                    "goal": s.goal,
                    "blockers": s.blockers,
                    "not_verified": s.not_verified,
                }
            )
    return out
