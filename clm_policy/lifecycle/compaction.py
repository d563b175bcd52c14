"""Compaction: a summary and a hint replace the older messages; the recent ones stay.

:func:`compact` is pure: it returns the new messages, the new state and the Markdown
document for ``sessions/<id>/compactions/<step>.md``; the pipeline commits it. The summary
comes from a :class:`Summarizer` (deterministic by default, :mod:`.summarizers`); the recall
(:mod:`.verify`) lands in the document's front matter. :func:`compact_verified` falls back to
the deterministic summary when another summarizer fails or loses facts. No pydantic here: a
compaction asked for from the command line imports none.
"""

from __future__ import annotations

import json

from clm_policy.base.errors import InputError, StateError
from clm_policy.base.record import Record
from clm_policy.base.timestamp import format_timestamp
from clm_policy.lifecycle.estimate import estimate_message_tokens
from clm_policy.lifecycle.summary import (
    NONE,
    RECENT_MESSAGES,
    build_summary,
    bullets,
    code_list,
    next_safe_action,
    recent_messages,
)
from clm_policy.lifecycle.verify import Recall, compaction_context, facts, verify
from clm_policy.memory.layout import compaction_path
from clm_policy.models.enums import MAX_COUNT, MessageRole
from clm_policy.models.state import Message, SessionState, TokenSnapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Protocol
else:
    Protocol = object

HINT_NAME = "clm-compact-hint"
"""``name`` of the system message that carries the hint, so a later step can recognise it."""


DETERMINISTIC_NAME = "deterministic"


class Summarizer(Protocol):
    """Turns a session state into the Markdown summary a compaction records.

    A summarizer may have a ``name`` (what the commit's ``Clm-Summarizer`` trailer says, e.g.
    ``openai:gpt-4o-mini``); :func:`summarizer_name` falls back to its class name. A failure
    is any exception; one with a ``reason`` attribute (a few words: ``timeout``,
    ``http 500``) is recorded by that reason."""

    def summarize(self, state: SessionState) -> str: ...


class DeterministicSummarizer:
    """:func:`~clm_policy.lifecycle.summary.build_summary`: no model, same state same text."""

    name = DETERMINISTIC_NAME

    def summarize(self, state: SessionState) -> str:
        return build_summary(state)


DETERMINISTIC = DeterministicSummarizer()


class TextSummary(Record):
    """A summary written already (by ``name``), the same for any state: a pipeline asks a
    model once and compacts both the raw and the cleaned state with it."""

    text: str
    name: str

    def summarize(self, state: SessionState) -> str:
        return self.text


def summarizer_name(summarizer: Summarizer) -> str:
    """What ``Clm-Summarizer`` calls ``summarizer``: its ``name``, else its class name."""
    name = getattr(summarizer, "name", None)
    return name if isinstance(name, str) and name else type(summarizer).__name__


class CompactionResult(Record):
    """Everything a compaction produces; nothing has been written yet. ``messages``: the hint
    as a system message, then the retained ones; ``document``: front matter, summary, hint;
    ``recall``: None when not verified; ``fallback``: why the summary is the deterministic one
    when another summarizer was asked (``timeout``, ``recall 0.40 < 0.9``), with ``tried``,
    the summarizer replaced (``openai:<model>``)."""

    summary: str
    hint: str
    messages: tuple[Message, ...]
    state: SessionState
    document: str
    context_before: int
    context_after: int
    recall: Recall | None = None
    summarizer: str = DETERMINISTIC_NAME
    fallback: str | None = None
    tried: str | None = None
    HASHABLE = False

    @property
    def summarizer_trailer(self) -> str:
        """``Clm-Summarizer``: ``openai:<model>``, or ``deterministic (fallback: timeout)``."""
        if self.fallback:
            return f"{self.summarizer} (fallback: {self.fallback})"
        return self.summarizer


def build_hint(state: SessionState, *, retained: int) -> str:
    """The compact hint the agent gets in place of the older messages."""
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
    ]
    lists = [("Constraints", state.constraints), ("Verified", state.verified)]
    lists += [("Not verified", state.not_verified), ("Blockers", state.blockers)]
    for title, items in lists:
        if items or title != "Blockers":  # blockers only when there are any
            lines += [f"**{title}:**", *bullets(items), ""]
    lines += ["**Memory keys:**", *code_list(state.memory_keys)]
    return "\n".join(lines) + "\n"


def compact(
    state: SessionState,
    *,
    retain: int,
    summarizer: Summarizer = DETERMINISTIC,
    now: datetime,
    trigger: str | None = None,
    verify_facts: bool = True,
    fallback: str | None = None,
    tried: str | None = None,
) -> CompactionResult:
    """Compact ``state``: the hint as a system message, then the last ``retain`` non-system
    messages (earlier system messages, the agent's prompt or an earlier hint, are dropped).
    The new state counts the compaction and re-estimates its context from the new messages;
    the cumulative token figures and the caller's state are unchanged. ``trigger`` (the
    deciding rule) goes into the document's front matter.

    With ``verify_facts`` the recall is set and recorded in the front matter with the
    summarizer's name (and ``fallback``, why a caller replaced the summarizer ``tried``)."""
    if retain < 0:
        raise InputError(f"retain must be 0 or more, got {retain}")
    timestamp = format_timestamp(now)
    summary = summarizer.summarize(state).rstrip("\n") + "\n"
    name = summarizer_name(summarizer)
    kept = recent_messages(state.messages, retain)
    hint = build_hint(state, retained=len(kept))
    messages = [
        Message(role=MessageRole.SYSTEM, content=hint, name=HINT_NAME),
        *(m.replace() for m in kept),
    ]
    recall = verify(facts(state), compaction_context(summary, messages)) if verify_facts else None
    after = estimate_message_tokens(messages)
    tokens = state.tokens.replace(context_tokens=after, estimated=True)
    new_state = _renewed(state, messages, tokens)
    front: dict[str, object] = {
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
    if recall is not None:
        front |= {"summarizer": name, "summarizer_fallback": fallback, "summarizer_tried": tried}
        front.update(recall.front_matter())
    return CompactionResult(
        summary=summary,
        hint=hint,
        messages=tuple(messages),
        state=new_state,
        document=_document(front, summary, hint),
        context_before=state.tokens.context_tokens,
        context_after=after,
        recall=recall,
        summarizer=name,
        fallback=fallback,
        tried=tried,
    )


def _document(front: dict[str, object], summary: str, hint: str) -> str:
    shown = [f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in front.items() if v is not None]
    return (
        "---\n" + "\n".join(shown) + f"\n---\n\n{summary}\n# Compact hint\n\n"
        f"The agent was given this in place of the earlier messages:\n\n{hint}"
    )


def _renewed(state: SessionState, messages: list[Message], tokens: TokenSnapshot) -> SessionState:
    """The state after the compaction, sharing nothing mutable with the old one."""
    import copy

    if state.compact_count >= MAX_COUNT:
        raise StateError(
            f"compact_count: the state has compacted {state.compact_count} times, the most a "
            "state counts"
        )
    renewed = copy.deepcopy(state.replace(messages=[]))
    renewed.messages = messages
    renewed.tokens = tokens
    renewed.last_compact_step = state.step_index
    renewed.compact_count += 1
    return renewed


def what_it_reads(state: SessionState, retain: int) -> SessionState:
    """``state`` as the deterministic compaction reads it (:func:`compact` with
    ``DETERMINISTIC`` gives the same result for both): the messages it neither keeps nor
    quotes in the summary — system messages, and all but the last ``max(retain, 5)`` of the
    conversation — with their text and name left out (their number and roles are all it
    counts).

    A pipeline redacts this, not the whole conversation: nothing is redacted to be thrown
    away."""
    read = max(retain, RECENT_MESSAGES, 0)
    messages: list[Message] = []
    for m in reversed(state.messages):
        if m.role is MessageRole.SYSTEM or read == 0:
            messages.append(m.replace(content="", name=None) if m.content or m.name else m)
        else:
            messages.append(m)
            read -= 1
    messages.reverse()
    return state.replace(messages=messages)


def compact_verified(
    state: SessionState,
    *,
    retain: int,
    summarizer: Summarizer = DETERMINISTIC,
    min_recall: float,
    now: datetime,
    trigger: str | None = None,
) -> CompactionResult:
    """:func:`compact` with ``summarizer``, verified; the deterministic summary instead when
    another summarizer fails (any exception: an error, a timeout, garbage, an HTTP 500) or
    its compaction's recall is under ``min_recall``. The result says who wrote the summary and
    why it fell back (``fallback``). The deterministic compaction's own recall is the caller's
    to judge (a pipeline hands off under ``min_recall``)."""
    if isinstance(summarizer, DeterministicSummarizer):
        return compact(state, retain=retain, now=now, trigger=trigger)
    name = summarizer_name(summarizer)
    try:
        text = summarizer.summarize(state)
    except Exception as exc:  # any failure of an optional summarizer: the deterministic one
        reason = getattr(exc, "reason", None)
        why = reason if isinstance(reason, str) and reason else f"error ({type(exc).__name__})"
    else:
        why = "empty"
        if isinstance(text, str) and text.strip():
            told = TextSummary(text, name)
            result = compact(state, retain=retain, summarizer=told, now=now, trigger=trigger)
            assert result.recall is not None
            if not result.recall.below(min_recall):
                return result
            why = f"recall {result.recall.shown} < {min_recall:g}"
    return compact(state, retain=retain, now=now, trigger=trigger, fallback=why, tried=name)
