"""How well a handoff says what a fresh agent needs: facts covered, stale or wrong facts, length.

A session's **truth** is a YAML file written by reading the session (docs/verification.md,
"Handoff fidelity"): its requests, goal, constraints, status, what is done and verified, the
open failures and the runs that only look like failures, the pending tasks, the next step and
the next steps that are stale, the files (changed, made by commands, moved, deleted), the
decisions, the subagents and whether the agent wrote a summary of its own. A **candidate** is a
text a fresh agent could start from: clm-policy's seed, the last assistant message alone (what
handoffs quoted before), the agent's own summary (its handoff reply, its compact summary).

A fact is **covered** when its key phrases appear in the candidate, compared as
:func:`clm_policy.lifecycle.verify.normalise` compares (case, punctuation and spacing aside):

- a fact with phrases of its own (``phrase``, ``phrases``, ``goal_phrases``,
  ``next_step_phrases``): all of them; of a list of three or more, two in three (rounded up);
- a path (changed, made, deleted file; a subagent's edits): the path itself, project-relative;
  a move: both paths on one line;
- an open failure: its command on a line that does not say it passed;
- the goal: in the candidate's goal line; the next step: in its next-step text (the seed's
  "Next safe action" line; the agent summary's stated next step; the whole last message);
- the status: the candidate's stated status equals the truth's;
- any other fact: 60 % of its key words (three letters or more, no stop words; a word with a
  digit always counts) on one line of the candidate.

**Wrong facts** are counted apart: a stale next step given as the next step, a failing run
reported as passing, a moved or deleted file listed as changed, a run that is no failure (``rg``
with no match) listed as a failure or blocker. **Precision**, for the seed's own sections: of
the items a section lists, the share that match a truth fact of its kind.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from clm_policy.lifecycle.handoff import build_manifest, seed_text
from clm_policy.lifecycle.seed import CHARS_PER_TOKEN, DEFAULT_SEED_TOKENS
from clm_policy.lifecycle.verify import STOP_WORDS, normalise
from clm_policy.transcripts.notes import parse_notes
from clm_policy.transcripts.reading import TranscriptReading, read_transcript
from clm_policy.transcripts.takeover import handoff_states

KINDS = (
    "requests",
    "goal",
    "constraints",
    "status",
    "done",
    "verified",
    "open_failures",
    "pending_tasks",
    "next_step",
    "files_changed",
    "files_made",
    "files_moved",
    "files_deleted",
    "decisions",
    "subagents",
)
WRONG = (
    "stale_next_step",
    "failing_as_passed",
    "moved_as_changed",
    "deleted_as_changed",
    "not_failure_as_failure",
)
SECTION_KINDS = {
    "Open failures": "open_failures",
    "Remaining tasks": "pending_tasks",
    "Changed files": "files_changed",
    "Constraints": "constraints",
    "Decisions": "decisions",
    "Done": "done",
    "Verified": "verified",
    "Earlier requests": "requests",
}
"""The seed's sections whose items are checked for precision, and the truth kind of each."""
SHARE = 0.6
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
STATUSES = {
    "done": "completed",
    "completed": "completed",
    "complete": "completed",
    "blocked": "blocked",
    "in_progress": "in_progress",
    "in progress": "in_progress",
    "running": "in_progress",
    "waiting": "in_progress",
    "partial": "partial_complete",
    "partial_complete": "partial_complete",
}
_PATHLIKE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.[A-Za-z0-9]{1,8})(?![\w/-])")
_QUOTED = re.compile(r"'([^']{6,})'|\"([^\"]{6,})\"|`([^`]{3,})`")
_WORD = re.compile(r"[^\W_]+")


# ---------------------------------------------------------------------------------------------
# Candidates


@dataclass
class Candidate:
    """A text a fresh agent could start from, with its goal line, next-step text, status and
    (for the seed) its sections."""

    name: str
    text: str
    goal: str = ""
    next_step: str = ""
    status: str | None = None
    sections: dict[str, list[str]] | None = None

    @property
    def tokens(self) -> int:
        return -(-len(self.text) // CHARS_PER_TOKEN)


def seed_candidate(reading: TranscriptReading, reply: str | None = None) -> Candidate:
    """clm-policy's seed of the session, as the Stop hook makes it: the state read from the
    transcript with the agent's handoff ``reply`` (when it wrote one) parsed over it."""
    _base, state = handoff_states(reading, "s", reply)
    manifest = build_manifest(state, "handoff (benchmark)", now=NOW)
    text = seed_text(
        manifest, seed_tokens=DEFAULT_SEED_TOKENS, manifest_path="manifests/20261201T120000Z_s.json"
    )
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    goal = next_step = ""
    status = None
    for line in text.splitlines():
        if line.startswith("**Goal:**"):
            goal = line
        elif line.startswith("**Next safe action:**"):
            next_step = line
        elif line.startswith("**Status:**"):
            status = line.split("**Status:**", 1)[1].strip()
        m = re.match(r"^\*\*(.+?):\*\*$", line)
        if m:
            current = sections.setdefault(m.group(1), [])
        elif line.startswith("- ") and current is not None:
            current.append(line[2:])
        elif not line.strip():
            current = None if current is None or current else current
    return Candidate("clm seed", text, goal, next_step, status, sections)


def last_message_candidate(reading: TranscriptReading) -> Candidate:
    """The last assistant message alone: what a handoff quoted as its next step before."""
    text = (reading.work.last_message if reading.work else None) or ""
    text = text or reading.last_assistant_message or ""
    return Candidate("last message", text, text, text, None)


def agent_candidate(reading: TranscriptReading, kind: str) -> Candidate | None:
    """The agent's own summary: its handoff reply (the last assistant message, ``kind``
    ``handoff``) or its latest compact summary (``compact``); None when there is none."""
    work = reading.work
    if work is None:
        return None
    if kind == "handoff":
        text = work.last_message or ""
    elif work.summaries:
        text = work.summaries[-1][1]
    else:
        return None
    if not text.strip():
        return None
    notes = parse_notes(text)
    status = {"completed": "completed", "blocked": "blocked", "in_progress": "in_progress"}.get(
        notes.status or ""
    )
    return Candidate("agent summary", text, text, notes.next_action or "", status)


# ---------------------------------------------------------------------------------------------
# Matching


def _n(text: str) -> str:
    return f" {normalise(text)} "


def key_words(text: str) -> list[str]:
    words = [w for w in _WORD.findall(text.casefold()) if w not in STOP_WORDS]
    keep = [w for w in words if len(w) >= 3 or any(c.isdigit() for c in w)]
    return list(dict.fromkeys(keep))


def has(text: str, phrase: str) -> bool:
    """``phrase`` occurs in ``text`` as :func:`normalise` reads both (on word boundaries)."""
    needle = normalise(phrase)
    return bool(needle) and f" {needle} " in _n(text)


def phrases_found(text: str, phrases: Sequence[str]) -> bool:
    """All of ``phrases``; of three or more, two in three (rounded up)."""
    if not phrases:
        return False
    found = sum(has(text, p) for p in phrases)
    need = len(phrases) if len(phrases) < 3 else math.ceil(2 * len(phrases) / 3)
    return found >= need


def words_on_a_line(text: str, words: Sequence[str], share: float = SHARE) -> bool:
    if not words:
        return False
    need = max(1, math.ceil(share * len(words)))
    for line in text.splitlines():
        have = set(normalise(line).split())
        if sum(w in have for w in words) >= need:
            return True
    return False


@dataclass
class Fact:
    """One truth fact: its kind, its text, its phrases (explicit or none) and a command."""

    kind: str
    text: str
    phrases: list[str] = field(default_factory=list)
    command: str = ""

    def covered(self, text: str) -> bool:
        if self.phrases:
            return phrases_found(text, self.phrases)
        return words_on_a_line(text, key_words(self.text))


def _text_and_phrases(item: Any, text_key: str = "text") -> tuple[str, list[str]]:
    if isinstance(item, str):
        return item, []
    if isinstance(item, dict):
        text = str(item.get(text_key) or item.get("what") or item.get("text") or "")
        phrases = item.get("phrases") or ([item["phrase"]] if item.get("phrase") else [])
        return text, [str(p) for p in phrases]
    return str(item), []


def facts_of(truth: dict[str, Any]) -> list[Fact]:
    """The truth's facts, by kind (status, goal and next step included as one fact each)."""
    out: list[Fact] = []
    for item in truth.get("requests") or []:
        text, phrases = _text_and_phrases(item)
        out.append(Fact("requests", text, phrases))
    if truth.get("goal"):
        out.append(
            Fact("goal", str(truth["goal"]), [str(p) for p in truth.get("goal_phrases") or []])
        )
    for kind, key in (
        ("constraints", "constraints"),
        ("done", "done"),
        ("pending_tasks", "pending_tasks"),
        ("decisions", "decisions"),
    ):
        for item in truth.get(key) or []:
            text, phrases = _text_and_phrases(item)
            out.append(Fact(kind, text, phrases))
    if truth.get("status"):
        out.append(Fact("status", str(truth["status"])))
    for item in truth.get("verified") or []:
        text, phrases = _text_and_phrases(item)
        evidence = str(item.get("evidence") or "") if isinstance(item, dict) else ""
        out.append(Fact("verified", f"{text} {evidence}".strip(), phrases))
    for item in truth.get("open_failures") or []:
        command = str(item.get("command") or "") if isinstance(item, dict) else str(item)
        text, phrases = _text_and_phrases(item, "command")
        out.append(Fact("open_failures", text or command, phrases, command))
    if truth.get("next_step"):
        phrases = [str(p) for p in truth.get("next_step_phrases") or []]
        out.append(Fact("next_step", str(truth["next_step"]), phrases))
    files = truth.get("files") or {}
    for path in files.get("changed") or []:
        out.append(Fact("files_changed", str(path), [str(path)]))
    for path in files.get("created_by_commands") or []:
        out.append(Fact("files_made", str(path), [str(path)]))
    for item in files.get("moved") or []:
        old, new = _move(item)
        out.append(Fact("files_moved", f"{old} -> {new}", [old, new]))
    for path in files.get("deleted") or []:
        out.append(Fact("files_deleted", str(path), [str(path)]))
    for item in truth.get("subagents") or []:
        edited = [str(p) for p in (item.get("edited") or [])] if isinstance(item, dict) else []
        if edited:
            out.append(Fact("subagents", f"subagent {item.get('id')}", edited))
    return out


def _move(item: Any) -> tuple[str, str]:
    if isinstance(item, dict):
        return str(item.get("from")), str(item.get("to"))
    old, _, new = str(item).partition("->")
    return old.strip(), new.strip()


def _stale_phrases(item: Any) -> tuple[list[str], list[str]]:
    """(phrases, key words) of a stale next step."""
    text, phrases = _text_and_phrases(item)
    if not phrases:
        quoted = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(text)]
        phrases = quoted
    return phrases, ([] if phrases else key_words(text))


def _not_failure_command(item: Any) -> str:
    if isinstance(item, dict):
        return str(item.get("command") or "")
    text = str(item)
    cut = re.split(r" \(|: | - |, each| exit \d", text, maxsplit=1)[0]
    return " ".join(cut.split()[:6])


# ---------------------------------------------------------------------------------------------
# Scoring


@dataclass
class Score:
    found: dict[str, int] = field(default_factory=dict)
    asked: dict[str, int] = field(default_factory=dict)
    wrong: dict[str, list[str]] = field(default_factory=dict)
    precise: dict[str, int] = field(default_factory=dict)
    listed: dict[str, int] = field(default_factory=dict)
    missing: list[tuple[str, str]] = field(default_factory=list)
    tokens: int = 0

    def add(self, other: Score) -> None:
        for name in ("found", "asked", "precise", "listed"):
            mine, theirs = getattr(self, name), getattr(other, name)
            for k, v in theirs.items():
                mine[k] = mine.get(k, 0) + v
        for k, v in other.wrong.items():
            self.wrong.setdefault(k, []).extend(v)
        self.missing += other.missing


def score(candidate: Candidate, truth: dict[str, Any]) -> Score:
    """How ``candidate`` covers ``truth`` (the rules in the module's doc)."""
    result = Score(tokens=candidate.tokens)
    text = candidate.text
    facts = facts_of(truth)
    for fact in facts:
        result.asked[fact.kind] = result.asked.get(fact.kind, 0) + 1
        if _covered(fact, candidate):
            result.found[fact.kind] = result.found.get(fact.kind, 0) + 1
        else:
            result.missing.append((fact.kind, fact.text[:100]))
    wrong = result.wrong
    for item in truth.get("stale_next_steps") or []:
        phrases, words = _stale_phrases(item)
        step = candidate.next_step
        hit = phrases_found(step, phrases) if phrases else words_on_a_line(step, words, 0.7)
        if step and hit:
            wrong.setdefault("stale_next_step", []).append(str(item)[:100])
    failure_lines = _failure_lines(candidate)
    for fact in facts:
        if fact.kind == "open_failures" and fact.command:
            for line in text.splitlines():
                said = run_report(line, fact.command)
                if said is not None and _says_passed(said):
                    wrong.setdefault("failing_as_passed", []).append(fact.command)
                    break
    for item in truth.get("not_failures") or []:
        command = _not_failure_command(item)
        if command and any(has(line, command) for line in failure_lines):
            wrong.setdefault("not_failure_as_failure", []).append(command)
    files = truth.get("files") or {}
    changed = (candidate.sections or {}).get("Changed files", [])
    for item in files.get("moved") or []:
        old, _new = _move(item)
        if any(normalise(line) == normalise(old) for line in changed):
            wrong.setdefault("moved_as_changed", []).append(old)
    for path in files.get("deleted") or []:
        if any(normalise(line) == normalise(str(path)) for line in changed):
            wrong.setdefault("deleted_as_changed", []).append(str(path))
    if candidate.sections is not None:
        by_kind: dict[str, list[Fact]] = {}
        for fact in facts:
            kind = "files_changed" if fact.kind == "files_made" else fact.kind
            by_kind.setdefault(kind, []).append(fact)
        for title, kind in SECTION_KINDS.items():
            items = candidate.sections.get(title, [])
            truths = by_kind.get(kind, [])
            for item in items:
                result.listed[kind] = result.listed.get(kind, 0) + 1
                if any(_item_matches(t, item) for t in truths):
                    result.precise[kind] = result.precise.get(kind, 0) + 1
    return result


def _covered(fact: Fact, candidate: Candidate) -> bool:
    text = candidate.text
    if fact.kind == "status":
        return candidate.status == STATUSES.get(fact.text.lower().replace("-", "_"), fact.text)
    if fact.kind == "goal":
        return fact.covered(candidate.goal)
    if fact.kind == "next_step":
        return bool(candidate.next_step) and fact.covered(candidate.next_step)
    if fact.kind == "open_failures":
        lines = [
            line
            for line in text.splitlines()
            if (said := run_report(line, fact.command)) is not None and not _says_passed(said)
        ]
        return bool(lines) and (
            not fact.phrases or any(phrases_found(line, fact.phrases) for line in lines)
        )
    if fact.kind == "files_moved":
        return any(all(has(line, p) for p in fact.phrases) for line in text.splitlines())
    if fact.kind == "subagents":
        return all(has(text, p) for p in fact.phrases)
    return fact.covered(text)


def run_report(line: str, command: str) -> str | None:
    """What ``line`` says of a run of ``command`` (as written, or normalised), or None when
    the line reports no run of it: the command must end where the report starts (``cmd:``,
    ``cmd`` in backticks, ``cmd fails``), so ``pytest -q`` is no report of ``pytest -q
    tests/x.py``."""
    for form in dict.fromkeys((command.strip(), normalise_command(command))):
        start = line.find(form)
        while form and start >= 0:
            rest = line[start + len(form) :]
            if not rest or rest[0] in ":`)," or re.match(r"\s+(?:fail|pass|is|was|exit)", rest):
                return rest.lstrip(":`), ")
            start = line.find(form, start + 1)
    return None


def _item_matches(fact: Fact, item: str) -> bool:
    if fact.kind == "open_failures":
        return run_report(item, fact.command) is not None
    if fact.kind in ("files_changed", "files_made"):
        return normalise(item) == normalise(fact.text)
    return fact.covered(item)


def _failure_lines(candidate: Candidate) -> list[str]:
    if candidate.sections is not None:
        return [
            *candidate.sections.get("Open failures", []),
            *candidate.sections.get("Blockers", []),
        ]
    return [line for line in candidate.text.splitlines() if re.search(r"(?i)\bfail", line)]


def _says_passed(line: str) -> bool:
    words = set(normalise(line).split())
    return bool(words & {"passed", "pass", "ok", "green", "passing"}) and not bool(
        words & {"failed", "fail", "failing", "failures", "failure", "error", "errors"}
    )


def normalise_command(command: str) -> str:
    from clm_policy.transcripts.results import normalise as normal_command

    return normal_command(command) or command


# ---------------------------------------------------------------------------------------------
# Sessions


@dataclass
class Session:
    name: str
    path: Path
    truth: dict[str, Any]


def sessions_in(folder: Path) -> list[Session]:
    """The sessions of ``folder``, in either layout: ``<folder>/truth/<name>.yaml`` with
    ``<folder>/sessions/<name>.jsonl`` (or ``sessions/<name>/<file>.jsonl``, a session whose
    subagents' transcripts lie beside it) — the hand-written sessions, public ones —, or
    ``<folder>/<name>/truth.yaml`` with the session's one ``.jsonl`` file beside it (and its
    subagents' folder) — the sessions recorded with the real agents (``fidelity/record.py``)."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe")
    found: list[Session] = []
    pairs: list[tuple[str, Path, Path | None]] = []
    for truth_path in sorted((folder / "truth").glob("*.yaml")):
        name = truth_path.stem
        direct = folder / "sessions" / f"{name}.jsonl"
        nested = sorted((folder / "sessions" / name).glob("*.jsonl"))
        pairs.append((name, truth_path, direct if direct.exists() else next(iter(nested), None)))
    for truth_path in sorted(folder.glob("*/truth.yaml")):
        files = sorted(truth_path.parent.glob("*.jsonl"))
        pairs.append((truth_path.parent.name, truth_path, files[0] if len(files) == 1 else None))
    for name, truth_path, path in pairs:
        if path is not None:
            found.append(Session(name, path, yaml.load(truth_path.read_text(encoding="utf-8"))))
    return found


def agent_kind(truth: dict[str, Any]) -> str | None:
    """Which of the agent's own texts is its summary: ``handoff`` (its last reply), ``compact``
    (its latest compact summary), or None."""
    value = truth.get("agent_summary")
    if isinstance(value, dict):
        return str(value.get("kind") or "compact")
    if value in ("handoff", "compact"):
        return str(value)
    if value in ("present", True):
        return "compact"
    return None


def evaluate(session: Session) -> dict[str, tuple[Candidate, Score]]:
    """Each candidate of ``session`` and its score."""
    reading = read_transcript(session.path)
    kind = agent_kind(session.truth)
    reply = None
    if kind == "handoff" and reading.work is not None:
        reply = reading.work.last_message
    out: dict[str, tuple[Candidate, Score]] = {}
    seed = seed_candidate(reading, reply)
    out["clm seed"] = (seed, score(seed, session.truth))
    last = last_message_candidate(reading)
    out["last message"] = (last, score(last, session.truth))
    if kind is not None:
        agent = agent_candidate(reading, kind)
        if agent is not None:
            out["agent summary"] = (agent, score(agent, session.truth))
    return out


def share(found: int, asked: int) -> str:
    return f"{100 * found / asked:5.1f}%" if asked else "    —"


def table(totals: dict[str, Score], title: str) -> list[str]:
    names = list(totals)
    width = 16
    lines = [
        f"## {title}",
        "",
        "| kind | " + " | ".join(names) + " |",
        "|---" * (len(names) + 1) + "|",
    ]
    for kind in KINDS:
        cells = []
        any_asked = False
        for name in names:
            s = totals[name]
            asked = s.asked.get(kind, 0)
            any_asked = any_asked or bool(asked)
            cells.append(
                f"{share(s.found.get(kind, 0), asked).strip()} ({s.found.get(kind, 0)}/{asked})"
            )
        if any_asked:
            lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    overall = []
    for name in names:
        s = totals[name]
        f, a = sum(s.found.values()), sum(s.asked.values())
        overall.append(f"**{share(f, a).strip()}** ({f}/{a})")
    lines.append("| **all facts** | " + " | ".join(overall) + " |")
    wrong = []
    for name in names:
        s = totals[name]
        wrong.append(str(sum(len(v) for v in s.wrong.values())))
    lines.append("| stale or wrong facts | " + " | ".join(wrong) + " |")
    del width
    return lines


def precision_lines(score_: Score) -> list[str]:
    lines = ["| section | precision |", "|---|---|"]
    for title, kind in SECTION_KINDS.items():
        listed = score_.listed.get(kind, 0)
        if listed:
            precise = score_.precise.get(kind, 0)
            lines.append(f"| {title} | {share(precise, listed).strip()} ({precise}/{listed}) |")
    return lines


def median_tokens(values: Iterable[int]) -> float:
    data = list(values)
    return statistics.median(data) if data else 0.0
