"""A scripted OpenAI-compatible chat endpoint on 127.0.0.1, in a thread, for the tests of the
agent loop (tests/loop/test_openai_agent.py), the summarizer (tests/lifecycle/test_summarizers.py)
and the Mem0 backends (tests/memory/test_store_conformance.py).

A reply is a function of the request body giving ``(status, body)``, or None to hang until the
test is over (the endpoint is released when the block ends). ``POST .../embeddings`` is
answered apart from the script, by ``embeddings`` (default: deterministic hashed bag-of-words
vectors, :func:`hashed_embedding`), so a chat script is not disturbed by Mem0's embedding
calls. Nothing here reaches the network.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[dict[str, Any]], tuple[int, bytes] | None]


def hashed_embedding(text: str, dims: int) -> list[float]:
    """A unit vector of ``dims`` places: each word of ``text`` (case-folded) adds 1 at the
    place its SHA-256 picks. Texts sharing words are similar; the same text, the same vector."""
    vector = [0.0] * dims
    for word in re.findall(r"[^\W_]+", text.casefold()):
        vector[int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big") % dims] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    if not any(vector):
        vector[0] = norm
    return [v / norm for v in vector]


def embeddings_reply(body: dict[str, Any]) -> tuple[int, bytes] | None:
    """The answer to ``POST /v1/embeddings``: one :func:`hashed_embedding` per input."""
    given = body["input"]
    texts = [given] if isinstance(given, str) else list(given)
    dims = body.get("dimensions") or 64
    data = [
        {"object": "embedding", "index": i, "embedding": hashed_embedding(t, dims)}
        for i, t in enumerate(texts)
    ]
    usage = {"prompt_tokens": 0, "total_tokens": 0}
    answer = {"object": "list", "data": data, "model": body["model"], "usage": usage}
    return 200, json.dumps(answer).encode()


def chat_reply(content: str) -> Reply:
    """A reply: a chat completion whose message is ``content``."""

    def reply(body: dict[str, Any]) -> tuple[int, bytes]:
        answer = {
            "id": "scripted",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "m"),
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": content},
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        return 200, json.dumps(answer).encode()

    return reply


@dataclass
class ChatServer:
    """``replies`` in order, then ``then`` for every further request; what was asked is in
    ``requests`` (path, headers, body)."""

    url: str = ""
    replies: list[Reply] = field(default_factory=list)
    then: Reply | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    embeddings: Reply = embeddings_reply

    def script(self, *replies: Reply, then: Reply | None = None) -> None:
        self.replies = list(replies)
        self.then = then

    def bodies(self, path: str = "/chat/completions") -> list[dict[str, Any]]:
        """The bodies of the requests to ``path`` (the chat completions by default)."""
        return [r["body"] for r in self.requests if r["path"].endswith(path)]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        chat = self.server.chat
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        chat.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
        if self.path.rstrip("/").endswith("/embeddings"):
            reply: Reply | None = chat.embeddings
        else:
            reply = chat.replies.pop(0) if chat.replies else chat.then
        assert reply is not None, "the script ran out of replies"
        answered = reply(body)
        if answered is None:  # hang: until the test is over
            chat.release.wait()
            return
        code, data = answered
        self.send_response(code)
        if code in (301, 302, 307, 308):
            self.send_header("Location", f"{chat.url}/elsewhere")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 -- the base's name
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    chat: ChatServer

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that gave up (a timeout test) is no failure of the server


@contextmanager
def serve(chat: ChatServer) -> Iterator[ChatServer]:
    """``chat`` served on 127.0.0.1 for the block; a request hanging in it is released at
    the end."""
    server = _Server(("127.0.0.1", 0), _Handler)
    chat.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.chat = chat
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield chat
    finally:
        chat.release.set()
        server.shutdown()
        server.server_close()
        thread.join()
