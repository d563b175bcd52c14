"""OpenAI-style chat transcripts: one JSON document, either a list of messages
(``{"role", "content", "tool_calls"?}``) or an object with ``messages`` and optionally
``usage`` and ``model`` (what a custom agent built on the Chat Completions API can save).

The context is ``usage.prompt_tokens`` (or ``usage.input_tokens``, the Responses API's
name) when the document has it; otherwise an estimate, characters / 4 of every message's
content and tool calls, and the reading says so. The document is read whole (it is one JSON
value), up to :data:`~clm_policy.transcripts.reading.MAX_DOCUMENT`; the fast path is the full
read.
"""

from __future__ import annotations

import json

from clm_policy.base.errors import InputError, Location
from clm_policy.models.enums import count
from clm_policy.transcripts.reading import (
    GOAL_LIMIT,
    MESSAGE_LIMIT,
    NOT_COUNTED,
    TEXT_PARTS,
    NotATranscript,
    Source,
    TranscriptReading,
    Warnings,
    clip,
    estimate_tokens,
    joined_text,
    refuse_if_not_text,
    text_of,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMAT = "openai"
NO_USAGE = f"no usage found; context estimated ({NOT_COUNTED})"
SHAPE = "expected a list of chat messages or an object with 'messages'"
STATE_NAMED = "a session state (SessionState JSON: clm-policy schema session-state)"
"""A SessionState document, as a refusal names it where another document was expected."""


def read_tail(src: Source, max_scan: int) -> TranscriptReading:
    return read_full(src, full=False)


def read_full(src: Source, *, full: bool = True) -> TranscriptReading:
    data = _parse(src.document(), src.file)
    if is_session_state(data):
        raise NotATranscript(
            f"{STATE_NAMED}, not a transcript",
            Location(src.file, 1),
            found="state",
        )
    usage: object = None
    model = None
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        messages: list[Any] = data["messages"]
        usage = data.get("usage")
        model = text_of(data.get("model"))
    elif isinstance(data, list):
        messages = data
    else:
        raise InputError(f"not an OpenAI chat transcript: {SHAPE}", Location(src.file, 1))
    warnings = Warnings()
    chars = steps = skipped = 0
    goal = ""
    last: str | None = None
    for message in messages:
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            skipped += 1
            continue
        text = joined_text(message.get("content"), TEXT_PARTS)
        chars += len(text) + _calls_chars(message.get("tool_calls"))
        if message["role"] == "user" and not goal and text.strip():
            goal = clip(text, GOAL_LIMIT)
        elif message["role"] == "assistant":
            steps += 1
            if text.strip():
                last = clip(text, MESSAGE_LIMIT)
    if skipped:
        warnings.add(f"{skipped} items of the messages are not chat messages; skipped")
    prompt = _tokens(usage, "prompt_tokens", "input_tokens")
    if prompt is None:
        warnings.add(NO_USAGE)
    return TranscriptReading(
        format=FORMAT,
        path=src.file,
        context_tokens=prompt if prompt is not None else estimate_tokens(chars),
        context_estimated=prompt is None,
        model=model,
        step_index=steps,
        goal=goal,
        last_assistant_message=last,
        input_tokens=prompt or 0,
        output_tokens=_tokens(usage, "completion_tokens", "output_tokens") or 0,
        warnings=warnings.list(),
        full=full,
        bytes_read=src.bytes_read,
    )


STATE_ONLY = ("tokens", "step_index", "last_compact_step", "status")
"""Fields of a SessionState that no chat document has."""


def is_session_state(data: object) -> bool:
    """Whether ``data`` is a SessionState document rather than a chat: an object with a
    ``session_id`` and no ``messages``, or one with a field only a state has."""
    if not isinstance(data, dict) or not isinstance(data.get("session_id"), str):
        return False
    return "messages" not in data or any(key in data for key in STATE_ONLY)


def _parse(raw: bytes, file: str) -> object:
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"invalid JSON ({exc.msg}): not an OpenAI chat transcript",
            Location(file, exc.lineno, exc.colno),
        ) from None
    except (ValueError, RecursionError):  # not UTF-8, too deep, too many digits
        refuse_if_not_text(raw, file, whole=True)
        raise InputError(
            "not a JSON document: not an OpenAI chat transcript", Location(file)
        ) from None


def _calls_chars(calls: object) -> int:
    total = 0
    for call in calls if isinstance(calls, list) else ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            total += len(text_of(function.get("name")) or "")
            total += len(text_of(function.get("arguments")) or "")
    return total


def _tokens(usage: object, chat: str, responses: str) -> int | None:
    """The token count ``usage`` gives under the Chat Completions API's name ``chat``, else
    under the Responses API's ``responses``."""
    if not isinstance(usage, dict):
        return None
    found = count(usage.get(chat))
    return found if found is not None else count(usage.get(responses))
