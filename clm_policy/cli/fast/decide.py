"""``clm-policy decide`` as one quick process: the common command lines without click.

A hook or a script asks for one decision per prompt, so ``decide --tokens N``, ``decide
--transcript PATH`` and ``decide --state FILE`` are answered here, straight from
:mod:`clm_policy.cli.entry`, importing only what the answer needs: the configuration lookup,
the compiled-policy cache and the engine. This is the same command, not a second one: the
options are :data:`OPTIONS`, which a test holds equal to the click command's
(:mod:`clm_policy.cli.decide`) in names, value checks and defaults, and the output is the
same function's. Whatever this path does not take on — ``--help``, ``--explain``,
``--session``, an option it does not know, a value click would refuse, any error at all — it
hands back untouched (:func:`answer` returns None), and click runs the command from the start
and reports it in its words. Nothing is written here but the policy cache, so running twice
is harmless.
"""

from __future__ import annotations

from clm_policy.cli.fast import args as quickargs
from clm_policy.cli.fast.args import Declined
from clm_policy.models.enums import MAX_COUNT, TaskStatus

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from clm_policy.models.enums import SignalValue
    from clm_policy.policy.engine import Outcome, StateLike
    from clm_policy.transcripts.reading import TranscriptReading

STATUSES = tuple(s.value for s in TaskStatus)
FORMATS = ("text", "json")
TRANSCRIPT_FORMATS = ("auto", "claude-code", "codex", "openai")

# option -> (destination, kind); kind: "flag", "str", "multi", an int range (low, high) or a
# tuple of choices. Short forms map to the same destination. A test holds this table equal
# to the click command's parameters.
OPTIONS: dict[str, tuple[str, Any]] = {
    "--policy": ("policy_ref", "str"),
    "-p": ("policy_ref", "str"),
    "--profile": ("profile", "str"),
    "--state": ("state_src", "str"),
    "-s": ("state_src", "str"),
    "--tokens": ("tokens", (0, MAX_COUNT)),
    "-t": ("tokens", (0, MAX_COUNT)),
    "--window": ("window", (1, MAX_COUNT)),
    "--step": ("step", (0, MAX_COUNT)),
    "--last-compact-step": ("last_compact_step", (0, MAX_COUNT)),
    "--status": ("status", STATUSES),
    "--signal": ("signals", "multi"),
    "--transcript": ("transcript", "str"),
    "--transcript-format": ("transcript_format", TRANSCRIPT_FORMATS),
    "--force": ("force", "flag"),
    "--format": ("fmt", FORMATS),
}
DEFAULTS: dict[str, Any] = {
    "policy_ref": None,
    "profile": None,
    "state_src": None,
    "tokens": None,
    "window": None,
    "step": 0,
    "last_compact_step": None,
    "status": "running",
    "signals": (),
    "transcript": None,
    "transcript_format": "auto",
    "force": False,
    "fmt": "text",
}


def parse(args: list[str]) -> dict[str, Any]:
    """The values of ``args`` (after ``decide``) by destination, as click would give them;
    :class:`~clm_policy.cli.fast.args.Declined` for anything else."""
    return quickargs.parse(args, OPTIONS, DEFAULTS)


def answer(args: list[str]) -> str | None:
    """The output of ``clm-policy decide ARGS`` (without its final newline), or None when
    click should run the command instead (see the module docstring)."""
    try:
        values = parse(args)
        state, reading = _state(values)
    except Declined:
        return None
    from clm_policy.base.errors import ClmError
    from clm_policy.config.project import setting
    from clm_policy.policy.cache import load_policy_cached

    try:
        policy = load_policy_cached(setting("policy", values["policy_ref"]) or "default")
        if state is None:
            state, reading = _read(values)
        profile = setting("profile", values["profile"])
        outcome = policy.outcome(state, profile, force=values["force"])
    except (ClmError, Declined):
        return None  # click reports it, with its position and in the chosen format
    return render(outcome, values["fmt"], reading)


def _state(values: dict[str, Any]) -> tuple[StateLike | None, TranscriptReading | None]:
    """The state a ``--tokens`` command line describes (None: it is read from a file), or
    :class:`Declined` where click must say what is wrong with the command line."""
    given = [values[k] for k in ("state_src", "tokens", "transcript")]
    if sum(g is not None for g in given) != 1:
        raise Declined("give one of --state, --tokens, --session and --transcript")
    tokens = values["tokens"]
    shortcut = (
        values["window"] is not None
        or values["step"] != 0
        or values["last_compact_step"] is not None
        or values["status"] != "running"
        or bool(values["signals"])
    )
    if tokens is None:
        if shortcut:
            raise Declined("--window and the others go with --tokens")
        return None, None
    last = values["last_compact_step"]
    if last is not None and last > values["step"]:
        raise Declined("--last-compact-step cannot be after --step")
    from clm_policy.base.errors import InputError
    from clm_policy.models.plain import FigureState, FigureTokens

    try:
        signals = dict(parse_signal(s) for s in values["signals"])
    except InputError:
        raise Declined("--signal") from None
    state = FigureState(
        tokens=FigureTokens(context_tokens=tokens, context_window=values["window"]),
        status=TaskStatus(values["status"]),
        step_index=values["step"],
        last_compact_step=last,
        signals=signals,
    )
    return state, None


def _read(values: dict[str, Any]) -> tuple[StateLike, TranscriptReading | None]:
    if values["transcript"] is not None:
        from clm_policy.transcripts.reading import read_context

        reading = read_context(values["transcript"], values["transcript_format"])
        return reading.to_figures(), reading
    from clm_policy.formats.textio import STATE_LIMIT, decode, read_text
    from clm_policy.models.state_io import plain_state_of

    source = values["state_src"]
    if source == "-":
        file, raw = "<stdin>", _take_stdin(STATE_LIMIT)
        text = decode(raw, file, STATE_LIMIT, "state")
    else:
        file, text = source, read_text(source, source, limit=STATE_LIMIT, what="state")
    state = plain_state_of(text, file)
    if state is None:
        raise Declined("--state")  # pydantic's validation (click's path) says what is wrong
    return state, None


def _take_stdin(limit: int) -> bytes:
    """Standard input's bytes (at most ``limit`` + 1), left in place for click's path: should
    this one decline, the command runs again on the same input."""
    import io
    import sys

    from clm_policy.base.stdin import read_stdin

    if sys.stdin is None:
        raise Declined("--state -")
    raw = read_stdin(limit)
    sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    return raw


def render(outcome: Outcome, fmt: str, reading: TranscriptReading | None) -> str:
    """What ``decide`` prints for ``outcome`` (both paths print this)."""
    if fmt == "json":
        import json

        return json.dumps({**outcome.as_dict(), **from_transcript(reading)}, indent=2)
    from clm_policy.report.explain import render_decision

    return render_decision(outcome) + transcript_note(reading)


def from_transcript(reading: TranscriptReading | None) -> dict[str, Any]:
    """The JSON keys a decision from a transcript adds."""
    if reading is None:
        return {}
    return {
        "context_estimated": reading.context_estimated,
        "transcript": {
            "format": reading.format,
            "path": reading.path,
            "model": reading.model,
            "warnings": list(reading.warnings),
        },
    }


def transcript_note(reading: TranscriptReading | None) -> str:
    """The text lines a decision from a transcript adds."""
    if reading is None:
        return ""
    note = f"\nread:      {reading.format} transcript {reading.path}"
    if reading.model:
        note += f" (model {reading.model})"
    if reading.context_estimated:
        note += "\n           context estimated: " + "; ".join(reading.warnings or ["no usage"])
    return note


def _not_a_number(name: str) -> str:
    raise ValueError(name)  # NaN and Infinity are no JSON: the value is the text itself


def parse_signal(text: str) -> tuple[str, SignalValue]:
    """``name=value``; the value is read as JSON when it is a number or true/false."""
    import json
    import math

    from clm_policy.base.errors import InputError, quote

    name, sep, raw = text.partition("=")
    if not sep or not name:
        raise InputError(f"--signal expects NAME=VALUE, got {quote(text)}")
    value: SignalValue = raw
    try:
        parsed = json.loads(raw, parse_constant=_not_a_number)
    except ValueError:  # not JSON, or an integer of more digits than Python reads
        parsed = raw
    if isinstance(parsed, float) and not math.isfinite(parsed):
        raise InputError(f"--signal {name.strip()}: number out of range: {quote(raw)}")
    if isinstance(parsed, bool | int | float | str):
        value = parsed
    return name.strip(), value


__all__ = ["answer", "parse", "parse_signal", "render"]
