"""A scripted Anthropic Messages API for the real Claude Code binary, on 127.0.0.1.

Claude Code is pointed at it with ``ANTHROPIC_BASE_URL``. It answers ``POST /v1/messages``
(streamed as server-sent events when the request says ``stream: true``, else one JSON
message) and ``POST /v1/messages/count_tokens``; anything else gets a 404 in the API's error
shape, and is logged like everything else.

A script is a list of :class:`Turn` per *kind* of request. Requests are routed by what they
carry, not by their order alone (:func:`classify`):

- ``compact``: Claude Code asking for the summary of a compaction (its summary instructions
  are the last user message) — answered with ``compact_summary``;
- ``subagent``: a request of an ``Agent`` tool's agent (it says so in a header and in its
  system prompt) — the ``subagent`` turns;
- ``side``: a one-off request without tools (a title, a topic check) — a short text;
- ``main``: the session itself — the ``main`` turns, in order; when they run out, a short
  final answer (``final_text``, ``final_usage``).

Each turn's usage is the test's to choose: :meth:`Usage.context` makes a response whose
input + cache creation + cache read is a given number of tokens (what Claude Code and
clm-policy read as the context).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from .httpserve import Reply, Request

# The compaction request ends with Claude Code's summary instructions (2.1.x: "Your task is
# to create a detailed summary of the conversation so far ...").
HANG_SECONDS = 60
COMPACT_MARKERS = (
    "create a detailed summary of the conversation",
    "summary of the conversation so far",
)


@dataclass
class Usage:
    input_tokens: int = 6
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    output_tokens: int = 40

    @classmethod
    def context(cls, tokens: int, output: int = 40) -> Usage:
        """A response whose context (input + cache creation + cache read) is ``tokens``: the
        shape of a real session's usage (a few fresh tokens, some written to the cache, the
        rest read from it)."""
        fresh = min(6, tokens)
        created = min(1200, tokens - fresh)
        return cls(fresh, created, tokens - fresh - created, output)

    @property
    def context_tokens(self) -> int:
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens


@dataclass
class Tool:
    """A tool call: ``Tool("Write", {"file_path": ..., "content": ...})``."""

    name: str
    input: dict[str, Any]


@dataclass
class Turn:
    text: str = ""
    tools: list[Tool] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)


def text_of(content: Any) -> str:
    """The text of a message's content (a string, or the text of its blocks, tool results
    included)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result":
            parts.append(text_of(block.get("content")))
    return "\n".join(parts)


def system_text(body: dict[str, Any]) -> str:
    system = body.get("system")
    return system if isinstance(system, str) else text_of(system)


def last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            return text_of(message.get("content"))
    return ""


def all_text(body: dict[str, Any]) -> str:
    """Every text the request carries to the model: system prompt and every message."""
    parts = [system_text(body)]
    parts += [text_of(m.get("content")) for m in body.get("messages") or []]
    return "\n".join(parts)


def tool_names(body: dict[str, Any]) -> list[str]:
    return [str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]


def classify(headers: dict[str, str], body: dict[str, Any]) -> str:
    """``compact``, ``subagent``, ``side`` or ``main`` (see the module's doc).

    A subagent's requests (2.1.x) carry the header ``x-claude-code-agent-id`` and
    ``cc_is_subagent=true`` in the billing line at the head of the system prompt; either is
    enough. The compaction request is the session's own, with the summary instructions as
    the last user message."""
    if any(marker in last_user_text(body).lower() for marker in COMPACT_MARKERS):
        return "compact"
    lowered = {key.lower() for key in headers}
    if "x-claude-code-agent-id" in lowered or "cc_is_subagent=true" in system_text(body):
        return "subagent"
    if not body.get("tools"):
        return "side"
    return "main"


@dataclass
class ClaudeScript:
    """The app: scripted turns per kind, and what each request got (``request.note``)."""

    main: list[Turn] = field(default_factory=list)
    subagent: list[Turn] = field(default_factory=list)
    compact_summary: str = (
        "<analysis>The session wrote calc.py and its test.</analysis>\n<summary>\n"
        "1. Primary Request and Intent: write calc.py with add() and test it.\n"
        "8. Current Work: calc.py written and tested.\n"
        "9. Optional Next Step: none.\n</summary>"
    )
    compact_usage: Usage = field(default_factory=lambda: Usage.context(20_000, output=300))
    final_text: str = "Done."
    final_usage: Usage = field(default_factory=lambda: Usage.context(12_000))
    broken: str = ""
    """"garbage": every message request is answered with bytes that are no event stream;
    "hang": it is never answered (for :data:`HANG_SECONDS`)."""
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def handle(self, request: Request) -> Reply:
        path = request.path.split("?", 1)[0]
        body = request.body if isinstance(request.body, dict) else {}
        if request.method == "POST" and path == "/v1/messages/count_tokens":
            request.kind = "count_tokens"
            return Reply(200, {"input_tokens": max(1, len(json.dumps(body)) // 4)})
        if request.method != "POST" or path != "/v1/messages":
            request.kind = "unknown"
            return Reply(
                404, {"type": "error", "error": {"type": "not_found_error", "message": path}}
            )
        if self.broken == "garbage":
            request.kind = "broken"
            return Reply(200, raw=b"\x00garbage that is no event stream\n\xff\xfe{[\n\n")
        if self.broken == "hang":
            request.kind = "broken"
            time.sleep(HANG_SECONDS)  # the server thread is a daemon: the test does not wait
            return Reply(500, {"type": "error", "error": {"type": "api_error", "message": "x"}})
        with self._lock:
            kind = classify(request.headers, body)
            turn = self._next(kind)
            number = next(self._ids)
        request.kind = kind
        request.note = {"turn": asdict(turn), "message_id": f"msg_e2e_{number:04d}"}
        model = str(body.get("model") or "claude-test")
        message_id = request.note["message_id"]
        blocks = self._blocks(turn, number)
        stop = "tool_use" if turn.tools else "end_turn"
        if body.get("stream"):
            return Reply(200, events=_events(message_id, model, blocks, stop, turn.usage))
        message = _message(message_id, model, blocks, stop, asdict(turn.usage))
        return Reply(200, message)

    def _next(self, kind: str) -> Turn:
        if kind == "compact":
            return Turn(self.compact_summary, usage=self.compact_usage)
        if kind == "side":
            return Turn("Scripted session", usage=Usage(20, 0, 0, 5))
        queue = self.main if kind == "main" else self.subagent
        return queue.pop(0) if queue else Turn(self.final_text, usage=self.final_usage)

    def _blocks(self, turn: Turn, number: int) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if turn.text:
            blocks.append({"type": "text", "text": turn.text})
        for i, tool in enumerate(turn.tools):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_e2e_{number:04d}_{i}",
                    "name": tool.name,
                    "input": tool.input,
                }
            )
        return blocks


def _message(
    message_id: str, model: str, blocks: list[dict[str, Any]], stop: str, usage: dict[str, int]
) -> dict[str, Any]:
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }


def _events(
    message_id: str, model: str, blocks: list[dict[str, Any]], stop: str, usage: Usage
) -> list[tuple[str | None, dict[str, Any]]]:
    start_usage = {**asdict(usage), "output_tokens": 1}
    events: list[tuple[str | None, dict[str, Any]]] = [
        (
            "message_start",
            {"type": "message_start", "message": _message(message_id, model, [], "", start_usage)},
        )
    ]
    events[0][1]["message"]["stop_reason"] = None
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            start: dict[str, Any] = {"type": "text", "text": ""}
            text = block["text"]
            half = len(text) // 2
            deltas = [
                {"type": "text_delta", "text": part} for part in (text[:half], text[half:]) if part
            ]
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            raw = json.dumps(block["input"])
            half = len(raw) // 2
            deltas = [
                {"type": "input_json_delta", "partial_json": part}
                for part in (raw[:half], raw[half:])
            ]
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        events += [
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in deltas
        ]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": asdict(usage),
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events
