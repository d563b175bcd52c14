"""What a ``clm-policy run`` will do, decided and checked before anything is written.

:func:`plan_run` reads and validates the agent's input (a scenario, or a goal and the
endpoint's configuration from the environment), the policy, the profile and the threshold
overrides (for ``--resume``, what ``run.json`` recorded), and picks a session id no session
has yet, so a second run never replays into a finished one. Only then does :func:`execute`
create the memory repository and run the loop: bad input changes nothing.

``run.json`` lives in the memory repository, which a team pushes and pulls: it is data. A
resume takes from it what only plays locally (scenario, policy, profile, limits, the done
marker), never the agent, the endpoint or the model — those, and so where the user's API key
goes, are the command line's and the environment's (docs/security.md, "Who decides what").
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clm_policy.base.chat import ENV_BASE_URL
from clm_policy.base.errors import (
    AgentError,
    ClmError,
    InputError,
    Interrupted,
    OutputClosed,
    StateError,
    quote,
)
from clm_policy.base.record import text_or_none
from clm_policy.lifecycle.estimate import estimate_tokens
from clm_policy.loop.agent import SimulatedAgent
from clm_policy.loop.openai_agent import ENV_MODEL, OpenAIChatAgent, OpenAIConfig, system_prompt
from clm_policy.loop.status import ENDED, why_ended
from clm_policy.memory.layout import check_session
from clm_policy.models.decision import Decision
from clm_policy.models.scenario import ScenarioFile
from clm_policy.models.state import SessionState, TokenSnapshot
from clm_policy.policy.engine import Policy

if TYPE_CHECKING:
    from clm_policy.loop.control import Confirmer, Listener, LoopResult, OuterControlLoop
    from clm_policy.memory.mem0settings import Mem0Settings
    from clm_policy.memory.sessions import PersistedSession
    from clm_policy.memory.store import BackendFailure

AGENTS = ("simulated", "openai")
OPENAI_MAX_STEPS = 20
"""An ``--agent openai`` run's default ``--max-steps``: a model that never says it is done
must not run up a bill."""
MAX_GOAL = 10_000


@dataclass(frozen=True)
class RunPlan:
    spec: ScenarioFile | None
    scenario_shown: str | None
    policy: Policy  # with the threshold overrides applied
    profile: str
    state: SessionState
    record: dict[str, Any]  # run.json as the run starts
    resumed: bool
    played: int
    create_memory: bool
    taken: str | None = None
    """The session id the run wanted when another session had it."""
    taken_stopped: str | None = None
    """How that session stopped (None: it can be resumed)."""
    agent: str = "simulated"
    openai: OpenAIConfig | None = None
    max_steps: int | None = None
    openai_from: tuple[str, str] | None = None
    """Where the endpoint and the model come from: the variable, or ``default``."""
    notices: tuple[str, ...] = ()
    """What the run ignored (a ``run.json`` naming another agent, endpoint or model)."""
    memory_backend: str = "file"
    mem0: Mem0Settings | None = None
    decided: bool = False
    """A resumed session's last step was decided before it stopped (not known: False)."""

    @property
    def shown(self) -> str:
        if self.openai is not None:
            return f"the goal with model {self.openai.model} at {self.openai.base_url}"
        return self.scenario_shown or "?"

    def make_agent(self) -> SimulatedAgent | OpenAIChatAgent:
        """The agent the run drives, past the steps a resumed session played already."""
        if self.openai is not None:
            return OpenAIChatAgent(self.openai, self.state.goal, played=self.played)
        assert self.spec is not None  # a plan names a scenario or an endpoint
        agent = SimulatedAgent(self.spec)
        agent.skip(self.played)
        return agent

    @property
    def system_prompt_tokens(self) -> int:
        """The agent's system prompt, counted in every request."""
        if self.openai is not None:
            return estimate_tokens(system_prompt(self.openai.done_marker))
        return self.spec.system_prompt_tokens if self.spec is not None else 0


def plan_run(
    memory: str,
    *,
    scenario: str | None = None,
    policy_ref: str | None = None,
    profile: str | None = None,
    resume: str | None = None,
    soft_compact: int | None = None,
    hard_handoff: int | None = None,
    continue_after_handoff: bool | None = None,
    agent: str | None = None,
    goal: str | None = None,
    done_marker: str | None = None,
    max_steps: int | None = None,
    env: Mapping[str, str] | None = None,
    now: datetime | None = None,
    memory_backend: str | None = None,
) -> RunPlan:
    """Everything a run needs, checked; raises :class:`InputError` and writes nothing.

    ``agent``: ``simulated`` (plays ``scenario``) or ``openai`` (works on ``goal`` against
    the endpoint ``env`` configures, :data:`os.environ` by default). A new openai session is
    ``openai-<UTC date>``. ``continue_after_handoff`` None: as the resumed session was run,
    else as the scenario says, else stop at a handoff."""
    from clm_policy.memory.init import check_new
    from clm_policy.memory.layout import is_memory_repo

    exists = is_memory_repo(memory)
    if not exists:
        if resume is not None:
            raise InputError(f"{memory}: no memory repository to resume from")
        check_new(memory)
    options = _Options(
        agent, scenario, policy_ref, profile, soft_compact, hard_handoff, continue_after_handoff
    )
    persisted = None
    notices: list[str] = []
    if resume is not None:
        persisted = _persisted(memory, resume)
        options, notices = _resumed_options(options, resume, persisted, goal)
    run: Mapping[str, Any] = persisted.run if persisted is not None else {}
    environ = os.environ if env is None else env
    setup = _agent_setup(options, goal, done_marker, resume, run, environ)
    policy, profile_name = _policy_and_profile(options, setup.spec)
    taken = taken_stopped = None
    if persisted is not None:
        state, played = persisted.state, _int(run.get("played")) or 0
    else:
        state, taken, taken_stopped = _new_session(memory, exists, setup, profile_name, now)
        played = 0
    record = _record(options, setup, profile_name)
    if max_steps is None and setup.openai is not None:
        max_steps = OPENAI_MAX_STEPS
    backend, mem0 = _memory_backend(memory_backend, environ)
    return RunPlan(
        setup.spec,
        setup.shown,
        policy,
        profile_name,
        state,
        record,
        persisted is not None,
        played,
        not exists,
        taken,
        taken_stopped,
        agent=setup.agent,
        openai=setup.openai,
        max_steps=max_steps,
        openai_from=setup.openai_from,
        notices=(*notices, *setup.ignored),
        memory_backend=backend,
        mem0=mem0,
        decided=run.get("decided") is True,
    )


def _same_scenario(session: str, run: Mapping[str, Any], spec: ScenarioFile, shown: str) -> None:
    """Refuse to resume ``session`` on a scenario that changed since it started: the resume
    would skip the steps played of another script."""
    from clm_policy.loop.scenario import scenario_digest

    recorded = text_or_none(run.get("scenario_digest"))
    if recorded is None or scenario_digest(spec) == recorded:
        return
    raise InputError(
        f"the scenario {shown} changed since session '{session}' started: a resume plays "
        "on from where the session stopped in the scenario it started with; put the file back, "
        "or give --scenario FILE to play the changed one on from there"
    )


@dataclass(frozen=True)
class GoingOn:
    """How a persisted session can go on (:func:`going_on`)."""

    resume: tuple[str, ...] | None
    """The options ``run --resume ID`` needs besides (``()``, ``("--agent", "openai")``);
    None when it refuses the session."""
    refusal: str | None = None


def going_on(memory: str, session: str, env: Mapping[str, str] | None = None) -> GoingOn:
    """Whether ``clm-policy run --resume session`` would go on, asked with the command's own
    checks (:func:`plan_run`, nothing written), so a command suggested from this never fails
    for a reason known now."""
    refusal = None
    for agent in (None, "openai"):
        try:
            plan_run(memory, resume=session, agent=agent, env=env)
        except ClmError as exc:
            refusal = refusal or exc.message
            continue
        return GoingOn(() if agent is None else ("--agent", agent))
    return GoingOn(None, refusal)


def _memory_backend(name: str | None, env: Mapping[str, str]) -> tuple[str, Mem0Settings | None]:
    from clm_policy.memory.backends import FILE, check_backend, needs_mem0
    from clm_policy.memory.mem0settings import Mem0Settings
    from clm_policy.memory.mem0store import Mem0Error, available

    backend = check_backend(name or FILE)
    if not needs_mem0(backend):
        return backend, None
    if not available():
        raise Mem0Error(f"--memory-backend {backend} needs Mem0: pip install 'clm-policy[mem0]'")
    return backend, Mem0Settings.from_env(env)


@dataclass(frozen=True)
class RunDone:
    """How a run ended: the loop's result, the decision awaiting a person, the agent, and
    what the memory backend could not do (recorded, never raised)."""

    result: LoopResult
    pending: Decision | None
    agent: SimulatedAgent | OpenAIChatAgent
    failures: tuple[BackendFailure, ...] = ()


def execute(
    plan: RunPlan,
    memory: str,
    *,
    listener: Listener | None = None,
    confirmer: Confirmer | None = None,
) -> RunDone:
    """Carry ``plan`` out: create the memory repository if it is new, then drive the agent.

    Ctrl-C is held from the repository's creation to the new session's first commit, so an
    interrupt leaves nothing or a session that resumes, never files nobody committed. Later,
    an interrupt commits the session as ``interrupted`` and raises :class:`Interrupted`
    saying how to resume; an :class:`AgentError` is raised again, of the same type, with the
    same news."""
    from contextlib import ExitStack

    from clm_policy.base.interrupts import uninterrupted
    from clm_policy.loop.control import OuterControlLoop
    from clm_policy.loop.monitor import MetricsMonitor
    from clm_policy.memory.backends import open_store
    from clm_policy.memory.git.write import MemoryRepo
    from clm_policy.memory.init import init_memory

    loop: OuterControlLoop | None = None
    with ExitStack() as stack:
        try:
            with uninterrupted():  # from the repository's creation to the session's start
                if plan.create_memory:
                    init_memory(memory)
                agent = plan.make_agent()
                repo = stack.enter_context(MemoryRepo(memory))
                store = open_store(plan.memory_backend, repo, settings=plan.mem0)
                stack.callback(store.close)
                loop = OuterControlLoop(
                    agent,
                    plan.policy,
                    plan.state,
                    repo,
                    profile=plan.profile,
                    continue_after_handoff=bool(plan.record["continue_after_handoff"]),
                    max_steps=plan.max_steps,
                    monitor=MetricsMonitor(plan.system_prompt_tokens),
                    listener=listener,
                    confirmer=confirmer,
                    resumed=plan.resumed,
                    decide_first=plan.resumed and not plan.decided,
                    record=plan.record,
                    memory=store,
                )
                loop.begin()
            result = loop.run()
        except KeyboardInterrupt:
            if loop is None or not loop.on_record:
                raise  # nothing was written (or the first commit failed, and says so)
            with uninterrupted():
                loop.interrupted()
            raise Interrupted(_saved(loop, "interrupted", memory, plan)) from None
        except OutputClosed as exc:
            if loop is None:
                raise
            raise OutputClosed(
                exc.message, left=_saved(loop, exc.stop_reason, memory, plan)
            ) from None
        except AgentError as exc:
            if loop is None:
                raise
            raise type(exc)(
                f"{exc.message}; {_saved(loop, exc.stop_reason, memory, plan)}"
            ) from None
    return RunDone(result, loop.pending, agent, tuple(store.failures))


def _saved(loop: OuterControlLoop, stopped: str, memory: str, plan: RunPlan) -> str:
    """Where a run that stopped early left its session, and the command that goes on."""
    state = loop.state
    if loop.handed_off:
        return (
            f"session {state.session_id} handed off at step {state.step_index} (committed); "
            "its handoff is where the task goes on"
        )
    return (
        f"session {state.session_id} is saved at step {state.step_index} (stopped: "
        f"{stopped}); to go on: clm-policy run --memory {memory} --resume {state.session_id}"
        + (" --agent openai" if plan.openai is not None else "")
    )


@dataclass(frozen=True)
class _Options:
    """A run's options as the command line gives them (for a resume, completed from
    ``run.json``)."""

    agent: str | None
    scenario: str | None
    policy_ref: str | None
    profile: str | None
    soft_compact: int | None
    hard_handoff: int | None
    continue_after_handoff: bool | None
    scenario_recorded: bool = False  # taken from the resumed session's run.json


def _resumed_options(
    options: _Options, session: str, persisted: PersistedSession, goal: str | None
) -> tuple[_Options, list[str]]:
    """``options`` completed from ``run.json`` where the command line says nothing (never the
    agent, the endpoint or the model), and what the resume ignored."""
    run = persisted.run
    agent, notices = _resumed_agent(session, options.agent, run, options.scenario)
    if goal is not None:
        raise InputError(f"--goal: session '{session}' keeps the goal it was started with")
    scenario = options.scenario or (
        text_or_none(run.get("scenario")) if agent == "simulated" else None
    )
    if scenario is None and agent == "simulated":
        raise InputError(f"session '{session}' was not made by `clm-policy run`: give --scenario")
    soft, hard, go_on = options.soft_compact, options.hard_handoff, options.continue_after_handoff
    completed = _Options(
        agent=agent,
        scenario=scenario,
        policy_ref=options.policy_ref or text_or_none(run.get("policy")),
        profile=options.profile or text_or_none(run.get("profile")) or persisted.state.profile,
        soft_compact=soft if soft is not None else _int(run.get("soft_compact")),
        hard_handoff=hard if hard is not None else _int(run.get("hard_handoff")),
        continue_after_handoff=bool(run.get("continue_after_handoff")) if go_on is None else go_on,
        scenario_recorded=options.scenario is None and scenario is not None,
    )
    return completed, notices


@dataclass(frozen=True)
class _AgentSetup:
    """What a run's agent works from."""

    agent: str
    spec: ScenarioFile | None = None
    shown: str | None = None
    openai: OpenAIConfig | None = None
    openai_from: tuple[str, str] | None = None
    goal: str | None = None  # None for a resumed session: it keeps its own
    ignored: tuple[str, ...] = ()


def _agent_setup(
    options: _Options,
    goal: str | None,
    done_marker: str | None,
    session: str | None,
    run: Mapping[str, Any],
    environ: Mapping[str, str],
) -> _AgentSetup:
    """The simulated agent's scenario, or the openai agent's endpoint, model and goal;
    ``session``: the resumed session (None: a new one), ``run`` its ``run.json``."""
    from clm_policy.loop.scenario import load_scenario

    agent = options.agent or "simulated"
    if agent == "simulated":
        for name, value in (("--goal", goal), ("--done-marker", done_marker)):
            if value is not None:
                raise InputError(
                    f"{name} is for --agent openai (the simulated agent plays a scenario)"
                )
        try:
            spec, shown = load_scenario(options.scenario or "demo")
        except InputError as exc:
            if options.scenario_recorded:
                exc.message += f" (the scenario session '{session}' started with; give --scenario)"
            raise
        if options.scenario_recorded:
            _same_scenario(str(session), run, spec, shown)
        return _AgentSetup(agent, spec, shown)
    if agent != "openai":
        raise InputError(f"--agent {quote(agent)}: choose one of {', '.join(AGENTS)}")
    if options.scenario is not None:
        raise InputError("--scenario is for the simulated agent; --agent openai works on --goal")
    if session is None:  # a new session's goal, checked
        if goal is None:
            raise InputError("--agent openai needs --goal TEXT: what the model is to work on")
        goal = goal.strip()
        if not goal:
            raise InputError("--goal is empty")
        if len(goal) > MAX_GOAL:
            raise InputError(f"--goal is longer than {MAX_GOAL:,} characters")
    elif not environ.get(ENV_MODEL):
        ran = text_or_none(run.get("model"))
        why = "a resumed session takes the model from your configuration, never from run.json"
        raise InputError(
            f"no model: set {ENV_MODEL}"
            + (f" (the session ran with {quote(ran)}; {why})" if ran else "")
        )
    # the endpoint and the model are the user's alone (run.json is shared data): a recorded one
    # that differs is named, never used
    config = OpenAIConfig.from_env(
        environ, done_marker=done_marker or text_or_none(run.get("done_marker"))
    )
    ignored = _ignored_endpoint(session, run, config) if session is not None else []
    openai_from = (ENV_BASE_URL if environ.get(ENV_BASE_URL) else "default", ENV_MODEL)
    return _AgentSetup(
        agent, openai=config, openai_from=openai_from, goal=goal, ignored=tuple(ignored)
    )


def _policy_and_profile(options: _Options, spec: ScenarioFile | None) -> tuple[Policy, str]:
    """The run's policy with the overrides applied, and its profile: the one asked for, else
    the scenario's, else the policy's default."""
    from clm_policy.policy.cache import load_policy_cached

    policy = load_policy_cached(options.policy_ref or "default")
    profile = options.profile or (spec.profile if spec else None) or policy.default_profile
    try:
        policy.profile(profile)
    except StateError as exc:
        raise InputError(f"--profile: {exc.message}") from None
    return with_overrides(policy, profile, options.soft_compact, options.hard_handoff), profile


def _new_session(
    memory: str, exists: bool, setup: _AgentSetup, profile: str, now: datetime | None
) -> tuple[SessionState, str | None, str | None]:
    """A new session's first state, under an id no session has; and the id it wanted when
    taken, and how that session stopped."""
    spec = setup.spec
    wanted = spec.session if spec else f"openai-{(now or datetime.now(UTC)):%Y%m%d}"
    wanted = check_session(wanted)  # valid, and no secret
    session_id, stopped = _free_session_id(memory, wanted) if exists else (wanted, None)
    taken = wanted if session_id != wanted else None
    if spec is not None:
        return first_state(spec, session_id, profile), taken, stopped
    config = setup.openai  # the openai agent's: its goal, its model, its system prompt
    assert config is not None
    prompt = estimate_tokens(system_prompt(config.done_marker))
    tokens = TokenSnapshot(model=config.model, context_tokens=prompt, estimated=True)
    state = SessionState(
        session_id=session_id, goal=setup.goal or "", profile=profile, tokens=tokens
    )
    return state, taken, stopped


def _record(options: _Options, setup: _AgentSetup, profile: str) -> dict[str, Any]:
    """``run.json`` as the run starts: what a resume plays again, and the openai agent's
    endpoint and model (named only: a resume takes them from the user's configuration)."""
    config = setup.openai
    record: dict[str, Any]
    if config is not None:
        record = {"agent": setup.agent, "model": config.model, "base_url": config.base_url}
        record["done_marker"] = config.done_marker
    else:  # files as absolute paths: a resume may run from another folder
        from clm_policy.loop.scenario import scenario_digest

        record = {"scenario": _where(options.scenario or "demo")}
        if setup.spec is not None:
            record["scenario_digest"] = scenario_digest(setup.spec)
    continue_after_handoff = options.continue_after_handoff
    if continue_after_handoff is None and setup.spec is not None:
        continue_after_handoff = setup.spec.continue_after_handoff
    record |= {
        "policy": _where(options.policy_ref or "default"),
        "profile": profile,
        "soft_compact": options.soft_compact,
        "hard_handoff": options.hard_handoff,
        "continue_after_handoff": bool(continue_after_handoff),
    }
    return record


def _resumed_agent(
    session: str, asked: str | None, run: Mapping[str, Any], scenario: str | None
) -> tuple[str, list[str]]:
    """The agent a resume drives, and what it ignored: the one the command line names, never
    the one ``run.json`` names — the memory repository is shared, and an agent named there
    would send the user's key to an endpoint named there."""
    where = f"sessions/{session}/run.json"
    recorded = text_or_none(run.get("agent")) or "simulated"
    if asked == "openai" and recorded != "openai":
        raise InputError(
            f"session '{session}' was run with the simulated agent (its scenario is in "
            f"{where}): --agent openai cannot resume it"
        )
    if asked is not None and asked != "simulated":
        return asked, []  # openai, or another one: refused with the choices further on
    if recorded == "simulated":
        return "simulated", []
    if scenario is None and text_or_none(run.get("scenario")) is None:
        if recorded == "openai":
            raise InputError(
                f"session '{session}' was run with --agent openai: resume it with --agent "
                f"openai (your endpoint and model: {ENV_BASE_URL}, {ENV_MODEL}; never "
                "run.json's)"
            )
        return "simulated", []  # no scenario: refused further on
    named = [
        f"{what} {quote(value)}"
        for what, value in (("endpoint", run.get("base_url")), ("model", run.get("model")))
        if text_or_none(value)
    ]
    return "simulated", [
        f"{where} names agent {quote(recorded)}"
        + (f" ({', '.join(named)})" if named else "")
        + ": ignored; the session resumes with the simulated agent (the agent, endpoint and "
        f"model are yours to choose: --agent, {ENV_BASE_URL}, {ENV_MODEL})"
    ]


def _ignored_endpoint(session: str, run: Mapping[str, Any], config: OpenAIConfig) -> list[str]:
    """What a resumed openai session's run.json names other than the user's configuration."""
    named = []
    base_url = text_or_none(run.get("base_url"))
    if base_url is not None and base_url.rstrip("/") != config.base_url:
        named.append(f"endpoint {quote(base_url)}")
    model = text_or_none(run.get("model"))
    if model is not None and model != config.model:
        named.append(f"model {quote(model)}")
    if not named:
        return []
    return [
        f"sessions/{session}/run.json names {' and '.join(named)}: ignored (a resumed session "
        "uses your configuration)"
    ]


def first_state(spec: ScenarioFile, session_id: str, profile: str) -> SessionState:
    """The state a scenario starts from."""
    return SessionState(
        session_id=session_id,
        goal=spec.goal,
        profile=profile,
        constraints=list(spec.constraints),
        source_of_truth=list(spec.source_of_truth),
        memory_keys=list(spec.memory_keys),
        tokens=TokenSnapshot(
            context_window=spec.context_window,
            model=spec.model,
            context_tokens=spec.system_prompt_tokens,
        ),
    )


def with_overrides(policy: Policy, name: str, soft: int | None, hard: int | None) -> Policy:
    """``policy`` with profile ``name``'s soft and hard limits replaced (in tokens)."""
    from clm_policy.policy.engine import Threshold

    if soft is None and hard is None:
        return policy
    prof = policy.profile(name)
    soft_t = Threshold(tokens=soft) if soft is not None else prof.soft_compact
    hard_t = Threshold(tokens=hard) if hard is not None else prof.hard_handoff
    window = prof.context_window
    if (soft_t.resolve(window) or 0) >= (hard_t.resolve(window) or 1 << 62):
        raise InputError(f"--soft-compact ({soft_t}) must be below --hard-handoff ({hard_t})")
    changed = prof.replace(soft_compact=soft_t, hard_handoff=hard_t)
    return policy.replace(profiles={**policy.profiles, name: changed})


def _persisted(memory: str, session_id: str) -> PersistedSession:
    """The session ``--resume`` goes on with; refused when it ended, was handed off, or its
    state has edits not committed."""
    from clm_policy.memory.git.write import MemoryRepo
    from clm_policy.memory.layout import session_dir
    from clm_policy.memory.sessions import load_session

    state_file = f"{session_dir(session_id)}/state.json"
    with MemoryRepo(memory) as repo:
        persisted = load_session(repo, session_id)
        ended = why_ended(repo, session_id, persisted)
        if ended is not None:
            raise InputError(f"{ended}; nothing to resume")
        edited = repo.run("diff", "--quiet", "HEAD", "--", state_file)[0] != 0
    if edited:
        raise InputError(
            f"{state_file} has changes that are not committed (edited by hand?): the resume goes "
            f"on from the committed state and would overwrite them; commit them (git -C {memory} "
            f"commit -- {state_file}) or drop them (git -C {memory} checkout -- {state_file}), "
            "then resume"
        )
    return persisted


def _free_session_id(memory: str, wanted: str) -> tuple[str, str | None]:
    """``wanted``, or ``wanted.2``, ``wanted.3``, ...: the first id no session has; and how a
    session with ``wanted`` stopped for good (None: it can be resumed)."""

    from clm_policy.memory.git.write import MemoryRepo
    from clm_policy.memory.sessions import load_session, session_ids

    with MemoryRepo(memory) as repo:
        known = set(session_ids(repo))
        candidate, number = wanted, 1
        while candidate in known:
            number += 1
            candidate = check_session(f"{wanted[:120]}.{number}")
        if candidate == wanted:
            return wanted, None
        try:
            stopped = load_session(repo, wanted).stopped
        except InputError:
            return candidate, "unreadable"
    return candidate, stopped if stopped in ENDED else None


def _where(ref: str) -> str:
    """A file named by ``ref`` as an absolute path; a bundled name as it is."""
    path = Path(ref)
    return str(path.resolve()) if path.is_file() else ref


def _int(value: object) -> int | None:
    """A count or token figure recorded in run.json (untrusted: anything else is absent)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**12:
        return value
    return None
