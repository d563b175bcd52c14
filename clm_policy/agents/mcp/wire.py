"""The MCP server's standard input and output, guarded: requests are read with a bound, and one
the server could not answer is answered here.

The SDK's stdio transport reads a request line whole, however long, and drops a line that is
no JSON-RPC message it can read without an answer, leaving the client waiting for ever: no JSON
at all, no ``"jsonrpc": "2.0"``, an ``id`` neither a string nor an integer, ``params`` not an
object, a batch (a JSON array: MCP has none), a lone surrogate (``"\\ud800"``). So standard
input and output pass through two threads (:func:`guarded`): the **reader** answers a line
longer than :data:`MAX_REQUEST` (without keeping it) and each of those lines with JSON-RPC's
error (:func:`answer`), and passes every other line to the SDK unchanged; the **writer**
passes the SDK's output on line by line, so that an error the reader writes never lands
inside one of the SDK's messages. A ``tools/call`` without ``name`` (or with ``arguments``
not an object) is answered here too, saying which: the SDK says "Invalid request parameters";
so is a request before ``initialize``.

An error answers with the request's ``id`` when it is a string or an integer, else ``null``;
a notification and a response are never answered.

Ctrl-C (SIGINT) ends the server as the end of its input does: the requests in flight are
answered, then the SDK is given the end of its input and stops (:class:`_Interrupt`); a second
Ctrl-C ends the process at once. The SDK alone would wait for ever on its thread reading
standard input, and ignore every Ctrl-C after the first.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
from typing import TYPE_CHECKING

from clm_policy.base.surrogates import lone_surrogate

if TYPE_CHECKING:
    from collections.abc import Iterator

MiB = 1024 * 1024
MAX_REQUEST = 4 * MiB  # a handoff or a topic (64 KiB, six bytes a character escaped) is below
CHUNK = 64 * 1024
SETTLE = 600.0
"""The longest wait, at the end of standard input, for the answers to requests in flight."""
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
_WORDS = {
    PARSE_ERROR: "parse error",
    INVALID_REQUEST: "invalid request",
    INVALID_PARAMS: "invalid params",
}


class _Out:
    """The real standard output, written a whole line at a time by either thread; the bytes
    the writer has read from the SDK and written on; the ids of the requests the SDK has not
    answered yet."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.lock = threading.Lock()
        self.read = 0
        self.written = 0
        self.waiting: set[object] = set()
        self.changed = threading.Condition()
        self.initialized = False  # (an initialize request was passed to the SDK)

    def line(self, data: bytes) -> None:
        with self.lock:
            _write_all(self.fd, data)

    def asked(self, text: bytes) -> None:
        """Note a request passed to the SDK, or forget one cancelled (it may answer none)."""
        message = _message(text)
        with self.changed:
            if "method" in message and _usable_id(message) is not None:
                self.waiting.add(_usable_id(message))
            elif message.get("method") == "notifications/cancelled":
                params = message.get("params")
                if isinstance(params, dict):
                    self.waiting.discard(params.get("requestId"))
            self.changed.notify_all()

    def answered(self, lines: bytes) -> None:
        """Forget the requests the SDK's output ``lines`` answer."""
        with self.changed:
            for text in lines.splitlines():
                message = _message(text)
                if "result" in message or "error" in message:
                    self.waiting.discard(message.get("id"))
            self.changed.notify_all()

    def settle(self, writer: threading.Thread, limit: float = SETTLE) -> None:
        """Wait, at most ``limit`` seconds, until the SDK has answered every request passed
        to it, or its output has ended: at the end of standard input the SDK stops, and an
        answer not written yet is lost (a tool's commit made, and never reported)."""
        import time

        deadline = time.monotonic() + limit
        with self.changed:
            while self.waiting and writer.is_alive():
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self.changed.wait(min(left, 0.5))


class _SdkInput:
    """The write end of the SDK's standard input, ended once, by whichever comes first: the
    end of the real standard input, or Ctrl-C (from another thread)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.lock = threading.Lock()
        self.ended = False

    def end(self) -> None:
        """The SDK reads the end of its input. The descriptor becomes /dev/null rather than
        closed: its number stays this pipe's, so a line the reader writes after it is lost,
        never written into a file opened since."""
        with self.lock:
            if self.ended:
                return
            self.ended = True
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.fd)
            os.close(devnull)


def _message(text: bytes) -> dict[str, object]:
    """The JSON object on the line ``text``, or {} (a line the wire read before: valid)."""
    try:
        found = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    return found if isinstance(found, dict) else {}


def _error(request_id: object, message: str, code: int = INVALID_REQUEST) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": code, "message": f"{_WORDS[code]}: {message}"},
    }


def error_line(request_id: object, message: str, code: int = INVALID_REQUEST) -> bytes:
    return json.dumps(_error(request_id, message, code)).encode() + b"\n"


def _usable_id(message: dict[str, object]) -> object:
    """The request's ``id`` to answer with, else None (``null``)."""
    found = message.get("id")
    return found if isinstance(found, str | int) and not isinstance(found, bool) else None


def _problem(message: dict[str, object]) -> tuple[int, str] | None:
    """What is wrong with ``message`` that the SDK would drop it, or answer without saying
    what; None: nothing."""
    if message.get("jsonrpc") != "2.0":
        return INVALID_REQUEST, "'jsonrpc' must be \"2.0\""
    if "id" in message and _usable_id(message) is None:
        return INVALID_REQUEST, "'id' must be a string or an integer"
    method, params = message.get("method"), message.get("params")
    if not isinstance(method, str):
        return (
            INVALID_REQUEST,
            "'method' must be a string" if "method" in message else "no 'method'",
        )
    if params is not None and not isinstance(params, dict):
        return INVALID_PARAMS, "'params' must be an object"
    if method != "tools/call":
        return None
    if params is None or "name" not in params:
        return INVALID_PARAMS, "tools/call needs 'name' in its params: the tool to call"
    if not isinstance(params["name"], str):
        return INVALID_PARAMS, "'name' must be a string: the tool to call"
    if params.get("arguments") is not None and not isinstance(params["arguments"], dict):
        return INVALID_PARAMS, "'arguments' must be an object: the tool's arguments by name"
    return None


def _unanswered(message: dict[str, object]) -> bool:
    """Whether JSON-RPC never answers ``message``: a notification or a response."""
    if "method" in message:
        return "id" not in message
    return "result" in message or "error" in message


def _answered(message: object, surrogate: tuple[int, str] | None) -> dict[str, object] | None:
    """The error answering one message the SDK would not answer (or not say why), or None."""
    if not isinstance(message, dict):
        return _error(None, "not a JSON-RPC message (a JSON object)")
    problem: tuple[int, str] | None
    if surrogate is not None:
        at, escape = surrogate
        problem = (
            INVALID_REQUEST,
            f"a lone surrogate ({escape}) at character {at}: not Unicode text",
        )
    else:
        problem = _problem(message)
    if problem is None or _unanswered(message):
        return None
    return _error(_usable_id(message), problem[1], problem[0])


def _batch(messages: list[object]) -> bytes | None:
    """The answer to a batch: one error for each of its requests, in an array."""
    if not messages:
        return error_line(None, "an empty batch")
    errors = [
        _error(
            _usable_id(m) if isinstance(m, dict) else None,
            "a batch (a JSON array): MCP takes one message a line",
        )
        for m in messages
        if not (isinstance(m, dict) and _unanswered(m))
    ]
    return json.dumps(errors).encode() + b"\n" if errors else None


def answer(text: str) -> tuple[bool, bytes | None]:
    """Whether the request line ``text`` goes to the SDK, and the line answering it here."""
    surrogate = lone_surrogate(text) if "\\u" in text else None
    try:
        message = json.loads(text)
    except (ValueError, RecursionError) as exc:
        if not text.strip():
            return True, None  # a blank line: no message
        why = (
            f"{exc.msg} at character {exc.pos}"
            if isinstance(exc, json.JSONDecodeError)
            else "nested too deep"
        )
        return False, error_line(None, f"not JSON ({why})", PARSE_ERROR)
    if isinstance(message, list):
        return False, _batch(message)
    error = _answered(message, surrogate)
    if error is not None:
        return False, json.dumps(error).encode() + b"\n"
    return surrogate is None, None  # (a notification with a lone surrogate: dropped here)


def _before_initialize(line: bytes, out: _Out) -> tuple[bool, bytes | None]:
    """A request before ``initialize`` (ping aside) is answered here: the SDK says "Invalid
    request parameters" alone, and the client's author looks for a wrong parameter."""
    message = _message(line)
    method = message.get("method")
    if method == "initialize":
        out.initialized = True
    elif method != "ping" and "id" in message and "method" in message:
        why = f"{method!r} before 'initialize': a session starts with the initialize request"
        return False, error_line(_usable_id(message), why)
    return True, None


def _pass_on(line: bytes, end: bytes, sink: _SdkInput, out: _Out) -> None:
    passes, error = answer(line.decode("utf-8", "replace"))
    if passes and not out.initialized:
        passes, error = _before_initialize(line, out)
    if passes:
        out.asked(line)
        _write_all(sink.fd, line + end)
    if error is not None:
        out.line(error)


def read_requests(
    source: int,
    sink: _SdkInput,
    out: _Out,
    limit: int = MAX_REQUEST,
    writer: threading.Thread | None = None,
) -> None:
    """Copy request lines from ``source`` to ``sink`` until ``source`` ends, then, once the
    SDK has answered what it was passed (``writer``: the thread passing its answers on),
    end ``sink``."""
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
        if writer is not None:
            out.settle(writer)
    except OSError:
        pass  # the SDK has gone: nothing more to pass on
    finally:
        with contextlib.suppress(OSError):
            sink.end()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def pass_answers(source: int, out: _Out) -> None:
    pending = bytearray()
    with contextlib.suppress(OSError):
        while chunk := os.read(source, CHUNK):
            out.read += len(chunk)
            pending += chunk
            end = pending.rfind(b"\n")
            if end >= 0:
                out.line(bytes(pending[: end + 1]))
                out.written += end + 1
                out.answered(bytes(pending[: end + 1]))
                del pending[: end + 1]
        if pending:
            out.line(bytes(pending))
            out.written += len(pending)


def _unread(fd: int) -> int:
    try:
        import fcntl
        import termios

        return int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"), "little")
    except (ImportError, OSError):
        return 0


class _Interrupt:
    """Ctrl-C while the server serves: the first answers the requests in flight and then ends
    the SDK's input (the SDK stops as at the end of standard input); a second ends the
    process at once, with 130."""

    def __init__(self, sink: _SdkInput, out: _Out, writer: threading.Thread) -> None:
        self.sink, self.out, self.writer = sink, out, writer
        self.interrupted = False
        self.previous = signal.getsignal(signal.SIGINT)
        self.installed = False

    def install(self) -> None:
        """Handle SIGINT from now on (not one the parent chose to ignore; only the main thread
        can)."""
        if threading.current_thread() is threading.main_thread() and self.previous not in (
            signal.SIG_IGN,
            None,
        ):
            signal.signal(signal.SIGINT, self.handle)
            self.installed = True

    def restore(self) -> None:
        if self.installed and self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
            self.installed = False

    def handle(self, _signum: int, _frame: object) -> None:
        from clm_policy.base.termsafe import write_fd

        if self.interrupted:
            with contextlib.suppress(OSError):
                write_fd(2, "\nclm-policy: interrupted")
            os._exit(130)
        self.interrupted = True
        if self.out.waiting:
            with contextlib.suppress(OSError):
                write_fd(2, f"\nclm-policy mcp: {IN_FLIGHT}")
        threading.Thread(target=self._end_input, daemon=True).start()

    def _end_input(self) -> None:
        self.out.settle(self.writer)
        with contextlib.suppress(OSError):
            self.sink.end()


IN_FLIGHT = "interrupted: answering the requests in flight first (Ctrl-C again stops at once)"


@contextlib.contextmanager
def guarded(limit: int = MAX_REQUEST) -> Iterator[_Interrupt]:
    """Inside: descriptors 0 and 1 are pipes to and from the two threads, which hold the
    real standard input and output, and Ctrl-C ends the server (what it yields says whether
    it did); on leaving, what the SDK wrote last is passed on (the SDK keeps its output open,
    so the writer never sees it end: the pipe is waited for)."""

    real_in, real_out = os.dup(0), os.dup(1)
    to_sdk_r, to_sdk_w = os.pipe()
    from_sdk_r, from_sdk_w = os.pipe()
    os.dup2(to_sdk_r, 0)
    os.dup2(from_sdk_w, 1)
    os.close(to_sdk_r)
    os.close(from_sdk_w)
    out, sink = _Out(real_out), _SdkInput(to_sdk_w)
    writer = threading.Thread(target=pass_answers, args=(from_sdk_r, out), daemon=True)
    reader = threading.Thread(
        target=read_requests, args=(real_in, sink, out, limit, writer), daemon=True
    )
    interrupt = _Interrupt(sink, out, writer)
    interrupt.install()
    writer.start()  # (first: the reader, at the end of its input, waits on it)
    reader.start()
    try:
        yield interrupt
    finally:
        import time

        interrupt.restore()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (_unread(from_sdk_r) or out.read != out.written):
            time.sleep(0.01)
