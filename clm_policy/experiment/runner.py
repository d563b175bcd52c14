"""Play every workload under every arm, each arm in its own memory repository
(``<workdir>/arms/<arm>/memory``, its Mem0 data beside it in ``mem0``), and read back what
happened.

Each workload is one task, its first session named after it, played by ``run``'s loop with the
simulated agent. What an arm did is read from its repository's history with the CLM metrics of
``clm-policy report`` (clm_policy.report.metrics), so an experiment and a report count alike.
Arms are independent, so with ``jobs`` above 1 they run in forked processes at once (the loop's
time goes mostly to git); the figures do not depend on ``jobs``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from clm_policy.experiment.load import Arm, Experiment
from clm_policy.experiment.workloads import Workload
from clm_policy.memory.git.write import MemoryRepo
from clm_policy.memory.store import BackendFailure, MemoryStore
from clm_policy.report.metrics import AGENT_WORDS, SessionMetrics


def verified_recall(sessions: Sequence[SessionMetrics]) -> float | None:
    """A task's recall: the mean of the recalls its compactions and handoffs committed
    (``Clm-Recall``: clm_policy.lifecycle.verify's facts of the state found in what the next
    context holds); None when none was verified. What an agent's own handoff holds of the
    record (``Clm-Recall-Agent``) is not an arm's recall: the simulated agent writes every
    fact it has. The one place an experiment defines recall: pass another function to
    :func:`run_experiment` to measure it otherwise."""
    values = [r.value for s in sessions for _, kind, r in s.recalls if kind != AGENT_WORDS]
    return sum(values) / len(values) if values else None


RecallFunction = Callable[[Sequence[SessionMetrics]], float | None]


@dataclass(frozen=True)
class Outcome:
    """One arm on one workload: one task, one or more sessions."""

    arm: str
    workload: str
    outcome: str  # completed | failed | open
    stopped: str
    steps: int
    sessions: int
    tokens: int
    cost: float | None
    interventions: int
    compactions: int
    handoffs: int
    recall: float | None
    needs_asked: int
    needs_missing: int
    seconds: float

    @property
    def completed(self) -> bool:
        return self.outcome == "completed"


@dataclass
class ArmRun:
    arm: str
    memory: str
    """The arm's memory repository."""
    outcomes: list[Outcome] = field(default_factory=list)
    failures: list[BackendFailure] = field(default_factory=list)
    """What the arm's memory backend could not do (Mem0's failures: recorded, not raised)."""
    seconds: float = 0.0


@dataclass
class ExperimentRun:
    experiment: Experiment
    workdir: str
    arms: list[ArmRun]


def run_experiment(
    experiment: Experiment,
    workdir: str | Path,
    *,
    advance: Callable[[], None] | None = None,
    recall: RecallFunction = verified_recall,
    jobs: int = 1,
) -> ExperimentRun:
    """Play ``experiment`` in ``workdir`` (new or empty), ``jobs`` arms at a time; ``advance``
    is called after each workload an arm finished."""
    from clm_policy.base.errors import InputError

    root = Path(workdir)
    try:
        if root.exists() and not root.is_dir():
            raise NotADirectoryError(0, "it is a file")
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file there, or on the way there; a folder not writable
        raise InputError(
            f"{root}: cannot be the experiment's folder: {exc.strerror or exc} (--workdir "
            "takes a folder, new or empty)"
        ) from None
    if any(root.iterdir()):
        raise InputError(
            f"{root}: not empty (an experiment starts in a new folder: remove what an earlier "
            "or interrupted run left there, or give another --workdir)"
        )
    import multiprocessing

    forks = "fork" in multiprocessing.get_all_start_methods()  # POSIX; else one at a time
    if jobs > 1 and len(experiment.arms) > 1 and forks:
        return ExperimentRun(
            experiment, str(root), _in_processes(experiment, root, advance, recall, jobs)
        )
    arms = [_run_arm(experiment, arm, root, advance, recall) for arm in experiment.arms]
    return ExperimentRun(experiment, str(root), arms)


_FORKED: tuple[Experiment, Path, RecallFunction, object] | None = None
"""What a forked worker plays (set before the workers are forked; never pickled)."""


def _arm_in_child(index: int) -> ArmRun:
    assert _FORKED is not None
    experiment, root, recall, ticks = _FORKED
    put = getattr(ticks, "put")  # noqa: B009 -- a multiprocessing queue
    return _run_arm(experiment, experiment.arms[index], root, lambda: put(1), recall)


def _in_processes(
    experiment: Experiment,
    root: Path,
    advance: Callable[[], None] | None,
    recall: RecallFunction,
    jobs: int,
) -> list[ArmRun]:
    """Each arm in a forked worker process, ``jobs`` at once; progress comes back by a queue."""
    import multiprocessing
    import queue
    from concurrent.futures import ProcessPoolExecutor, wait

    global _FORKED
    context = multiprocessing.get_context("fork")
    ticks = context.Queue()
    _FORKED = (experiment, root, recall, ticks)
    try:
        workers = min(jobs, len(experiment.arms))
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            futures = [pool.submit(_arm_in_child, i) for i in range(len(experiment.arms))]
            pending = set(futures)
            while pending:
                _, pending = wait(pending, timeout=0.2)
                while True:
                    try:
                        ticks.get_nowait()
                    except queue.Empty:
                        break
                    if advance is not None:
                        advance()
            return [f.result() for f in futures]
    finally:
        _FORKED = None
        ticks.close()


def _run_arm(
    experiment: Experiment,
    arm: Arm,
    root: Path,
    advance: Callable[[], None] | None,
    recall: RecallFunction,
) -> ArmRun:
    from clm_policy.memory.backends import open_store
    from clm_policy.memory.init import init_memory

    started = time.perf_counter()
    folder = root / "arms" / arm.name
    memory = folder / "memory"
    folder.mkdir(parents=True)
    init_memory(memory)
    done = ArmRun(arm.name, str(memory))
    played: list[tuple[Workload, str, int, int, int, float]] = []
    with MemoryRepo(memory) as repo:
        store = open_store(arm.memory, repo, settings=experiment.mem0, folder=str(folder / "mem0"))
        try:
            for workload in experiment.workloads:
                played.append(_play(experiment, arm, workload, repo, store))
                if advance is not None:
                    advance()
        finally:
            store.close()
        done.failures = list(store.failures)
        done.outcomes = _outcomes(arm, repo, str(memory), played, recall)
    done.seconds = time.perf_counter() - started
    return done


def _play(
    experiment: Experiment, arm: Arm, workload: Workload, repo: MemoryRepo, store: MemoryStore
) -> tuple[Workload, str, int, int, int, float]:
    from clm_policy.loop.agent import SimulatedAgent
    from clm_policy.loop.control import OuterControlLoop
    from clm_policy.loop.monitor import MetricsMonitor
    from clm_policy.loop.runs import first_state

    started = time.perf_counter()
    profile = experiment.profile(arm, workload)
    agent = SimulatedAgent(workload.spec)
    loop = OuterControlLoop(
        agent,
        arm.policy,
        first_state(workload.spec, workload.name, profile),
        repo,
        profile=profile,
        continue_after_handoff=workload.continue_after_handoff,
        max_steps=workload.max_steps,
        monitor=MetricsMonitor(workload.spec.system_prompt_tokens),
        summarizer=arm.summarizer,
        memory=store,
        record={"scenario": workload.shown, "experiment": experiment.name, "arm": arm.name},
    )
    result = loop.run()
    return (
        workload,
        result.stopped_reason,
        result.steps,
        agent.needs_asked,
        agent.needs_missing,
        time.perf_counter() - started,
    )


def _outcomes(
    arm: Arm,
    repo: MemoryRepo,
    memory: str,
    played: list[tuple[Workload, str, int, int, int, float]],
    recall: RecallFunction,
) -> list[Outcome]:
    from clm_policy.memory.history import load_history
    from clm_policy.report.metrics import compute

    data = compute(load_history(repo, memory), arm.policy)
    tasks = {t.task: t for t in data.tasks}
    by_task: dict[str, list[SessionMetrics]] = {}
    for s in data.sessions:
        by_task.setdefault(s.task, []).append(s)
    out = []
    for workload, stopped, steps, asked, missing, seconds in played:
        task = tasks[workload.name]
        sessions = by_task[workload.name]
        out.append(
            Outcome(
                arm=arm.name,
                workload=workload.name,
                outcome=task.outcome,
                stopped=stopped,
                steps=steps,
                sessions=len(sessions),
                tokens=task.tokens,
                cost=task.cost,
                interventions=sum(s.human_interventions for s in sessions),
                compactions=sum(s.compactions for s in sessions),
                handoffs=sum(s.handoffs for s in sessions),
                recall=recall(sessions),
                needs_asked=asked,
                needs_missing=missing,
                seconds=seconds,
            )
        )
    return out
