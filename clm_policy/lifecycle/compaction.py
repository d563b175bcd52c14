"""Compaction: a summary and a hint replace the older messages; the recent ones stay.

:func:`compact` is pure: it returns the new messages, the new state and the Markdown
document for ``sessions/<id>/compactions/<step>.md``; writing and committing it is the memory
store's job. The summary comes from a :class:`Summarizer` (deterministic by default; an LLM
summarizer plugs in through the same protocol).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from clm_policy.errors import InputError
from clm_policy.lifecycle.estimate import estimate_message_tokens
from clm_policy.lifecycle.summary import (
    NONE,
    build_summary,
    bullets,
    code_list,
    next_safe_action,
    recent_messages,
)
from clm_policy.memory.layout import compaction_path
from clm_policy.models.enums import MessageRole
from clm_policy.models.manifest import format_timestamp
from clm_policy.models.state import Message, SessionState

HINT_NAME = "clm-compact-hint"
"""``name`` of the system message that carries the hint, so a later step can recognise it."""


class Summarizer(Protocol):
    """Turns a session state into the Markdown summary a compaction records."""

    def summarize(self, state: SessionState) -> str: ...


class DeterministicSummarizer:
    """:func:`~clm_policy.lifecycle.summary.build_summary`: no model, same state same text."""

    def summarize(self, state: SessionState) -> str:
        return build_summary(state)


DETERMINISTIC = DeterministicSummarizer()


@dataclass(frozen=True)
class CompactionResult:
    """Everything a compaction produces; nothing has been written yet."""

    summary: str
    """The structured summary of the state before compaction (Markdown)."""
    hint: str
    """The short Markdown block the agent gets in place of the older messages."""
    messages: tuple[Message, ...]
    """The new context: the hint as a system message, then the retained messages."""
    state: SessionState
    """The state after compaction (``messages`` replaced, counters and context updated)."""
    document: str
    """``sessions/<id>/compactions/<step>.md``: front matter, summary, hint."""
    context_before: int
    context_after: int


def build_hint(state: SessionState, *, retained: int) -> str:
    """The compact hint: goal, next action, constraints, verified / not verified, blockers
    (only when there are any) and memory keys; where the full summary is kept."""
    where = compaction_path(state.session_id, state.step_index)
    kept = (
        f"the last {retained} message{'s' if retained != 1 else ''} follow"
        if retained
        else "no earlier message was kept"
    )
    lines = [
        f"## Context compacted at step {state.step_index}",
        "",
        "Earlier messages of this session were replaced by a structured summary (memory repo: "
        f"`{where}`); {kept}. Continue the task from here.",
        "",
        f"**Goal:** {' '.join(state.goal.split()) or NONE}",
        "",
        f"**Next safe action:** {next_safe_action(state)}",
        "",
        "**Constraints:**",
        *bullets(state.constraints),
        "",
        "**Verified:**",
        *bullets(state.verified),
        "",
        "**Not verified:**",
        *bullets(state.not_verified),
        "",
    ]
    if state.blockers:
        lines += ["**Blockers:**", *bullets(state.blockers), ""]
    lines += ["**Memory keys:**", *code_list(state.memory_keys)]
    return "\n".join(lines) + "\n"


def compact(
    state: SessionState,
    *,
    retain: int,
    summarizer: Summarizer = DETERMINISTIC,
    now: datetime,
    trigger: str | None = None,
) -> CompactionResult:
    """Compact ``state``: summary + hint, keep the last ``retain`` non-system messages.

    The new messages are ``[hint as a system message, *last retain non-system messages]``;
    earlier system messages (the agent's prompt, an earlier hint) are dropped, the hint
    replaces them. The new state has ``last_compact_step = step_index``, ``compact_count``
    one higher and ``tokens.context_tokens`` re-estimated from the new messages (characters
    / 4, ``tokens.estimated = true``); the cumulative token figures stay as they were. The
    caller's state is not changed. ``trigger`` (the deciding rule) goes into the document's
    front matter.
    """
    if retain < 0:
        raise InputError(f"retain must be 0 or more, got {retain}")
    timestamp = format_timestamp(now)
    summary = summarizer.summarize(state).rstrip("\n") + "\n"
    kept = recent_messages(state.messages, retain)
    hint = build_hint(state, retained=len(kept))
    messages = (
        Message(role=MessageRole.SYSTEM, content=hint, name=HINT_NAME),
        *(m.model_copy() for m in kept),
    )
    after = estimate_message_tokens(messages)
    tokens = state.tokens.model_copy(update={"context_tokens": after, "estimated": True})
    # model_dump gives fresh lists, so the new state shares nothing mutable with the old one.
    new_state = SessionState.model_validate(
        {
            **state.model_dump(exclude={"messages", "tokens"}),
            "messages": list(messages),
            "tokens": tokens,
            "last_compact_step": state.step_index,
            "compact_count": state.compact_count + 1,
        }
    )
    front = {
        "session": state.session_id,
        "step": state.step_index,
        "trigger": trigger,
        "context_before": state.tokens.context_tokens,
        "context_after": after,
        "messages_before": len(state.messages),
        "messages_after": len(messages),
        "compaction": new_state.compact_count,
        "timestamp": timestamp,
    }
    document = "\n".join(
        [
            "---",
            *(
                f"{k}: {json.dumps(v, ensure_ascii=False)}"
                for k, v in front.items()
                if v is not None
            ),
            "---",
            "",
            summary,
            "# Compact hint",
            "",
            "The agent was given this in place of the earlier messages:",
            "",
            hint,
        ]
    )
    return CompactionResult(
        summary=summary,
        hint=hint,
        messages=messages,
        state=new_state,
        document=document,
        context_before=state.tokens.context_tokens,
        context_after=after,
    )
