"""A memory repository's recorded history, read for reports: every session's steps (its
``metrics.jsonl``), decisions (``decisions.jsonl``), commits (their ``Clm-*`` trailers) and
final state.

Everything here comes from a repository a team pulls, so all of it is untrusted: a line that
is not a JSON object of the expected shape is left out and reported as a :class:`Skipped` at
its ``file:line:col`` (the committed file's), never a crash; a file larger than
:data:`JSONL_LIMIT` is not read. Files are read from git's objects at HEAD (not the work
tree), the commits of every branch with one ``git log``; a session is any folder under
``sessions/`` and any session a commit names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clm_policy.base.errors import InputError, Location, quote
from clm_policy.formats.textio import STATE_LIMIT
from clm_policy.memory.audit import AuditEntry, read_log
from clm_policy.memory.git.write import OBJECT_ID, MemoryRepo
from clm_policy.memory.layout import SESSIONS, is_session, log_kind
from clm_policy.models.enums import MAX_COUNT, count

if TYPE_CHECKING:
    from typing import TypeVar

    Built = TypeVar("Built")

JSONL_LIMIT = 256 * 1024 * 1024
"""Bytes of one ``metrics.jsonl`` or ``decisions.jsonl`` read at most (a 10,000-step session
writes about 3 MB of each)."""

ACTIONS = ("continue", "compact", "handoff")
LIMITS = {
    "state.json": STATE_LIMIT,
    "run.json": STATE_LIMIT,
    "metrics.jsonl": JSONL_LIMIT,
    "decisions.jsonl": JSONL_LIMIT,
}
"""The files of a session folder that are read, and their limits in bytes."""


@dataclass(frozen=True)
class Recall:
    """What a verified compaction kept: ``value`` = ``passed`` / ``asked`` (0 to 1)."""

    value: float
    passed: int | None = None
    asked: int | None = None

    def __str__(self) -> str:
        share = f"{self.value:.0%}"
        return f"{self.passed}/{self.asked} ({share})" if self.asked else share


@dataclass(frozen=True)
class StepRecord:
    """One line of ``metrics.jsonl``: the session after a step."""

    step: int
    context_tokens: int
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    estimated: bool | None = None
    tool_calls: int | None = None
    messages: int | None = None
    status: str | None = None
    recall: Recall | None = None


@dataclass(frozen=True)
class DecisionRecord:
    """One line of ``decisions.jsonl``: what the policy decided after a step, and why."""

    step: int
    action: str
    trigger: str | None = None
    rationale: str = ""
    proposed: str | None = None
    blocked_by: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    forced: bool = False
    context_tokens: int | None = None
    context_window: int | None = None
    profile: str | None = None
    policy: str | None = None


@dataclass(frozen=True)
class Event:
    """A clm-policy commit of a session: ``kind`` is its ``Clm-Event``."""

    kind: str
    commit: str
    date: str
    step: int | None = None
    context_tokens: int | None = None
    rule: str | None = None
    policy: str | None = None
    parent: str | None = None
    recall: Recall | None = None
    recall_text: str | None = None
    recall_of_agent: bool = False  # Clm-Recall-Agent: what the agent's own words hold


@dataclass
class SessionHistory:
    id: str
    steps: list[StepRecord] = field(default_factory=list)
    decisions: list[DecisionRecord] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)  # oldest first
    state: dict[str, Any] = field(default_factory=dict)  # state.json at HEAD, as data
    run: dict[str, Any] = field(default_factory=dict)  # run.json at HEAD
    start_tokens: dict[str, Any] = field(default_factory=dict)  # tokens when it started

    @property
    def parent(self) -> str | None:
        found = _text(self.state.get("parent_session"))
        if found is None:
            found = next((e.parent for e in self.events if e.parent), None)
        return found if found is not None and is_session(found) else None

    @property
    def tokens(self) -> dict[str, Any]:
        value = self.state.get("tokens")
        return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class Skipped:
    """Something of the repository left out, and why (``file:line:col: message``)."""

    where: Location
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


@dataclass
class History:
    root: str  # the repository as the user named it
    head: str | None
    sessions: list[SessionHistory]
    skipped: list[Skipped] = field(default_factory=list)


Advance = Callable[[int], None]


def load_history(
    repo: MemoryRepo,
    shown: str,
    *,
    session: str | None = None,
    progress: Callable[[int], Advance] | None = None,
    chunk_bytes: int | None = None,
) -> History:
    """Every session of ``repo`` (or only ``session``: an :class:`InputError` when the
    repository has no trace of it). ``shown`` is how the repository's path is printed;
    ``progress(total)`` returns a function told of each session read. The sessions' files
    are read by one git process for each ``chunk_bytes`` of them (:data:`CHUNK_BYTES`)."""
    if session is not None and not is_session(session):
        raise InputError(f"{shown}: no session {quote(session)} recorded (not a valid session id)")
    head = repo.head()
    files = _session_files(repo) if head else {}
    by_session: dict[str, list[AuditEntry]] = {}
    for entry in reversed(read_log(repo, session=session, rev="--all")):
        if is_session(entry.session):
            by_session.setdefault(entry.session, []).append(entry)
    ids = sorted(set(files) | set(by_session))
    if session is not None:
        if session not in ids:
            check_session_known(repo, session, shown, files)
        ids = [session]
    history = History(root=shown, head=head, sessions=[])
    advance = progress(len(ids)) if progress is not None else None
    for chunk in _chunks(ids, files, CHUNK_BYTES if chunk_bytes is None else chunk_bytes):
        # the chunk's files in one git process, then the states its continued sessions
        # started from in another, not two processes per file
        wanted = [f.blob for sid in chunk for f in files.get(sid, {}).values() if f.readable]
        texts = dict(zip(wanted, repo.show_files(wanted), strict=True))
        read = []
        for sid in chunk:
            reader = _Reader(shown, sid, files.get(sid, {}), texts, history.skipped)
            read.append(reader.read(by_session.get(sid, [])))
        _read_start_tokens(repo, read)
        for found in read:
            history.sessions.append(found)
            if advance is not None:
                advance(1)
    history.sessions.sort(key=_order)
    return history


CHUNK_BYTES = 64 * 1024 * 1024
"""Bytes of session files read by one ``git cat-file --batch`` at most (unless one session's
files alone are more)."""


def _chunks(ids: list[str], files: dict[str, dict[str, _File]], limit: int) -> Iterator[list[str]]:
    """``ids`` in order, in runs whose readable files add up to ``limit`` bytes at most."""
    chunk: list[str] = []
    size = 0
    for sid in ids:
        more = sum(f.size for f in files.get(sid, {}).values() if f.readable)
        if chunk and size + more > limit:
            yield chunk
            chunk, size = [], 0
        chunk.append(sid)
        size += more
    if chunk:
        yield chunk


def check_session_known(
    repo: MemoryRepo, session: str, shown: str, files: dict[str, dict[str, _File]] | None = None
) -> None:
    """An :class:`InputError` naming the sessions there are, when ``repo`` has no trace of
    ``session`` (no files of its own, no commit of it on any branch); ``files``: the
    sessions' files, when read already."""
    files = _session_files(repo) if files is None and repo.head() else files or {}
    logged = {e.session for e in read_log(repo, rev="--all") if is_session(e.session)}
    ids = sorted(set(files) | logged)
    if session not in ids:
        known = ", ".join(ids[:KNOWN_SHOWN]) or "none"
        if len(ids) > KNOWN_SHOWN:
            known += f", ... ({len(ids):,} in all)"
        raise InputError(f"{shown}: no session {quote(session)} recorded (sessions: {known})")


KNOWN_SHOWN = 20
"""Sessions an unknown ``--session`` lists at most."""


def _read_start_tokens(repo: MemoryRepo, read: list[SessionHistory]) -> None:
    """A session continued from a handoff carries its parent's cumulative tokens: the tokens
    of its ``state.json`` in its start commit."""
    names: dict[int, str] = {}
    for i, s in enumerate(read):
        start = next((e for e in s.events if e.kind == "start"), None)
        if start is not None and s.parent is not None and OBJECT_ID.fullmatch(start.commit):
            names[i] = f"{start.commit}:{SESSIONS}/{s.id}/state.json"
    texts = repo.show_files(list(names.values()))
    for i, text in zip(names, texts, strict=True):
        read[i].start_tokens = _tokens_of(text)


def _order(s: SessionHistory) -> tuple[str, str]:
    """Oldest first (by the date of a session's first commit); sessions no commit names last."""
    return (s.events[0].date if s.events else "\uffff", s.id)


class _File:
    """A session file at HEAD: its blob and size, and whether it is small enough to read."""

    __slots__ = ("blob", "limit", "readable", "size")

    def __init__(self, name: str, blob: str, size: int) -> None:
        self.blob, self.size = blob, size
        self.limit = LIMITS.get(name) or LIMITS[f"{log_kind(name)}.jsonl"]
        self.readable = size <= self.limit


def _session_files(repo: MemoryRepo) -> dict[str, dict[str, _File]]:
    """The files :data:`LIMITS` of each session folder at HEAD, with their blobs and sizes (one
    git call)."""
    found: dict[str, dict[str, _File]] = {}
    for path, blob, size in repo.blobs(f"{SESSIONS}/"):
        parts = path.split("/")
        if len(parts) < 2 or parts[0] != SESSIONS or not is_session(parts[1]):
            continue
        files = found.setdefault(parts[1], {})
        if len(parts) == 3 and (parts[2] in LIMITS or log_kind(parts[2])) and size >= 0:
            files[parts[2]] = _File(parts[2], blob, size)
    return found


@dataclass
class _Reader:
    """Reads one session from its files' texts, reporting what it leaves out to ``skipped``."""

    shown: str
    sid: str
    files: dict[str, _File]
    texts: dict[str, str | None]
    skipped: list[Skipped]

    def read(self, entries: list[AuditEntry]) -> SessionHistory:
        s = SessionHistory(self.sid, events=[_event(e) for e in entries])
        s.state = self._document("state.json")
        s.run = self._document("run.json")
        s.steps = list(self._log("metrics", _step))
        s.decisions = list(self._log("decisions", _decision))
        return s

    def _log(self, kind: str, build: Callable[[dict[str, Any]], Built]) -> Iterator[Built]:
        """The lines of the session's log ``kind``, its files in the order of their steps."""
        for name in sorted(n for n in self.files if log_kind(n) == kind):
            yield from self._lines(name, build)

    def _skip(self, name: str, message: str, line: int = 0, col: int = 0) -> None:
        where = Location(f"{self.shown}/{SESSIONS}/{self.sid}/{name}", line, col)
        self.skipped.append(Skipped(where, message))

    def _blob(self, name: str) -> str | None:
        found = self.files.get(name)
        if found is None:
            return None
        if not found.readable:
            self._skip(name, f"not read: larger than {found.limit // 1024 // 1024} MiB")
            return None
        return self.texts.get(found.blob)

    def _document(self, name: str) -> dict[str, Any]:
        text = self._blob(name)
        if text is None:
            return {}
        try:
            value = json.loads(text)
        except ValueError as exc:
            line, col = getattr(exc, "lineno", 0), getattr(exc, "colno", 0)
            self._skip(name, "not read: not valid JSON", line, col)
            return {}
        if not isinstance(value, dict):
            self._skip(name, "not read: not a JSON object", 1, 1)
            return {}
        return value

    def _lines(self, name: str, build: Callable[[dict[str, Any]], Built]) -> Iterable[Built]:
        text = self._blob(name)
        for number, line in enumerate((text or "").split("\n"), 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except ValueError as exc:  # RecursionError is not one: caught below
                col = getattr(exc, "colno", 1)
                self._skip(name, "not valid JSON", number, col)
                continue
            except RecursionError:
                self._skip(name, "nested too deeply", number, 1)
                continue
            try:
                if not isinstance(value, dict):
                    raise _Bad("not a JSON object")
                yield build(value)
            except _Bad as exc:
                self._skip(name, str(exc), number, 1)


class _Bad(Exception):
    """A record of the wrong shape (its message says what is wrong)."""


def _required(record: dict[str, Any], key: str) -> int:
    value = count(record.get(key))
    if value is None:
        raise _Bad(f"'{key}' is not a count (a whole number >= 0)")
    return value


def _text(value: Any, limit: int = 2000) -> str | None:
    if not isinstance(value, str):
        return None
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _step(r: dict[str, Any]) -> StepRecord:
    estimated = r.get("estimated")
    return StepRecord(
        step=_required(r, "step"),
        context_tokens=_required(r, "context_tokens"),
        input_tokens=count(r.get("input_tokens")),
        output_tokens=count(r.get("output_tokens")),
        total_tokens=count(r.get("total_tokens")),
        estimated=estimated if isinstance(estimated, bool) else None,
        tool_calls=count(r.get("tool_calls")),
        messages=count(r.get("messages")),
        status=_text(r.get("status"), 40),
        recall=recall_of(r.get("recall")),
    )


def _guards(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    names = (_text(item.get("guard") if isinstance(item, dict) else item, 100) for item in value)
    return tuple(name for name in names if name)


def _decision(r: dict[str, Any]) -> DecisionRecord:
    step = _required(r, "step")
    action = r.get("action")
    if action not in ACTIONS:
        raise _Bad("'action' is not one of continue, compact, handoff")
    proposed = r.get("proposed")
    return DecisionRecord(
        step=step,
        action=action,
        trigger=_text(r.get("trigger"), 100),
        rationale=_text(r.get("rationale")) or "",
        proposed=proposed if proposed in ACTIONS else None,
        blocked_by=_guards(r.get("blocked_by")),
        warnings=_guards(r.get("warnings")),
        forced=r.get("forced") is True,
        context_tokens=count(r.get("context_tokens")),
        context_window=count(r.get("context_window")) or None,
        profile=_text(r.get("profile"), 100),
        policy=_text(r.get("policy"), 200),
    )


def _number(text: str | None) -> int | None:
    if text is None or not text.isdigit() or len(text) > 19:
        return None
    value = int(text)
    return value if value <= MAX_COUNT else None


def _event(e: AuditEntry) -> Event:
    t = e.trailers
    recall_text = _text(t.get("Clm-Recall") or t.get("Clm-Recall-Agent"), 200)
    of_agent = not t.get("Clm-Recall") and bool(t.get("Clm-Recall-Agent"))
    return Event(
        kind=e.event,
        commit=e.commit,
        date=e.date,
        step=_number(t.get("Clm-Step")),
        context_tokens=_number(t.get("Clm-Context-Tokens")),
        rule=_text(t.get("Clm-Rule"), 100) or None,
        policy=_text(t.get("Clm-Policy"), 300) or None,
        parent=t.get("Clm-Parent-Session") or None,
        recall=recall_of(recall_text),
        recall_text=recall_text,
        recall_of_agent=of_agent,
    )


def _tokens_of(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text) if text else {}
    except (ValueError, RecursionError):
        return {}
    tokens = value.get("tokens") if isinstance(value, dict) else None
    return tokens if isinstance(tokens, dict) else {}


_FRACTION = re.compile(r"(\d{1,9})\s*/\s*(\d{1,9})")
_PERCENT = re.compile(r"(\d{1,3}(?:\.\d+)?)\s*%")
_SHARE = re.compile(r"[01](?:\.\d+)?|\.\d+")


def recall_of(value: Any) -> Recall | None:
    """A recall as recorded: ``0.92``, ``"92%"``, ``"11/12"`` (any text holding one, like
    ``"11/12 (92%)"``), or an object ``{"passed": 11, "asked": 12}`` / ``{"recall": 0.92}``.
    None when it is none of these, or outside 0..1."""
    if isinstance(value, dict):
        passed, asked = value.get("passed"), value.get("asked")
        if type(passed) is int and type(asked) is int and 0 <= passed <= asked and asked > 0:
            return Recall(passed / asked, passed, asked)
        for key in ("recall", "score", "value"):
            if key in value:
                return recall_of(value[key])
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return Recall(float(value)) if 0 <= value <= 1 else None
    if not isinstance(value, str) or len(value) > 200:
        return None
    if m := _FRACTION.search(value):
        passed, asked = int(m[1]), int(m[2])
        return Recall(passed / asked, passed, asked) if 0 <= passed <= asked > 0 else None
    if m := _PERCENT.search(value):
        share = float(m[1]) / 100
    elif m := _SHARE.fullmatch(value.strip()):
        share = float(m[0])
    else:
        return None
    return Recall(share) if share <= 1 else None
