"""Handoff: the manifest and its Markdown for people. All pure: the pipeline validates again
(once redacted), writes and commits what these functions return."""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING

from clm_policy.base.errors import clipped_line, shorten
from clm_policy.base.timestamp import format_timestamp
from clm_policy.formats import markdown as md
from clm_policy.lifecycle.summary import NONE, last_reply, next_safe_action
from clm_policy.models.enums import CHARS_PER_TOKEN, ManifestStatus, TaskStatus
from clm_policy.models.manifest import HandoffManifest
from clm_policy.models.state import SessionState, TokenSnapshot
from clm_policy.models.versions import MANIFEST_VERSION

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from clm_policy.lifecycle.compose import Composed
    from clm_policy.models.manifest import AgentWords, HandoffRecord
    from clm_policy.transcripts.record import SessionRecord

NO_GOAL = "Unknown: the session recorded no goal; ask the user or read the source of truth"
"""The goal of a manifest whose session had none (the field must not be empty)."""
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
COPIED = (
    *("source_of_truth", "changed_artifacts", "commands_and_results", "verified", "not_verified"),
    *("assumptions_risks", "blockers", "requests", "constraints", "decisions", "done"),
    *("remaining", "open_failures", "moved_artifacts", "deleted_artifacts"),
)
"""The state's lists a manifest copies as they are."""


def derive_status(state: SessionState) -> ManifestStatus:
    """Any blocker makes it ``blocked``."""
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
    composed: Composed | None = None,
) -> HandoffManifest:
    """The handoff manifest of ``state`` at ``now`` (timezone-aware), validated: an invalid
    value (an empty rationale, a memory key like ``../x``) is an :class:`InputError` naming the
    field. ``composed`` gives the agent's words (kept whole) and the record; without a stated
    next step, the next safe action says it is unknown and what was last being done."""
    record = composed.record if composed is not None else None
    words = composed.words if composed is not None else None
    last = record.last_activity if record is not None else _last_activity(state)
    reply = last_reply(state)
    data = {
        "schema_version": MANIFEST_VERSION,
        "goal": state.goal if state.goal.strip() else NO_GOAL,
        "status": status or derive_status(state),
        **{name: list(getattr(state, name)) for name in COPIED},
        "next_safe_action": next_safe_action(state, last, after_derived=record is not None),
        "memory_keys": list(dict.fromkeys(state.memory_keys)),
        "token_snapshot": state.tokens.as_dict(),
        "timestamp": format_timestamp(now),
        "decision_rationale": decision_rationale,
        "transcript": state.transcript,
        "last_message": shorten(reply.strip(), LAST_MESSAGE_CHARS) if reply else None,
        "agent_words": None
        if words is None
        else {"source": words.source, "text": words.text, "step": words.step},
        "record": _record(record, composed),
    }
    from clm_policy.models.shapes.manifest import validate_manifest

    return validate_manifest(data)


def _record(record: SessionRecord | None, composed: Composed | None) -> dict[str, object]:
    if record is None:
        return {}
    return {
        "tasks": list(record.tasks),
        "tasks_before_request": record.tasks_before_request,
        "checks": [
            {"command": c.command, "status": c.status, "result": c.result, "earlier": c.earlier}
            for c in record.checks
        ],
        "environment": list(record.environment),
        "made_artifacts": list(record.made),
        "subagents": list(record.subagents),
        "failures": list(record.failures),
        "said": list(record.said),
        "reasoning": list(record.reasoning),
        "read_artifacts": list(record.read),
        "last_activity": record.last_activity,
        "contradictions": list(composed.contradictions) if composed is not None else [],
    }


def _last_activity(state: SessionState) -> str | None:
    """What a state without a record was last doing: its last command, else its last file."""
    if state.commands_and_results:
        return f"ran {clipped_line(state.commands_and_results[-1], 200)}"
    return f"changed {state.changed_artifacts[-1]}" if state.changed_artifacts else None


LAST_MESSAGE_CHARS = 4000


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


def _words(words: AgentWords | None) -> list[str]:
    if words is None:
        return ["(none: the agent wrote no handoff; the record below is all there is)"]
    label = {
        "reply": "From its reply to the handoff request:",
        "tool": "From its handoff tool call:",
        "summary": "From its summary when it compacted"
        + (f" at step {words.step}:" if words.step is not None else ":"),
        "model": "Written by a model from the transcript (the agent wrote no handoff):",
    }[words.source.value]
    return [label, "", *md.lines(words.text)]


def _recorded(r: HandoffRecord) -> list[str]:
    checks = [
        f"{c.command}: {c.status}"
        + (f" ({c.result})" if c.result else "")
        + (f"; an earlier run: {c.earlier}" if c.earlier else "")
        for c in r.checks
    ]
    parts = [
        ("Where the record disagrees with the agent", r.contradictions),
        ("Checks, each with its latest result", checks),
        ("Failed, and not done since", r.failures),
        ("The agent's last messages", r.said),
        ("The agent's last reasoning", r.reasoning),
        ("Task list", r.tasks),
        ("Git and processes", r.environment),
        ("Files made by commands", r.made_artifacts),
        ("Files read (and not changed)", r.read_artifacts),
        ("Agents the session started", r.subagents),
        ("Last being done", [r.last_activity] if r.last_activity else []),
    ]
    lines: list[str] = []
    for title, items in parts:
        if items:
            lines += [f"### {title}", "", *md.bullets(items), ""]
    return lines[:-1] if lines else [NONE]


SHOWN: tuple[tuple[str, str, Callable[[Any], list[str]], bool], ...] = (
    ("goal", "Goal", md.lines, True),
    ("status", "Status", lambda status: [md.code(status.value)], True),
    ("next_safe_action", "Next safe action", md.lines, True),
    ("open_failures", "Open failures", md.bullets, False),
    ("blockers", "Blockers", md.bullets, True),
    ("remaining", "Remaining", md.bullets, False),
    ("decision_rationale", "Decision rationale", md.lines, True),
    ("not_verified", "Not verified", md.bullets, True),
    ("verified", "Verified", md.bullets, True),
    ("done", "Done", md.bullets, False),
    ("requests", "Requests", md.bullets, False),
    ("constraints", "Constraints", md.bullets, False),
    ("decisions", "Decisions", md.bullets, False),
    ("changed_artifacts", "Changed artifacts", md.bullets, True),
    ("moved_artifacts", "Moved artifacts", md.bullets, False),
    ("deleted_artifacts", "Deleted artifacts", md.bullets, False),
    ("commands_and_results", "Commands and results", md.bullets, True),
    ("source_of_truth", "Source of truth", md.bullets, True),
    ("assumptions_risks", "Assumptions and risks", md.bullets, True),
    ("memory_keys", "Memory keys", md.code_list, True),
    ("token_snapshot", "Token snapshot", _tokens, True),
    ("agent_words", "The agent's own words (word for word)", _words, True),
    ("record", "Recorded by clm-policy", _recorded, True),
    ("transcript", "Transcript", lambda path: [md.code(path)], False),
    ("last_message", "Last message", md.lines, False),
    ("timestamp", "Timestamp", lambda timestamp: [md.inline(timestamp)], True),
)
"""The manifest's fields as its rendering for people shows them, in order: the field, its
heading, how it is shown, and whether it is shown when empty."""


def render_manifest_markdown(manifest: HandoffManifest, *, session_id: str, step: int) -> str:
    """The handoff for people (``sessions/<id>/handoffs/<n>.md``, and its pull request's
    sections): a heading per field, as :data:`SHOWN` says. The fields are the agent's text,
    read on a forge: they pass the Markdown-safe printer (:mod:`clm_policy.formats.markdown`)."""
    lines = [f"# Handoff: session {md.inline(session_id)}, step {step}", ""]
    for field, title, show, always in SHOWN:
        value = getattr(manifest, field)
        if always or value:
            lines += [f"## {title}", "", *show(value), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def manifest_filename(manifest: HandoffManifest, session_id: str) -> str:
    """``20260804T120000Z_s1.json``: names sort by time. Safe on every file system: the
    session id's characters outside ``[A-Za-z0-9_.-]`` become ``-`` (``demo.2`` keeps its dot:
    ``demo-2`` is another session), cut to 100 characters."""
    stamp = manifest.timestamp.replace("-", "").replace(":", "")
    safe = _UNSAFE.sub("-", session_id)[:100] or "session"
    return f"{stamp}_{safe}.json"


# -- without a commit ---------------------------------------------------------------------


def preview(
    composed: Composed,
    *,
    now: datetime,
    budget: int | None = None,
    read_more: str | None = None,
    size: Callable[[str], int] = len,
) -> tuple[HandoffManifest, str]:
    """The manifest and the seed ``composed`` gives, as :func:`~.pipelines.run_handoff` would
    commit them (unredacted: nothing is written)."""
    from clm_policy.lifecycle.seed import seed_text
    from clm_policy.policy.engine import DEFAULT_SEED_TOKENS

    manifest = build_manifest(composed.state, "handoff requested", now=now, composed=composed)
    seed = seed_text(
        manifest,
        budget=budget if budget is not None else DEFAULT_SEED_TOKENS * CHARS_PER_TOKEN,
        read_more=read_more,
        size=size,
    )
    return manifest, seed
