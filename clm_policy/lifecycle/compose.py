"""The one road of every handoff: the agent's words (if any) and the session (its transcript,
or a state) in; the state to commit, the manifest and the seed out.

Every handoff (the Stop hook's reply, the MCP ``handoff`` call, the hard-limit PreCompact,
``clm-policy handoff``, the loop) goes through :func:`compose`, then
:func:`~clm_policy.lifecycle.pipelines.run_handoff` or, without a commit,
:func:`~clm_policy.lifecycle.handoff.preview`. The agent's words are kept whole
(:class:`Words`) and read into fields by the one parser
(:func:`~clm_policy.transcripts.notes.parse_notes`); where the record disagrees with them,
:func:`contradictions` says so in one line each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from clm_policy.base.commands import command_line
from clm_policy.base.errors import clipped_line
from clm_policy.lifecycle.agent_handoff import AgentHandoff
from clm_policy.lifecycle.request import SECTIONS
from clm_policy.lifecycle.verify import normalise
from clm_policy.transcripts.notes import AgentNotes, parse_notes

if TYPE_CHECKING:
    from collections.abc import Sequence

    from clm_policy.models.state import SessionState
    from clm_policy.transcripts.reading import TranscriptReading
    from clm_policy.transcripts.record import CheckResult, SessionRecord
    from clm_policy.transcripts.work import Work

REPLY = "reply"
TOOL = "tool"
SUMMARY = "summary"
MODEL = "model"


@dataclass(frozen=True)
class Words:
    """What the agent wrote on purpose (``source``: ``reply``, ``tool``, ``summary``, or
    ``model``: :mod:`.model_handoff`), whole; for a summary the ``step`` it was written at."""

    source: str
    text: str
    step: int | None = None

    @property
    def notes(self) -> AgentNotes:
        return parse_notes(self.text)


def words_of_reply(text: str | None) -> Words | None:
    """The agent's reply to the handoff request (None when it wrote nothing)."""
    return Words(REPLY, text.strip()) if text and text.strip() else None


def words_of_fields(fields: AgentHandoff) -> Words | None:
    """The MCP ``handoff`` call's fields as a reply under the request's headings (the same
    words give the same seed by either road); None when every field is empty."""
    parts: list[str] = []
    for section in SECTIONS:
        value = getattr(fields, section.field)
        items = [str(v).strip() for v in (value if section.is_list else [value]) if str(v).strip()]
        body = [f"- {i}" for i in items] if section.is_list else items[:1]
        if section.field == "next_step":  # then the plan, a blank line after the next step
            body += [f"- {p.strip()}" for p in fields.plan if str(p).strip()]
            body[1:] = ["\n" + "\n".join(body[1:])] if body[1:] else []
        if body:
            parts.append(f"## {section.heading}\n\n" + "\n".join(body))
    notes = str(fields.notes or "").strip()
    if notes:
        parts.append(f"## Notes\n\n{notes}")
    text = "\n\n".join(parts)
    return Words(TOOL, text) if text.strip() else None


def words_of_transcript(reading: TranscriptReading) -> Words | None:
    """The agent's words the transcript holds: its last message when it answers the handoff
    request (the reply the hook could not commit), else its latest compaction summary."""
    last = reading.last_assistant_message
    work = reading.work
    asked = work is not None and 0 <= work.handoff_asked_order < work.last_message_order
    if last and asked and _handoff_shaped(last):
        return Words(REPLY, last.strip())
    return words_of_summary(reading)


def _handoff_shaped(text: str) -> bool:
    notes = parse_notes(text)
    stated = sum(
        bool(x)
        for x in (
            notes.goal,
            notes.done or notes.remaining,
            notes.verified or notes.not_verified,
            notes.blockers is not None,
            notes.environment,
            notes.decisions,
        )
    )
    return bool(notes.next_action) and stated >= 2


def words_of_summary(reading: TranscriptReading) -> Words | None:
    """The agent's latest compaction summary in the transcript (None: none)."""
    work = reading.work
    if work is None or not work.summaries:
        return None
    text = work.summaries[-1][1]  # without the wrapping Claude Code puts around it
    for pattern in _SUMMARY_BOILERPLATE:
        text = pattern.sub("", text)
    return Words(SUMMARY, text.strip(), reading.last_compact_step) if text.strip() else None


_SUMMARY_BOILERPLATE = (
    re.compile(r"^This session is being continued from a previous conversation[^\n]*\n?", re.M),
    re.compile(r"^Please continue the conversation from where we left[^\n]*\n?", re.M),
    re.compile(r"^If you need specific details from before compaction[^\n]*\n?", re.M),
    re.compile(r"<analysis>.*?(?:</analysis>|\Z)", re.S),
    re.compile(r"</?summary>"),
)


@dataclass
class Composed:
    """A handoff before it is committed: ``base``, the session alone (the inventory the
    agent's words are checked against), and ``state``, with the agent's words over it."""

    base: SessionState
    state: SessionState
    words: Words | None = None
    record: SessionRecord | None = None
    contradictions: list[str] = field(default_factory=list)


def compose(
    source: TranscriptReading | SessionState,
    words: Words | None = None,
    *,
    session_id: str | None = None,
    profile: str | None = None,
    context_window: int | None = None,
    memory_keys: Sequence[str] = (),
) -> Composed:
    """The handoff of the session ``source`` is (a transcript's reading, or a state), with
    the agent's ``words`` over it. ``profile``, ``context_window`` (when the transcript names
    none) and ``memory_keys`` (its agents' records) are set on both states."""
    from clm_policy.models.state import SessionState
    from clm_policy.transcripts.record import record_of
    from clm_policy.transcripts.takeover import build_state

    notes = words.notes if words is not None and words.source != SUMMARY else None
    stale: list[str] = []
    if isinstance(source, SessionState):
        base = source
        state = _with_notes(source, notes) if notes is not None and not notes.empty else source
        record = None
    else:
        sid = session_id or source.state_session_id()
        base = build_state(source, sid)
        state = build_state(source, sid, notes) if notes is not None else base
        if notes is not None and not notes.empty:
            state = state.replace(messages=[])  # the manifest keeps the words
        record = record_of(source.work) if source.work is not None else None
        if words is not None and words.source == SUMMARY and source.work is not None:
            stale = stale_in_summary(words, source.work)
    update: dict[str, object] = {}
    if profile:
        update["profile"] = profile
    if memory_keys:
        update["memory_keys"] = list(dict.fromkeys([*state.memory_keys, *memory_keys]))
    if context_window and state.tokens.context_window is None:
        update["tokens"] = state.tokens.replace(context_window=context_window)
    if update:
        base = base.replace(**{k: v for k, v in update.items() if k != "memory_keys"})
        state = state.replace(**update)
    said = contradictions(words, record) if words is not None and record is not None else []
    return Composed(base, state, words, record, stale + said)


def stale_in_summary(words: Words, work: Work) -> list[str]:
    """One line for each step of the agent's compaction summary the session worked on after
    it, with what the record shows of it — not that the step is done, which it cannot tell."""
    notes = words.notes
    order = work.summaries[-1][0] if work.summaries else -1
    # what the record shows (one file however the steps name it) -> its words, the steps
    steps: dict[str, tuple[str, list[str]]] = {}
    for step in [notes.next_action, *notes.remaining][:12]:
        since = work.done_since(order, step) if step else None
        if since:
            key, shown = since
            said, named = steps.get(key, (shown, []))
            steps[key] = (max(said, shown, key=len), [*named, f'"{clipped_line(step, 120)}"'])
    return [
        f"part 1 is older than the record: since it was written, {said} (its "
        f"{'step' if len(named) == 1 else 'steps'} {'; '.join(named)})."
        for said, named in steps.values()
    ]


def _with_notes(state: SessionState, notes: AgentNotes) -> SessionState:
    """A given state (a state file, the loop's) with the agent's notes over it."""
    update: dict[str, object] = {}
    if notes.goal:
        update["goal"] = notes.goal
    if notes.next_action:
        update["next_action"] = notes.next_action
    for name in ("done", "verified", "not_verified", "decisions", "constraints"):
        items = getattr(notes, name)
        if items:
            update[name] = [*_not_said_in(getattr(state, name), items), *items]
    if notes.remaining:
        update["remaining"] = list(dict.fromkeys([*notes.remaining, *state.remaining]))
    if notes.blockers is not None:
        update["blockers"] = list(notes.blockers)
    return state.replace(**update)


def _not_said_in(recorded: Sequence[str], said: Sequence[str]) -> list[str]:
    """The recorded items the agent's items do not already say (word for word, as
    verification compares texts: "tokens expire after 15 minutes" is in "Access tokens expire
    after 15 minutes.")."""
    theirs = [f" {normalise(item)} " for item in said]
    return [item for item in recorded if not any(f" {normalise(item)} " in t for t in theirs)]


# -- where the record disagrees with the agent ----------------------------------------------

_PASS_WORDS = re.compile(
    r"\b(?:pass(?:es|ed|ing)?|green|succeed(?:s|ed)?|success(?:ful(?:ly)?)?|works?|working|"
    r"ok|clean|no errors?|all good|builds? fine)\b",
    re.I,
)
_FAIL_WORDS = re.compile(
    r"\b(?:fail(?:s|ed|ing|ure|ures)?|red|error(?:s)?|broken|not (?:yet )?pass|does not|"
    r"doesn'?t|unverified|not verified|not run|didn'?t run|blocked)\b|"
    r"失败|失敗|エラー|실패|未通过|報錯|报错|fallit|falhou|échou|fehlgeschlagen|fall[óo]",
    re.I,
)
"""Words of failing, in English and in the languages of the sessions seen (a line of the
agent's words in the session's language that says a check failed is no claim it passed)."""
_DONE_WORDS = re.compile(
    r"\b(?:all (?:done|complete|finished)|(?:task|work|everything|it) (?:is )?(?:now )?"
    r"(?:complete|completed|done|finished)|ready (?:for|to) (?:review|merge|ship))\b",
    re.I,
)


def contradictions(words: Words, record: SessionRecord) -> list[str]:
    """One line for each failing check the agent's words call passing (or the whole work
    called done while a check's latest run failed)."""
    failing = record.failing
    if not failing:
        return []
    lines: list[str] = []
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", words.text) if s.strip()]
    for check in failing:
        claim = _claim_of(check, sentences)
        if claim is not None:
            lines.append(
                f'the agent\'s words say "{clipped_line(claim, 160)}", but the latest run of '
                f"`{command_line(check.command, 120)}` failed "
                f"({clipped_line(check.result or 'failed', 120)})."
            )
    if not lines:
        done = next(
            (s for s in sentences if _DONE_WORDS.search(s) and not _FAIL_WORDS.search(s)), None
        )
        if done is not None:
            names = ", ".join(f"`{command_line(c.command, 80)}`" for c in failing[:3])
            lines.append(
                f'the agent\'s words say "{clipped_line(done, 160)}", but the latest run of '
                f"{names} failed."
            )
    return lines


def _claim_of(check: CheckResult, sentences: Sequence[str]) -> str | None:
    """The sentence of the agent's words that says ``check`` passes, or None: it names the
    check (its command, not a longer one it starts: ``pytest -q`` is not ``pytest -q
    tests/x.py``; a script by name: "the build") with words of passing and none of failing."""
    keys = _keys(check.command)
    for sentence in sentences:
        lowered = sentence.lower()
        if not any(_names(lowered, k) for k in keys):
            continue
        if (
            _PASS_WORDS.search(sentence)
            and not _FAIL_WORDS.search(sentence)
            and not _AIM_WORDS.search(sentence)
        ):
            return sentence
    return None


_AIM_WORDS = re.compile(
    r"\b(?:so that|until|then|should|must|needs? to|in order to|to make|make\b.*\bpass|will|"
    r"once|if|expect(?:s|ed)?|want|goal|next)\b",
    re.I,
)
"""Words of a sentence that aims at a result rather than reports one ("make it pass, then
run …")."""


def _names(sentence: str, key: str) -> bool:
    """Whether ``sentence`` names ``key`` on its own: not followed by a path or an argument."""
    for m in re.finditer(re.escape(key), sentence):
        before = sentence[m.start() - 1 : m.start()]
        after = sentence[m.end() : m.end() + 2]
        if before and (before.isalnum() or before in "-_/."):
            continue
        if after and (after[0].isalnum() or after[0] in "_/." or after in (" -", " .")):
            continue
        if after.startswith(" ") and len(after) > 1 and (after[1] in "-./" or after[1].isalnum()):
            nxt = sentence[m.end() + 1 :].split(" ", 1)[0]
            if re.match(r"^[-./\w]*[/.][\w]", nxt) or nxt.startswith("-"):
                continue
        return True
    return False


def _keys(command: str) -> list[str]:
    """What names a check in prose: its runner and script (``npm run build`` -> ``build``,
    ``pytest -q tests/x.py`` -> ``pytest``, ``cargo test`` -> ``cargo test``)."""
    from clm_policy.transcripts.results import normalise

    normal = normalise(command).split(" && ")[0]
    words = normal.split()
    if not words:
        return []
    if words[0] in ("npm", "pnpm", "yarn", "bun") and len(words) > 1:
        script = words[2] if words[1] in ("run", "run-script") and len(words) > 2 else words[1]
        return [f"{words[0]} run {script}", f"{words[0]} {script}", f"the {script}"]
    if len(words) > 1 and words[0] in ("cargo", "go", "dotnet", "mix", "gradle", "mvn", "deno"):
        return [" ".join(words[:2])] if len(words) == 2 else [normal]
    return [normal]
