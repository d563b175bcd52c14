"""The offline stand-in for Mem0's model: no model at all, a deterministic OpenAI-compatible
endpoint on 127.0.0.1, so that the ``mem0`` and ``hybrid`` backends run — and an experiment
repeats — with no network, no key and no weights (``CLM_POLICY_MEM0_BASE_URL=offline``, or
``mem0: {model: offline}`` in an experiment file).

It answers the two requests Mem0 2.x makes (DESIGN.md §12):

- ``POST /v1/chat/completions`` (fact extraction): every sentence of the prompt's
  ``## New Messages`` with at least :data:`MIN_WORDS` content words is one fact, unless a fact
  of the same shape (digits aside: ``part 3`` is ``part 7``) is among the existing memories
  Mem0 lists or was taken already. A model would judge what is worth keeping; this keeps
  every sentence that says something, which is what makes it repeatable.
- ``POST /v1/embeddings``: hashed bag-of-words vectors (each content word adds ±1 at a place
  its BLAKE2 hash picks; normalised), so similarity is word overlap, not meaning.

What an experiment measures with it is therefore the architecture — what a compaction hands
to Mem0 and whether a handoff's seed gets it back by similarity — not Mem0's extraction or a
real embedding model's recall (docs/experiments.md).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from clm_policy.base.words import STOP_WORDS as BASE_STOP_WORDS

MIN_WORDS = 3
MAX_FACTS = 20
MAX_BODY = 16 * 1024 * 1024
STOP_WORDS = BASE_STOP_WORDS | {"i", "our", "we", "you"}  # and the persons of a chat
_WORD = re.compile(r"[^\W_]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_ROLE = re.compile(r"^(user|assistant|system): ", re.M)


def content_words(text: str) -> list[str]:
    """The words that carry meaning: case-folded, no stop words, at least two characters
    (a number of one digit too)."""
    words = _WORD.findall(text.casefold())
    return [w for w in words if w not in STOP_WORDS and (len(w) > 1 or w.isdigit())]


def embed(text: str, dims: int) -> list[float]:
    """A hashed bag-of-words vector of ``text``, of length 1 (``dims`` places)."""
    vector = [0.0] * dims
    for word in content_words(text):
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        number = int.from_bytes(digest, "big")
        vector[number % dims] += 1.0 if number >> 63 else -1.0
    norm = math.sqrt(sum(v * v for v in vector))
    if not norm:
        vector[0] = 1.0
        return vector
    return [v / norm for v in vector]


def _shape(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.casefold().split()))


def _section(prompt: str, title: str) -> str:
    start = prompt.find(f"## {title}\n")
    if start < 0:
        return ""
    start += len(title) + 4
    end = prompt.find("\n\n## ", start)
    return prompt[start : end if end >= 0 else len(prompt)]


def extract(prompt: str) -> list[dict[str, str]]:
    """The facts of Mem0's extraction prompt (see the module's docstring)."""
    try:
        existing = json.loads(_section(prompt, "Existing Memories") or "[]")
    except ValueError:
        existing = []
    seen = {_shape(str(m.get("text", ""))) for m in existing if isinstance(m, dict)}
    messages = _section(prompt, "New Messages")
    found: list[dict[str, str]] = []
    turns = _ROLE.split(messages)[1:]  # role, what it says, role, ...
    for role, body in zip(turns[::2], turns[1::2], strict=True):
        for line in body.splitlines():
            for sentence in _SENTENCE.split(line.strip()):
                text = sentence.strip()
                shape = _shape(text)
                if len(content_words(text)) < MIN_WORDS or shape in seen:
                    continue
                seen.add(shape)
                found.append({"id": str(len(found)), "text": text, "attributed_to": role})
                if len(found) >= MAX_FACTS:
                    return found
    return found


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= MAX_BODY:
            self._send(413, {"error": {"message": "no body, or too large"}})
            return
        try:
            body = json.loads(self.rfile.read(length))
        except ValueError:
            self._send(400, {"error": {"message": "not JSON"}})
            return
        path = self.path.rstrip("/")
        if path.endswith("/embeddings"):
            self._send(200, _embeddings(body))
        elif path.endswith("/chat/completions"):
            self._send(200, _completion(body))
        else:
            self._send(404, {"error": {"message": "unknown path"}})

    def _send(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 -- the base's name
        pass


def _embeddings(body: dict[str, Any]) -> dict[str, Any]:
    given = body.get("input")
    texts = [given] if isinstance(given, str) else [str(t) for t in given or []]
    dims = body.get("dimensions")
    size = dims if isinstance(dims, int) and 0 < dims <= 65_536 else 256
    return {
        "object": "list",
        "data": [
            {"object": "embedding", "index": i, "embedding": embed(t, size)}
            for i, t in enumerate(texts)
        ],
        "model": str(body.get("model", "offline")),
        "usage": {"prompt_tokens": 0, "total_tokens": 0},
    }


def _completion(body: dict[str, Any]) -> dict[str, Any]:
    messages = body.get("messages") or []
    last = messages[-1] if messages and isinstance(messages[-1], dict) else {}
    facts = extract(str(last.get("content", "")))
    return {
        "id": "offline",
        "object": "chat.completion",
        "created": 0,
        "model": str(body.get("model", "offline")),
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": json.dumps({"memory": facts})},
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that went away is no failure of the stand-in


class OfflineModel:
    """The stand-in served on 127.0.0.1 (a free port) while it is open: ``url`` is its base
    URL (``http://127.0.0.1:PORT/v1``)."""

    def __init__(self) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="clm-mem0-offline", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
