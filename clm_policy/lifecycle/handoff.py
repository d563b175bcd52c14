"""Handoff: the manifest, its Markdown for people, and the messages a fresh session starts from.

All pure: the memory store validates (:func:`~clm_policy.models.manifest.validate_manifest`),
writes and commits what these functions return. A fresh session gets the manifest's summary
and the top memory entries, never the earlier transcript.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from pydantic import ValidationError

from clm_policy.base.errors import InputError
from clm_policy.lifecycle.summary import NONE, bullets, code_list, next_safe_action, paragraph
from clm_policy.models.enums import MessageRole, TaskStatus
from clm_policy.models.manifest import (
    HandoffManifest,
    ManifestStatus,
    format_timestamp,
    pydantic_problem,
)
from clm_policy.models.state import Message, SessionState, TokenSnapshot
from clm_policy.models.versions import MANIFEST_VERSION

NO_GOAL = "Unknown: the session recorded no goal; ask the user or read the source of truth"
"""The goal of a manifest whose session had none (the field must not be empty)."""
SEED_NAME = "clm-handoff"
MEMORY_NAME = "clm-memory"
MEMORY_CHARS = 2000
"""A memory entry in the seed messages is cut after this many characters."""
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def derive_status(state: SessionState) -> ManifestStatus:
    """The manifest status for ``state``.

    Any blocker, or a blocked or failed task: ``blocked``; completed: ``completed``; at a
    phase boundary (a phase done, the task not): ``partial_complete``; running or waiting:
    ``in_progress``.
    """
    if state.blockers or state.status in (TaskStatus.BLOCKED, TaskStatus.FAILED):
        return ManifestStatus.BLOCKED
    if state.status is TaskStatus.COMPLETED:
        return ManifestStatus.COMPLETED
    if state.status is TaskStatus.PHASE_BOUNDARY:
        return ManifestStatus.PARTIAL_COMPLETE
    return ManifestStatus.IN_PROGRESS


def build_manifest(
    state: SessionState,
    decision_rationale: str,
    *,
    now: datetime,
    status: ManifestStatus | None = None,
    next_action: str | None = None,
) -> HandoffManifest:
    """The handoff manifest of ``state`` at ``now`` (a timezone-aware datetime).

    Lists are copied from the state (memory keys without duplicates, first one kept); the
    token snapshot is the state's at handoff: ``context_tokens`` is what the window held,
    ``input/output/total_tokens`` are the session's cumulative figures. ``status`` defaults
    to :func:`derive_status`; ``next_safe_action`` is ``next_action`` (what the agent wrote)
    or else :func:`~clm_policy.lifecycle.summary.next_safe_action`; a session without a goal gets
    :data:`NO_GOAL`. Validated by pydantic; an invalid value (an empty rationale, a memory
    key like ``../x``) is an :class:`InputError` naming the field.
    """
    data = {
        "schema_version": MANIFEST_VERSION,
        "goal": state.goal if state.goal.strip() else NO_GOAL,
        "status": status or derive_status(state),
        "source_of_truth": list(state.source_of_truth),
        "changed_artifacts": list(state.changed_artifacts),
        "commands_and_results": list(state.commands_and_results),
        "verified": list(state.verified),
        "not_verified": list(state.not_verified),
        "assumptions_risks": list(state.assumptions_risks),
        "blockers": list(state.blockers),
        "next_safe_action": next_action or next_safe_action(state),
        "memory_keys": list(dict.fromkeys(state.memory_keys)),
        "token_snapshot": state.tokens.model_copy(),
        "timestamp": format_timestamp(now),
        "decision_rationale": decision_rationale,
    }
    try:
        return HandoffManifest.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"handoff manifest: {pydantic_problem(exc)}") from None


def _tokens(snapshot: TokenSnapshot) -> list[str]:
    context = f"context: {snapshot.context_tokens} tokens"
    if snapshot.context_window is not None:
        context += f" of a {snapshot.context_window} window"
    if snapshot.model is not None:
        context += f" ({snapshot.model})"
    if snapshot.estimated:
        context += ", estimated"
    return [
        f"- {context}",
        f"- cumulative: input {snapshot.input_tokens}, output {snapshot.output_tokens}, "
        f"total {snapshot.total_tokens}",
    ]


def render_manifest_markdown(manifest: HandoffManifest, *, session_id: str, step: int) -> str:
    """The handoff for people (``sessions/<id>/handoffs/<n>.md``): one heading per field.

    What the next session needs first (goal, status, next action, blockers, why) comes
    first; every field is present, ``(none)`` when empty, so handoffs diff alike.
    """
    m = manifest
    parts = [
        (f"Handoff: session {session_id}, step {step}", None),
        ("Goal", paragraph(m.goal)),
        ("Status", [f"`{m.status.value}`"]),
        ("Next safe action", paragraph(m.next_safe_action)),
        ("Blockers", bullets(m.blockers)),
        ("Decision rationale", paragraph(m.decision_rationale)),
        ("Not verified", bullets(m.not_verified)),
        ("Verified", bullets(m.verified)),
        ("Changed artifacts", bullets(m.changed_artifacts)),
        ("Commands and results", bullets(m.commands_and_results)),
        ("Source of truth", bullets(m.source_of_truth)),
        ("Assumptions and risks", bullets(m.assumptions_risks)),
        ("Memory keys", code_list(m.memory_keys)),
        ("Token snapshot", _tokens(m.token_snapshot)),
        ("Timestamp", [m.timestamp]),
    ]
    lines: list[str] = []
    for title, body in parts:
        lines += [f"# {title}", ""] if body is None else [f"## {title}", "", *body, ""]
    return "\n".join(lines).rstrip("\n") + "\n"


SEED_LIST_LIMIT = 20
"""Items of one list a seed carries at most (the newest); the manifest has them all."""


def _capped(items: Sequence[str], newest: bool = False) -> list[str]:
    """``items`` as seed bullets, at most :data:`SEED_LIST_LIMIT` (the first, or the newest
    with ``newest``), and a line saying how many more the manifest holds."""
    if len(items) <= SEED_LIST_LIMIT:
        return bullets(items)
    more = len(items) - SEED_LIST_LIMIT
    shown = items[-SEED_LIST_LIMIT:] if newest else items[:SEED_LIST_LIMIT]
    which = "earlier" if newest else "more"
    return [*bullets(shown), f"- … {more} {which} in the handoff manifest"]


def seed_text(
    manifest: HandoffManifest,
    *,
    constraints: Sequence[str] = (),
    decisions: Sequence[str] = (),
) -> str:
    """The system message a fresh session starts with: the manifest in brief — every fact it
    carries, each list cut at :data:`SEED_LIST_LIMIT` — and the earlier session's constraints
    and decisions (the manifest has no field for them; the state the handoff committed does)."""
    m = manifest
    lines = [
        "# Handoff: you continue the task of an earlier session",
        "",
        "The earlier session's transcript is not carried over; this is its state at handoff.",
        "",
        f"**Goal:** {' '.join(m.goal.split())}",
        "",
        f"**Status:** {m.status.value}",
        "",
        f"**Next safe action:** {' '.join(m.next_safe_action.split())}",
        "",
        "**Blockers:**",
        *_capped(m.blockers),
        "",
        "**Not verified:**",
        *_capped(m.not_verified),
        "",
        "**Verified:**",
        *_capped(m.verified),
        "",
    ]
    if constraints:
        lines += ["**Constraints:**", *_capped(constraints), ""]
    if decisions:
        lines += ["**Decisions:**", *_capped(decisions), ""]
    lines += [
        "**Changed artifacts:**",
        *_capped(m.changed_artifacts, newest=True),
        "",
        "**Commands and results:**",
        *_capped(m.commands_and_results, newest=True),
        "",
        "**Assumptions and risks:**",
        *_capped(m.assumptions_risks),
        "",
        "**Source of truth:**",
        *_capped(m.source_of_truth),
        "",
        "**Memory keys:**",
        *code_list(m.memory_keys),
    ]
    return "\n".join(lines) + "\n"


def memory_text(key: str, content: str, max_chars: int = MEMORY_CHARS) -> str:
    """One memory entry as a message: its key, then its content cut after ``max_chars``."""
    body = content.strip()
    if len(body) > max_chars:
        rest = len(body) - max_chars
        body = (
            f"{body[:max_chars].rstrip()}\n\n"
            f"… ({rest} more characters: read memory key `{key}` for the rest)"
        )
    return f"## Memory: `{key}`\n\n{body or NONE}\n"


def seed_messages(
    manifest: HandoffManifest,
    memory_hits: Sequence[tuple[str, str]],
    *,
    max_chars: int = MEMORY_CHARS,
    constraints: Sequence[str] = (),
    decisions: Sequence[str] = (),
) -> list[Message]:
    """What a fresh session starts from: the manifest in brief (with the earlier session's
    ``constraints`` and ``decisions``), then one message per memory hit ``(key, content)``, in
    the given order. No transcript: nothing here comes from the earlier session's messages."""
    seed = seed_text(manifest, constraints=constraints, decisions=decisions)
    messages = [Message(role=MessageRole.SYSTEM, content=seed, name=SEED_NAME)]
    messages += [
        Message(
            role=MessageRole.SYSTEM, content=memory_text(key, content, max_chars), name=MEMORY_NAME
        )
        for key, content in memory_hits
    ]
    return messages


def manifest_filename(manifest: HandoffManifest, session_id: str) -> str:
    """``<UTC compact timestamp>_<session id>.json``, e.g. ``20260804T120000Z_s1.json``.

    Safe on every file system: characters of the session id outside ``[A-Za-z0-9_-]`` become
    ``-``, and it is cut to 100 characters. Names sort by time.
    """
    stamp = manifest.timestamp.replace("-", "").replace(":", "")
    safe = _UNSAFE.sub("-", session_id)[:100] or "session"
    return f"{stamp}_{safe}.json"
