"""A scripted OpenAI Responses API for the real Codex CLI binary, on 127.0.0.1.

Codex is pointed at it by a ``model_providers`` entry (``base_url``, ``wire_api =
"responses"``, ``env_key``) in ``$CODEX_HOME/config.toml`` (:func:`codex_config`). It answers
``POST /v1/responses`` with server-sent events (``response.created``,
``response.output_item.added``, ``response.output_text.delta``, ``response.output_item.done``,
``response.completed`` with usage); anything else gets a 404 and is logged.

Requests are routed by what they carry (:func:`classify`): ``compact`` (Codex asking for the
summary of a local compaction: its summarization prompt is the last user input), ``side``
(a request without tools), ``agent`` (an agent the session spawned: its own turns, by its
task path, :func:`agent_of`) and ``main`` (the session: the ``main`` turns, in order, then a
short final answer).
"""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import asdict, dataclass, field
from typing import Any

from .httpserve import Reply, Request

# Codex's local compaction prompt (codex-rs/core/templates/compact/prompt.md) asks for a
# "handoff summary" of the conversation: "You are performing a CONTEXT CHECKPOINT
# COMPACTION. Create a handoff summary for another LLM that will resume the task."
COMPACT_MARKERS = ("context checkpoint compaction", "handoff summary for another llm")


@dataclass
class Usage:
    input_tokens: int = 1000
    cached_input_tokens: int = 0
    output_tokens: int = 40
    reasoning_output_tokens: int = 0

    @classmethod
    def context(cls, tokens: int, output: int = 40) -> Usage:
        """A response after which Codex counts ``tokens`` in the context
        (``last_token_usage.total_tokens`` = input + output)."""
        return cls(tokens - output, max(0, tokens - output - 1000), output)

    def as_api(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "input_tokens_details": {"cached_tokens": self.cached_input_tokens},
            "output_tokens": self.output_tokens,
            "output_tokens_details": {"reasoning_tokens": self.reasoning_output_tokens},
            "total_tokens": self.input_tokens + self.output_tokens,
        }


@dataclass
class Call:
    """A tool call. ``Call("shell", {"command": [...]})`` for a function tool (arguments as
    JSON); ``Call("apply_patch", "*** Begin Patch ...", custom=True)`` for a freeform
    (custom) tool whose input is plain text."""

    name: str
    arguments: dict[str, Any] | str
    custom: bool = False
    namespace: str | None = None


@dataclass
class Turn:
    text: str = ""
    calls: list[Call] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for part in content or ():
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            parts.append(part["text"])
    return "\n".join(parts)


def input_texts(body: dict[str, Any], role: str | None = None) -> list[str]:
    """The texts of the request's input messages (``role``: only those)."""
    texts = []
    for item in body.get("input") or []:
        if not isinstance(item, dict) or item.get("type", "message") != "message":
            continue
        if role is None or item.get("role") == role:
            texts.append(_text(item.get("content")))
    return texts


def all_text(body: dict[str, Any]) -> str:
    """Instructions and every input item, as text (tool outputs included)."""
    parts = [str(body.get("instructions") or "")]
    for item in body.get("input") or []:
        if not isinstance(item, dict):
            continue
        if item.get("type", "message") == "message":
            parts.append(_text(item.get("content")))
        elif "output" in item:
            parts.append(
                json.dumps(item["output"])
                if not isinstance(item["output"], str)
                else item["output"]
            )
    return "\n".join(parts)


ROOT_AGENT = "/root"


def agent_of(headers: dict[str, str]) -> str:
    """The thread a request comes from, by the ``agent_name`` of its ``x-codex-turn-metadata``
    header: Codex 0.171 names the session's own thread ``/root`` and an agent it spawned
    ``/root/<task_name>`` (multi_agent_v2); ``/root`` when the header does not say."""
    meta = {k.lower(): v for k, v in headers.items()}.get("x-codex-turn-metadata", "")
    try:
        name = json.loads(meta).get("agent_name") if meta else None
    except (ValueError, AttributeError):
        name = None
    return name if isinstance(name, str) and name else ROOT_AGENT


def classify(body: dict[str, Any], agent: str = ROOT_AGENT) -> str:
    users = input_texts(body, "user")
    if users and any(marker in users[-1].lower() for marker in COMPACT_MARKERS):
        return "compact"
    if not body.get("tools"):
        return "side"
    return "main" if agent == ROOT_AGENT else "agent"


@dataclass
class CodexScript:
    main: list[Turn] = field(default_factory=list)
    compact_summary: str = "The session wrote notes.txt and ran the tests; next: carry on."
    compact_usage: Usage = field(default_factory=lambda: Usage.context(3000, output=200))
    final_text: str = "Done."
    final_usage: Usage = field(default_factory=lambda: Usage.context(12_000))
    # the turns of each agent the session spawns, by its task path ("/root/<task_name>"),
    # then a short final answer
    agents: dict[str, list[Turn]] = field(default_factory=dict)
    agent_final_text: str = "Agent done."
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def handle(self, request: Request) -> Reply:
        path = request.path.split("?", 1)[0]
        body = request.body if isinstance(request.body, dict) else {}
        if request.method != "POST" or path != "/v1/responses":
            request.kind = "unknown"
            return Reply(404, {"error": {"message": f"no {path} here", "type": "not_found"}})
        agent = agent_of(request.headers)
        with self._lock:
            kind = classify(body, agent)
            turn = self._next(kind, agent)
            number = next(self._ids)
        request.kind = kind
        request.note = {
            "turn": asdict(turn),
            "response_id": f"resp_e2e_{number:04d}",
            "agent": agent,
        }
        return Reply(200, events=_events(request.note["response_id"], body, turn, number))

    def _next(self, kind: str, agent: str = ROOT_AGENT) -> Turn:
        if kind == "compact":
            return Turn(self.compact_summary, usage=self.compact_usage)
        if kind == "side":
            return Turn("Scripted", usage=Usage(50, 0, 5))
        if kind == "agent":
            turns = self.agents.get(agent)
            return (
                turns.pop(0) if turns else Turn(self.agent_final_text, usage=Usage.context(8_000))
            )
        if self.main:
            return self.main.pop(0)
        return Turn(self.final_text, usage=self.final_usage)


def _events(
    response_id: str, body: dict[str, Any], turn: Turn, number: int
) -> list[tuple[str | None, dict[str, Any]]]:
    model = str(body.get("model") or "gpt-test")
    base = {"id": response_id, "object": "response", "created_at": 1_800_000_000, "model": model}
    events: list[tuple[str | None, dict[str, Any]]] = []
    seq = itertools.count()

    def emit(kind: str, **data: Any) -> None:
        events.append((kind, {"type": kind, "sequence_number": next(seq), **data}))

    emit("response.created", response={**base, "status": "in_progress", "output": []})
    output: list[dict[str, Any]] = []
    if turn.text:
        item_id = f"msg_e2e_{number:04d}"
        index = len(output)
        emit(
            "response.output_item.added",
            output_index=index,
            item={
                "type": "message",
                "id": item_id,
                "status": "in_progress",
                "role": "assistant",
                "content": [],
            },
        )
        emit(
            "response.content_part.added",
            item_id=item_id,
            output_index=index,
            content_index=0,
            part={"type": "output_text", "text": "", "annotations": []},
        )
        emit(
            "response.output_text.delta",
            item_id=item_id,
            output_index=index,
            content_index=0,
            delta=turn.text,
        )
        emit(
            "response.output_text.done",
            item_id=item_id,
            output_index=index,
            content_index=0,
            text=turn.text,
        )
        item = {
            "type": "message",
            "id": item_id,
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
        }
        emit("response.output_item.done", output_index=index, item=item)
        output.append(item)
    for i, call in enumerate(turn.calls):
        index = len(output)
        call_id = f"call_e2e_{number:04d}_{i}"
        if call.custom:
            item = {
                "type": "custom_tool_call",
                "id": f"ctc_e2e_{number:04d}_{i}",
                "status": "completed",
                "call_id": call_id,
                "name": call.name,
                "input": call.arguments
                if isinstance(call.arguments, str)
                else json.dumps(call.arguments),
            }
        else:
            item = {
                "type": "function_call",
                "id": f"fc_e2e_{number:04d}_{i}",
                "status": "completed",
                "call_id": call_id,
                "name": call.name,
                "arguments": call.arguments
                if isinstance(call.arguments, str)
                else json.dumps(call.arguments),
            }
            if call.namespace:
                item["namespace"] = call.namespace
        emit(
            "response.output_item.added", output_index=index, item={**item, "status": "in_progress"}
        )
        emit("response.output_item.done", output_index=index, item=item)
        output.append(item)
    emit(
        "response.completed",
        response={**base, "status": "completed", "output": output, "usage": turn.usage.as_api()},
    )
    return events


def codex_config(base_url: str, *, model: str = "gpt-5-codex", extra: str = "") -> str:
    """``config.toml`` for a Codex that talks only to the scripted server."""
    from .sandbox import OPENAI_ENV_KEY

    return (
        f'model = "{model}"\n'
        'model_provider = "e2e"\n'
        'approval_policy = "never"\n'
        'sandbox_mode = "danger-full-access"\n'
        "check_for_update_on_startup = false\n"
        f"{extra}"
        "\n[model_providers.e2e]\n"
        'name = "e2e scripted"\n'
        f'base_url = "{base_url}/v1"\n'
        'wire_api = "responses"\n'
        f'env_key = "{OPENAI_ENV_KEY}"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
        "\n[analytics]\nenabled = false\n"
        '\n[otel]\nexporter = "none"\n'
    )
