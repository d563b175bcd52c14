"""The CLM plan's metrics over a memory repository's history (docs/metrics.md).

A *task* is a chain of sessions, each continued from the one before by a handoff; it is
completed when one of its sessions completed, failed when one failed (and none completed),
open otherwise. :func:`build_report` is the one call the ``report`` and ``export`` commands
make; nothing else here reads git, and nothing prints.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from clm_policy.base.record import text_or_none
from clm_policy.memory.history import History, Recall, SessionHistory, load_history
from clm_policy.policy.engine import Policy, Price, longest_prefix

MILLION = 1_000_000
DEFAULT_PRICE = "default"
"""The ``prices:`` entry for a session whose model no other entry is a prefix of."""


@dataclass(frozen=True)
class Thresholds:
    """The soft and hard thresholds a session's chart draws, in tokens (None: not known)."""

    profile: str | None
    soft: int | None = None
    hard: int | None = None
    window: int | None = None
    notes: tuple[str, ...] = ()


@dataclass
class SessionMetrics:
    session: str
    task: str
    parent: str | None
    status: str
    stopped: str | None
    profile: str | None
    model: str | None
    steps: int
    compactions: int
    handoffs: int
    input_tokens: int
    output_tokens: int
    cost: float | None
    human_interventions: int
    recalls: list[tuple[int | None, str, Recall]]  # (step, event kind, recall)
    steps_until_handoff: int | None
    tokens_until_handoff: int | None
    duration_s: float | None

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def recall_mean(self) -> float | None:
        return _mean([r.value for _, _, r in self.recalls])


@dataclass
class TaskMetrics:
    task: str
    sessions: list[str]
    outcome: str  # completed | failed | open
    tokens: int
    cost: float | None


@dataclass
class Summary:
    sessions: int
    tasks: int
    completed: int
    failed: int
    open: int
    task_completion_rate: float | None
    tokens: int
    tokens_per_successful_task: float | None
    human_interventions: int
    human_interventions_per_session: float | None
    recall_mean: float | None
    recall_min: float | None
    recall_count: int
    handoffs_ended: int  # sessions that ended in a handoff
    steps_until_handoff: float | None
    tokens_until_handoff: float | None
    cost_total: float | None
    cost_per_task: float | None
    priced_tasks: int
    unpriced_sessions: int
    unpriced_models: list[str]  # the models of sessions no price applies to
    session_duration_s: float | None


@dataclass
class ReportData:
    """What ``report`` draws and ``export`` writes: the history and its metrics."""

    history: History
    policy: str  # name and content hash of the policy thresholds and prices come from
    sessions: list[SessionMetrics]
    tasks: list[TaskMetrics]
    summary: Summary
    thresholds: dict[str, Thresholds] = field(default_factory=dict)


def build_report(
    memory: str,
    policy: Policy,
    *,
    session: str | None = None,
    progress: Callable[[int], Callable[[int], None]] | None = None,
) -> ReportData:
    """The metrics of the memory repository ``memory`` (only ``session``, when given) under
    ``policy``'s thresholds and prices."""
    from clm_policy.memory.git.write import MemoryRepo

    with MemoryRepo(memory) as repo:
        history = load_history(repo, memory, session=session, progress=progress)
    return compute(history, policy)


def compute(history: History, policy: Policy) -> ReportData:
    tasks_of = _task_roots(history.sessions)
    sessions = [_session(s, tasks_of[s.id], policy) for s in history.sessions]
    tasks = _tasks(sessions)
    return ReportData(
        history=history,
        policy=f"{policy.name}@{policy.digest}",
        sessions=sessions,
        tasks=tasks,
        summary=_summary(sessions, tasks),
        thresholds={s.id: thresholds(policy, s) for s in history.sessions},
    )


# -- per session --------------------------------------------------------------------------------


def _task_roots(sessions: list[SessionHistory]) -> dict[str, str]:
    """Each session's task: its earliest ancestor among ``sessions``."""
    parents = {s.id: s.parent for s in sessions}
    roots = {}
    for sid in parents:
        seen, here = {sid}, sid
        while (up := parents.get(here)) is not None and up in parents and up not in seen:
            seen.add(up)
            here = up
        roots[sid] = here
    return roots


def _int(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def _session(s: SessionHistory, task: str, policy: Policy) -> SessionMetrics:
    final, start = _spent(s.tokens), _spent(s.start_tokens)
    if not s.tokens and s.steps:
        last = s.steps[-1]
        final = (last.input_tokens or 0, last.output_tokens or 0)
    input_tokens, output_tokens = (max(0, f - b) for f, b in zip(final, start, strict=True))
    model = text_or_none(s.tokens.get("model"))
    price = price_for(policy.prices, model)
    handoff = next((e for e in s.events if e.kind == "handoff"), None)
    step_numbers = [
        *(r.step for r in s.steps),
        *(d.step for d in s.decisions),
        *(e.step for e in s.events if e.step is not None),
        _int(s.state.get("step_index")) or 0,
    ]
    steps = max(step_numbers)
    return SessionMetrics(
        session=s.id,
        task=task,
        parent=s.parent,
        status=text_or_none(s.state.get("status")) or "unknown",
        stopped=text_or_none(s.run.get("stopped")),
        profile=_profile_name(policy, s),
        model=model,
        steps=steps,
        compactions=sum(e.kind == "compact" for e in s.events),
        handoffs=sum(e.kind == "handoff" for e in s.events),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost=None if price is None else cost(price, input_tokens, output_tokens),
        human_interventions=(
            (_int(s.state.get("human_interventions")) or 0)
            + sum(e.kind == "signal" or e.rule == "manual" for e in s.events)
            + sum(d.forced for d in s.decisions)
        ),
        recalls=_recalls(s),
        steps_until_handoff=handoff.step if handoff is not None else None,
        tokens_until_handoff=(
            _tokens_until(s, handoff.step, sum(start), input_tokens + output_tokens, steps)
            if handoff is not None and handoff.step is not None
            else None
        ),
        duration_s=_duration(s),
    )


def _spent(tokens: dict[str, Any]) -> tuple[int, int]:
    return _int(tokens.get("input_tokens")) or 0, _int(tokens.get("output_tokens")) or 0


def _tokens_until(
    s: SessionHistory, step: int, start_total: int, session_total: int, last_step: int
) -> int | None:
    """Input + output tokens the session spent up to ``step`` (its handoff)."""
    at = [r.total_tokens for r in s.steps if r.step <= step and r.total_tokens is not None]
    if at:
        return max(0, at[-1] - start_total)
    return session_total if step >= last_step else None


AGENT_WORDS = "the agent's handoff"
"""The kind of a ``Clm-Recall-Agent`` recall: what the agent's own handoff holds of the record."""


def _recalls(s: SessionHistory) -> list[tuple[int | None, str, Recall]]:
    """The recall of each verified event: its commit's, else that of the metrics at its step
    (the run loop records a compaction's there too: counted once); then any other step's."""
    found: list[tuple[int | None, str, Recall]] = []
    by_step = {r.step: r.recall for r in s.steps if r.recall is not None}
    for e in s.events:
        at_step = by_step.pop(e.step, None) if e.step is not None else None
        recall = e.recall or at_step
        if recall is not None:
            found.append((e.step, AGENT_WORDS if e.recall_of_agent else e.kind, recall))
    found.extend((step, "step", recall) for step, recall in by_step.items())
    return found


def _duration(s: SessionHistory) -> float | None:
    if len(s.events) < 2:
        return None
    try:
        first = datetime.fromisoformat(s.events[0].date)
        last = datetime.fromisoformat(s.events[-1].date)
        return max(0.0, (last - first).total_seconds())
    except (ValueError, TypeError):
        return None


# -- prices and thresholds ----------------------------------------------------------------------


def price_for(prices: dict[str, Price], model: str | None) -> Price | None:
    """The price of ``model``: the longest ``prices:`` key it starts with, else ``default``."""
    best = longest_prefix(prices, model)
    return prices[best] if best is not None else prices.get(DEFAULT_PRICE)


def cost(price: Price, input_tokens: int, output_tokens: int) -> float:
    return (input_tokens * price.input + output_tokens * price.output) / MILLION


def _profile_name(policy: Policy, s: SessionHistory) -> str | None:
    last = s.decisions[-1] if s.decisions else None
    return (
        (last.profile if last is not None else None)
        or text_or_none(s.state.get("profile"))
        or text_or_none(s.run.get("profile"))
        or policy.default_profile
        or None
    )


def thresholds(policy: Policy, s: SessionHistory) -> Thresholds:
    """The thresholds of the session's profile under ``policy``, as the session saw them (a
    run's overrides, the window its decisions recorded)."""
    name = _profile_name(policy, s)
    profile = policy.profiles.get(name) if name is not None else None
    if profile is None:
        return Thresholds(name, notes=(f"policy {policy.name} has no profile {name!r}",))
    last = s.decisions[-1] if s.decisions else None
    window = (
        (last.context_window if last is not None else None)
        or _int(s.tokens.get("context_window"))
        or profile.context_window
        or _model_window(policy, text_or_none(s.tokens.get("model")))
    )
    notes = []
    drawn = []
    for key, threshold in (
        ("soft_compact", profile.soft_compact),
        ("hard_handoff", profile.hard_handoff),
    ):
        given, resolved = _int(s.run.get(key)), threshold.resolve(window)
        if given is not None:
            notes.append(f"{key} {given:,} set for the run")
        elif resolved is None:
            notes.append(f"{key} {threshold} of an unknown context window: not drawn")
        drawn.append(given if given is not None else resolved)
    ran = next((e.policy for e in reversed(s.events) if e.policy), None)
    if ran is not None and not ran.endswith(f"@{policy.digest}"):
        notes.append(
            f"thresholds of policy {policy.name}@{policy.digest}; the session ran under {ran}"
        )
    return Thresholds(name, soft=drawn[0], hard=drawn[1], window=window, notes=tuple(notes))


def _model_window(policy: Policy, model: str | None) -> int | None:
    best = longest_prefix(policy.models, model)
    return policy.models[best] if best is not None else None


# -- tasks and the summary ----------------------------------------------------------------------


def _tasks(sessions: list[SessionMetrics]) -> list[TaskMetrics]:
    grouped: dict[str, list[SessionMetrics]] = {}
    for s in sessions:
        grouped.setdefault(s.task, []).append(s)
    out = []
    for task, members in grouped.items():
        statuses = {m.status for m in members}
        costs = [m.cost for m in members]
        out.append(
            TaskMetrics(
                task=task,
                sessions=[m.session for m in members],
                outcome=next((o for o in ("completed", "failed") if o in statuses), "open"),
                tokens=sum(m.tokens for m in members),
                cost=None if None in costs else sum(c for c in costs if c is not None),
            )
        )
    return out


def _mean(values: list[float] | list[int]) -> float | None:
    return sum(values) / len(values) if values else None


def _ratio(part: float, whole: int) -> float | None:
    return part / whole if whole else None


def _summary(sessions: list[SessionMetrics], tasks: list[TaskMetrics]) -> Summary:
    completed = sum(t.outcome == "completed" for t in tasks)
    failed = sum(t.outcome == "failed" for t in tasks)
    tokens = sum(t.tokens for t in tasks)
    interventions = sum(s.human_interventions for s in sessions)
    recalls = [r.value for s in sessions for _, _, r in s.recalls]
    ended = [s for s in sessions if s.steps_until_handoff is not None]
    priced = [t for t in tasks if t.cost is not None]
    cost_total = sum(t.cost for t in priced if t.cost is not None) if priced else None
    unpriced = [s for s in sessions if s.cost is None]
    return Summary(
        sessions=len(sessions),
        tasks=len(tasks),
        completed=completed,
        failed=failed,
        open=len(tasks) - completed - failed,
        task_completion_rate=_ratio(completed, len(tasks)),
        tokens=tokens,
        tokens_per_successful_task=_ratio(tokens, completed),
        human_interventions=interventions,
        human_interventions_per_session=_ratio(interventions, len(sessions)),
        recall_mean=_mean(recalls),
        recall_min=min(recalls) if recalls else None,
        recall_count=len(recalls),
        handoffs_ended=len(ended),
        steps_until_handoff=_mean([s.steps_until_handoff or 0 for s in ended]),
        tokens_until_handoff=_mean(
            [s.tokens_until_handoff for s in ended if s.tokens_until_handoff is not None]
        ),
        cost_total=cost_total,
        cost_per_task=None if cost_total is None else cost_total / len(priced),
        priced_tasks=len(priced),
        unpriced_sessions=len(unpriced),
        unpriced_models=sorted({s.model for s in unpriced if s.model}),
        session_duration_s=_mean([s.duration_s for s in sessions if s.duration_s is not None]),
    )
