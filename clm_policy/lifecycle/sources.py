"""Where a command's session state comes from: the one resolver ``decide``, ``compact``,
``handoff`` and the quick ``decide`` (clm_policy.cli.fast.decide) call.

A command line names exactly one source (:data:`SOURCES`; the options of :data:`WITH_TOKENS`
go with ``--tokens`` and nothing else): :func:`check` says which, or raises one
:class:`~clm_policy.base.errors.UsageError`; :func:`resolve` reads it. For a transcript, its
tail's figures when a decision is all that is asked (``full=False``), the whole session for a
compaction or a handoff (``full=True``). The quick path imports this module on every call:
nothing heavy at import.

Standard input is read once per process, bounded
(:func:`~clm_policy.base.stdin.read_stdin_kept`): when the quick path declines, click's path
runs in the same process and gets the same bytes.
"""

from __future__ import annotations

from clm_policy.base.errors import InputError, Location, StateError, UsageError, quote
from clm_policy.base.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from clm_policy.models.enums import SignalValue
    from clm_policy.models.state import SessionState
    from clm_policy.transcripts.reading import TranscriptReading

SOURCES: dict[str, str] = {
    # the request's field -> how the command line names it (in the order messages list them)
    "state": "--state FILE|-",
    "tokens": "--tokens N",
    "session": "--session ID",
    "transcript": "--transcript PATH",
}
WITH_TOKENS: dict[str, tuple[str, Any]] = {
    # the request's field -> (its option, its value when not given): the figures a --tokens
    # state is made of. Given with another source they are refused: a file, a session or a
    # transcript carries its own.
    "window": ("--window", None),
    "step": ("--step", 0),
    "last_compact_step": ("--last-compact-step", None),
    "status": ("--status", "running"),
    "signals": ("--signal", ()),
}
CARRIES = {
    "state": "a state file carries its own figures",
    "session": "a persisted session carries its own figures",
    "transcript": "a transcript carries its own figures",
}
STDIN = "<stdin>"


def _and(words: list[str], last: str = "and") -> str:
    return ", ".join(words[:-1]) + f" {last} {words[-1]}" if len(words) > 1 else "".join(words)


class Request(Record):
    """What a command line says of the state (None: not given); keys are the commands'
    parameter names."""

    state: str | None = None
    tokens: int | None = None
    session: str | None = None
    transcript: str | None = None
    transcript_format: str = "auto"
    window: int | None = None  # window ... signals: the figures of WITH_TOKENS
    step: int = 0
    last_compact_step: int | None = None
    status: str = "running"
    signals: tuple[str, ...] = ()
    memory: str | None = None
    HASHABLE = False

    @classmethod
    def of(cls, params: Mapping[str, Any]) -> Request:
        """The request in a command's parameters (click's or the quick path's; ``state_src``
        is ``--state``); parameters it does not know are left out."""
        values = {k: v for k, v in params.items() if k in cls.FIELDS}
        if "state_src" in params:
            values["state"] = params["state_src"]
        return cls(**values)

    def given(self) -> list[str]:
        """The sources given, in :data:`SOURCES` order."""
        return [name for name in SOURCES if getattr(self, name) is not None]

    def figures_given(self) -> list[str]:
        """The options of :data:`WITH_TOKENS` given a value other than their default."""
        return [opt for name, (opt, unset) in WITH_TOKENS.items() if getattr(self, name) != unset]


class Resolved(Record):
    """A state from its source: the transcript reading (None but for ``--transcript``), the
    text and file it was read from (where :meth:`locate` places later errors), and what gave
    its window, as ``decide`` names it (``window from …``)."""

    state: SessionState
    reading: TranscriptReading | None = None
    text: str | None = None
    file: str | None = None
    window_from: str = "state"
    HASHABLE = False

    def locate(self, exc: StateError) -> StateError:
        """``exc`` at the line and column of its field in the state's file, when the state
        came from one and the error names a field without a place."""
        if exc.location is not None or exc.path is None or self.text is None:
            return exc
        from clm_policy.formats.jsonio import JsonDocument

        assert self.file is not None
        where = JsonDocument(self.file, self.text, None).location(exc.path, key=True)
        return StateError(exc.message, where, exc.path).quoting(self.text)


def check(request: Request, sources: tuple[str, ...] = tuple(SOURCES)) -> str:
    """The one source ``request`` names among ``sources`` (the ones the command takes), or a
    :class:`UsageError`: none or several given, or figures without ``--tokens``."""
    given, figures = request.given(), request.figures_given()
    verb = "goes" if len(figures) == 1 else "go"
    if not given and figures and "tokens" in sources:
        raise UsageError(f"{_and(figures)} {verb} with --tokens N: give the context's tokens")
    if len(given) != 1 or given[0] not in sources:
        choices = _and([SOURCES[name] for name in sources], "or")
        got = _and([SOURCES[name].split()[0] for name in given])
        raise UsageError(f"give exactly one of {choices}" + (f"; got {got}" if got else ""))
    (source,) = given
    if source != "tokens" and figures:
        raise UsageError(f"{_and(figures)} {verb} with --tokens: {CARRIES[source]}")
    return source


def resolve(
    request: Request, *, full: bool = False, sources: tuple[str, ...] = tuple(SOURCES)
) -> Resolved:
    """The state ``request`` names: a :class:`UsageError` for none or several (:func:`check`),
    an :class:`InputError` (a :class:`StateError` at ``file:line:col``) for one unread."""
    source = check(request, sources)
    if source == "tokens":
        if full:
            raise UsageError("--tokens gives figures, not a session: give a state")
        return Resolved(figures(request), window_from="--window")
    if source == "transcript":
        return _read_transcript(request, full)
    if source == "session":
        from clm_policy.memory.git.write import MemoryRepo
        from clm_policy.memory.sessions import load_session

        assert request.session is not None
        if request.memory is None:
            raise UsageError("--session needs the memory repository it is in (--memory)")
        with MemoryRepo(request.memory) as repo:
            state = load_session(repo, request.session).state
        return Resolved(state, window_from="the session's state")
    assert request.state is not None
    return read_state_source(request.state)


def _read_transcript(request: Request, full: bool) -> Resolved:
    """The state of the transcript ``--transcript`` names: the whole session (``full``) or
    its tail's figures. A session state given there is refused, saying to give it as
    ``--state``."""
    from clm_policy.transcripts.reading import NotATranscript, read_context, read_transcript

    path, fmt = request.transcript, request.transcript_format
    assert path is not None
    try:
        reading = read_transcript(path, fmt) if full else read_context(path, fmt)
    except NotATranscript as exc:
        raise InputError(f"{exc.message}: pass it as --state {path}", exc.location) from None
    if not full:
        return Resolved(reading.to_figures(), reading, window_from="the transcript")
    from clm_policy.transcripts.takeover import state_of

    return Resolved(state_of(reading), reading, window_from="the transcript")


def read_state_source(source: str) -> Resolved:
    """The SessionState JSON in the file ``source`` (``-``: standard input), bounded."""
    from clm_policy.formats.textio import STATE_LIMIT, decode, read_text
    from clm_policy.models.state_io import parse_state

    if source == "-":
        from clm_policy.base.stdin import read_stdin_kept

        file = STDIN
        raw = read_stdin_kept(STATE_LIMIT)
        if raw is None:
            raise InputError("no standard input to read", Location(STDIN))
        text = decode(raw, file, STATE_LIMIT, "state")
    else:
        file = source
        text = read_text(source, source, limit=STATE_LIMIT, what="state")
    where = "the state on standard input" if source == "-" else "the state file"
    try:
        state = parse_state(text, file)
    except InputError:
        kind = _transcript_kind(text)
        if kind is None:
            raise
        said = f"a {kind}, not a session state: {_pass_as('--transcript', source)}"
        raise InputError(said, Location(file, 1)) from None
    return Resolved(state, None, text, file, where)


def _pass_as(option: str, source: str) -> str:
    """How to give the document read from ``source`` (``-``: standard input) to ``option``."""
    if source == "-":
        return f"save it to a file, then pass that as {option} FILE"
    return f"pass it as {option} {source}"


def refuse_other_document(text: str, source: str, what: str) -> None:
    """Refuse ``text``, read from ``source`` as ``what`` (free text: ``the agent's handoff``),
    when it is a document another option takes — a session state (``--state``), a transcript
    (``--transcript``), a policy (``--policy``) — or another JSON object: almost surely the
    wrong file, said as ``--transcript state.json`` is refused."""
    import json
    import re
    from contextlib import suppress

    data: object = None
    if text.lstrip().startswith("{"):
        with suppress(ValueError, RecursionError):
            data = json.loads(text)
    from clm_policy.transcripts.openai_chat import STATE_NAMED, is_session_state

    file = STDIN if source == "-" else source
    found: tuple[str, str | None] | None = None
    if is_session_state(data):
        found = STATE_NAMED, "--state"
    elif (kind := _transcript_kind(text)) is not None:
        found = f"a {kind}", "--transcript"
    elif re.search(r"^rules:", text, re.M) and re.search(r"^version:", text, re.M):
        found = "a policy (YAML with rules: and version:)", "--policy"
    elif isinstance(data, dict):
        found = "a JSON object", None
    if found is not None:
        named, option = found
        said = f"{named}, not {what} (its Markdown or plain text)"
        if option is not None:
            said = f"{said}: {_pass_as(option, source)}"
        raise InputError(said, Location(file, 1))


def _transcript_kind(text: str) -> str | None:
    """What transcript ``text`` is (a state file that did not read: a Claude Code session or
    a Codex rollout, whose first line says so, or an OpenAI chat), or None. The whole text
    is read again only when its head names no ``session_id``: a large state with one bad
    field is not parsed twice to be refused (24 MB: 70 ms)."""
    import json

    from clm_policy.transcripts.openai_chat import is_session_state
    from clm_policy.transcripts.reading import NAMES, line_kind

    documents = [text.lstrip().split("\n", 1)[0]]
    if '"session_id"' not in text[:4096]:
        documents.append(text)
    for document in documents:
        try:
            data = json.loads(document)
        except (ValueError, RecursionError):
            continue
        kind = None if is_session_state(data) else line_kind(data)
        if kind is not None:
            return NAMES[kind]
    return None


def figures(request: Request) -> SessionState:
    """The state ``--tokens`` and the options that go with it describe."""
    from clm_policy.models.enums import FIGURES, TaskStatus
    from clm_policy.models.state import SessionState, TokenSnapshot

    assert request.tokens is not None
    last = request.last_compact_step
    if last is not None and last > request.step:
        raise UsageError("--last-compact-step cannot be after --step")
    if request.window is not None and request.tokens > request.window:
        raise UsageError(
            f"--tokens {request.tokens} is more than --window {request.window}: a context "
            "cannot be larger than its window; give the window the model has"
        )
    return SessionState(
        session_id=FIGURES,
        tokens=TokenSnapshot(context_tokens=request.tokens, context_window=request.window),
        status=TaskStatus(request.status),
        step_index=request.step,
        last_compact_step=last,
        signals=parse_signals(request.signals),
    )


def _not_a_number(name: str) -> str:
    raise ValueError(name)  # NaN and Infinity are no JSON: the value is the text itself


def parse_signals(texts: Sequence[str], what: str = "--signal") -> dict[str, SignalValue]:
    """Each of ``texts`` read by :func:`parse_signal`; a name given twice is refused."""
    signals: dict[str, SignalValue] = {}
    for text in texts:
        name, value = parse_signal(text, what)
        if name in signals:
            raise UsageError(f"{what} {name} is given twice: give it once")
        signals[name] = value
    return signals


def parse_signal(text: str, what: str = "--signal") -> tuple[str, SignalValue]:
    """``name=value``; the value is read as JSON when it is a number or true/false. ``what``
    names where it was given, in messages."""
    import json
    import math

    name, sep, raw = text.partition("=")
    if not sep or not name:
        raise UsageError(f"{what} expects NAME=VALUE, got {quote(text)}")
    value: SignalValue = raw
    try:
        parsed = json.loads(raw, parse_constant=_not_a_number)
    except ValueError:  # not JSON, or an integer of more digits than Python reads
        parsed = raw
    if isinstance(parsed, float) and not math.isfinite(parsed):
        raise UsageError(f"{what} {name.strip()}: number out of range: {quote(raw)}")
    if isinstance(parsed, bool | int | float | str):
        value = parsed
    return name.strip(), value
