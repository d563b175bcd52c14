"""The MCP server's standard input and output, guarded: requests are read with a bound, and one
the server could not answer is answered here.

The SDK's stdio transport reads a request line whole, however long, and drops a request it
cannot parse without an answer (a line holding a lone surrogate, ``"\\ud800"``, left the client
waiting for ever). So standard input and output pass through two threads (:func:`guarded`):
the **reader** skips a line longer than :data:`MAX_REQUEST` without keeping it and answers it
with an error, answers a line holding a lone surrogate with an error for its ``id``, and
passes every other line to the SDK unchanged; the **writer** passes the SDK's output on line
by line, so that an error the reader writes never lands inside one of the SDK's messages.
The errors are JSON-RPC's "invalid request" (-32600), with the request's ``id`` when it can be
read. The SDK reads and writes its descriptors 0 and 1 as ever.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from typing import TYPE_CHECKING

from clm_policy.base.surrogates import lone_surrogate

if TYPE_CHECKING:
    from collections.abc import Iterator

MiB = 1024 * 1024
MAX_REQUEST = 4 * MiB
"""The longest request line read: a handoff or a topic (64 KiB of text, at most six bytes a
character once escaped) is far below it."""
CHUNK = 64 * 1024
INVALID_REQUEST = -32600


class _Out:
    """The real standard output, written a whole line at a time by either thread; what the
    writer has read from the SDK and what it has written on, in bytes."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.lock = threading.Lock()
        self.read = 0
        self.written = 0

    def line(self, data: bytes) -> None:
        with self.lock:
            _write_all(self.fd, data)


def error_line(request_id: object, message: str) -> bytes:
    """A JSON-RPC error answer, as one line."""
    answer = {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": INVALID_REQUEST, "message": f"invalid request: {message}"},
    }
    return json.dumps(answer).encode() + b"\n"


def _request_id(text: str) -> tuple[bool, object]:
    """Whether ``text`` is a request with an ``id`` (a notification has none), and the id."""
    try:
        message = json.loads(text)
    except ValueError:
        return True, None
    if isinstance(message, dict) and "id" in message:
        found = message["id"]
        return True, found if isinstance(found, str | int) and not isinstance(found, bool) else None
    return False, None


def _pass_on(line: bytes, end: bytes, sink: int, out: _Out) -> None:
    """Write ``line`` and ``end`` to ``sink`` for the SDK, unless it is answered here."""
    text = line.decode("utf-8", "replace")
    found = lone_surrogate(text) if "\\u" in text else None
    if found is None:
        _write_all(sink, line + end)
        return
    asks, request_id = _request_id(text)
    if asks:  # (a notification gets no answer, a refused one neither)
        out.line(
            error_line(
                request_id,
                f"a lone surrogate ({found[1]}) at character {found[0]}: not Unicode text",
            )
        )


def read_requests(source: int, sink: int, out: _Out, limit: int = MAX_REQUEST) -> None:
    """Copy request lines from ``source`` to ``sink`` until ``source`` ends (see the module
    docstring), then close ``sink``."""
    kept = bytearray()
    skipping = False  # inside a line over the limit: read to its end, keep nothing
    try:
        while chunk := os.read(source, CHUNK):
            for n, piece in enumerate(chunk.split(b"\n")):
                if n:  # a newline ended the line before this piece
                    if not skipping:
                        _pass_on(bytes(kept), b"\n", sink, out)
                    kept.clear()
                    skipping = False
                if not skipping:
                    kept += piece
                    if len(kept) > limit:
                        out.line(
                            error_line(None, f"a line longer than {limit // MiB} MiB, not read")
                        )
                        kept.clear()
                        skipping = True
        if kept and not skipping:
            _pass_on(bytes(kept), b"", sink, out)
    except OSError:
        pass  # the SDK has gone: nothing more to pass on
    finally:
        with contextlib.suppress(OSError):
            os.close(sink)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def pass_answers(source: int, out: _Out) -> None:
    """Copy the SDK's output from ``source`` to the real standard output, a line at a time."""
    pending = bytearray()
    with contextlib.suppress(OSError):
        while chunk := os.read(source, CHUNK):
            out.read += len(chunk)
            pending += chunk
            end = pending.rfind(b"\n")
            if end >= 0:
                out.line(bytes(pending[: end + 1]))
                out.written += end + 1
                del pending[: end + 1]
        if pending:
            out.line(bytes(pending))
            out.written += len(pending)


def _unread(fd: int) -> int:
    """Bytes waiting in the pipe ``fd`` (0 where that cannot be asked)."""
    try:
        import fcntl
        import termios

        return int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"), "little")
    except (ImportError, OSError):
        return 0


@contextlib.contextmanager
def guarded(limit: int = MAX_REQUEST) -> Iterator[None]:
    """Inside: descriptors 0 and 1 are pipes to and from the two threads, which hold the
    real standard input and output; on leaving, what the SDK wrote last is passed on (the
    SDK keeps a copy of its output descriptor open, so the writer never sees it end: it is
    waited for until the pipe is empty and every line read is written)."""
    real_in, real_out = os.dup(0), os.dup(1)
    to_sdk_r, to_sdk_w = os.pipe()
    from_sdk_r, from_sdk_w = os.pipe()
    os.dup2(to_sdk_r, 0)
    os.dup2(from_sdk_w, 1)
    os.close(to_sdk_r)
    os.close(from_sdk_w)
    out = _Out(real_out)
    reader = threading.Thread(
        target=read_requests, args=(real_in, to_sdk_w, out, limit), daemon=True
    )
    writer = threading.Thread(target=pass_answers, args=(from_sdk_r, out), daemon=True)
    reader.start()
    writer.start()
    try:
        yield
    finally:
        import time

        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (_unread(from_sdk_r) or out.read != out.written):
            time.sleep(0.01)
