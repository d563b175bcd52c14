"""``replay --transcripts``: a policy over real past sessions on disk, beside what the agent did.

For each Claude Code transcript or Codex rollout the glob matches, the main chain's requests
are walked in order with the figures each one reported (the full read's ``turns``): at each,
the policy decides on the state as it then stood — the context, the steps, the agent's own
compactions so far, the model and its window — and the first ``compact`` or ``handoff`` is
where the policy would have acted. Only the *first*: after it the session would have gone
differently, and nothing on disk says how. Beside it, where the agent compacted on its own
(the transcript's compact boundaries: step, context before, trigger).

A transcript says nothing of status, signals or messages: rules read their defaults
(``running``, each signal's default, no messages), as ``decide --transcript`` does. A file that
cannot be read, or that the policy cannot decide on, is skipped and listed; a glob that matches
no file is an error, and so is one none of whose files could be read.
"""

from __future__ import annotations

import glob
import os
from dataclasses import asdict, dataclass, field
from typing import Any

from clm_policy.base.errors import ClmError, InputError, Location
from clm_policy.base.progress import Progress
from clm_policy.models.enums import FIGURES
from clm_policy.models.state import SessionState, TokenSnapshot
from clm_policy.policy.compile import load_policy
from clm_policy.policy.engine import Policy
from clm_policy.transcripts.reading import NAMES, Compaction, TranscriptReading, read_transcript


@dataclass(frozen=True)
class FirstAction:
    """Where the policy would first have compacted or handed off."""

    step: int
    context_tokens: int
    action: str
    rule: str | None
    rationale: str


@dataclass(frozen=True)
class Native:
    """A compaction the agent made on its own."""

    step: int
    pre_tokens: int | None
    trigger: str | None


@dataclass(frozen=True)
class SessionWhatIf:
    path: str
    format: str
    session_id: str | None
    steps: int
    model: str | None
    window: int | None
    window_source: str | None
    first: FirstAction | None
    native: list[Native]

    @property
    def verdict(self) -> str:
        """``before``/``after`` the agent's first own compaction, ``instead`` (the agent never
        compacted), ``never`` (the policy never acted), ``neither``."""
        native = self.native[0] if self.native else None
        if self.first is None:
            return "never" if native else "neither"
        if native is None:
            return "instead"
        return "before" if self.first.step <= native.step else "after"

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["native_compactions"] = data.pop("native")
        return {**data, "verdict": self.verdict}


@dataclass(frozen=True)
class Skipped:
    path: str
    error: ClmError  # shown as ``file:line:col: message``


@dataclass
class TranscriptReplay:
    pattern: str
    policy: str
    policy_path: str
    profile: str
    sessions: list[SessionWhatIf] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def verdicts(self) -> dict[str, int]:
        found = [s.verdict for s in self.sessions]
        return {v: found.count(v) for v in ("before", "after", "never", "instead", "neither")}

    def as_dict(self) -> dict[str, Any]:
        return {
            "pattern": self.pattern,
            "policy": {"name": self.policy, "path": self.policy_path},
            "profile": self.profile,
            "verdicts": self.verdicts(),
            "sessions": [s.as_dict() for s in self.sessions],
            "skipped": [{"path": s.path, "error": str(s.error)} for s in self.skipped],
        }


def expand(pattern: str) -> list[str]:
    """The files ``pattern`` matches (``~`` expanded, ``**`` recursive), sorted; none is an
    error. A folder stands for its ``*.jsonl`` files at any depth — Claude Code's projects
    folder (``<project>/<session>.jsonl``), Codex's sessions folder
    (``YYYY/MM/DD/rollout-*.jsonl``) — but for subagents' transcripts
    (``<session>/subagents/``: each is a subagent's own context, not a session)."""
    folder = os.path.expanduser(pattern)
    if not os.path.isdir(folder):
        found = [path for path in glob.glob(folder, recursive=True) if os.path.isfile(path)]
        if not found:
            raise InputError(f"--transcripts {pattern!r} matches no file")
        return sorted(found)
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "subagents" and not d.startswith("."))
        found += [os.path.join(root, f) for f in files if f.endswith(".jsonl")]
    if not found:
        raise InputError(f"--transcripts {pattern!r} is a folder without a *.jsonl file")
    return sorted(found)


def read_sessions(
    pattern: str, progress: bool | None = None
) -> tuple[list[TranscriptReading], list[Skipped]]:
    """Full reads of every file ``pattern`` matches; the unreadable ones are skipped."""
    readings: list[TranscriptReading] = []
    skipped: list[Skipped] = []
    paths = expand(pattern)
    with Progress("reading transcripts", len(paths), enabled=progress) as shown:
        for path in paths:
            try:
                reading = read_transcript(path)
            except ClmError as exc:
                skipped.append(Skipped(path, exc))
            else:
                if reading.turns is None:
                    why = f"no per-request figures in an {NAMES[reading.format]}"
                    skipped.append(Skipped(path, InputError(why, Location(path))))
                else:
                    readings.append(reading)
            shown.advance()
    return readings, skipped


def replay_transcripts(
    pattern: str, policy_ref: str, profile: str | None = None, *, progress: bool | None = None
) -> TranscriptReplay:
    """Where ``policy_ref`` would first have acted in each session ``pattern`` matches."""
    policy = load_policy(policy_ref)
    prof = policy.profile(profile)
    readings, skipped = read_sessions(pattern, progress)
    result = TranscriptReplay(pattern, policy.name, policy.path, prof.name, skipped=skipped)
    for reading in readings:
        try:
            result.sessions.append(what_if(reading, policy, prof.name))
        except ClmError as exc:
            error = InputError(exc.message, Location(reading.path))
            result.skipped.append(Skipped(reading.path, error))
    if not result.sessions and result.skipped:
        raise result.skipped[0].error
    return result


def what_if(reading: TranscriptReading, policy: Policy, profile: str) -> SessionWhatIf:
    """The first action ``policy`` takes over ``reading``'s turns, and the agent's own
    compactions."""
    natives = [Native(*c) for c in reading.compactions or ()]
    tokens = TokenSnapshot(context_window=reading.context_window, model=reading.model)
    state = SessionState(session_id=FIGURES, tokens=tokens)
    window, source = policy.window_for(state, policy.profile(profile))
    first = None
    done: list[Compaction] = []
    pending = list(reading.compactions or ())
    for step, context, inputs, outputs in reading.turns or ():
        while pending and pending[0][0] < step:  # the agent compacted before this request
            done.append(pending.pop(0))
        # one state of figures, its figures set turn by turn (a decision keeps nothing of it)
        state.step_index = step
        state.last_compact_step = done[-1][0] if done else None
        state.compact_count = len(done)
        state.tokens = TokenSnapshot(
            context_tokens=context,
            input_tokens=inputs,
            output_tokens=outputs,
            total_tokens=inputs + outputs,
            context_window=reading.context_window,
            model=reading.model,
        )
        outcome = policy.decide(state, profile)
        action = outcome.action.value
        if action != "continue":
            first = FirstAction(step, context, action, outcome.trigger, outcome.rationale)
            break
    return SessionWhatIf(
        path=reading.path,
        format=reading.format,
        session_id=reading.session_id,
        steps=reading.step_index,
        model=reading.model,
        window=window,
        window_source=source,
        first=first,
        native=natives,
    )
