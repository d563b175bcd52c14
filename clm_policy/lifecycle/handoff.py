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
from clm_policy.formats import markdown as md
from clm_policy.lifecycle.seed import DEFAULT_SEED_TOKENS
from clm_policy.lifecycle.summary import NONE, next_safe_action
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
) -> HandoffManifest:
    """The handoff manifest of ``state`` at ``now`` (a timezone-aware datetime).

    Lists are copied from the state (memory keys without duplicates, first one kept); the
    token snapshot is the state's at handoff: ``context_tokens`` is what the window held,
    ``input/output/total_tokens`` are the session's cumulative figures. ``status`` defaults
    to :func:`derive_status`; ``next_safe_action`` is
    :func:`~clm_policy.lifecycle.summary.next_safe_action` (the step the agent stated first,
    ``state.next_action``); a session without a goal gets
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
        "next_safe_action": next_safe_action(state),
        "memory_keys": list(dict.fromkeys(state.memory_keys)),
        "token_snapshot": state.tokens.model_copy(),
        "timestamp": format_timestamp(now),
        "decision_rationale": decision_rationale,
        "requests": list(state.requests),
        "constraints": list(state.constraints),
        "decisions": list(state.decisions),
        "done": list(state.done),
        "remaining": list(state.remaining),
        "open_failures": list(state.open_failures),
        "moved_artifacts": list(state.moved_artifacts),
        "deleted_artifacts": list(state.deleted_artifacts),
        "transcript": state.transcript,
        "last_message": _last_message(state),
    }
    try:
        return HandoffManifest.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"handoff manifest: {pydantic_problem(exc)}") from None


LAST_MESSAGE_CHARS = 4000
"""The earlier agent's last message is kept this long at most in a manifest."""


def _last_message(state: SessionState) -> str | None:
    for message in reversed(state.messages):
        if message.role is MessageRole.ASSISTANT and message.content.strip():
            text = message.content.strip()
            return text if len(text) <= LAST_MESSAGE_CHARS else text[:LAST_MESSAGE_CHARS] + "…"
    return None


def _tokens(snapshot: TokenSnapshot) -> list[str]:
    context = f"context: {snapshot.context_tokens} tokens"
    if snapshot.context_window is not None:
        context += f" of a {snapshot.context_window} window"
    if snapshot.model is not None:
        context += f" ({md.inline(snapshot.model)})"
    if snapshot.estimated:
        context += ", estimated"
    return [
        f"- {context}",
        f"- cumulative: input {snapshot.input_tokens}, output {snapshot.output_tokens}, "
        f"total {snapshot.total_tokens}",
    ]


def render_manifest_markdown(manifest: HandoffManifest, *, session_id: str, step: int) -> str:
    """The handoff for people (``sessions/<id>/handoffs/<n>.md``, and the sections of its
    pull request's body): one heading per field.

    What the next session needs first (goal, status, next action, blockers, why) comes
    first; every field is present, ``(none)`` when empty, so handoffs diff alike. The fields
    are the agent's text, read on a forge: they pass the Markdown-safe printer
    (:mod:`clm_policy.formats.markdown`), so they show as written, stay in their section and
    notify no one.
    """
    m = manifest
    parts = [
        (f"Handoff: session {md.inline(session_id)}, step {step}", None),
        ("Goal", md.lines(m.goal)),
        ("Status", [md.code(m.status.value)]),
        ("Next safe action", md.lines(m.next_safe_action)),
        *((("Open failures", md.bullets(m.open_failures)),) if m.open_failures else ()),
        ("Blockers", md.bullets(m.blockers)),
        *((("Remaining", md.bullets(m.remaining)),) if m.remaining else ()),
        ("Decision rationale", md.lines(m.decision_rationale)),
        ("Not verified", md.bullets(m.not_verified)),
        ("Verified", md.bullets(m.verified)),
        *((("Done", md.bullets(m.done)),) if m.done else ()),
        *((("Requests", md.bullets(m.requests)),) if m.requests else ()),
        *((("Constraints", md.bullets(m.constraints)),) if m.constraints else ()),
        *((("Decisions", md.bullets(m.decisions)),) if m.decisions else ()),
        ("Changed artifacts", md.bullets(m.changed_artifacts)),
        *((("Moved artifacts", md.bullets(m.moved_artifacts)),) if m.moved_artifacts else ()),
        *((("Deleted artifacts", md.bullets(m.deleted_artifacts)),) if m.deleted_artifacts else ()),
        ("Commands and results", md.bullets(m.commands_and_results)),
        ("Source of truth", md.bullets(m.source_of_truth)),
        ("Assumptions and risks", md.bullets(m.assumptions_risks)),
        ("Memory keys", md.code_list(m.memory_keys)),
        ("Token snapshot", _tokens(m.token_snapshot)),
        *((("Transcript", [md.code(m.transcript)]),) if m.transcript else ()),
        *((("Last message", md.lines(m.last_message)),) if m.last_message else ()),
        ("Timestamp", [md.inline(m.timestamp)]),
    ]
    lines: list[str] = []
    for title, body in parts:
        lines += [f"# {title}", ""] if body is None else [f"## {title}", "", *body, ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def seed_text(
    manifest: HandoffManifest,
    *,
    constraints: Sequence[str] = (),
    decisions: Sequence[str] = (),
    seed_tokens: int = DEFAULT_SEED_TOKENS,
    manifest_path: str | None = None,
) -> str:
    """The system message a fresh session starts with: the manifest in brief, within
    ``seed_tokens`` (:func:`clm_policy.lifecycle.seed.seed_text`)."""
    from clm_policy.lifecycle import seed

    return seed.seed_text(
        manifest,
        constraints=constraints,
        decisions=decisions,
        seed_tokens=seed_tokens,
        manifest_path=manifest_path,
    )


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
    seed_tokens: int = DEFAULT_SEED_TOKENS,
    manifest_path: str | None = None,
) -> list[Message]:
    """What a fresh session starts from: the manifest in brief (with the earlier session's
    ``constraints`` and ``decisions``) within ``seed_tokens``, pointing to ``manifest_path``,
    then one message per memory hit ``(key, content)``, in the given order. No transcript:
    nothing here comes from the earlier session's messages."""
    seed = seed_text(
        manifest,
        constraints=constraints,
        decisions=decisions,
        seed_tokens=seed_tokens,
        manifest_path=manifest_path,
    )
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
