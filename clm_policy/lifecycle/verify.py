"""Verified compaction: the facts that must survive, checked against what the next context holds.

:func:`facts` (a compaction) and :func:`inventory` (a handoff) turn a state into :class:`Fact`
checks; :func:`verify` looks for each in the texts of the next context and returns a
:class:`Recall`. A fact is found (docs/verification.md has the rules) when its normalised text
occurs in the normalised context on word boundaries, or :data:`KEY_SHARE` of its key tokens
occur on one line, or it is a path whose last component occurs. A fact whose normalised text is
empty asks nothing; no facts is recall 1 (0 of 0). Nothing here reads a clock or a random
source: the same texts give the same recall.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence

from clm_policy.base.errors import ClmError, clipped_line
from clm_policy.base.record import Record, field
from clm_policy.base.words import STOP_WORDS
from clm_policy.lifecycle.summary import UNKNOWN_NEXT_STEP, next_safe_action

TYPE_CHECKING = False
if TYPE_CHECKING:
    from clm_policy.models.state import SessionState

VERIFY_FAILED = "verify_failed"
"""The trigger of a handoff made because a compaction's recall was under ``min_recall``."""

KINDS = (
    "goal",
    "requests",
    "constraints",
    "decisions",
    "blockers",
    "open_failures",
    "remaining",
    "next_step",
    "done",
    "changed_artifacts",
    "moved_artifacts",
    "deleted_artifacts",
    "commands_and_results",
    "verified",
    "not_verified",
    "next_safe_action",
    "memory_keys",
)
"""The kinds of facts, in the order they are reported (``next_step``: the one the agent
stated)."""
_ORDER = {k: i for i, k in enumerate(KINDS)}
_LISTS = tuple(
    k for k in KINDS if k not in ("goal", "next_step", "next_safe_action", "memory_keys")
)
"""The state's list fields whose every item is a fact a compaction must keep."""
HANDOFF_KINDS = tuple(
    k
    for k in KINDS
    if k not in ("done", "commands_and_results", "not_verified", "next_safe_action", "memory_keys")
)
"""The kinds of a handoff's fact inventory (:func:`inventory`)."""
REQUEST_WIDTH = 160
"""A request is asked by its opening this long."""
KEY_SHARE = 0.8

_WORD = re.compile(r"[^\W_]+")
_ASCII_SEPARATORS = {c: " " for c in range(128) if not chr(c).isalnum()}
_TAG = re.compile("\ue000[0-9]*\ue001?")  # the redactor's tags (clm_policy.memory.redact)
_THEN_MORE = re.compile(r" \(then \d+ more [a-z ]+\)$")


class Fact(Record):
    """One thing the next context must hold."""

    kind: str
    text: str


def facts(state: SessionState) -> list[Fact]:
    """The facts of ``state`` that must survive a compaction, each once, in :data:`KINDS`
    order; the next safe action without its "(then N more ...)" and not when it is unknown."""
    found: list[Fact] = []
    if state.goal.strip():
        found.append(Fact("goal", state.goal))
    goal = " ".join(state.goal.split())
    for kind in _LISTS:
        items = getattr(state, kind)
        if kind == "requests":  # the goal is asked once, as the goal
            items = [r for r in items if " ".join(r.split()) != goal]
        found += [Fact(kind, item) for item in items]
    action = next_safe_action(state)
    if not action.startswith(UNKNOWN_NEXT_STEP):
        found.append(Fact("next_safe_action", _THEN_MORE.sub("", action)))
    found += [Fact("memory_keys", key) for key in state.memory_keys]
    return _ordered(found)


def inventory(state: SessionState) -> list[Fact]:
    """A handoff's fact inventory (:data:`HANDOFF_KINDS`): what a fresh agent must learn from
    the seed, taken from the state *before* the agent's own handoff is merged in, so that the
    agent's words can be checked against it too."""
    found: list[Fact] = []
    if state.goal.strip():
        found.append(Fact("goal", clipped_line(state.goal, 300)))
    goal = " ".join(state.goal.split())
    found += [
        Fact("requests", clipped_line(r, REQUEST_WIDTH))
        for r in state.requests
        if " ".join(r.split()) != goal  # the goal is asked once, as the goal
    ]
    if state.next_action.strip():
        found.append(Fact("next_step", state.next_action))
    found += [
        Fact(k, item) for k in HANDOFF_KINDS[2:] if k != "next_step" for item in getattr(state, k)
    ]
    blocked = {f.text for f in found if f.kind == "open_failures"}
    found = [f for f in found if not (f.kind == "blockers" and f.text in blocked)]
    return _ordered(found)


def _ordered(found: list[Fact]) -> list[Fact]:
    return sorted(dict.fromkeys(found), key=lambda f: _ORDER.get(f.kind, 99))


def normalise(text: str) -> str:
    """``text`` as verification compares it (the module's doc)."""
    return " ".join(_split(_folded(text)))


def _split(folded: str) -> list[str]:
    """The words of folded text, as ``_WORD.findall`` gives them: only a piece that is not
    ASCII goes through the regular expression."""
    pieces = folded.translate(_ASCII_SEPARATORS).split()
    if folded.isascii():
        return pieces
    return [w for p in pieces for w in ((p,) if p.isascii() else _WORD.findall(p))]


def _folded(text: str) -> str:
    if "\ue000" in text:
        text = _TAG.sub("", text)
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return text.casefold()


def key_tokens(text: str) -> list[str]:
    """The distinct words of ``text`` without :data:`STOP_WORDS` and single letters (a single
    digit stays: "exit 1")."""
    seen = dict.fromkeys(
        w for w in _split(_folded(text)) if w not in STOP_WORDS and (len(w) > 1 or w.isdigit())
    )
    return list(seen)


class Recall(Record):
    """What :func:`verify` found: ``found`` of ``asked`` facts; ``by_kind``: kind -> (found,
    asked), in :data:`KINDS` order."""

    found: int
    asked: int
    by_kind: dict[str, tuple[int, int]] = field(default_factory=dict)
    missing: tuple[Fact, ...] = ()
    HASHABLE = False

    @property
    def value(self) -> float:
        return self.found / self.asked if self.asked else 1.0

    def below(self, threshold: float) -> bool:
        """Whether the recall is under ``threshold`` (compared exactly, not as shown)."""
        return self.found < threshold * self.asked - 1e-9

    @property
    def shown(self) -> str:
        """The recall with two decimals, rounded *down* (0.899 shows as 0.89, never as a
        passing 0.90)."""
        if not self.asked:
            return "1.00"
        hundredths = self.found * 100 // self.asked
        return f"{hundredths // 100}.{hundredths % 100:02d}"

    @property
    def trailer(self) -> str:
        """``Clm-Recall``: ``0.93 (13/14)``."""
        return f"{self.shown} ({self.found}/{self.asked})"

    @property
    def kinds_text(self) -> str:
        """``Clm-Recall-Kinds``: ``goal 1/1, requests 3/4, open_failures 1/1``."""
        return ", ".join(f"{kind} {found}/{asked}" for kind, (found, asked) in self.by_kind.items())

    @property
    def missing_counts(self) -> str:
        """``Clm-Recall-Missing``: ``decisions 1, commands_and_results 2`` ("" when none)."""
        return ", ".join(
            f"{kind} {asked - found}"
            for kind, (found, asked) in self.by_kind.items()
            if found < asked
        )

    def describe_missing(self, limit: int = 5) -> str:
        """The facts not found, for a rationale: ``decisions 'Use HS256'; blockers '...'``,
        at most ``limit`` of them, each cut to 80 characters."""
        shown = [f"{f.kind} {clipped_line(f.text, 80)!r}" for f in self.missing[:limit]]
        more = len(self.missing) - len(shown)
        if more:
            shown.append(f"and {more} more")
        return "; ".join(shown)

    def front_matter(self) -> dict[str, object]:
        out: dict[str, object] = {
            "recall": round(self.value, 4),
            "facts_found": self.found,
            "facts_asked": self.asked,
            "recall_by_kind": {k: list(v) for k, v in self.by_kind.items()},
        }
        if self.missing:
            out["facts_missing"] = [[f.kind, f.text] for f in self.missing]
        return out


class _Context:
    """The next context, normalised once: its words as one string (for containment) and, built
    only when a fact is not found by containment, the lines each wanted word occurs on."""

    def __init__(self, texts: Iterable[str]) -> None:
        self.folded = [_folded(t) for t in texts]
        self.joined = f" {' '.join(_split(chr(10).join(self.folded)))} "
        self._lines: dict[str, set[int]] | None = None

    def holds(self, normal: str) -> bool:
        return f" {normal} " in self.joined

    def on_one_line(self, tokens: Sequence[str], needed: int, wanted: set[str]) -> bool:
        if self._lines is None:
            self._lines = {}
            number = 0
            for text in self.folded:
                for line in text.splitlines():
                    for word in wanted.intersection(_split(line)):
                        self._lines.setdefault(word, set()).add(number)
                    number += 1
        counts: dict[int, int] = {}
        for token in tokens:
            for at in self._lines.get(token, ()):
                counts[at] = counts.get(at, 0) + 1
                if counts[at] >= needed:
                    return True
        return False


def verify(asked: Sequence[Fact], context: Iterable[str]) -> Recall:
    """Which of ``asked`` the texts of ``context`` hold (the rules in the module's doc)."""
    ctx = _Context(context)
    tally: dict[str, list[int]] = {}
    missing: list[Fact] = []
    unfound: list[tuple[Fact, list[str]]] = []
    for fact in asked:
        normal = normalise(fact.text)
        if not normal:
            continue
        counts = tally.setdefault(fact.kind, [0, 0])
        counts[1] += 1
        if ctx.holds(normal) or _path_tail_held(fact.text, ctx):
            counts[0] += 1
        else:
            unfound.append((fact, key_tokens(fact.text)))
    wanted = {token for _, tokens in unfound for token in tokens}
    for fact, tokens in unfound:
        if tokens and ctx.on_one_line(tokens, math.ceil(KEY_SHARE * len(tokens)), wanted):
            tally[fact.kind][0] += 1
        else:
            missing.append(fact)
    by_kind = {
        k: (v[0], v[1]) for k, v in sorted(tally.items(), key=lambda kv: _ORDER.get(kv[0], 99))
    }
    found = sum(v[0] for v in by_kind.values())
    return Recall(found, found + len(missing), by_kind, tuple(missing))


def _path_tail_held(text: str, ctx: _Context) -> bool:
    item = text.strip()
    if "/" not in item or any(c.isspace() for c in item):
        return False
    tail = normalise(item.rstrip("/").rsplit("/", 1)[-1])
    return bool(tail) and ctx.holds(tail)


def compaction_context(summary: str, messages: Iterable[object]) -> list[str]:
    """What a compaction leaves for the next context: the summary document (which the hint
    names) and each new message."""
    return [summary, *(str(getattr(m, "content", "")) for m in messages)]


class VerificationFailed(ClmError):
    """A compaction's recall under ``min_recall``: nothing was committed; the caller hands off
    instead (trigger :data:`VERIFY_FAILED`)."""

    trigger = VERIFY_FAILED

    def __init__(self, recall: Recall, min_recall: float, summarizer: str = "") -> None:
        self.recall = recall
        self.min_recall = min_recall
        self.summarizer = summarizer
        super().__init__(self.rationale)

    @property
    def rationale(self) -> str:
        return (
            f"compaction recall {self.recall.trailer} < min_recall {self.min_recall:g}; "
            f"not found in the next context: {self.recall.describe_missing()}"
        )
