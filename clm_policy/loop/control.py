"""The outer control loop: step, measure, decide, compact or hand off, commit.

Decisions and metrics are buffered and written to ``sessions/<id>/decisions.jsonl`` and
``metrics.jsonl`` with the next compaction, handoff or session end — never one commit per
step; a decision's line carries what it read of the state and a person's answer, so
``clm-policy replay`` can decide it again. Every commit of a session's ``state.json`` writes
its ``run.json`` too, from a ``clm(start)`` commit on, so a run interrupted anywhere resumes
from its last commit. With ``continue_after_handoff`` the loop goes on in a new session
(``<id>-2``, ...) seeded from the handoff. A policy that compacts on consecutive steps is
stopped (``compaction_loop``) instead of spinning. A compaction whose recall is under the
profile's ``min_recall`` is not committed: it becomes a handoff (``verify_failed``).
"""

from __future__ import annotations

import re
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from clm_policy.base.errors import AgentError, OutputClosed
from clm_policy.base.interrupts import uninterrupted
from clm_policy.lifecycle.compaction import Summarizer
from clm_policy.lifecycle.compose import Words, compose
from clm_policy.lifecycle.estimate import estimate_message_tokens
from clm_policy.lifecycle.pipelines import (
    CompactOutcome,
    HandoffOutcome,
    Provenance,
    record_session_end,
    record_session_start,
    run_compaction,
    run_handoff,
)
from clm_policy.lifecycle.verify import Recall, VerificationFailed
from clm_policy.loop.agent import Agent, ScriptedStep
from clm_policy.loop.monitor import MetricsMonitor, seen_state
from clm_policy.memory.change import JsonDoc, JsonLines
from clm_policy.memory.git.write import MemoryRepo
from clm_policy.memory.layout import check_session, log_file, session_dir
from clm_policy.memory.store import MemoryStore, Remembered
from clm_policy.models.decision import Decision
from clm_policy.models.enums import Action, MessageRole, TaskStatus
from clm_policy.models.state import AgentStepResult, SessionState
from clm_policy.policy.engine import Policy

MAX_COMPACTIONS_IN_A_ROW = 3
CARRIED = (
    *("requests", "constraints", "decisions", "done", "verified", "source_of_truth"),
    *("memory_keys", "not_verified", "blockers"),
)
"""The lists a session continued after a handoff takes from the one before it."""


@dataclass(frozen=True)
class TimelineEntry:
    session: str
    step: int
    context_tokens: int
    action: str
    rule: str | None
    rationale: str
    commit: str | None = None


@dataclass
class LoopResult:
    final_state: SessionState
    decisions: list[Decision] = field(default_factory=list)
    timeline: list[TimelineEntry] = field(default_factory=list)
    handoffs: list[HandoffOutcome] = field(default_factory=list)
    compactions: list[CompactOutcome] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    stopped_reason: str = ""
    steps: int = 0

    @property
    def compact_count(self) -> int:
        return len(self.compactions)


@dataclass(eq=False)
class WorkingSession:
    """An agent and the state it works in."""

    agent: Agent
    state: SessionState

    def step(self, answered: Callable[[], None] | None = None) -> AgentStepResult:
        """One step of the agent, merged into the state; ``answered`` is called before the
        merge."""
        result = self.agent.step(self.state.messages)
        if answered is not None:
            answered()
        s = self.state
        s.messages = [*s.messages, *result.messages_added]
        s.step_index += 1
        s.status = result.task_status
        if not isinstance(result, ScriptedStep):
            return result
        s.human_interventions += result.interventions
        if (spec := result.step) is not None:
            s.signals = {**s.signals, **spec.signals}
            s.changed_artifacts = _merge(s.changed_artifacts, spec.changed)
            s.commands_and_results = [*s.commands_and_results, *spec.commands][-50:]
            s.verified = _merge(s.verified, spec.verified)
            s.not_verified = [
                x for x in _merge(s.not_verified, spec.not_verified) if x not in spec.verified
            ]
            s.blockers = [b for b in _merge(s.blockers, spec.blockers) if b not in spec.resolved]
            s.decisions = _merge(s.decisions, spec.decisions)
        return result


def _merge(old: list[str], new: list[str]) -> list[str]:
    return [*old, *(x for x in new if x not in old)]


Listener = Callable[[str, dict[str, Any]], None]
Confirmer = Callable[[Decision, SessionState], bool | None]
"""Asks a person about a decision the policy wants confirmed: True go ahead, False don't
(continue instead), None nobody can answer now (the run stops; the decision stays pending)."""


class OuterControlLoop:
    def __init__(
        self,
        agent: Agent,
        policy: Policy,
        state: SessionState,
        repo: MemoryRepo,
        *,
        profile: str | None = None,
        continue_after_handoff: bool = False,
        max_steps: int | None = None,
        monitor: MetricsMonitor | None = None,
        listener: Listener | None = None,
        confirmer: Confirmer | None = None,
        decide_first: bool = False,
        resumed: bool = False,
        record: dict[str, Any] | None = None,
        summarizer: Summarizer | None = None,
        memory: MemoryStore | None = None,
    ) -> None:
        self.session = WorkingSession(agent, state)
        self.memory = memory
        self.policy = policy
        self.repo = repo
        self.profile = profile
        self.continue_after_handoff = continue_after_handoff
        self.max_steps = max_steps
        self.monitor = monitor or MetricsMonitor()
        self.listener = listener or (lambda _event, _data: None)
        self._closed: OutputClosed | None = None  # the listener's output went away
        self.provenance = policy.provenance
        self.confirmer = confirmer
        self.decide_first = decide_first  # a resumed session's last step awaits its decision
        self.resumed = resumed or decide_first  # on record already: no start to commit
        self._undecided = decide_first  # the latest step played has no decision carried out
        self.record = record or {}
        if summarizer is None:  # CLM_POLICY_SUMMARIZER*: a bad setting fails here, at start
            import os

            from clm_policy.lifecycle.summarizers import summarizer_from_env

            summarizer = summarizer_from_env(os.environ)
        self.summarizer = summarizer
        self.pending: Decision | None = None
        self._in_a_row = 0  # compactions on consecutive steps
        self._logs: dict[str, list[dict[str, Any]]] = {}
        self._ended: str | None = None  # "handoff": the session's end is committed
        self.on_record = False  # committed at its start by begin() (or resumed)
        self._finished = False  # its end is committed

    # -- the loop -----------------------------------------------------------------------------

    def begin(self) -> None:
        """Put the session on record before its first step (a new one's ``clm(start)``
        commit), once. Call it with Ctrl-C held (:func:`uninterrupted`): from here on an
        interrupt leaves a session that resumes."""
        if self.on_record:
            return
        if self.memory is not None:
            self.memory.begin_task(task_of(self.state))
        if not self.resumed:
            record_session_start(self.repo, self.state, record=self._record(None))
        self.on_record = True

    def run(self) -> LoopResult:
        """Play until the task ends, a limit is hit or a decision awaits a person. An
        interrupt or an :class:`AgentError` commits the session so far (stopped as it says)
        and is raised again, so that ``--resume`` goes on from there."""
        try:
            with uninterrupted():
                self.begin()
            return self._run()
        except KeyboardInterrupt:
            with uninterrupted():
                self.interrupted()
            raise
        except (AgentError, OutputClosed) as exc:  # the step changed nothing: save what there is
            with uninterrupted():
                self._finish(exc.stop_reason)
            raise

    @property
    def handed_off(self) -> bool:
        return self._ended == "handoff"

    def interrupted(self) -> None:
        """Commit the session so far as stopped ``interrupted``, if on record and not ended."""
        if self.on_record and not self._finished:
            self._finish("interrupted")

    def _run(self) -> LoopResult:
        result = LoopResult(final_state=self.session.state, sessions=[self.state.session_id])
        step_first = not self.decide_first
        while not self._stops(result):
            if step_first:
                # the agent's step and the state it changes stay together; a second Ctrl-C
                # while the agent has not answered yet abandons the step (nothing is merged)
                with patient(self._waiting) as held:
                    step = self.session.step(answered=held.hold)
                    result.steps += 1
                    self._undecided = True
                    self.state.tokens = self.monitor.update(self.state, step)
                    self._log("metrics", self.monitor.metrics(self.state, step))
            step_first = True  # a resumed run decides once on the persisted state, first
            decision = self.policy.decide(self.state, self.profile)
            seen = seen_state(self.state)
            if decision.action in self.policy.confirm:
                answer = self.confirmer(decision, self.state) if self.confirmer else None
                if answer is None:
                    self.pending = decision
                    result.stopped_reason = "needs_confirmation"
                    break
                self.state.human_interventions += 1
                seen["confirmed"] = answer
                if not answer:
                    decision = _rejected(decision)
            with uninterrupted():  # a commit and the state it records stay together
                if not self._carry_out(decision, result, seen):
                    break
        with uninterrupted():
            self._finish(result.stopped_reason)
        result.final_state = self.state
        return result

    def _waiting(self, again: bool) -> None:
        # Ctrl-C came during a step, which finishes first (``again``: not the step's first)
        self._say("waiting", {"again": again})

    def _say(self, event: str, data: dict[str, Any]) -> None:
        """Tell the listener; output it cannot write (``run | head``) stops the run at the next
        step's start, never inside the commit it tells of."""
        if self._closed is None:
            try:
                self.listener(event, data)
            except OutputClosed as exc:
                self._closed = exc

    def _stops(self, result: LoopResult) -> bool:
        if self._closed is not None:
            raise self._closed
        if self.max_steps is not None and result.steps >= self.max_steps:
            result.stopped_reason = "max_steps"
        elif self.state.status in (TaskStatus.COMPLETED, TaskStatus.FAILED):
            result.stopped_reason = self.state.status.value
        return bool(result.stopped_reason)

    def _carry_out(self, decision: Decision, result: LoopResult, seen: dict[str, Any]) -> bool:
        """Record ``decision`` (with ``seen``) and do what it says; False when the run stops."""
        self._undecided = False  # (a resumed run steps first, not deciding this step again)
        result.decisions.append(decision)
        self._log("decisions", self._decision_record(decision, seen))
        entry = TimelineEntry(
            self.state.session_id,
            self.state.step_index,
            self.state.tokens.context_tokens,
            decision.action.value,
            decision.trigger,
            decision.rationale,
        )
        if decision.action is Action.COMPACT:
            follows = self.state.step_index - 1 == self.state.last_compact_step
            self._in_a_row = self._in_a_row + 1 if follows else 1
            if self._in_a_row > MAX_COMPACTIONS_IN_A_ROW:
                self._undecided = True  # not carried out: a resume decides this step again
                result.timeline.append(entry)
                result.stopped_reason = "compaction_loop"
                self._say("stopped", {"reason": "compaction_loop", "entry": entry})
                return False
            try:
                done = self._compact(decision)
            except VerificationFailed as exc:  # nothing committed: hand off instead
                decision = decision.replace(
                    action=Action.HANDOFF, trigger=exc.trigger, rationale=exc.rationale
                )
                result.decisions[-1] = decision  # one decision a step; the log keeps both
                self._log("decisions", self._decision_record(decision, seen))
                entry = replace(entry, action="handoff", rule=exc.trigger, rationale=exc.rationale)
            else:
                result.compactions.append(done)
                entry = replace(entry, commit=done.commit)
        if decision.action is Action.HANDOFF:
            handed = self._handoff(decision)
            if not self.continue_after_handoff:
                self._ended = "handoff"  # committed: nothing after this makes it resumable
            result.handoffs.append(handed)
            entry = replace(entry, commit=handed.commit)
            result.timeline.append(entry)
            self._say("handoff", {"entry": entry, "outcome": handed})
            if not self.continue_after_handoff:
                result.stopped_reason = "handoff"
                return False
            self._start_next_session(handed)
            result.sessions.append(self.state.session_id)
            record_session_start(self.repo, self.state, record=self._record(None))
            return True
        result.timeline.append(entry)
        self._say(decision.action.value, {"entry": entry})
        return True

    def _decision_record(self, decision: Decision, seen: dict[str, Any]) -> dict[str, Any]:
        return {
            "session": self.state.session_id,
            "step": self.state.step_index,
            **decision.as_dict(),
            **seen,
        }

    @property
    def state(self) -> SessionState:
        return self.session.state

    # -- events --------------------------------------------------------------------------------

    def _log_path(self, kind: str) -> str:
        return f"{session_dir(self.state.session_id)}/{log_file(kind, self.state.step_index)}"

    def _log(self, kind: str, record: dict[str, Any]) -> None:
        self._logs.setdefault(self._log_path(kind), []).append(record)

    def _take_logs(self, *, keep: bool = False) -> dict[str, JsonLines]:
        """The buffered logs to commit; with ``keep`` they stay buffered (until the commit)."""
        logs = {path: JsonLines(tuple(records)) for path, records in self._logs.items() if records}
        if not keep:
            self._logs = {}
        return logs

    def _why(self, decision: Decision) -> Provenance:
        return Provenance(decision.trigger, decision.rationale, self.provenance)

    def _compact(self, decision: Decision) -> CompactOutcome:
        """Compact and commit; :class:`VerificationFailed` (nothing committed, the logs still
        buffered) when the recall is under the profile's ``min_recall``."""
        profile = self.policy.profile(self.profile or self.state.profile)
        before = self.state
        done = run_compaction(
            self.repo,
            self.state,
            retain=profile.retain_recent_messages,
            why=self._why(decision),
            appends=self._take_logs(keep=True),
            files={self._run_path: JsonDoc(self._record(None))},
            summarizer=self.summarizer,
            min_recall=profile.min_recall,
            on_verified=self._note_recall,
        )
        self._logs = {}
        self.session.state = done.result.state
        self.session.agent.inject_context(done.result.hint)
        kept = max(0, profile.retain_recent_messages)
        self._remember("compact", before, kept)
        return done

    def _note_recall(self, recall: Recall) -> None:
        """The compaction's recall, in this step's line of metrics.jsonl."""
        lines = self._logs.get(self._log_path("metrics")) or []
        if lines and lines[-1].get("step") == self.state.step_index:
            lines[-1]["recall"] = {
                "value": recall.value,
                "passed": recall.found,
                "asked": recall.asked,
            }

    def _handoff(self, decision: Decision) -> HandoffOutcome:
        done = run_handoff(
            self.repo,
            compose(self.state, self._agents_handoff()),
            why=self._why(decision),
            appends=self._take_logs(),
            files={self._run_path: JsonDoc(self._record("handoff"))},
            store=self.memory,
            memory_dir=_as_named(self.repo.root),
        )
        self._remember("handoff", self.state, 0)
        return done

    def _agents_handoff(self) -> Words | None:
        """The agent's handoff, asked as every road asks, kept word for word; None when it
        writes none or cannot be reached. What the reply cost is counted."""
        from clm_policy.lifecycle.compose import words_of_reply
        from clm_policy.lifecycle.request import handoff_request

        try:
            result = self.session.agent.write_handoff(self.state.messages, handoff_request())
        except AgentError:  # the seed says the agent wrote none; the run goes on as it would
            return None
        t = self.state.tokens
        self.state.tokens = t.replace(
            input_tokens=t.input_tokens + result.input_tokens,
            output_tokens=t.output_tokens + result.output_tokens,
            total_tokens=t.total_tokens + result.input_tokens + result.output_tokens,
        )
        replies = [m for m in result.messages_added if m.role is MessageRole.ASSISTANT]
        return words_of_reply(replies[-1].content) if replies else None

    def _remember(self, kind: str, state: SessionState, kept: int) -> None:
        """Tell the memory backend what a committed compaction or handoff took out of the
        context: the conversation but its last ``kept`` messages, system messages left out."""
        if self.memory is None:
            return
        talk = [m for m in state.messages if m.role is not MessageRole.SYSTEM]
        gone = talk[: len(talk) - kept] if kept else talk
        said = tuple((m.role.value, m.content) for m in gone)
        self.memory.remember(Remembered(kind, state.session_id, state.step_index, said))

    def _start_next_session(self, handed: HandoffOutcome) -> None:
        """Go on in a new session seeded from the handoff: the first of ``<id>-2``, ``<id>-3``,
        ... not taken."""
        from clm_policy.memory.sessions import session_ids

        old = self.state
        base = task_of(old)  # <base>-<n> continued in <base>-<n+1>
        number = int(old.session_id[len(base) + 1 :]) + 1 if base != old.session_id else 2
        taken = set(session_ids(self.repo))
        while (next_id := check_session(f"{base[:120]}-{number}")) in taken:
            number += 1
        seed = handed.seed
        context = estimate_message_tokens(seed) + self.monitor.system_prompt_tokens
        self.session.agent.reset_with_seed(seed)
        # what the task has learnt so far stays with it: every later handoff names it
        carried: dict[str, Any] = {name: list(getattr(old, name)) for name in CARRIED}
        self.session.state = SessionState(
            session_id=next_id,
            goal=old.goal,
            profile=old.profile,
            parent_session=old.session_id,
            messages=list(seed),
            tokens=old.tokens.replace(context_tokens=context, estimated=True),
            **carried,
        )

    @property
    def _run_path(self) -> str:
        return f"{session_dir(self.state.session_id)}/run.json"

    def _record(self, stopped: str | None) -> dict[str, Any]:
        """``run.json``: how the run was started, the steps played, how it stopped."""
        played = getattr(self.session.agent, "played", None)
        record: dict[str, Any] = {**self.record, "stopped": stopped, "played": played}
        record["decided"] = not self._undecided
        if self.pending is not None:
            record["pending"] = self.pending.as_dict()
        return record

    def _finish(self, reason: str) -> None:
        """Commit the session's end and the logs not yet in git. A session that handed off
        stays handed off, whatever stops the run after that."""
        reason = self._ended or reason
        record_session_end(
            self.repo,
            self.state,
            reason,
            why=Provenance(policy=self.provenance),
            record=self._record(reason),
            appends=self._take_logs(),
        )
        self._finished = True  # an interrupt that comes after this changes nothing


class _Patience:
    """What :func:`patient` heard of Ctrl-C, and whether the block can still be abandoned."""

    def __init__(self, tell: Callable[[bool], None]) -> None:
        self.received = False
        self.abandonable = True
        self._tell = tell

    def hold(self) -> None:
        """From here on a second Ctrl-C is held too (the state is being changed)."""
        self.abandonable = False

    def __call__(self, signum: int, frame: object) -> None:
        # (the loop's listener is told each time: output it cannot write is noted, not raised)
        again, self.received = self.received, True
        self._tell(again)
        if again and self.abandonable:
            raise KeyboardInterrupt  # Ctrl-C again: abandon the agent's step


@contextmanager
def patient(tell: Callable[[bool], None]) -> Iterator[_Patience]:
    """Like :func:`uninterrupted` for a step that may wait long: the first Ctrl-C is held
    (``tell(False)`` says so at once), a second one before :meth:`_Patience.hold` abandons the
    block (``tell(True)`` for each Ctrl-C after the first).
    Where SIGINT is not Python's own handler, or off the main thread: :func:`uninterrupted`."""
    patience = _Patience(tell)
    own = threading.current_thread() is threading.main_thread()
    if not own or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        with uninterrupted():
            yield patience
        return
    old = signal.signal(signal.SIGINT, patience)
    try:
        yield patience
    finally:
        signal.signal(signal.SIGINT, old)
    if patience.received:
        raise KeyboardInterrupt


def task_of(state: SessionState) -> str:
    """The task a session belongs to: its first session (``demo`` for ``demo-3``, a session
    the loop continued after handoffs)."""
    chained = re.fullmatch(r"(.+)-(\d{1,6})", state.session_id) if state.parent_session else None
    return chained[1] if chained else state.session_id


def _rejected(decision: Decision) -> Decision:
    return decision.replace(
        action=Action.CONTINUE,
        rationale=f"{decision.action.value} rejected by a person ({decision.rationale})",
    )


def _as_named(root: str) -> str:
    """The memory repository as the seed names it to the agent: relative to the working
    folder when inside it (the seed the same wherever the folder is), else absolute."""

    import os

    try:
        relative = os.path.relpath(root)
    except ValueError:  # another drive (Windows)
        return root
    return root if relative == os.pardir or relative.startswith(os.pardir + os.sep) else relative
