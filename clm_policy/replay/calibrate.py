"""``calibrate``: a profile's soft and hard thresholds proposed from the team's own history.

The method is docs/replay.md's "How calibrate proposes thresholds", in short: gather the
*trouble points* (context sizes at which a session was already in trouble: the agent compacted
on its own, automatically; the integration reported degradation; a compaction's recall fell
under :data:`RECALL_FLOOR`), each commit giving one point at most and points of sessions
decided under another profile left out; take their lower decile (nearest rank); ``hard_handoff``
is that less :data:`MARGIN`, rounded down (to 1,000 tokens, or a whole percent for shares of
the window); ``soft_compact`` keeps the profile's current soft/hard ratio. With fewer than
:data:`MIN_POINTS` points nothing is proposed and nothing is written.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from clm_policy.base.errors import plural
from clm_policy.memory.audit import read_log
from clm_policy.memory.git.write import MemoryRepo
from clm_policy.models.enums import FIGURES
from clm_policy.models.state import SessionState, TokenSnapshot
from clm_policy.policy.compile import load_policy
from clm_policy.policy.engine import Policy, Profile, Threshold
from clm_policy.replay.records import decision_files, read_lines
from clm_policy.replay.transcripts import Skipped, read_sessions
from clm_policy.transcripts.reading import json_object

MIN_POINTS = 5
MARGIN = 0.05
DECILE = 0.1
RECALL_FLOOR = 0.9
TOKEN_STEP = 1000
DEFAULT_RATIO = 0.8  # soft / hard when the current thresholds cannot be compared

KINDS = ("native", "degradation", "recall")


@dataclass(frozen=True)
class Point:
    """A context size at which a session was in trouble."""

    kind: str  # native | degradation | recall
    source: str  # memory | transcript
    session: str
    tokens: int
    window: int | None


@dataclass
class Calibration:
    policy: str
    policy_path: str
    profile: str
    unit: str  # tokens | percent
    current: tuple[str, str]
    points: list[Point] = field(default_factory=list)
    left_out: Counter[str] = field(default_factory=Counter)  # reason -> points not used
    lower_decile: float | None = None
    proposed: tuple[Threshold, Threshold] | None = None
    reason: str | None = None  # why nothing is proposed
    skipped: list[Skipped] = field(default_factory=list)
    sessions: set[str] = field(default_factory=set)  # every session read

    def counts(self) -> dict[str, int]:
        return {kind: sum(p.kind == kind for p in self.points) for kind in KINDS}

    def as_dict(self) -> dict[str, Any]:
        return {
            "policy": {"name": self.policy, "path": self.policy_path},
            "profile": self.profile,
            "unit": self.unit,
            "current": {"soft_compact": self.current[0], "hard_handoff": self.current[1]},
            "proposed": (
                {"soft_compact": str(self.proposed[0]), "hard_handoff": str(self.proposed[1])}
                if self.proposed
                else None
            ),
            "reason": self.reason,
            "method": {
                "lower_decile": self.lower_decile,
                "margin": MARGIN,
                "min_points": MIN_POINTS,
            },
            "sessions": len(self.sessions),
            "points": self.counts(),
            "left_out": dict(self.left_out),
            "trouble_points": [asdict(p) for p in self.points],
            "skipped": [{"path": s.path, "error": str(s.error)} for s in self.skipped],
        }


def calibrate(
    policy_ref: str,
    profile: str | None,
    *,
    memory: str | None = None,
    transcripts: str | None = None,
    progress: bool | None = None,
) -> Calibration:
    """Propose ``profile``'s thresholds of ``policy_ref`` from ``memory`` and ``transcripts``."""
    policy = load_policy(policy_ref)
    prof = policy.profile(profile)
    unit = "percent" if prof.hard_handoff.percent is not None else "tokens"
    result = Calibration(
        policy.name, policy.path, prof.name, unit, (str(prof.soft_compact), str(prof.hard_handoff))
    )
    points: list[Point] = []
    if transcripts is not None:
        points += _transcript_points(transcripts, policy, prof, result, progress)
    if memory is not None:
        points += _memory_points(memory, prof.name, result)
    values = []
    for p in points:
        value = _value(p, prof, unit)
        if value is None:
            result.left_out["no context window known (thresholds are shares of it)"] += 1
            continue
        if unit == "percent" and value > 100:  # a window not the one assumed: it would mislead
            result.left_out["past the profile's window (the session ran with a larger one)"] += 1
            continue
        result.points.append(p)
        values.append(value)
    if len(values) < MIN_POINTS:
        found = plural(len(values), "trouble point")
        result.reason = f"too little history: {found}, at least {MIN_POINTS} needed"
        return result
    if (prof.soft_compact.percent is None) != (prof.hard_handoff.percent is None):
        result.reason = (
            "soft_compact and hard_handoff are written in different units (tokens and a share "
            "of the window): write both the same way to calibrate them"
        )
        return result
    values.sort()
    low = values[max(1, math.ceil(DECILE * len(values))) - 1]
    result.lower_decile = low
    step = 1 if unit == "percent" else TOKEN_STEP
    hard = math.floor(low * (1 - MARGIN) / step) * step
    soft = math.floor(hard * _ratio(prof) / step) * step
    if soft <= 0 or soft >= hard:
        result.reason = f"the trouble points are too low to propose thresholds (at {low:g})"
        return result
    if unit == "percent":
        result.proposed = (Threshold(percent=float(soft)), Threshold(percent=float(hard)))
    else:
        result.proposed = (Threshold(tokens=int(soft)), Threshold(tokens=int(hard)))
    return result


def _ratio(prof: Profile) -> float:
    soft, hard = prof.soft_compact, prof.hard_handoff
    if soft.percent is not None and hard.percent:
        return soft.percent / hard.percent
    if soft.tokens is not None and hard.tokens:
        return soft.tokens / hard.tokens
    return DEFAULT_RATIO


def _value(p: Point, prof: Profile, unit: str) -> float | None:
    if unit == "tokens":
        return float(p.tokens)
    window = p.window or prof.context_window
    return 100 * p.tokens / window if window else None


def _transcript_points(
    pattern: str,
    policy: Policy,
    prof: Profile,
    result: Calibration,
    progress: bool | None,
) -> list[Point]:
    readings, skipped = read_sessions(pattern, progress)
    result.skipped += skipped
    points = []
    for reading in readings:
        sid = reading.state_session_id()
        result.sessions.add(sid)
        state = SessionState(
            session_id=FIGURES,
            tokens=TokenSnapshot(context_window=reading.context_window, model=reading.model),
        )
        window = policy.window_for(state, prof)[0]
        for _step, before, trigger in reading.compactions or ():
            if trigger == "manual":
                result.left_out["manual compaction (a person chose the moment)"] += 1
            elif before is None:
                result.left_out["compaction without the context before it"] += 1
            else:
                points.append(Point("native", "transcript", sid, before, window))
    return points


_RECALL = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(%?)")


def recall_of(value: str) -> float | None:
    """A ``Clm-Recall`` trailer's recall as a share: ``0.85``, ``85%``, ``0.85 (17/20 ...)``."""
    match = _RECALL.match(value)
    if match is None:
        return None
    number = float(match[1])
    share = number / 100 if match[2] else number
    return share if 0 <= share <= 1 else None


def _memory_points(memory: str, profile: str, result: Calibration) -> list[Point]:
    """The memory's trouble points; an agent's compaction is left out for a session whose
    transcript was read (the transcript's figure is the exact one)."""
    from_transcripts = set(result.sessions)
    points: list[Point] = []
    counted: set[str] = set()  # commits that gave a point: each gives one at most
    with MemoryRepo(memory) as repo:
        commit = repo.head()
        if commit is None:
            return points
        paths, _skipped = decision_files(repo, commit)
        profiles: dict[str, str] = {}
        windows: dict[str, int] = {}
        degraded: dict[str, bool] = {}
        for line in read_lines(repo, commit, paths, _skipped):
            data = json_object(line.text)
            if data is None:
                continue
            sid = line.session
            result.sessions.add(sid)
            prof, window = data.get("profile"), _count(data.get("context_window"))
            if isinstance(prof, str):
                profiles[sid] = prof
            if window is not None:
                windows[sid] = window
            state = data.get("state")
            signals = state.get("signals") if isinstance(state, dict) else None
            tokens = state.get("tokens") if isinstance(state, dict) else None
            context = tokens.get("context_tokens") if isinstance(tokens, dict) else None
            now = isinstance(signals, dict) and signals.get("degradation") is True
            at = _count(context)
            if now and not degraded.get(sid) and at is not None:
                if prof == profile:
                    points.append(Point("degradation", "memory", sid, at, window))
                else:
                    result.left_out["decided under another profile"] += 1
            degraded[sid] = now
        for entry in read_log(repo, rev=commit):
            sid, trailers = entry.session, entry.trailers
            if sid:
                result.sessions.add(sid)
            if profiles.get(sid, profile) != profile:
                if "Clm-Agent-Tokens" in trailers or "Clm-Recall" in trailers:
                    result.left_out["decided under another profile"] += 1
                continue
            native = _count(_int(trailers.get("Clm-Agent-Tokens")))
            trigger = trailers.get("Clm-Agent-Trigger")
            if native is not None and sid not in from_transcripts:
                if trigger == "auto":
                    points.append(Point("native", "memory", sid, native, windows.get(sid)))
                    counted.add(entry.commit)
                else:
                    result.left_out["manual compaction (a person chose the moment)"] += 1
            if entry.event != "compact" or entry.commit in counted:
                continue
            recall = recall_of(trailers.get("Clm-Recall", ""))
            at = _count(_int(trailers.get("Clm-Context-Tokens")))
            if recall is not None and recall < RECALL_FLOOR and at is not None:
                points.append(Point("recall", "memory", sid, at, windows.get(sid)))
                counted.add(entry.commit)
    return points


def _int(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() and len(text) < 16 else None


def _count(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**53:
        return value
    return None


def memory_given(memory: str, explicit: bool, transcripts: str | None) -> str | None:
    """The memory repository calibrate reads: the one named, else the configured one when it
    exists or no transcripts are given (then a missing one is an error, as everywhere)."""
    if explicit or transcripts is None or os.path.isdir(memory):
        return memory
    return None
