"""The context a hook decides on: the transcript's figures (its end, or the whole file for a
snapshot or a handoff), the window the agent knows (a Codex rollout names it; for Claude
Code, :mod:`.windows`), and the policy's outcome on them — None when thresholds that are
shares of the window cannot decide because nobody knows it.
"""

from __future__ import annotations

from clm_policy.agents.hooks.call import NoTranscriptYet
from clm_policy.base.errors import InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from clm_policy.agents.hooks.hook import Hook
    from clm_policy.models.decision import Decision
    from clm_policy.models.state import SessionState, StateLike
    from clm_policy.transcripts.reading import TranscriptReading


def read_tail(hook: Hook) -> tuple[TranscriptReading, Decision | None]:
    """The transcript's figures, read from its end, and the policy's outcome on them."""
    from clm_policy.transcripts.reading import read_context

    path = hook.call.transcript()
    try:
        reading = read_context(path)
    except InputError as exc:
        raise _not_yet(path, hook.call.name, exc) from None
    fill_window(hook, reading)
    return reading, outcome_of(hook, reading.to_figures())


def read_whole(hook: Hook) -> tuple[SessionState, Decision | None]:
    """The whole transcript as a SessionState and the policy's outcome on it."""
    from clm_policy.transcripts.reading import read_transcript
    from clm_policy.transcripts.takeover import state_of

    reading = read_transcript(hook.call.transcript())
    fill_window(hook, reading)
    state = state_of(reading, hook.session_id(reading))
    if hook.profile:
        state = state.replace(profile=hook.profile)
    return state, outcome_of(hook, state)


def fill_window(hook: Hook, reading: TranscriptReading) -> None:
    """Fill in ``reading``'s window and model from what the agent knows."""
    if reading.context_window is not None or hook.agent != "claude-code":
        return
    from clm_policy.agents.hooks.windows import claude_code_window

    cwd = hook.call.text("cwd") or reading.cwd
    reading.context_window, model = claude_code_window(hook.call.session, reading.model, cwd)
    reading.model = reading.model or model


def outcome_of(hook: Hook, figures: StateLike) -> Decision | None:
    """The policy's outcome for ``figures``; None when its thresholds are shares of a window
    neither the state nor the policy knows."""
    policy = hook.policy()
    prof = policy.profile(hook.profile or figures.profile)
    shares = prof.soft_compact.percent is not None or prof.hard_handoff.percent is not None
    if shares and policy.window_for(figures, prof)[0] is None:
        return None
    return policy.decide(figures, hook.profile)


def _not_yet(path: str, name: str, exc: InputError) -> InputError:
    """``exc``, or :class:`NoTranscriptYet` when the transcript holds no line of the
    conversation yet (a new session's file of the agent's own records: Claude Code's first
    is ``{"type": "mode", ...}``, whose format no reader can tell)."""

    import json

    from clm_policy.formats.textio import read_bytes

    try:  # a regular file only, opened without blocking (a FIFO), read up to the limit
        data = read_bytes(path, limit=65536, what="transcript")
        lines = [line for line in data.splitlines() if line.strip()]
        records = [json.loads(line.decode("utf-8")) for line in lines]
    except (InputError, ValueError):
        return exc
    typed = [r.get("type") if isinstance(r, dict) else None for r in records]
    if all(isinstance(t, str) and t not in ("user", "assistant") for t in typed):
        return NoTranscriptYet(f"{name}: the transcript has no conversation line yet")
    return exc
