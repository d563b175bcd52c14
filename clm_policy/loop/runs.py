"""What a ``clm-policy run`` will do, decided and checked before anything is written.

:func:`plan_run` reads the scenario, the policy, the profile and the threshold overrides (or,
for ``--resume``, what the session's ``run.json`` recorded), validates all of it and picks the
session id — a new session when the scenario's id is already taken in the repository, so a
second run never replays into a finished one. Only then does the caller create the memory
repository and start the loop: bad input changes nothing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clm_policy.errors import InputError, StateError
from clm_policy.memory.layout import check_session
from clm_policy.models.scenario import ScenarioFile
from clm_policy.models.state import SessionState, TokenSnapshot
from clm_policy.policy.engine import Policy

ENDED = ("completed", "failed", "handoff")
"""How a session stops for good; any other stop (interrupted, max_steps, ...) can resume."""


@dataclass(frozen=True)
class RunPlan:
    spec: ScenarioFile
    scenario_shown: str
    policy: Policy  # with the threshold overrides applied
    profile: str
    state: SessionState
    record: dict[str, Any]
    """``run.json`` as the run starts: how to resume it."""
    resumed: bool
    played: int
    create_memory: bool
    taken: str | None = None
    """The scenario's session id when another session already had it."""
    taken_stopped: str | None = None
    """How that session stopped (None: it can be resumed)."""


def plan_run(
    memory: str,
    *,
    scenario: str | None,
    policy_ref: str | None,
    profile: str | None,
    resume: str | None,
    soft_compact: int | None,
    hard_handoff: int | None,
    continue_after_handoff: bool,
) -> RunPlan:
    """Everything a run needs, checked; raises :class:`InputError` and writes nothing."""
    from clm_policy.loop.scenario import load_scenario
    from clm_policy.memory.init import check_new, is_memory_repo
    from clm_policy.policy.cache import load_policy_cached

    exists = is_memory_repo(memory)
    if not exists:
        if resume is not None:
            raise InputError(f"{memory}: no memory repository to resume from")
        check_new(memory)
    persisted = None
    if resume is not None:
        persisted = _persisted(memory, resume)
        run = persisted.run
        scenario = scenario or _str(run.get("scenario"))
        policy_ref = policy_ref or _str(run.get("policy"))
        profile = profile or _str(run.get("profile")) or persisted.state.profile
        soft_compact = soft_compact if soft_compact is not None else _int(run.get("soft_compact"))
        hard_handoff = hard_handoff if hard_handoff is not None else _int(run.get("hard_handoff"))
        continue_after_handoff = continue_after_handoff or bool(run.get("continue_after_handoff"))
        if scenario is None:
            raise InputError(
                f"session '{resume}' was not made by `clm-policy run`: give --scenario"
            )
    scenario_ref = scenario or "demo"
    spec, shown = load_scenario(scenario_ref)
    policy = load_policy_cached(policy_ref or "default")
    profile_name = profile or spec.profile or policy.default_profile
    try:
        policy.profile(profile_name)
    except StateError as exc:
        raise InputError(f"--profile: {exc.message}") from None
    policy = with_overrides(policy, profile_name, soft_compact, hard_handoff)
    taken = taken_stopped = None
    if persisted is not None:
        state, played = persisted.state, _int(persisted.run.get("played")) or 0
    else:
        session_id = check_session(spec.session)  # valid, and no secret
        if exists:
            free = _free_session_id(memory, session_id)
            if free != session_id:
                taken, taken_stopped, session_id = session_id, _stopped(memory, session_id), free
        state, played = first_state(spec, session_id, profile_name), 0
    record = {  # files as absolute paths: a resume may run from another folder
        "scenario": _where(scenario_ref),
        "policy": _where(policy_ref or "default"),
        "profile": profile_name,
        "soft_compact": soft_compact,
        "hard_handoff": hard_handoff,
        "continue_after_handoff": continue_after_handoff,
    }
    return RunPlan(
        spec,
        shown,
        policy,
        profile_name,
        state,
        record,
        persisted is not None,
        played,
        not exists,
        taken,
        taken_stopped,
    )


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
    changed = dataclasses.replace(prof, soft_compact=soft_t, hard_handoff=hard_t)
    return dataclasses.replace(policy, profiles={**policy.profiles, name: changed})


def _persisted(memory: str, session_id: str) -> Any:
    from clm_policy.memory.gitwrite import MemoryRepo
    from clm_policy.memory.sessions import load_session

    with MemoryRepo(memory) as repo:
        persisted = load_session(repo, session_id)
    if persisted.stopped in ENDED:
        raise InputError(f"session '{session_id}' ended ({persisted.stopped}); nothing to resume")
    return persisted


def _stopped(memory: str | Path, session_id: str) -> str | None:
    """How a persisted session stopped for good (None when it can still be resumed)."""
    from clm_policy.memory.gitwrite import MemoryRepo
    from clm_policy.memory.sessions import load_session

    try:
        with MemoryRepo(memory) as repo:
            stopped = load_session(repo, session_id).stopped
    except InputError:
        return "unreadable"
    return stopped if stopped in ENDED else None


def _free_session_id(memory: str | Path, wanted: str) -> str:
    """``wanted``, or ``wanted.2``, ``wanted.3``, ... : the first id no session has yet."""
    from clm_policy.memory.gitwrite import MemoryRepo
    from clm_policy.memory.sessions import session_ids

    with MemoryRepo(memory) as repo:
        known = set(session_ids(repo))
    candidate, number = wanted, 1
    while candidate in known:
        number += 1
        candidate = check_session(f"{wanted[:120]}.{number}")
    return candidate


def _where(ref: str) -> str:
    """A file named by ``ref`` as an absolute path; a bundled name as it is."""
    path = Path(ref)
    return str(path.resolve()) if path.is_file() else ref


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: object) -> int | None:
    """A count or token figure recorded in run.json (untrusted: anything else is absent)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**12:
        return value
    return None
