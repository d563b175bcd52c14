"""How well a handoff says what a fresh agent needs, measured against truth written by reading
the session (never by the code that builds the handoff): facts covered per kind, the next step
right or close, stale or wrong statements counted apart.

A session's **truth** (``truth/<id>.yaml``; docs/verification.md, "Handoff fidelity") lists
facts, each with its kind, its text and its **phrases** — short exact strings from the
transcript that any correct handoff stating the fact would contain —; the next step with its
phrases, the phrase sets that count as close, and what the session actually did next; the
status at the cut; and the statements that would be wrong (a failing check shown as passing, a
stale next step, a notification taken as a request, a deleted file shown as present). The
project's older truth files (``benchmarks/fidelity/``) are read into the same form.

A **candidate** is a text a fresh agent could start from: clm-policy's seed from the transcript
alone, its seed with the agent's handoff reply, the reply alone, the agent's own summary.

- A fact is **covered** when its phrases occur in the candidate (compared as
  :func:`clm_policy.lifecycle.verify.normalise` compares: case, punctuation and spacing aside,
  on word boundaries): all of them; of three or more, two in three (rounded up).
- The **next step** is looked for in the candidate's next-step text: a ``Next step`` line, or
  the section under a heading that names the next step (a reply's, the agent's words in the
  seed); **right** when its phrases are there, **close** when one of its close sets is.
- **Wrong**: a failing check on a line that says it passed and not that it failed; a stale
  step in the next-step text; a not-a-request text among the seed's user messages (or a reply's
  goal); a deleted file among the seed's files; the seed's stated status ``completed`` when the
  task is not.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clm_policy.lifecycle.verify import normalise

NEXT_HEADING = re.compile(
    r"^(?:>\s*)?(?:#{1,6}\s*|\*\*|\d{1,2}[.)]\s*)?(?:optional |immediate |suggested |the )?next\b"
    r"[^\n]*$|^(?:>\s*)?(?:#{1,6}\s*)?\**next (?:safe )?(?:step|action)s?\**\s*:",
    re.I,
)
ANY_HEADING = re.compile(r"^(?:>\s*)?(?:#{1,6}\s+\S|\*\*[^*\n]{1,60}\*\*\s*:?\s*$)")
PASS_WORDS = {"passed", "pass", "passes", "passing", "green", "succeeded", "success", "ok"}
FAIL_WORDS = {
    "failed", "fail", "fails", "failing", "failure", "failures", "error", "errors", "red",
    "broken", "exit", "rejected", "refused",
}  # fmt: skip


# -- matching -----------------------------------------------------------------------------------


def has(text: str, phrase: str) -> bool:
    """``phrase`` occurs in ``text`` as :func:`words` reads both (on word boundaries)."""
    needle = words(phrase)
    return bool(needle) and f" {needle} " in f" {words(text)} "


# Han, kana and Hangul: scripts written without spaces between words (or, in Korean, with
# particles glued to them), where a "word" as normalise() reads it is a whole clause.
_UNSPACED = re.compile("([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])")


def words(text: str) -> str:
    """``text`` as :func:`normalise` reads it, with each character of a script written without
    spaces a word of its own: "leod.chen@x.com该邮箱" holds the phrase "leod.chen@x.com", and
    "先存再说" is found inside "「先存再说」——先按客户归档" as inside "我们先存再说吧"."""
    folded = normalise(text)
    return folded if folded.isascii() else " ".join(_UNSPACED.sub(r" \1 ", folded).split())


def found(text: str, phrases: Sequence[str]) -> bool:
    """All of ``phrases``; of three or more, two in three (rounded up)."""
    if not phrases:
        return False
    hits = sum(has(text, p) for p in phrases)
    need = len(phrases) if len(phrases) < 3 else math.ceil(2 * len(phrases) / 3)
    return hits >= need


AIM = re.compile(
    r"\b(?:so that|until|then|should|must|needs? to|in order to|to make|will|once|if|"
    r"expect(?:s|ed)?|want|goal|next|getting)\b",
    re.I,
)


FAIL_MARKS = (
    "失败", "失敗", "エラー", "실패", "未通过", "報錯", "报错", "fallit", "falhou", "échou",
)  # fmt: skip
"""Words of failing in other languages (a line of a reply in the session's language)."""


def says_passed(line: str) -> bool:
    """Whether ``line`` reports a pass (words of passing, none of failing in any language, and
    it is not a sentence that aims at a pass: "make it pass, then run …")."""
    words = set(normalise(line).split())
    failing = bool(words & FAIL_WORDS) or any(mark in line for mark in FAIL_MARKS)
    return bool(words & PASS_WORDS) and not failing and not AIM.search(line)


# -- truth ------------------------------------------------------------------------------------


@dataclass
class Fact:
    kind: str
    text: str
    phrases: list[str]
    alt: list[list[str]] = field(default_factory=list)

    def covered(self, text: str) -> bool:
        """Its phrases (or one of its alternative sets, in another language) in ``text``."""
        return found(text, self.phrases) or any(found(text, a) for a in self.alt)


@dataclass
class Truth:
    """A session's truth, in the corpus's form."""

    status: str | None
    facts: list[Fact]
    next_text: str = ""
    next_phrases: list[str] = field(default_factory=list)
    next_close: list[list[str]] = field(default_factory=list)
    wrong: list[tuple[str, list[str]]] = field(default_factory=list)


def _strs(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def read_truth(data: dict[str, Any]) -> Truth:
    """A truth file of either form (the corpus's ``facts:`` list, or the project's older one)."""
    if "facts" in data:
        facts = [
            Fact(
                str(f.get("kind")),
                str(f.get("text") or ""),
                _strs(f.get("phrases")),
                [_strs(a) for a in f.get("alt") or [] if _strs(a)],
            )
            for f in data.get("facts") or []
            if isinstance(f, dict)
        ]
        step = data.get("next_step") or {}
        return Truth(
            status=str(data["status"]) if data.get("status") else None,
            facts=[f for f in facts if f.phrases],
            next_text=str(step.get("text") or ""),
            next_phrases=_strs(step.get("phrases")),
            next_close=[_strs(c) for c in step.get("close") or [] if _strs(c)],
            wrong=[
                (str(w.get("kind")), _strs(w.get("phrases")))
                for w in data.get("wrong") or []
                if isinstance(w, dict) and _strs(w.get("phrases"))
            ],
        )
    return _older(data)


def _older(data: dict[str, Any]) -> Truth:
    """The project's older truth form (benchmarks/fidelity/) in the corpus's."""

    def items(key: str) -> list[tuple[str, list[str]]]:
        out = []
        for item in data.get(key) or []:
            if isinstance(item, dict):
                text = str(item.get("text") or item.get("what") or item.get("command") or "")
                phrases = _strs(item.get("phrases")) or (
                    [str(item["phrase"])] if item.get("phrase") else []
                )
                out.append((text, phrases))
        return out

    facts: list[Fact] = []
    for kind, key in (
        ("request", "requests"),
        ("instruction", "constraints"),
        ("done", "done"),
        ("remaining", "pending_tasks"),
        ("decision", "decisions"),
        ("passing", "verified"),
    ):
        facts += [Fact(kind, t, p) for t, p in items(key) if p]
    if data.get("goal_phrases"):
        facts.append(Fact("goal", str(data.get("goal")), _strs(data.get("goal_phrases"))))
    wrong: list[tuple[str, list[str]]] = []
    for item in data.get("open_failures") or []:
        if isinstance(item, dict) and item.get("command"):
            command = _command_phrase(str(item["command"]))
            facts.append(Fact("failing", str(item["command"]), [command]))
            wrong.append(("failing_as_passing", [command]))
    files = data.get("files") or {}
    for path in files.get("changed") or []:
        facts.append(Fact("file", str(path), [str(path)]))
    for path in files.get("created_by_commands") or []:
        facts.append(Fact("file", str(path), [str(path)]))
    for path in files.get("deleted") or []:
        facts.append(Fact("file_deleted", str(path), [str(path)]))
        wrong.append(("deleted_as_present", [str(path)]))
    for item in files.get("moved") or []:
        old, new = (item.get("from"), item.get("to")) if isinstance(item, dict) else (None, None)
        if old and new:
            facts.append(Fact("file_moved", f"{old} -> {new}", [str(old), str(new)]))
            wrong.append(("deleted_as_present", [str(old)]))
    for item in data.get("subagents") or []:
        edited = _strs(item.get("edited")) if isinstance(item, dict) else []
        if edited:
            facts.append(Fact("subagent", f"subagent {item.get('id')}", edited))
    for text, phrases in items("stale_next_steps"):
        wrong.append(("stale_next_step", phrases or [text]))
    return Truth(
        status=str(data.get("status")) if data.get("status") else None,
        facts=facts,
        next_text=str(data.get("next_step") or ""),
        next_phrases=_strs(data.get("next_step_phrases")),
        wrong=wrong,
    )


def _command_phrase(command: str) -> str:
    """A failing command's phrase: its first stage without filters (``mix test``)."""
    from clm_policy.transcripts.results import normalise as normal_command

    first = (normal_command(command) or command).split(" && ")[0]
    return " ".join(first.split()[:3])


# -- candidates ---------------------------------------------------------------------------------


@dataclass
class Candidate:
    name: str
    text: str

    @property
    def chars(self) -> int:
        return len(self.text)

    def next_text(self) -> str:
        """The candidate's next step: a ``Next step:`` line, else the section under a heading
        naming it (the last such section), else nothing."""
        lines = self.text.splitlines()
        for line in lines:
            m = re.match(r"^\*\*Next (?:step|safe action):\*\*\s*(.*)$", line)
            if m:
                return m.group(1)
        if "## Part 1" in self.text:  # the agent's words: their next step, not a quoted message's
            lines = self.text.split("## Part 2")[0].splitlines()
        start = None
        for i, line in enumerate(lines):
            if NEXT_HEADING.match(line.strip()):
                start = i
        if start is None:
            return ""
        body = [lines[start].split(":", 1)[1] if ":" in lines[start] else ""]
        for line in lines[start + 1 :]:
            if ANY_HEADING.match(line.strip()) or line.startswith("## Part 2"):
                break
            body.append(line)
        return "\n".join(body)

    def block(self, title: str) -> str:
        """The seed's block whose bold title starts with ``title`` (until the next block)."""
        out: list[str] = []
        inside = False
        for line in self.text.splitlines():
            if re.match(r"^\*\*[^*]+:\*\*", line):
                inside = line.startswith(f"**{title}")
                continue
            if line.startswith("## "):
                inside = False
            if inside:
                out.append(line)
        return "\n".join(out)

    def stated_status(self) -> str | None:
        m = re.search(r"^\*\*Status[^*]*:\*\*\s*([a-z _]+)", self.text, re.M)
        return m.group(1).strip().replace(" ", "_") if m else None


# -- scores -------------------------------------------------------------------------------------


@dataclass
class Score:
    found: dict[str, int] = field(default_factory=dict)
    asked: dict[str, int] = field(default_factory=dict)
    wrong: dict[str, list[str]] = field(default_factory=dict)
    missing: list[tuple[str, str]] = field(default_factory=list)
    next_step: dict[str, int] = field(default_factory=dict)  # right / close / missed
    chars: list[int] = field(default_factory=list)
    covered: set[tuple[str, str]] = field(default_factory=set)

    def add(self, other: Score) -> None:
        for name in ("found", "asked", "next_step"):
            mine, theirs = getattr(self, name), getattr(other, name)
            for k, v in theirs.items():
                mine[k] = mine.get(k, 0) + v
        for k, v in other.wrong.items():
            self.wrong.setdefault(k, []).extend(v)
        self.missing += other.missing
        self.chars += other.chars

    @property
    def total(self) -> tuple[int, int]:
        return sum(self.found.values()), sum(self.asked.values())

    @property
    def wrong_count(self) -> int:
        return sum(len(v) for v in self.wrong.values())


def score(candidate: Candidate, truth: Truth) -> Score:
    """How ``candidate`` covers ``truth`` (the rules in the module's doc)."""
    result = Score(chars=[candidate.chars])
    text = candidate.text
    for fact in truth.facts:
        result.asked[fact.kind] = result.asked.get(fact.kind, 0) + 1
        if fact.covered(text):
            result.found[fact.kind] = result.found.get(fact.kind, 0) + 1
            result.covered.add((fact.kind, fact.text))
        else:
            result.missing.append((fact.kind, fact.text[:120]))
    step = candidate.next_text()
    if truth.next_phrases:
        if step and found(step, truth.next_phrases):
            verdict = "right"
        elif step and any(found(step, close) for close in truth.next_close):
            verdict = "close"
        else:
            verdict = "missed"
        result.next_step[verdict] = 1
    for kind, phrases in truth.wrong:
        if _is_wrong(kind, phrases, candidate, step):
            result.wrong.setdefault(kind, []).append(" / ".join(phrases))
    stated = candidate.stated_status()
    if stated == "completed" and truth.status not in (None, "completed"):
        result.wrong.setdefault("status", []).append(f"completed (truth: {truth.status})")
    return result


def reports(line: str, command: str) -> bool:
    """Whether ``line`` reports a run of ``command`` itself (not of a longer command it starts:
    ``pytest -q`` is no report of ``pytest -q tests/x.py``): the command, then the end of the
    line, a closing mark, or a word of result."""
    lowered = line.lower()
    needle = command.lower().strip()
    start = lowered.find(needle)
    while needle and start >= 0:
        rest = lowered[start + len(needle) :]
        if not rest or rest[0] in ":`),;" or re.match(r"\s+(?:fail|pass|is|was|exit|—|-)", rest):
            return True
        start = lowered.find(needle, start + 1)
    return False


def _is_wrong(kind: str, phrases: list[str], candidate: Candidate, step: str) -> bool:
    if kind == "failing_as_passing":
        return any(
            all(reports(line, p) for p in phrases) and says_passed(_latest(line))
            for line in candidate.text.splitlines()
        )
    if kind == "stale_next_step":  # wrong as THE next step: its first sentence
        return bool(step) and found(first_action(step), phrases)
    if kind == "not_a_request":
        where = candidate.block("The user's messages") or _section(candidate.text, "goal")
        return bool(where) and found(where, phrases)
    if kind == "deleted_as_present":
        files = candidate.block("Files changed") + "\n" + candidate.block("Files made")
        shown = [line.strip().removeprefix("- ").strip("`") for line in files.splitlines()]
        return any(normalise(path) == normalise(p) for path in shown for p in phrases)
    return False


def first_action(step: str) -> str:
    """The next-step text's first action: its first non-empty line, up to the first sentence
    end (a full stop, an ideographic full stop or semicolon, "; then")."""
    lines = [ln.strip("> ").strip() for ln in step.splitlines()]
    line = next((ln for ln in lines if ln), "")
    return SENTENCE_END.split(line, maxsplit=1)[0]


SENTENCE_END = re.compile(
    "(?<=[.!?])\\s|[\u3002\uff1b]|;\\s*then\\b|\uff0c\u7136\u540e|\u3001\u305d\u306e\u5f8c"
)


def _latest(line: str) -> str:
    """A check's line without what it says of an earlier run (``(an earlier run: passed …)``)."""
    return re.sub(r"\((?:an )?earlier run[^)]*\)+", "", line)


def _section(text: str, word: str) -> str:
    out: list[str] = []
    inside = False
    for line in text.splitlines():
        if ANY_HEADING.match(line.strip()):
            inside = word in line.lower()
            continue
        if inside:
            out.append(line)
    return "\n".join(out)


# -- sessions ------------------------------------------------------------------------------------


@dataclass
class Session:
    name: str
    path: Path
    truth: Truth
    half: str | None = None
    reply: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    """The handoff a model wrote from the transcript (the ``with a model`` arm), if any."""
    agent: str = "claude-code"
    """The agent that wrote the session (``codex``: its seeds are measured in bytes)."""


def median(values: Sequence[int]) -> float:
    return statistics.median(values) if values else 0.0


def share(f: int, a: int) -> str:
    return f"{100 * f / a:.1f}%" if a else "—"
