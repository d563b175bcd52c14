"""A loopback HTTP server in a thread that logs every request and asks an app for the answer.

Both scripted model servers (anthropic.py, responses.py) are apps: ``handle(request)`` returns
a :class:`Reply` (JSON, or server-sent events). Every request — path, headers, body, and what
the app made of it — lands in ``requests`` (and, when ``log_path`` is set, as one JSON line in
that file, written as it happens, so a hung agent still leaves its trail).
"""

from __future__ import annotations

import gzip
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol


@dataclass
class Request:
    """One request as the server saw it; ``kind`` and ``note`` are filled in by the app."""

    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    kind: str = ""
    note: dict[str, Any] = field(default_factory=dict)
    time: float = 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "method": self.method,
            "path": self.path,
            "kind": self.kind,
            "note": self.note,
            "headers": self.headers,
            "body": self.body,
        }


@dataclass
class Reply:
    status: int = 200
    json_body: Any = None
    events: list[tuple[str | None, dict[str, Any]]] | None = None  # SSE: (event name, data)
    raw: bytes | None = None  # sent as it is, as an event stream (a broken server's answer)

    def payload(self) -> tuple[str, bytes]:
        if self.raw is not None:
            return "text/event-stream", self.raw
        if self.events is not None:
            chunks = []
            for name, data in self.events:
                head = f"event: {name}\n" if name else ""
                chunks.append(f"{head}data: {json.dumps(data)}\n\n")
            return "text/event-stream", "".join(chunks).encode()
        return "application/json", json.dumps(self.json_body).encode()


class App(Protocol):
    def handle(self, request: Request) -> Reply: ...


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if raw and (self.headers.get("Content-Encoding") or "").lower() == "gzip":
            raw = gzip.decompress(raw)
        body: Any
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        log = self.server.log
        request = log.add(self.command, self.path, dict(self.headers), body)
        try:
            reply = log.app.handle(request)
        except Exception as exc:  # the test sees it in the log; the agent sees a 500
            request.note["error"] = repr(exc)
            reply = Reply(500, {"type": "error", "error": {"type": "api_error", "message": "x"}})
        log.written(request)
        content_type, data = reply.payload()
        self.send_response(reply.status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        if reply.events is not None:
            self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _serve

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 -- the base's name
        pass


@dataclass
class RequestLog:
    app: App
    log_path: Path | None = None
    requests: list[Request] = field(default_factory=list)
    url: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, method: str, path: str, headers: dict[str, str], body: Any) -> Request:
        with self._lock:
            request = Request(len(self.requests), method, path, headers, body, time=time.time())
            self.requests.append(request)
            return request

    def written(self, request: Request) -> None:
        if self.log_path is None:
            return
        with self._lock, self.log_path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(request.as_json()) + "\n")

    def of_kind(self, *kinds: str) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.kind in kinds]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    log: RequestLog

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that hung up mid-answer is no failure of the server


@contextmanager
def serve(app: App, log_path: Path | None = None) -> Iterator[RequestLog]:
    """``app`` on 127.0.0.1 (a free port) for the block."""
    server = _Server(("127.0.0.1", 0), _Handler)
    log = RequestLog(app, log_path)
    log.url = f"http://127.0.0.1:{server.server_address[1]}"
    server.log = log
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield log
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
