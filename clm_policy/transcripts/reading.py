"""A real agent's transcript as clm-policy reads it: the common result, the file access, the
dispatch by format.

Three formats are read: ``claude-code`` (Claude Code's session JSONL), ``codex`` (Codex CLI's
rollout JSONL) and ``openai`` (a JSON list of OpenAI-style chat messages, or an object with
``messages`` and ``usage``).

- :func:`read_transcript` reads the whole file and fills every field of a
  :class:`TranscriptReading`: the context figures, the goal, the changed files, the commands
  and their results, the compactions.
- :func:`read_context` fills only the figures (context, window, model, estimated) and reads
  the file *from the end*, block by block, until the line that holds the last figure: a
  100 MB transcript costs the few kilobytes after its last model response. It runs on every
  prompt in a hook, so it imports nothing heavy; its figures equal :func:`read_transcript`'s
  (tests/transcripts/test_transcripts.py pins this on every fixture).
- :func:`detect_format` tells the format from the last few lines, else the first ones.

Transcripts are written while they are read: a truncated *last* line is normal and only
warned about. Any other problem with the file is an :class:`~clm_policy.base.errors.InputError`
with its location, never a traceback; messages quote at most a few characters of a line.
"""

from __future__ import annotations

import json
import os
import stat

from clm_policy.base.errors import InputError, Location, shorten
from clm_policy.base.lazypattern import LazyPattern
from clm_policy.base.record import Record, field
from clm_policy.models.enums import CHARS_PER_TOKEN

TYPE_CHECKING = False
if TYPE_CHECKING:  # decide and the hooks read transcripts per prompt: no typing at run time
    from collections.abc import Iterator
    from typing import Any, BinaryIO, Protocol

    from clm_policy.models.state import SessionState
    from clm_policy.transcripts.work import Work

FORMATS = ("claude-code", "codex", "openai")
NAMES = {
    "claude-code": "Claude Code transcript",
    "codex": "Codex rollout",
    "openai": "OpenAI chat transcript",
}

BLOCK = 64 * 1024
"""Bytes read at a time from the end of a file."""
MAX_TAIL_SCAN = 32 * 1024 * 1024
"""Bytes :func:`read_context` reads from the end at most before it settles for an estimate."""
MAX_LINE = 64 * 1024 * 1024
"""A longer line is skipped (with a warning) rather than held in memory."""
MAX_DOCUMENT = 64 * 1024 * 1024
"""The largest JSON document (format ``openai``) read whole."""
GOAL_LIMIT = 2000
MESSAGE_LIMIT = 2000
COMMAND_LIMIT = 50
WARNING_LIMIT = 20
TEXT_PARTS = ("input_text", "output_text", "text")
"""The types of an OpenAI chat or Codex message's parts that hold its text."""
_DETECT_LINES = 5
_DETECT_SCAN = 1024 * 1024

TRUNCATED = "the last line is incomplete (the agent may still be writing it); ignored"
EMPTY = "the transcript is empty"
NOT_COUNTED = "characters / 4; system prompt and tool definitions not counted"


class NotATranscript(InputError):
    """The file is another document clm-policy reads, not a transcript: ``found`` names it
    (``state``: a SessionState), for the caller that knows which option takes it."""

    def __init__(self, message: str, location: Location | None = None, *, found: str) -> None:
        super().__init__(message, location)
        self.found = found


Turn = tuple[int, int, int, int]
"""One model request of the session's main chain, in a full read's ``turns``: (step, context
tokens, cumulative input tokens, cumulative output tokens) — the figures as they stood then."""
Compaction = tuple[int, "int | None", "str | None"]
"""One compaction by the agent itself, in a full read's ``compactions``: (the step it came
after, the context before it when the transcript says, its trigger: ``auto``, ``manual`` or
None when the transcript does not say)."""


class TranscriptReading(Record):
    """What a transcript says about its session: the context figures, and with a full read
    (``full``) the goal, the work done and the compactions.

    ``context_tokens`` is what sits in the model's context window now (never a running sum);
    ``context_estimated`` says it is characters / 4 rather than a provider's figure, and
    ``warnings`` says why. ``input_tokens``/``output_tokens`` are cumulative over the
    session's requests (cost metrics). ``bytes_read`` is how much of the file was read;
    ``bytes_after``, of a tail read, how much of it follows the line the context figure comes
    from (None: the figure is an estimate, or the read was not a tail read).
    A full read of a Claude Code or Codex transcript also gives the series of the session:
    ``turns`` (:data:`Turn`, one per request with a usage figure) and ``compactions``
    (:data:`Compaction`), and what the session did for a handoff: ``work``
    (:class:`~clm_policy.transcripts.work.Work`: requests, task list, runs judged from their
    output, files as they are); a tail read leaves them None. ``compacted_at_tokens`` and
    ``compacted_to_tokens`` are the agent's own figures before and right after its last
    compaction, when the transcript says (Claude Code's ``preTokens``/``postTokens``).
    """

    format: str
    path: str
    context_tokens: int
    context_estimated: bool
    context_window: int | None = None
    model: str | None = None
    session_id: str | None = None
    agent_id: str | None = None
    cwd: str | None = None
    step_index: int = 0
    compact_count: int = 0
    last_compact_step: int | None = None
    compacted_at_tokens: int | None = None
    compacted_to_tokens: int | None = None
    goal: str = ""
    changed_artifacts: list[str] = field(default_factory=list)
    commands_and_results: list[str] = field(default_factory=list)
    last_assistant_message: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    warnings: list[str] = field(default_factory=list)
    full: bool = True
    bytes_read: int = 0
    bytes_after: int | None = None
    turns: list[Turn] | None = None
    compactions: list[Compaction] | None = None
    work: Work | None = None

    def state_session_id(self) -> str:
        """A session id the memory repository accepts, derived from the agent's own id (a
        subagent's gets its agent id appended), else from the file name."""
        from clm_policy.memory.layout import check_session, is_session

        raw = self.session_id
        if raw and self.agent_id:
            raw = f"{raw}-agent-{self.agent_id}"
        for candidate in (raw, os.path.splitext(os.path.basename(self.path))[0], "transcript"):
            safe = _safe_id(candidate)
            if safe and is_session(safe):
                try:
                    return check_session(safe)
                except InputError:  # it looks like a secret: never commit it as a name
                    continue
        return "transcript"

    def to_figures(self) -> SessionState:
        """The reading as a state of figures: what a decision from a transcript's tail reads
        — the context, the window, the model, the steps and compactions known."""
        from clm_policy.models.enums import FIGURES
        from clm_policy.models.state import SessionState, TokenSnapshot

        last_compact = self.last_compact_step
        if last_compact is not None:
            last_compact = min(last_compact, self.step_index)
        return SessionState(
            session_id=FIGURES,
            tokens=TokenSnapshot(
                context_tokens=self.context_tokens,
                context_window=self.context_window,
                input_tokens=self.input_tokens,
                output_tokens=self.output_tokens,
                total_tokens=self.input_tokens + self.output_tokens,
                model=self.model,
                estimated=self.context_estimated,
            ),
            step_index=self.step_index,
            last_compact_step=last_compact,
            compact_count=self.compact_count,
        )


_NOT_IN_ID = LazyPattern(r"[^A-Za-z0-9._-]+")
_DOTS = LazyPattern(r"\.{2,}")


def _safe_id(raw: str | None) -> str:
    text = _NOT_IN_ID.sub("-", raw or "")
    text = _DOTS.sub(".", text).lstrip("._-")
    return text[:128].rstrip("-")


# ---------------------------------------------------------------------------------------------
# The public functions


def detect_format(path: str | os.PathLike[str]) -> str:
    """``claude-code``, ``codex`` or ``openai``, from the last few lines of the file, else its
    first ones; an :class:`InputError` when neither tells."""
    with Source.open(path) as src:
        return _detect(src)


def read_transcript(path: str | os.PathLike[str], fmt: str = "auto") -> TranscriptReading:
    """Read the whole transcript at ``path`` (format ``fmt``, or detected with ``auto``)."""
    return _read(path, fmt, None)


def read_context(
    path: str | os.PathLike[str], fmt: str = "auto", *, max_scan: int = MAX_TAIL_SCAN
) -> TranscriptReading:
    """Only the context figures of the transcript at ``path`` (``full`` is false), read from
    the end of the file: at most ``max_scan`` bytes, then the figure is an estimate from
    what was read (with a warning)."""
    return _read(path, fmt, max(BLOCK, max_scan))


def _read(path: str | os.PathLike[str], fmt: str, max_scan: int | None) -> TranscriptReading:
    """A full read (``max_scan`` None) or a tail read of the transcript at ``path``."""
    with Source.open(path) as src:
        name = _resolve(src, fmt)
        if name is None:
            return TranscriptReading(
                format=fmt,
                path=src.file,
                context_tokens=0,
                context_estimated=True,
                warnings=[EMPTY],
                full=max_scan is None,
                bytes_read=src.bytes_read,
            )
        reader = _reader(name)
        try:
            return reader.read_full(src) if max_scan is None else reader.read_tail(src, max_scan)
        except InputError as exc:
            if fmt == "auto" and name == "openai" and src.file.endswith(".jsonl"):
                # (the name of Claude Code's and Codex's files: no line of it is theirs)
                nor = "nor a Claude Code session or a Codex rollout (no line of either)"
                raise InputError(f"{exc.message}; {nor}", exc.location) from None
            raise exc from None


if TYPE_CHECKING:

    class _Reader(Protocol):
        def read_full(self, src: Source) -> TranscriptReading: ...

        def read_tail(self, src: Source, max_scan: int) -> TranscriptReading: ...


_MODULES = {"claude-code": "claude_code", "codex": "codex", "openai": "openai_chat"}


def _reader(name: str) -> _Reader:
    # (the import statement's own machinery: the importlib package would bring `warnings`)
    module: _Reader = __import__(f"clm_policy.transcripts.{_MODULES[name]}", fromlist=["read_tail"])
    return module


def _resolve(src: Source, fmt: str) -> str | None:
    """The format to read ``src`` as; None for an empty file of a named (and checked) format."""
    if fmt == "auto":
        return _detect(src)
    if fmt not in FORMATS:
        raise InputError(
            f"unknown transcript format {fmt!r}: use auto, {', '.join(FORMATS[:-1])} or "
            f"{FORMATS[-1]}"
        )
    return None if src.size == 0 else fmt


# ---------------------------------------------------------------------------------------------
# Telling the formats apart

CLAUDE_TYPES = frozenset(
    {"user", "assistant", "system", "summary", "file-history-snapshot", "progress",
     "queue-operation", "attachment", "last-prompt", "ai-title", "custom-title",
     "agent-name", "permission-mode"}
)  # fmt: skip
CODEX_TYPES = frozenset({"session_meta", "response_item", "compacted", "turn_context", "event_msg"})


def line_kind(obj: object) -> str | None:
    """The format one parsed line (or document) belongs to, when it says so."""
    if isinstance(obj, list):
        first = obj[0] if obj else None
        return "openai" if isinstance(first, dict) and "role" in first else None
    if not isinstance(obj, dict):
        return None
    kind = obj.get("type")
    if isinstance(kind, str):
        if kind in CODEX_TYPES and isinstance(obj.get("payload"), dict):
            return "codex"
        if kind in CLAUDE_TYPES and "payload" not in obj:
            return "claude-code"
        return None
    if isinstance(obj.get("messages"), list) or ("role" in obj and "content" in obj):
        return "openai"
    return None


def _detect(src: Source) -> str:
    empty = InputError("the file is empty: no transcript to read", Location(src.file))
    if src.size == 0:
        raise empty
    tried = 0
    for raw, _terminated in src.backward(_DETECT_SCAN):
        if not raw.strip():
            continue
        kind = line_kind(_loads(raw))
        if kind is not None:
            return kind
        tried += 1
        if tried >= _DETECT_LINES:
            break
    head = src.head(BLOCK).lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head and src.size <= BLOCK:
        raise empty
    if _wide(head):
        raise InputError(WIDE, Location(src.file))
    kind = line_kind(_loads(head.split(b"\n", 1)[0]))
    if kind is not None:
        return kind
    if head[:1] in (b"[", b"{"):  # a JSON document over several lines: the reader checks it
        return "openai"
    refuse_if_not_text(src.head(BLOCK), src.file, whole=src.size <= BLOCK)
    raise InputError(
        "cannot tell the transcript format: neither the last nor the first lines look like "
        "Claude Code, Codex or OpenAI chat messages",
        Location(src.file),
    )


def refuse_if_not_text(data: bytes, file: str, *, whole: bool) -> None:
    """Refuse ``data``, a file's first bytes (``whole``: all of them), when it is no text — a
    NUL byte, or not UTF-8 — in the words and at the place every reader of a file says so
    (``binary file (a NUL byte), not text``), rather than as a transcript of no known format."""
    from clm_policy.formats.textio import decode

    if not whole:  # (a character the block's end cut in two is no error)
        data = data[: data.rfind(b"\n") + 1]
    decode(data, file, len(data), "transcript")


WIDE = "UTF-16 or UTF-32 text, not UTF-8: convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)"


def _wide(head: bytes) -> bool:
    """Whether a file starting with ``head`` is UTF-16 or UTF-32 (a byte order mark, or NUL
    bytes beside the first character): Claude Code and Codex write UTF-8."""
    if head[:2] in (b"\xff\xfe", b"\xfe\xff") or head[:3] == b"\0\0\0":
        return True
    return len(head) > 1 and (head[0] == 0) != (head[1] == 0)


def _loads(raw: bytes) -> object:
    # UTF-8 only: json.loads(bytes) reads UTF-16 and UTF-32 too, and a line of a UTF-16 file
    # split at its newline byte read as a line of another encoding, in pieces
    try:
        return json.loads(raw.decode("utf-8").removeprefix("\ufeff"))
    except (ValueError, RecursionError):
        return None


# ---------------------------------------------------------------------------------------------
# File access


class Source:
    """An open transcript file: forward and backward line access, bytes read counted.

    Only a regular file is read: a directory, a FIFO or a device is refused before it could
    block or flood the reader.
    """

    def __init__(self, file: str, handle: BinaryIO, size: int) -> None:
        self.file = file
        self.handle = handle
        self.size = size
        self.bytes_read = 0
        self.limited = False  # a backward scan stopped at its limit

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Source:
        file = os.fspath(path)
        where = Location(file)
        try:
            fd = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except FileNotFoundError:
            raise InputError("no such file", where) from None
        except IsADirectoryError:
            raise InputError("is a directory, not a transcript file", where) from None
        except OSError as exc:  # (in the words of every other file's reader)
            raise InputError(f"cannot read: {exc.strerror or exc}", where) from None
        except ValueError:  # a NUL byte in the path
            raise InputError("invalid file name", Location(repr(file))) from None
        try:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                raise InputError("is a directory, not a transcript file", where)
            if not stat.S_ISREG(info.st_mode):
                raise InputError("is not a regular file (a pipe or a device?)", where)
            handle = os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise
        return cls(file, handle, info.st_size)

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.handle.close()

    def _read(self, size: int) -> bytes:
        try:
            data = self.handle.read(size)
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", Location(self.file)) from None
        self.bytes_read += len(data)
        return data

    def head(self, size: int) -> bytes:
        self.handle.seek(0)
        return self._read(size)

    def document(self) -> bytes:
        """The whole file, refused past :data:`MAX_DOCUMENT` bytes."""
        if self.size > MAX_DOCUMENT:
            raise InputError(
                f"the file is larger than {size_text(MAX_DOCUMENT)}: too large to read as one "
                "JSON document",
                Location(self.file),
            )
        return self.head(self.size + 1)

    def forward(self) -> Iterator[tuple[int, bytes | None, bool]]:
        """``(line number, line, terminated)`` from the start; ``line`` is None for a line
        longer than :data:`MAX_LINE` (skipped, never held)."""
        self.handle.seek(0)
        number = 0
        readline = self.handle.readline
        while True:
            try:
                raw = readline(MAX_LINE + 1)
            except OSError as exc:
                raise InputError(
                    f"cannot read: {exc.strerror or exc}", Location(self.file)
                ) from None
            if not raw:
                return
            number += 1
            self.bytes_read += len(raw)
            if raw.endswith(b"\n"):
                yield number, raw[:-1], True
            elif len(raw) > MAX_LINE:
                while raw and not raw.endswith(b"\n"):
                    raw = readline(BLOCK)
                    self.bytes_read += len(raw)
                yield number, None, True
            else:
                yield number, raw, False

    def backward(self, limit: int) -> Iterator[tuple[bytes, bool]]:
        """``(line, terminated)`` from the last line to the first, read in blocks from the
        end; stops (setting ``limited``) once ``limit`` bytes are read."""
        pos = self.size
        pending: list[bytes] = []  # the line being assembled: its pieces, last first
        at_end = True  # whether `pending` ends at the end of the file (no newline after it)
        while pos > 0:
            if self.size - pos >= limit:
                self.limited = True
                return
            start = max(0, pos - BLOCK)
            self.handle.seek(start)
            data = self._read(pos - start)
            pos = start
            parts = data.split(b"\n")
            if len(parts) == 1:
                pending.append(data)
                continue
            pending.append(parts[-1])
            line = b"".join(reversed(pending))
            if line:
                yield line, not at_end
            at_end = False
            for part in reversed(parts[1:-1]):
                if part:
                    yield part, True
            pending = [parts[0]]
        line = b"".join(reversed(pending))
        if line:
            yield line, not at_end


class Lines:
    """Turns raw JSONL lines into objects, and bad lines into one warning each kind.

    A line that is not a JSON object is skipped; so is a truncated last line (the agent is
    still writing it). The first line of a file must be a JSON object, and the first line
    whose format can be told must be of format ``fmt``: otherwise the file is something else.
    """

    def __init__(self, file: str, fmt: str) -> None:
        self.file = file
        self.fmt = fmt
        self.bad = 0
        self.first_bad: int | None = None
        self.truncated = False
        self.overlong: list[int] = []
        self.objects = 0
        self.nonblank = 0
        self.checked = False

    def parse(self, raw: bytes | None, terminated: bool, number: int = 0) -> dict[str, Any] | None:
        """The object on one line (``number`` 0 when read from the end: unknown)."""
        if raw is None:
            self.overlong.append(number)
            return None
        if not raw.strip():
            return None
        first = number > 0 and self.nonblank == 0
        self.nonblank += 1
        obj = _loads(raw)
        if not isinstance(obj, dict):
            if not terminated:
                self.truncated = True
                return None
            if first:
                raise InputError(
                    f"line {number} is not a JSON object: this is not a {NAMES[self.fmt]}",
                    Location(self.file, number),
                )
            self.bad += 1
            if self.first_bad is None and number:
                self.first_bad = number
            return None
        self.objects += 1
        if not self.checked:
            kind = line_kind(obj)
            if kind is not None:
                if kind != self.fmt:
                    found = f"line {number} belongs" if number else "the last lines belong"
                    raise InputError(
                        f"{found} to a {NAMES[kind]}: this is not a {NAMES[self.fmt]}",
                        Location(self.file, number),
                    )
                self.checked = True
        return obj

    def finish(self) -> None:
        """Refuse a file none of whose lines is of the format (all of them unknown), or none of
        whose lines is a JSON object (binary data, another kind of file)."""
        if self.bad and not self.objects:
            where = Location(self.file, self.first_bad) if self.first_bad else Location(self.file)
            raise InputError(f"no line is a JSON object: this is not a {NAMES[self.fmt]}", where)
        if self.objects and not self.checked:
            raise InputError(f"no line is a {NAMES[self.fmt]} line", Location(self.file))

    def warnings(self) -> list[str]:
        out: list[str] = []
        if self.bad == 1:
            where = f" (line {self.first_bad})" if self.first_bad else ""
            out.append(f"1 line is not a JSON object{where}; skipped")
        elif self.bad:
            where = f" (first at line {self.first_bad})" if self.first_bad else ""
            out.append(f"{self.bad} lines are not JSON objects{where}; skipped")
        for number in self.overlong[:3]:
            where = f"line {number}" if number else "a line"
            out.append(f"{where} is longer than {size_text(MAX_LINE)}; skipped")
        if self.truncated:
            out.append(TRUNCATED)
        return out


# ---------------------------------------------------------------------------------------------
# Small shared pieces of the readers


def estimate_tokens(chars: int) -> int:
    """Characters / 4, rounded up (as :func:`clm_policy.lifecycle.estimate.estimate_tokens`)."""
    return -(-chars // CHARS_PER_TOKEN)


def size_text(size: int) -> str:
    """``size`` bytes as a person reads it: ``64 KiB``, ``32 MiB``."""
    return f"{size / 2**20:g} MiB" if size >= 2**20 else f"{size / 2**10:g} KiB"


def json_object(text: str) -> dict[str, Any] | None:
    """The JSON object ``text`` holds; None when it holds anything else, or is no JSON."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def text_of(value: object) -> str | None:
    return value if isinstance(value, str) else None


def clip(text: str, limit: int) -> str:
    return shorten(text.strip(), limit)


def joined_text(content: object, kinds: tuple[str, ...] = ("text",)) -> str:
    """A message's content as text: a string as it is; of a list of parts, the ``text`` of
    those whose ``type`` is one of ``kinds``, a line each."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        text_of(part.get("text")) or ""
        for part in content
        if isinstance(part, dict) and part.get("type") in kinds
    )


class Tally:
    """What a full read gathers of a session (of one chain of it, in Claude Code's) beside
    its work: the steps and the tokens, the compactions, the first prompt, the last message."""

    def __init__(self) -> None:
        self.session_id: str | None = None
        self.cwd: str | None = None
        self.steps = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.compact_count = 0
        self.last_compact_step: int | None = None
        self.compacted_at: int | None = None
        self.turns: list[Turn] = []
        self.compactions: list[Compaction] = []
        self.goal = ""
        self.last_message: str | None = None

    def compacted(self, before: int | None, trigger: str | None = None) -> None:
        """A compaction after the steps so far (``before``: the context before it, if known)."""
        self.compact_count += 1
        self.last_compact_step = self.steps
        self.compacted_at = before
        self.compactions.append((self.steps, before, trigger))

    def full(self, reading: TranscriptReading, work: Work, goal: str) -> TranscriptReading:
        """A full read's result: its figures (``reading``) with the ``goal`` and what the tally
        and the ``work`` say."""
        return reading.replace(
            session_id=self.session_id,
            cwd=self.cwd,
            step_index=self.steps,
            compact_count=self.compact_count,
            last_compact_step=self.last_compact_step,
            compacted_at_tokens=self.compacted_at,
            goal=goal,
            changed_artifacts=work.changed + work.made,
            commands_and_results=[run.line() for run in work.runs[-COMMAND_LIMIT:]],
            last_assistant_message=self.last_message,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            turns=self.turns,
            compactions=self.compactions,
            work=work,
        )


class Warnings:
    def __init__(self, *texts: str | None) -> None:
        self._items: dict[str, None] = {}
        for text in texts:
            if text:
                self.add(text)

    def add(self, text: str) -> None:
        if len(self._items) < WARNING_LIMIT:
            self._items[text] = None

    def list(self) -> list[str]:
        return list(self._items)


def tail_reading(
    src: Source,
    lines: Lines,
    figures: tuple[int, bool, str | None],
    sought: str | None,
    max_scan: int,
    after: int,
    known: tuple[str | None, str | None, str | None],
    window: int | None = None,
) -> TranscriptReading:
    """A tail read's result from its ``figures`` (context, estimated, why estimated) and what
    it knew (``known``: model, session id, cwd): an estimate when the scan stopped at its limit
    before it found ``sought`` (None: found); ``after``: the bytes after the figure's line."""
    lines.finish()
    tokens, estimated, why = figures
    limited = None
    if src.limited and sought:  # what the figure needs may lie further back: unconfirmed
        estimated = True
        limited = (
            f"no {sought} in the last {size_text(max_scan)}; the figure is estimated from that part"
        )
    model, session_id, cwd = known
    return TranscriptReading(
        format=lines.fmt,
        path=src.file,
        context_tokens=tokens,
        context_estimated=estimated,
        context_window=window,
        model=model,
        session_id=session_id,
        cwd=cwd,
        warnings=Warnings(*lines.warnings(), limited, why).list(),
        full=False,
        bytes_read=src.bytes_read,
        bytes_after=None if estimated else after,
    )
