"""A scripted OpenAI-compatible chat endpoint on 127.0.0.1, in a thread, for the tests of the
agent loop (tests/loop/test_openai_agent.py) and the summarizer (tests/lifecycle/test_summarizers.py).

A reply is a function of the request body giving ``(status, body)``, or None to hang until the
test is over (the endpoint is released when the block ends). Nothing here reaches the network.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[dict[str, Any]], tuple[int, bytes] | None]


@dataclass
class ChatServer:
    """``replies`` in order, then ``then`` for every further request; what was asked is in
    ``requests`` (path, headers, body)."""

    url: str = ""
    replies: list[Reply] = field(default_factory=list)
    then: Reply | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    def script(self, *replies: Reply, then: Reply | None = None) -> None:
        self.replies = list(replies)
        self.then = then

    def bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        chat = self.server.chat
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        chat.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
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
