"""``clm-policy run``: the whole loop — a simulated agent, the policy, memory in git."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import click

TIMELINE_ALL = 60  # print every step up to this many; beyond, only compactions and handoffs
EXIT_NEEDS_CONFIRMATION = 4


@click.command()
@click.option(
    "--scenario",
    metavar="NAME|FILE",
    help="A bundled scenario (demo, continue_only, compaction, handoff) or a file "
    "[default: demo; when resuming: the session's].",
)
@click.option(
    "--policy",
    "-p",
    "policy_ref",
    metavar="PATH|NAME",
    help="Policy file or bundled name [default: default; when resuming: the session's].",
)
@click.option("--profile", metavar="NAME", help="Task profile (default: the scenario's).")
@click.option(
    "--memory",
    "-m",
    default="clm-memory",
    show_default=True,
    metavar="DIR",
    help="Memory repository; created if absent.",
)
@click.option("--resume", metavar="SESSION", help="Continue a session this repository persisted.")
@click.option("--max-steps", type=click.IntRange(min=1), metavar="N", help="Stop after N steps.")
@click.option(
    "--soft-compact",
    type=click.IntRange(min=0),
    metavar="TOKENS",
    help="Override the profile's soft limit.",
)
@click.option(
    "--hard-handoff",
    type=click.IntRange(min=1),
    metavar="TOKENS",
    help="Override the profile's hard limit.",
)
@click.option(
    "--continue-after-handoff",
    is_flag=True,
    help="After a handoff, go on in a new session seeded from the manifest.",
)
@click.option(
    "--yes",
    "-y",
    "assume_yes",
    is_flag=True,
    help="Confirm every decision the policy wants confirmed (see `confirm:`).",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def run(
    scenario: str | None,
    policy_ref: str | None,
    profile: str | None,
    memory: str,
    resume: str | None,
    max_steps: int | None,
    soft_compact: int | None,
    hard_handoff: int | None,
    continue_after_handoff: bool,
    assume_yes: bool,
    fmt: str,
) -> int:
    """Play a scenario with the simulated agent under a policy, committing every compaction
    and handoff to the memory repository.

    With no options: the bundled demo under the default policy into ./clm-memory — two
    compactions and a handoff — then a timeline and where to look next.

    A policy may ask for confirmation (`confirm: [handoff]`): at a terminal the run asks;
    otherwise, unless --yes, it stops with exit code 4, prints the pending decision and
    persists the session, so an orchestrator can ask a person and `--resume` it.

    \b
    Examples:
      clm-policy run
      clm-policy run --scenario compaction --memory /tmp/mem --format json
      clm-policy run --scenario my-scenario.yaml --continue-after-handoff
      clm-policy run --resume demo --max-steps 10

    Exit codes: 0 done, 2 bad input (a scenario at file:line:col, an unknown session),
    4 a decision awaits confirmation.
    """
    from clm_policy.errors import InputError
    from clm_policy.loop.agent import SimulatedAgent
    from clm_policy.loop.control import OuterControlLoop
    from clm_policy.loop.monitor import MetricsMonitor
    from clm_policy.loop.scenario import load_scenario
    from clm_policy.memory.gitwrite import MemoryRepo
    from clm_policy.memory.init import init_memory
    from clm_policy.memory.sessions import load_session
    from clm_policy.models.state import SessionState, TokenSnapshot
    from clm_policy.policy.cache import load_policy_cached

    persisted = None
    if resume is not None:
        with MemoryRepo(memory) as repo:
            persisted = load_session(repo, resume)
        if persisted.stopped in ("completed", "failed", "handoff"):
            raise InputError(f"session '{resume}' ended ({persisted.stopped}); nothing to resume")
        scenario = scenario or persisted.run.get("scenario")
        policy_ref = policy_ref or persisted.run.get("policy")
        profile = profile or persisted.state.profile
        if scenario is None:
            raise InputError(
                f"session '{resume}' was not made by `clm-policy run`: give --scenario"
            )
    scenario_ref = scenario or "demo"
    spec, shown = load_scenario(scenario_ref)
    policy = load_policy_cached(policy_ref or "default")
    profile_name = profile or spec.profile or policy.default_profile
    policy = _with_overrides(policy, profile_name, soft_compact, hard_handoff)
    created = not Path(memory, ".clm-memory").is_file()
    if created:
        init_memory(memory)
    agent = SimulatedAgent(spec)
    if persisted is not None:
        state = persisted.state
        agent.skip(int(persisted.run.get("played") or 0))
    else:
        state = SessionState(
            session_id=spec.session,
            goal=spec.goal,
            profile=profile_name,
            constraints=list(spec.constraints),
            source_of_truth=list(spec.source_of_truth),
            memory_keys=list(spec.memory_keys),
            tokens=TokenSnapshot(
                context_window=spec.context_window,
                model=spec.model,
                context_tokens=spec.system_prompt_tokens,
            ),
        )
    text = fmt == "text"
    if text:
        what = f"resuming session {resume} of" if persisted else "playing"
        where = "a new" if created else "the"
        click.echo(
            f"{what} {shown} under policy {policy.name} (profile {profile_name}) into "
            f"{where} memory repository {memory}"
        )

    def listener(event: str, data: dict[str, Any]) -> None:
        if not text or event == "continue":
            return
        entry = data["entry"]
        commit = f"commit {entry.commit[:12]}" if entry.commit else ""
        click.echo(
            f"  step {entry.step:>4}  {entry.context_tokens:>9,} tokens  "
            f"{event:<9} {entry.rule or '-':<15} {commit}"
        )

    def confirmer(decision: Any, state: SessionState) -> bool | None:
        if assume_yes:
            return True
        if not sys.stdin.isatty() or fmt == "json":
            return None
        question = (
            f"session {state.session_id} step {state.step_index}: {decision.action.value} "
            f"now? ({decision.rationale})"
        )
        return click.confirm(question, default=True)

    record = {
        "scenario": scenario_ref,
        "policy": policy_ref or "default",
        "profile": profile_name,
        "continue_after_handoff": continue_after_handoff,
    }
    with MemoryRepo(memory) as repo:
        loop = OuterControlLoop(
            agent,
            policy,
            state,
            repo,
            profile=profile_name,
            continue_after_handoff=continue_after_handoff,
            max_steps=max_steps,
            monitor=MetricsMonitor(spec.system_prompt_tokens),
            listener=listener,
            confirmer=confirmer,
            decide_first=persisted is not None,
            record=record,
        )
        result = loop.run()
    pending = loop.pending.as_dict() if loop.pending is not None else None
    code = EXIT_NEEDS_CONFIRMATION if pending is not None else 0
    if fmt == "json":
        click.echo(
            json.dumps(
                {
                    "scenario": shown,
                    "policy": policy.name,
                    "profile": profile_name,
                    "memory": memory,
                    "stopped_reason": result.stopped_reason,
                    "steps": result.steps,
                    "sessions": result.sessions,
                    "compact_count": result.compact_count,
                    "handoffs": [
                        {"commit": h.commit, "manifest": h.manifest_path} for h in result.handoffs
                    ],
                    "pending": pending,
                    "timeline": [dataclasses.asdict(e) for e in result.timeline],
                    "final_state": result.final_state.model_dump(mode="json"),
                },
                indent=2,
            )
        )
        return code
    _timeline(result)
    click.echo(
        f"stopped: {result.stopped_reason} after {result.steps} steps; "
        f"{result.compact_count} compaction(s), {len(result.handoffs)} handoff(s), "
        f"sessions {', '.join(result.sessions)}"
    )
    if pending is not None:
        final = result.final_state.session_id
        click.echo(f"pending: {pending['action']} ({pending['trigger']}): {pending['rationale']}")
        click.echo(f"  confirm with: clm-policy run --memory {memory} --resume {final} --yes")
    click.echo("next:")
    click.echo(f"  clm-policy log --memory {memory}                 # why each one happened")
    if result.handoffs:
        click.echo(
            f"  clm-policy show --memory {memory} {result.handoffs[-1].commit[:12]}   # the handoff"
        )
    click.echo(f"  clm-policy status --memory {memory}              # the sessions")
    return code


def _with_overrides(policy: Any, name: str, soft: int | None, hard: int | None) -> Any:
    from clm_policy.errors import InputError
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


def _timeline(result: Any) -> None:
    entries = result.timeline
    shown = (
        entries if len(entries) <= TIMELINE_ALL else [e for e in entries if e.action != "continue"]
    )
    click.echo("")
    click.echo("timeline" + ("" if shown is entries else " (compactions and handoffs)") + ":")
    click.echo(f"  {'session':<12} {'step':>5} {'context':>10}  {'decision':<9} rule")
    for e in shown:
        click.echo(
            f"  {e.session:<12} {e.step:>5} {e.context_tokens:>10,}  {e.action:<9} {e.rule or '-'}"
        )
    click.echo("")
