"""What a fresh agent needs to take a session over, from the session's transcript and the
agent's own words: a :class:`~clm_policy.models.state.SessionState` (:func:`build_state`).

Where each fact comes from, most trusted first (docs/verification.md, "Handoffs"):

- **what the agent wrote on purpose** — the handoff reply the Stop hook asks for, an MCP
  ``handoff`` call (:class:`~clm_policy.transcripts.notes.AgentNotes`), and its compact
  summaries in the transcript (checked against what was done after them: a step done since is
  not a next step);
- **its task list** (``TodoWrite``, the task tools, ``update_plan``): completed items are done,
  the item in progress and the pending ones remain; without a list, its latest stated plan,
  each step checked against what followed;
- **exact lists from tool calls and outputs**: every request (queued ones and slash commands
  included), the runs judged from their output (an open failure is a check whose last run
  failed and no later run of it passed), the files as they are.

The last assistant message is kept as context and is never the next step by itself.

- The **goal** is the latest substantive request ("thanks", "ok", "continue", a bare approval
  are not); every request stays listed (``requests``: one said again where it was said last,
  :func:`_whole`; one said when rejecting a tool call marked
  :data:`~clm_policy.transcripts.work.REJECTING`).
- **Constraints** are the user's sentences that say what must or must not be done ("no
  fallbacks", "never touch the migrations", "write it in Rust").
- **Status**: as :func:`_status` says.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from clm_policy.base.errors import clipped_line
from clm_policy.transcripts.files import Paths
from clm_policy.transcripts.notes import AgentNotes, parse_notes
from clm_policy.transcripts.record import (
    RUN_TEXT,
    open_failures,
    tasks_before_request,
    unknown_runs,
    verified_runs,
)
from clm_policy.transcripts.work import (
    DENIED,
    REJECTING,
    REJECTION,
    WORD,
    Run,
    Work,
    prompt_template,
    substantive,
)

if TYPE_CHECKING:
    from clm_policy.models.enums import TaskStatus
    from clm_policy.models.state import SessionState
    from clm_policy.transcripts.reading import TranscriptReading

GOAL_LIMIT = 2000
REQUEST_LIMIT = 1000
SHORT_REQUEST = 8
"""A request of fewer words than this that follows a task refines it (it is no new task)."""
LIST_LIMIT = 200
COMMANDS_KEPT = 50
VERIFIED_SHOWN = 8
"""Passing checks listed one by one; the earlier ones are counted in one item."""

_SENTENCE = re.compile(r"[^.!?;\n]+[.!?]?")
_CONSTRAINT = re.compile(
    r"^\s*(?:please\s+|and\s+|but\s+|also\s+)?(?:do not|don'?t|never|no\s+\w+|avoid|without|"
    r"must|only|always|stick to|prefer|make sure|ensure|"
    r"keep(?! (?:going|on|at it|working|it up|up|trying|moving|pushing|iterating)\b))\b|"
    r"\btests? first\b|\btest-first\b|\bTDD\b|"
    r"\b(?:must not|mustn'?t|must|should not|shouldn'?t|never)\b|"
    r"\b(?:in|using|with) (?:rust|go|golang|python|typescript|javascript|elixir|ruby|java|kotlin|"
    r"swift|c\+\+|c#|zig|haskell|scala|php)\b|"
    r"^[\w+#.-]+(?:\s+[\w+#.-]+)?\s+only\s*(?:[,;:.!]|$)",
    re.I,
)
"""A sentence that states a constraint: it starts with one of the imperative forms ("keep
going" asks to continue: no constraint), or with
"<one or two words> only" ending a clause ("Standard library only, no third-party packages"),
or says "must", "should not", "never" anywhere; a question is none."""
_DONE_CLAIM = re.compile(
    r"\b(?:all (?:done|set|finished|complete)|(?:task|work|implementation|epic|feature|"
    r"everything|it|this|migration|refactor(?:ing)?|fix) (?:is |are )?(?:now )?(?:fully )?"
    r"(?:complete|completed|done|finished)|epic complete|ready (?:for|to) (?:review|merge)|"
    r"all (?:\w+ )?tests (?:now )?pass(?:ing)?|\d+ tests? passing)\b",
    re.I,
)
_NOT_DONE = re.compile(
    r"\b(?:not (?:yet )?(?:done|complete|finished)|remaining|still (?:need|to)|todo|next,? I)\b",
    re.I,
)


def goal_of(requests: list[str]) -> str:
    """The latest substantive request that asks for work — not only thanks or an approval,
    and not only constraints on the work ("keep the names; do not touch shop/legacy/": the
    goal stays the request they constrain) —, else the latest substantive one, else the
    latest."""
    asks = [t for t in requests if substantive(t) and not constraints_only(t)]
    if asks:
        latest = _asked(asks[-1])
        earlier = asks[:-1]
        typed = found[1] if (found := prompt_template(asks[-1])) else latest
        if len(WORD.findall(typed.lower())) < SHORT_REQUEST and earlier:
            # a short follow-up ("And multiply() after it.", "Review both files.", a template's
            # "phase 1") refines the task it follows; it does not replace it
            task = clipped_line(_asked(earlier[-1]), GOAL_LIMIT // 2)
            return f"{task} (then: {clipped_line(latest, 300)})"
        return latest
    last = next((t for t in reversed(requests) if substantive(t)), requests[-1] if requests else "")
    return _asked(last)


def _asked(text: str) -> str:
    """A request as the goal: a prompt template's input, the template named by its first
    step (spec-kit's ``phase 1 (a prompt template: 1. Run …)``); any other as it is."""
    found = prompt_template(text)
    if found is None:
        return text
    _, typed, _, first = found
    named = f" (a prompt template: {clipped_line(first, 300)})" if first else ""
    return f"{typed or '(no input)'}{named}"


def constraints_only(text: str) -> bool:
    """Whether every sentence of a request states a constraint."""
    sentences = [" ".join(m.group(0).split()) for m in _SENTENCE.finditer(text)]
    sentences = [s for s in sentences if len(s) > 2]
    return bool(sentences) and all(_CONSTRAINT.search(s) for s in sentences)


def constraints_of(requests: list[str]) -> list[str]:
    """The sentences of ``requests`` that state a constraint, each once, in order."""
    found: dict[str, None] = {}
    for text in requests:
        for m in _SENTENCE.finditer(text):
            sentence = " ".join(m.group(0).split()).strip(" -*")
            question = sentence.endswith("?") or text[m.end() : m.end() + 1] == "?"
            if 3 <= len(sentence) <= 300 and not question and _CONSTRAINT.search(sentence):
                found.setdefault(sentence, None)
    return list(found)[:LIST_LIMIT]


_QUESTION = re.compile(
    r"(?:^|(?<=[.!:\n]))\s*([^.!?\n]*(?:\?|\blet me know\b[^.!?\n]*[.!]?))\s*$", re.I
)
_INTENT = re.compile(
    r"(?:^|(?<=[.!:\n]))\s*((?:(?:now|next|then|first),?\s+)?(?:I'll|I will|I'm going to|"
    r"I am going to|let me|I'm (?:now )?(?:exporting|running|building|writing|checking|adding|"
    r"fixing|dispatching|starting|going))\b.*)\Z",
    re.I | re.S,
)


def asked_user(text: str | None) -> str:
    """The question an agent's last words end with ("Want me to commit this?", "Let me know
    when…"), or ""."""
    m = _QUESTION.search(text.strip().rsplit("\n\n", 1)[-1]) if text else None
    return " ".join(m.group(1).split())[:400] if m else ""


def intention(text: str | None) -> str:
    """What an agent's last words say it is about to do ("I'm exporting the session first,
    then I'll build the draft"), from the first such sentence on, or ""."""
    m = _INTENT.search(text.strip()) if text else None
    return " ".join(m.group(1).split())[:400] if m else ""


def turn_end(work: Work) -> str | None:
    """The agent's last words on the latest substantive request: its last message before the
    next request (a "thanks" and its "you're welcome" aside), or None."""
    start = work.last_substantive_order()
    if start < 0:
        return None
    later = [o for o in work.request_orders if o > start]
    end = later[0] if later else float("inf")
    said = [text for order, text in work.said if start < order < end]
    return said[-1] if said else None


def claims_done(text: str | None) -> bool:
    """Whether an agent's words say the work is complete (and not that some remains)."""
    return bool(text) and bool(_DONE_CLAIM.search(text or "")) and not _NOT_DONE.search(text or "")


MESSAGE_LIMIT = 20_000
"""A person's message is kept whole up to this many characters (the seed shows what fits)."""


def _whole(items: list[str]) -> list[str]:
    """The person's messages as they wrote them (lines kept), in order, each at most
    :data:`MESSAGE_LIMIT` characters.

    A message said again (the same words, spacing aside) is listed once, where it was said
    last: the latest occurrence is the one the agent was working on ("keep going" twice, the
    same spec-kit prompt run for a second feature, a request sent again after an interruption),
    so the list ends with the true latest message and keeps the order the person gave them in.
    Only the latest is kept, not the earlier ones too: Claude Code 2.0 writes a resumed
    conversation into the file again (new ids, one timestamp), and listing repeats would
    double that history. The first message keeps its place as well (how the task began) —
    shown again at its latest position when it was said again after other messages. Past
    :data:`LIST_LIMIT` messages, the first and the latest are kept."""
    texts = [item.strip() for item in items if item.strip()]
    keys = [" ".join(text.split()) for text in texts]
    last = {key: n for n, key in enumerate(keys)}
    kept: list[int] = []
    for n, key in enumerate(keys):
        if kept and keys[kept[-1]] == key:  # the first, said again with none kept between
            kept[-1] = n
        elif n == 0 or last[key] == n:
            kept.append(n)
    if len(kept) > LIST_LIMIT:
        kept = [kept[0], *kept[1 - LIST_LIMIT :]]
    return [texts[n][:MESSAGE_LIMIT] for n in kept]


def _clip(items: list[str], limit: int = REQUEST_LIMIT) -> list[str]:
    """``items`` on one line each, clipped, each once: the same words with another closing
    mark (a request's "Rust only." and a summary's "Rust only") are one item, the first
    kept."""
    out: dict[str, str] = {}
    for item in items:
        text = " ".join(item.split())
        if text:
            key = text.rstrip(" .,;:!")
            out.setdefault(key, text if len(text) <= limit else text[: limit - 1] + "…")
    return list(out.values())[:LIST_LIMIT]


class _Facts:
    """The facts of a state, gathered before they are typed."""

    def __init__(self) -> None:
        self.goal = ""
        self.requests: list[str] = []
        self.constraints: list[str] = []
        self.decisions: list[str] = []
        self.done: list[str] = []
        self.remaining: list[str] = []
        self.next_action = ""
        self.open_failures: list[str] = []
        self.blockers: list[str] = []
        self.verified: list[str] = []
        self.not_verified: list[str] = []
        self.risks: list[str] = []


def _refusals(environment: list[str]) -> list[str]:
    """The named refusals that still stand: a refused push no later push went through, a call
    the permission settings denied."""
    out: list[str] = []
    for i, fact in enumerate(environment):
        pushed = any(f.startswith(("pushed:", "force-pushed:")) for f in environment[i + 1 :])
        if (fact.startswith("push refused") and not pushed) or fact.startswith(DENIED):
            out.append(fact)
    return out


def _from_work(work: Work, facts: _Facts, fallback_goal: str) -> tuple[list[Run], bool]:
    """The facts the transcript gives; (the open failures, whether the list says all done)."""
    said = [r.text for r in work.requests]
    facts.goal = goal_of(said) or fallback_goal
    facts.constraints = constraints_of(said)
    facts.requests = [
        f"{REJECTING}{r.text}" if r.source == REJECTION else r.text for r in work.requests
    ]
    facts.decisions = list(work.decisions)
    tasks = work.tasks if work.tasks is not None else work.plan
    all_done = False
    if tasks:
        facts.done = [t.text for t in tasks if t.status == "completed"]
        for task in (t for t in tasks if t.status == "in_progress"):
            made = work.made_for(work.tasks_order, task.text) if work.tasks else None
            if made:  # its deliverable was made after the list last marked it in progress
                shown = "was written after the task list last showed it in progress"
                facts.done.append(f"{task.text} (probably done: `{made}` {shown})")
            else:
                facts.remaining.append(task.text)
        facts.remaining += [t.text for t in tasks if t.status == "pending"]
        all_done = all(t.status == "completed" for t in tasks)  # (not what is probably done)
    for sub in work.subagents:
        edited = work.subagent_files.get(sub.ident) or []
        if sub.description and edited:
            facts.done.append(f"subagent {sub.description!r}: edited {', '.join(edited[:5])}")
    if work.summaries:
        order, text, _kind = work.summaries[-1]
        summary = parse_notes(text)
        if not facts.requests:  # only the tail of the session: its requests are in the summary
            facts.requests = list(summary.requests)
            facts.goal = summary.goal or goal_of(facts.requests) or facts.goal
            facts.constraints = constraints_of(facts.requests)
        facts.decisions += summary.decisions
        facts.constraints += summary.constraints
        if not tasks:
            facts.remaining += [i for i in summary.remaining if not work.done_after(order, i)]
            facts.done += summary.done
        step = summary.next_action
        # a step done since, one that names nothing to check while work went on after it, or
        # one a later request supersedes, is no next step
        if (
            step
            and not work.done_after(order, step)
            and work.last_request_order < order
            and (not work.active_after(order) or _CHECKABLE.search(step))
        ):
            facts.next_action = step
    facts.next_action = _next_step(work, facts, bool(tasks))
    failures = open_failures(work)
    facts.open_failures = [r.line(RUN_TEXT) for r in failures]
    passed = verified_runs(work)
    facts.verified = [r.line(RUN_TEXT) for r in passed[-VERIFIED_SHOWN:]]
    if len(passed) > VERIFIED_SHOWN:  # many narrow runs (one test file each): counted
        earlier = passed[:-VERIFIED_SHOWN]
        kinds = sorted({" ".join(r.normal.split()[:2]) for r in earlier})
        facts.verified.append(
            f"{len(earlier)} earlier checks passed too ({', '.join(kinds)}): see the commands"
        )
    facts.not_verified = [r.line(RUN_TEXT) for r in unknown_runs(work)]
    return failures, all_done


def _next_step(work: Work, facts: _Facts, listed: bool) -> str:
    """The next step after what a compaction summary said (``facts.next_action``): the
    question the agent's last words ask, or what it said it was doing mid-turn and how far it
    got; what failed last first; none from a task list (``listed``) older than the person's
    latest message."""
    step = facts.next_action
    after_request = work.last_message_order > work.last_request_order
    if not step and after_request and not work.last_answers_notice:
        question = asked_user(work.last_message) if not _mid_turn(work) else ""
        intent = intention(work.last_message) if _mid_turn(work) else ""
        if question:  # the agent waits for the user's answer
            step = f"Get the user's answer to: {question}"
        elif intent and not work.done_after(work.last_message_order, intent):
            # mid-turn: what it said it was doing, not yet done, and how far it got since
            since = work.last_activity_order > work.last_message_order and not work.last_failure
            far = f". Last being done: {work.last_activity}" if since else ""
            step = intent.rstrip(" :.") + far
    if work.last_failure and _mid_turn(work):
        # the agent's last step failed: that is where the next one starts
        failed = f"Deal with what failed last: {work.last_failure}"
        step = f"{failed.rstrip('.')}. The agent was doing: {step}" if step else failed
    if not step and listed and facts.remaining and tasks_before_request(work):
        # the list predates the person's latest message: its first open item may be what
        # the message changed (a step the person has since restricted) — no next step of it
        last = f". Last being done: {work.last_activity}" if work.last_activity else ""
        step = (
            "Unknown: the agent's task list was last updated before the user's latest "
            f"message (its first open item: {facts.remaining[0]}){last}"
        )
    return step


_CHECKABLE = re.compile(
    r"`[^`]+`|[\w./-]+\.[A-Za-z0-9]{1,8}\b|\b(?:tests?|spec|lint|build|compile|typecheck|mypy|tsc)\b",
    re.I,
)
"""A step that names something :meth:`Work.done_after` can check: a file, something quoted (a
command, an identifier), or a kind of check (tests, a lint, a build)."""


def _mid_turn(work: Work) -> bool:
    """Whether the session stops in the middle of a turn: the agent acted (a tool call) after
    its last words, or calls are waiting for their result."""
    return work.in_flight or work.last_tool_order > work.last_message_order


def _with_notes(facts: _Facts, notes: AgentNotes) -> None:
    """What the agent wrote on purpose, over what the transcript gives."""
    if notes.next_action:
        facts.next_action = notes.next_action
    if notes.remaining:
        facts.remaining = [
            *notes.remaining,
            *(r for r in facts.remaining if r not in notes.remaining),
        ]
    for name in ("done", "verified", "not_verified", "decisions", "constraints", "risks"):
        getattr(facts, name).extend(getattr(notes, name))
    if notes.goal:  # the goal as the agent states it on purpose; the requests stay listed
        facts.goal = notes.goal


def _status(
    facts: _Facts, notes: AgentNotes | None, work: Work | None, failures: list[Run], all_done: bool
) -> TaskStatus:
    """What the agent said its status is; else blocked when something blocks; else completed
    when nothing remains, fails or is under way and its list is all done (and current) or its
    last words on the latest request say the work is complete; else running."""
    from clm_policy.models.enums import TaskStatus

    if notes is not None and notes.status:
        return {
            "completed": TaskStatus.COMPLETED,
            "blocked": TaskStatus.BLOCKED,
            "partial_complete": TaskStatus.PHASE_BOUNDARY,
        }.get(notes.status, TaskStatus.RUNNING)
    if facts.blockers:
        return TaskStatus.BLOCKED
    if (
        work is not None
        and not failures
        and not work.failures
        and not facts.remaining
        and not _mid_turn(work)
        and (
            # (a list all done before the latest substantive request was the earlier one's)
            (
                all_done
                and work.tasks is not None
                and work.tasks_order > work.last_substantive_order()
            )
            or claims_done(turn_end(work))
        )
    ):
        return TaskStatus.COMPLETED
    return TaskStatus.RUNNING


def state_of(reading: TranscriptReading, session_id: str | None = None) -> SessionState:
    """What a fresh agent needs to take over the session ``reading`` read, as a state.
    ``session_id`` must be valid for the memory repository; without it one is derived
    (:meth:`~clm_policy.transcripts.reading.TranscriptReading.state_session_id`)."""
    from clm_policy.memory.layout import check_session

    sid = check_session(session_id) if session_id is not None else reading.state_session_id()
    return build_state(reading, sid)


def build_state(
    reading: TranscriptReading, session_id: str, notes: AgentNotes | None = None
) -> SessionState:
    """The state of the session ``reading`` read, with the agent's own ``notes`` (its handoff
    reply, an MCP call) over it; ``session_id`` must be valid for the memory repository."""
    from clm_policy.models.enums import MAX_COUNT, MessageRole
    from clm_policy.models.state import Message, SessionState, TokenSnapshot

    facts = _Facts()
    work = reading.work
    failures: list[Run] = []
    all_done = False
    last = reading.last_assistant_message
    if work is not None:
        failures, all_done = _from_work(work, facts, reading.goal)
    else:
        facts.goal = reading.goal
        facts.requests = [reading.goal] if reading.goal else []
    if notes is not None and not notes.empty:
        _with_notes(facts, notes)
    stated = notes.blockers if notes is not None else None
    facts.blockers = list(stated or [])
    if stated is None and work is not None:  # the agent said nothing of blockers: a refusal
        facts.blockers += _refusals(work.environment)
    status = _status(facts, notes, work, failures, all_done)
    messages = [Message(role=MessageRole.ASSISTANT, content=last)] if last else []
    transcript = Paths(None).shown(reading.path) if work is not None else None
    last_compact = reading.last_compact_step
    if last_compact is not None:
        last_compact = min(last_compact, reading.step_index)
    return SessionState(
        session_id=session_id,
        goal=facts.goal[:GOAL_LIMIT],
        status=status,
        step_index=reading.step_index,
        last_compact_step=last_compact,
        compact_count=reading.compact_count,
        tokens=TokenSnapshot(
            context_tokens=reading.context_tokens,
            input_tokens=reading.input_tokens,
            output_tokens=reading.output_tokens,
            total_tokens=min(reading.input_tokens + reading.output_tokens, MAX_COUNT),
            context_window=reading.context_window,
            model=reading.model,
            estimated=reading.context_estimated,
        ),
        requests=_whole(facts.requests),
        constraints=_clip(facts.constraints),
        decisions=_clip(facts.decisions),
        done=_clip(facts.done),
        remaining=_clip(facts.remaining),
        next_action=" ".join(facts.next_action.split())[:REQUEST_LIMIT],
        open_failures=_clip(facts.open_failures),
        changed_artifacts=list(reading.changed_artifacts),
        moved_artifacts=[f"{a} -> {b}" for a, b in (work.moved if work else [])],
        deleted_artifacts=list(work.deleted if work else []),
        commands_and_results=list(reading.commands_and_results[-COMMANDS_KEPT:]),
        verified=_clip(facts.verified),
        not_verified=_clip(facts.not_verified),
        assumptions_risks=_clip(facts.risks),
        blockers=_clip(facts.blockers),
        messages=messages,
        transcript=transcript,
    )
