"""``clm-policy run``: the whole loop — a simulated agent, the policy, memory in git."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import click

TIMELINE_ALL = 60  # print every step up to this many; beyond, only compactions and handoffs


@click.command()
@click.option(
    "--scenario",
    default="demo",
    show_default=True,
    metavar="NAME|FILE",
    help="A bundled scenario (demo, continue_only, compaction, handoff) or a file.",
)
@click.option(
    "--policy", "-p", "policy_ref", default="default", show_default=True, metavar="PATH|NAME"
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
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def run(
    scenario: str,
    policy_ref: str,
    profile: str | None,
    memory: str,
    max_steps: int | None,
    soft_compact: int | None,
    hard_handoff: int | None,
    continue_after_handoff: bool,
    fmt: str,
) -> int:
    """Play a scenario with the simulated agent under a policy, committing every compaction
    and handoff to the memory repository.

    With no options: the bundled demo under the default policy into ./clm-memory — two
    compactions and a handoff — then a timeline and where to look next.

    \b
    Examples:
      clm-policy run
      clm-policy run --scenario compaction --memory /tmp/mem --format json
      clm-policy run --scenario my-scenario.yaml --continue-after-handoff
    """
    from clm_policy.errors import InputError
    from clm_policy.loop.agent import SimulatedAgent
    from clm_policy.loop.control import OuterControlLoop
    from clm_policy.loop.monitor import MetricsMonitor
    from clm_policy.loop.scenario import load_scenario
    from clm_policy.memory.gitwrite import MemoryRepo
    from clm_policy.memory.init import init_memory
    from clm_policy.models.state import SessionState, TokenSnapshot
    from clm_policy.policy.cache import load_policy_cached
    from clm_policy.policy.engine import Threshold

    spec, shown = load_scenario(scenario)
    policy = load_policy_cached(policy_ref)
    profile_name = profile or spec.profile or policy.default_profile
    prof = policy.profile(profile_name)
    if soft_compact is not None or hard_handoff is not None:
        soft = Threshold(tokens=soft_compact) if soft_compact is not None else prof.soft_compact
        hard = Threshold(tokens=hard_handoff) if hard_handoff is not None else prof.hard_handoff
        window = prof.context_window
        if (soft.resolve(window) or 0) >= (hard.resolve(window) or 1 << 62):
            raise InputError(f"--soft-compact ({soft}) must be below --hard-handoff ({hard})")
        policy = dataclasses.replace(
            policy,
            profiles={
                **policy.profiles,
                profile_name: dataclasses.replace(prof, soft_compact=soft, hard_handoff=hard),
            },
        )
    created = not Path(memory, ".clm-memory").is_file()
    if created:
        init_memory(memory)
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
        where = "a new" if created else "the"
        click.echo(
            f"playing {shown} under policy {policy.name} (profile {profile_name}) into "
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

    with MemoryRepo(memory) as repo:
        loop = OuterControlLoop(
            SimulatedAgent(spec),
            policy,
            state,
            repo,
            profile=profile_name,
            continue_after_handoff=continue_after_handoff,
            max_steps=max_steps,
            monitor=MetricsMonitor(spec.system_prompt_tokens),
            listener=listener,
        )
        result = loop.run()
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
                        {
                            "commit": h.commit,
                            "manifest": h.manifest_path,
                            "session": h.manifest.goal and h.handoff_path.split("/")[1],
                        }
                        for h in result.handoffs
                    ],
                    "timeline": [dataclasses.asdict(e) for e in result.timeline],
                    "final_state": result.final_state.model_dump(mode="json"),
                },
                indent=2,
            )
        )
        return 0
    _timeline(result)
    click.echo(
        f"stopped: {result.stopped_reason} after {result.steps} steps; "
        f"{result.compact_count} compaction(s), {len(result.handoffs)} handoff(s), "
        f"sessions {', '.join(result.sessions)}"
    )
    click.echo("next:")
    click.echo(f"  clm-policy log --memory {memory}                 # why each one happened")
    if result.handoffs:
        click.echo(
            f"  clm-policy show --memory {memory} {result.handoffs[-1].commit[:12]}   # the handoff"
        )
    click.echo(f"  git -C {memory} log --stat                       # the audit trail in git")
    return 0


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
