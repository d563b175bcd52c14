"""What an agent wrote on purpose about where its work stands, read into typed fields.

The sources are the handoff reply the Stop hook asks for, Claude Code's compact summary
(PostCompact's ``compact_summary``, the ``isCompactSummary`` user line), Codex's readable
compaction (a ``compacted`` line's ``message``) and, later, an MCP ``handoff`` tool: one parser
for all of them (:func:`parse_notes`).

The text is cut into sections by its headings, whatever their form: Markdown headings
(``## Next safe action``), bold labels (``**Blockers:** none``), ``Label:`` lines
(``Goal: ship the parser``) and numbered headings (``7. Pending Tasks:``, Claude Code's
compaction). A section's label is matched by meaning (:data:`LABELS`: "Done and verified",
"What is verified", "Verified" all land in ``verified``); its body becomes items — one per
bullet or numbered line (sub-bullets join their item), else one per paragraph; ``- [x]`` and
``- [ ]`` items are done and remaining wherever they stand; ``none`` / ``n/a`` is an empty
list that was stated (a reply saying "Blockers: none" has ``blockers == []``, one that does not
mention blockers has None). A reply with no heading at all still gives its next step when it
says "Next, I'll …" or "Next step: …".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from itertools import groupby

from clm_policy.base.errors import clipped_line

ITEM_LIMIT = 600
"""Characters of one item kept."""
ITEMS_LIMIT = 60
"""Items of one field kept."""

LABELS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (field, re.compile(pattern))
    for field, pattern in (
        (
            "not_verified",
            r"\b(?:not|un) ?-?verified\b|\bnot yet (?:verified|tested|checked|confirmed)\b|"
            r"\bneeds? (?:verification|checking|testing)\b|\bto verify\b|\buntested\b|"
            r"\bnot (?:tested|checked|confirmed)\b|\bunconfirmed\b|\bunchecked\b",
        ),
        (
            "blockers",
            r"\bblock(?:er|ers|ed|ing)\b|\b(?:open|known) (?:issues|problems)\b|\bimpediments?\b",
        ),
        ("status", r"^(?:overall |current |task )?(?:status|state)$"),
        (
            "next_action",
            r"^(?:optional |immediate |suggested |recommended |the )?next\b|"
            r"\bnext (?:safe )?(?:action|step|steps|move|task)\b|\bwhat'?s next\b",
        ),
        (
            "remaining",
            r"\bpending\b|\bremain(?:ing|s)?\b|\bto ?-?do\b|\btodos?\b|\bleft to do\b|"
            r"\boutstanding\b|\bstill to\b|\bopen tasks\b|\bfollow ?-?ups?\b|\bwhat is left\b|"
            r"\bnot (?:yet )?done\b|\bunfinished\b",
        ),
        ("verified", r"\bverified\b|\bverification\b|\bevidence\b|\btest results?\b"),
        (
            "done",
            r"\bdone\b|\bcomplet(?:ed|e)\b|\bprogress\b|\baccomplish|\bfinished\b|"
            r"\bchanges made\b|\bwhat (?:i|was) (?:did|done)\b|\bwork done\b|"
            r"\bsummary of (?:changes|work)\b|\bimplemented\b|\bwhat changed\b",
        ),
        (
            "tasks",
            r"^(?:the |all )?tasks(?: and (?:their )?status(?:es)?| status(?:es)?)?$|"
            r"^status (?:per|of each|by) task$|^task (?:list|status(?:es)?)$",
        ),
        (
            "environment",
            r"\benvironment\b|\bgit state\b|\brunning processes\b|\bprocesses\b|"
            r"\bworkspace state\b|\brepository state\b|\bworking tree\b",
        ),
        ("requests", r"\buser messages\b|^(?:all |user )?requests$|\bprompts\b"),
        (
            "goal",
            r"\bgoals?\b|\bobjectives?\b|\bprimary request\b|\bintent\b|^(?:the )?task$|"
            r"\bmission\b|\buser'?s? request\b|^request$",
        ),
        ("decisions", r"\bdecisions?\b|\bdecided\b|\bchoices\b"),
        (
            "constraints",
            r"\bconstraints?\b|\brequirements\b|\bpreferences\b|\bguidelines\b|\brules\b",
        ),
        ("risks", r"\brisks?\b|\bassumptions?\b|\bcaveats?\b|\bconcerns?\b"),
        ("files", r"\bfiles?\b|\bartifacts?\b|\bcode sections\b"),
        (
            "context",
            r"\bcurrent work\b|\bcontext\b|\bconcepts\b|\bproblem solving\b|\berrors?\b|"
            r"\bnotes?\b|\bsummary\b|\banalysis\b|\bbackground\b|"
            r"\boverview\b|\bhandoff\b",
        ),
    )
)
"""A section label (normalised: lower case, no numbering, ``&`` read as "and") -> the field
its items go to; the first pattern that matches decides."""


@dataclass(slots=True)
class AgentNotes:
    """The fields an agent's own summary gives: ``goal`` and ``next_action`` (one text each, ""
    when not said), ``status`` (``completed``, ``in_progress``, ``blocked``,
    ``partial_complete`` or None), and lists — ``done``, ``verified``, ``not_verified``,
    ``remaining``, ``decisions``, ``constraints``, ``risks``, ``files``, ``requests`` (a
    summary's list of the user's messages) — and ``blockers``, None when the text has no
    blockers section at all ([] when it says there are none)."""

    goal: str = ""
    requests: list[str] = field(default_factory=list)
    status: str | None = None
    done: list[str] = field(default_factory=list)
    verified: list[str] = field(default_factory=list)
    not_verified: list[str] = field(default_factory=list)
    blockers: list[str] | None = None
    next_action: str = ""
    remaining: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    risks: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    environment: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        """Nothing was read: no field has a value."""
        return not any(getattr(self, name) for name in _FIELDS) and self.blockers is None


# ---------------------------------------------------------------------------------------------
# Reading a text

_FIELDS = tuple(f.name for f in fields(AgentNotes))
"""The notes' fields, in order."""

_BOILERPLATE = (
    re.compile(r"<analysis>.*?(?:</analysis>|\Z)", re.S),
    re.compile(r"<system-reminder>.*?(?:</system-reminder>|\Z)", re.S),
    re.compile(r"</?summary>"),
    re.compile(r"^This session is being continued from a previous conversation[^\n]*\n?", re.M),
    re.compile(
        r"^Another language model started to solve this problem.*?assist with your own "
        r"analysis:\s*",
        re.S | re.M,
    ),
    re.compile(r"^Please continue the conversation from where we left[^\n]*\n?", re.M),
    re.compile(r"^If you need specific details from before compaction[^\n]*\n?", re.M),
    re.compile(r"^Continue the conversation from where it left off[^\n]*\n?", re.M),
    re.compile(r"^The messages after this summary are the most recent[^\n]*\n?", re.M),
    re.compile(r"^(?:Summary|Analysis):\s*$", re.M),
)
_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE_LABEL = re.compile(r"(?<=[.!?;])\s+(?=([A-Z][A-Za-z ]{1,40}):\s)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_BOLD = re.compile(r"^\s*(?:[-*+]\s+)?\*\*([^*\n]{1,80}?)\*\*\s*:?\s*(.*)$")
_BOLD_COLON = re.compile(r"^\s*(?:[-*+]\s+)?\*\*([^*\n]{1,80}?):\*\*\s*(.*)$")
_NUMBERED = re.compile(r"^\s{0,3}\d{1,2}[.)]\s+([A-Za-z][^:\n]{1,80}):\s*(.*)$")
_PLAIN = re.compile(r"^\s{0,3}(?:[-*+]\s+)?([A-Za-z][A-Za-z /&'()-]{0,60}):\s*(.*)$")
_BULLET = re.compile(r"^(\s*)(?:[-*+•]|\d{1,3}[.)])\s+(.*)$")
_CHECKBOX = re.compile(r"^\[([ xX✓✔-])\]\s*(.*)$")
_NONE = re.compile(
    r"^(?:none|nothing|n/?a|no|\(none\)|none (?:known|so far|yet|found|identified)|"
    r"no (?:known )?(?:blockers?|issues|problems)|there are no (?:known )?blockers)"
    r"(?:[.!]?$|\s*[—\u2013:;,(-]|\.\s)|^[-—\u2013][.!]?$",
    re.I,
)
"""An item that says there is nothing ("None.", "none — the failures are known", a dash
alone); an item that starts with an option (``--json added``) says something."""
_PROSE_NEXT = re.compile(
    r"(?:^|(?<=[.!?]\s))(?:next(?: safe)? (?:step|action)(?: is)?:?|next,? I(?:'ll| will)|"
    r"next up:?|the next step is(?: to)?)\s+(.+?)(?:(?<=[.!?])\s|$)",
    re.I | re.M,
)
_STATUSES = (
    ("blocked", re.compile(r"\bblocked\b", re.I)),
    ("partial_complete", re.compile(r"\bpartial(?:ly)?\b|\bphase\b", re.I)),
    (
        "in_progress",
        re.compile(
            r"\bin[ -]progress\b|\bongoing\b|\bwip\b|\bnot (?:yet )?(?:done|complete)", re.I
        ),
    ),
    ("completed", re.compile(r"\bcomplete[d]?\b|\bdone\b|\bfinished\b", re.I)),
)


def label_field(label: str) -> str | None:
    """The field a section label stands for, or None when none does."""
    text = label.lower().replace("&", " and ")
    text = re.sub(r"[*_`#]", "", text)
    text = re.sub(r"^\s*(?:\d{1,2}|[a-z])[.)]\s+", "", text)
    text = " ".join(re.sub(r"[^\w' ]+", " ", text).split())
    if not text:
        return None
    return next((name for name, pattern in LABELS if pattern.search(text)), None)


def parse_notes(text: str) -> AgentNotes:
    """The fields of an agent's handoff or summary ``text`` (the rules in the module's doc)."""
    body = text
    for pattern in _BOILERPLATE:
        body = pattern.sub("", body)
    sections = _sections(body)
    fields: dict[str, list[str]] = {}
    stated: set[str] = set()
    for name, lines in sections:
        if name is None or name == "context":
            continue
        stated.add(name)
        for item, checked in _items(lines):
            target = name
            if name == "tasks":
                target = "done" if checked is True or _task_done(item) else "remaining"
            elif checked is True and name in ("remaining", "next_action", "files"):
                target = "done"
            elif checked is False and name in ("done", "verified"):
                target = "remaining"
            if _NONE.match(item):
                continue
            fields.setdefault(target, []).append(item)
    notes = _notes(fields, stated)
    if notes.empty:
        prose = _PROSE_NEXT.search(body)
        if prose:
            notes.next_action = clipped_line(prose.group(1), ITEM_LIMIT)
    return notes


def _notes(fields: dict[str, list[str]], stated: set[str]) -> AgentNotes:
    def take(name: str) -> list[str]:
        return [clipped_line(i, ITEM_LIMIT) for i in fields.get(name, [])][:ITEMS_LIMIT]

    next_items = take("next_action")
    status_text = " ".join(fields.get("status", []))
    notes = AgentNotes(
        goal=" ".join(take("goal")),
        status=_status(status_text) if status_text else None,
        blockers=take("blockers") if "blockers" in stated else None,
        next_action=next_items[0] if next_items else "",
        remaining=next_items[1:] + take("remaining"),
    )
    for name in set(_FIELDS) - {"goal", "status", "blockers", "next_action", "remaining"}:
        setattr(notes, name, take(name))  # the other lists: their items as said
    return notes


_TASK_DONE = re.compile(
    "(?:^|[\\s(\\[:\u2014\u2013-])(?:done|completed?|finished|merged|shipped|verified)"
    "(?:[\\s).\\],;:\u2014\u2013-]|$)|"
    r"^[✅✓✔]|[✅✓✔]\s*$",
    re.I,
)
_TASK_STATE = re.compile(
    r"\b(?:in[ -]progress|not (?:yet )?started|pending|to ?do|todo|blocked|open|started|"
    r"ongoing|remaining|not done|partly done|partially)\b",
    re.I,
)


def _task_done(item: str) -> bool:
    """Whether a task item of the "Tasks" section says it is done (and not only partly)."""
    return bool(_TASK_DONE.search(item)) and not _TASK_STATE.search(item)


def _status(text: str) -> str | None:
    return next((name for name, pattern in _STATUSES if pattern.search(text)), None)


def _header(line: str) -> tuple[str | None, str] | None:
    """(field or None, the text after the label) when ``line`` starts a section."""
    m = _HEADING.match(line)
    if m:
        return label_field(m.group(1)), ""
    m = _BOLD_COLON.match(line) or _BOLD.match(line)
    if m and (m.group(2) or line.rstrip().endswith(("**", ":"))):
        name = label_field(m.group(1))
        if name is not None or not m.group(2):
            return name, m.group(2)
    m = _NUMBERED.match(line)
    if m:
        name = label_field(m.group(1))
        if name is not None and (not m.group(2) or len(m.group(1).split()) <= 4):
            return name, m.group(2)
    m = _PLAIN.match(line)
    if m and len(m.group(1).split()) <= 5:
        name = label_field(m.group(1))
        if name is not None and name != "context":
            return name, m.group(2)
    return None


def _split_inline(line: str) -> list[str]:
    """``Goal: x. Done: y. Next: z.`` on one line, as three lines: a label after a sentence's
    end starts a new line when it names a field."""
    parts: list[str] = []
    start = 0
    for m in _INLINE_LABEL.finditer(line):
        if label_field(m.group(1)) not in (None, "context") and len(m.group(1).split()) <= 4:
            parts.append(line[start : m.start()])
            start = m.end()
    parts.append(line[start:])
    return parts if len(parts) > 1 and _PLAIN.match(parts[0]) else [line]


def _sections(text: str) -> list[tuple[str | None, list[str]]]:
    sections: list[tuple[str | None, list[str]]] = []
    current: list[str] = []
    name: str | None = None
    fenced = False
    lines = [part for line in text.splitlines() for part in _split_inline(line)]
    for line in lines:
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        header = _header(line)
        if header is not None:
            sections.append((name, current))
            name, rest = header
            current = [rest] if rest.strip() else []
            continue
        current.append(line)
    sections.append((name, current))
    return [(n, lines) for n, lines in sections if any(line.strip() for line in lines)]


def _items(lines: list[str]) -> list[tuple[str, bool | None]]:
    """The items of a section body: (text, checked) — checked True / False for ``[x]`` /
    ``[ ]`` items, None otherwise."""
    bullets = [m for m in (_BULLET.match(line) for line in lines) if m]
    items: list[list[str]] = []
    if bullets:
        top = min(len(m.group(1).expandtabs(4)) for m in bullets)
        for line in lines:
            m = _BULLET.match(line)
            if m and len(m.group(1).expandtabs(4)) <= top:
                items.append([m.group(2).strip()])
            elif not line.strip():
                continue
            elif items and m:  # a nested item: one part of its own
                items[-1].append(m.group(2).strip())
            elif items:  # a wrapped line: the part it continues
                items[-1][-1] += " " + line.strip()
            else:
                items.append([line.strip()])
    else:  # an item per paragraph
        for filled, paragraph in groupby(lines, key=lambda line: bool(line.strip())):
            if filled:
                items.append([" ".join(line.strip() for line in paragraph)])
    out: list[tuple[str, bool | None]] = []
    for parts in items:
        text = parts[0]
        if len(parts) > 1:
            head = text.rstrip(":") + ": " if text.endswith(":") else text + "; "
            text = head + "; ".join(parts[1:])
        text = " ".join(re.sub(r"\*\*(.+?)\*\*", r"\1", text).split())  # no bold, one line
        checked: bool | None = None
        box = _CHECKBOX.match(text)
        if box:
            checked = box.group(1) != " "
            text = box.group(2).strip()
        if text:
            out.append((text, checked))
    return out
