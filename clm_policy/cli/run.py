"""``clm-policy run``: the whole loop — an agent (simulated, or a model behind an
OpenAI-compatible endpoint), the policy, memory in git."""

from __future__ import annotations

import dataclasses
import os
import sys
from typing import TYPE_CHECKING, Any

import click

from clm_policy.base.errors import Interrupted, plural, shorten
from clm_policy.base.termsafe import echo, echo_json, terminal_safe
from clm_policy.cli.errors import interrupt
from clm_policy.cli.options import (
    count_option,
    format_option,
    memory_option,
    policy_option,
    profile_option,
)

if TYPE_CHECKING:
    from clm_policy.loop.control import LoopResult
    from clm_policy.loop.runs import RunDone, RunPlan
    from clm_policy.models.decision import Decision
    from clm_policy.models.state import SessionState

TIMELINE_ALL = 60  # print every step up to this many; beyond, only compactions and handoffs
EXIT_NEEDS_CONFIRMATION = 4
LAST_REPLY = 300  # characters of the openai agent's last answer shown after the timeline


@click.command()
@click.option(
    "--agent",
    "agent_kind",
    type=click.Choice(["simulated", "openai"]),
    help="simulated: play a scenario (the bundled demo); openai: work on --goal with the model "
    "of an OpenAI-compatible endpoint (CLM_POLICY_OPENAI_MODEL, OPENAI_API_KEY, "
    "CLM_POLICY_OPENAI_BASE_URL) [default: simulated; to resume an openai session, give it "
    "again: the endpoint and model are always yours, never the session's run.json].",
)
@click.option(
    "--goal", metavar="TEXT", help="What the openai agent works on (required with --agent openai)."
)
@click.option(
    "--done-marker",
    metavar="TEXT",
    help="The line the model answers with when the goal is achieved [default: TASK COMPLETE].",
)
@click.option(
    "--scenario",
    metavar="NAME|FILE",
    help="A bundled scenario (demo, continue_only, compaction, handoff) or a file "
    "[default: demo; when resuming: the session's].",
)
@policy_option(
    "Policy file or bundled name [default: default; when resuming: the session's].",
    configured=False,
)
@profile_option("Task profile (default: the scenario's).", configured=False)
@memory_option("Memory repository; created if absent.", configured=False, default="clm-memory")
@click.option(
    "--memory-backend",
    type=click.Choice(["file", "mem0", "hybrid"]),
    envvar="CLM_POLICY_MEMORY_BACKEND",
    show_envvar=True,
    callback=lambda _ctx, _param, value: _memory_backend(value),
    help="Where memory goes besides the audit trail: file (the git repository), mem0 "
    "(pip install 'clm-policy[mem0]'; its model: CLM_POLICY_MEM0_BASE_URL, ...) or hybrid "
    "(both; git first) [default: the project's memory.backend, else file].",
)
@click.option("--resume", metavar="SESSION", help="Continue a session this repository persisted.")
@count_option(
    "--max-steps", low=1, help="Stop after N steps [default: no limit; 20 with --agent openai]."
)
@count_option("--soft-compact", metavar="TOKENS", help="Override the profile's soft limit.")
@count_option("--hard-handoff", low=1, metavar="TOKENS", help="Override the profile's hard limit.")
@click.option(
    "--continue-after-handoff/--stop-at-handoff",
    default=None,
    help="After a handoff, go on in a new session seeded from the manifest, or stop there "
    "[default: the scenario's continue_after_handoff (the demo goes on), else stop; when "
    "resuming: the session's].",
)
@click.option(
    "--yes",
    "-y",
    "assume_yes",
    is_flag=True,
    help="Confirm every decision the policy wants confirmed (see `confirm:`).",
)
@format_option("text", "json")
def run(
    agent_kind: str | None,
    goal: str | None,
    done_marker: str | None,
    scenario: str | None,
    policy_ref: str | None,
    profile: str | None,
    memory: str,
    memory_backend: str,
    resume: str | None,
    max_steps: int | None,
    soft_compact: int | None,
    hard_handoff: int | None,
    continue_after_handoff: bool | None,
    assume_yes: bool,
    fmt: str,
) -> int:
    """Run an agent under a policy, committing every compaction and handoff to the memory
    repository.

    With no options: the simulated agent plays the bundled demo under the default policy into
    ./clm-memory — two compactions and a handoff at the end of a phase, then the next phase
    in a session seeded from the handoff, where the agent reports its answers degrading and
    the policy compacts, until the task completes — then a timeline and where to look next.

    With --agent openai --goal TEXT, a model behind any OpenAI-compatible chat-completions
    endpoint works on the goal: CLM_POLICY_OPENAI_MODEL names the model, OPENAI_API_KEY (or
    CLM_POLICY_OPENAI_API_KEY) the key, CLM_POLICY_OPENAI_BASE_URL the endpoint [default:
    https://api.openai.com/v1], CLM_POLICY_OPENAI_TIMEOUT the seconds a request may take
    [120]. The run stops when the model answers with the done marker, or after --max-steps
    (20 unless given). An endpoint that fails ends the run with exit code 2, the session
    saved to resume.

    A policy may ask for confirmation (`confirm: [handoff]`): at a terminal the run asks;
    otherwise, unless --yes, it stops with exit code 4, prints the pending decision and
    persists the session, so an orchestrator can ask a person and `--resume` it.

    \b
    Examples:
      clm-policy run                                 # the demo, into ./clm-memory
      clm-policy run --memory paused --max-steps 10  # stops early; the session is saved
      clm-policy run --memory paused --resume demo   # goes on where it stopped
      clm-policy run --scenario compaction --memory compacted --format json
      clm-policy run --scenario my-scenario.yaml --continue-after-handoff
      clm-policy run --agent openai --goal "Outline a migration plan" --soft-compact 8000

    A run is on record from its first step (sessions/ID/run.json): one interrupted by Ctrl-C
    or a crash resumes with --resume ID, with the scenario, policy, profile and limits it was
    started with. The agent, endpoint and model are never taken from run.json (the memory
    repository is shared): an openai session resumes with --agent openai, against your
    CLM_POLICY_OPENAI_BASE_URL and CLM_POLICY_OPENAI_MODEL. A session id that is taken
    already gets a new one (ID.2, ...).

    Exit codes: 0 done, 2 bad input (a scenario at file:line:col, an unknown session, no
    model or key; nothing is written) or the endpoint failed (the session is saved), 4 a
    decision awaits confirmation, 130 interrupted.
    """
    from clm_policy.loop.runs import plan_run

    plan = plan_run(
        memory,
        scenario=scenario,
        policy_ref=policy_ref,
        profile=profile,
        resume=resume,
        soft_compact=soft_compact,
        hard_handoff=hard_handoff,
        continue_after_handoff=continue_after_handoff,
        agent=agent_kind,
        goal=goal,
        done_marker=done_marker,
        max_steps=max_steps,
        memory_backend=memory_backend,
    )  # everything checked: nothing is written before this line
    _announce(plan, memory, resume, text=fmt == "text")
    return _play(plan, memory, assume_yes=assume_yes, fmt=fmt)


def _play(plan: RunPlan, memory: str, *, assume_yes: bool, fmt: str) -> int:
    """Carry ``plan`` out and report how it ended; Ctrl-C after the session is on record is
    said here, on a line of its own (exit 130)."""
    ctrl_c = _CtrlC()
    try:
        done = _execute(plan, memory, ctrl_c, assume_yes=assume_yes, fmt=fmt)
    except Interrupted as exc:
        return interrupt(["--format", fmt], exc, end_line=ctrl_c.end_line())
    return _report(plan, done, memory, fmt)


class _CtrlC:
    """What Ctrl-C during a run says. A terminal echoes ``^C`` where the cursor is: the
    notice that the step under way finishes first starts a line of its own after it, and the
    closing line (the session saved, how to resume) ends the ``^C`` line itself unless the
    notice did (click, which would end it too, does not see a run's interrupt)."""

    NOTICE = (
        "clm-policy: Ctrl-C: the step under way finishes first, then the session is saved (an "
        "agent's answer may take until its timeout); Ctrl-C again abandons it"
    )

    def __init__(self) -> None:
        self.terminal = os.isatty(2)  # where the terminal echoes ^C, and the lines go
        self.line_open = True  # a ^C no line has followed yet (or none came)

    def heard(self, again: bool) -> None:
        """Ctrl-C during a step: the notice the first time; a later one is echoed after it."""
        if not again:
            echo(("\n" if self.terminal else "") + self.NOTICE, err=True)
        self.line_open = again

    def end_line(self) -> bool:
        """Whether the closing line must end the terminal's ``^C`` line first."""
        return self.terminal and self.line_open


def _memory_backend(flag: str | None) -> str:
    """The flag, $CLM_POLICY_MEMORY_BACKEND, the project's ``memory.backend``, else ``file``."""
    from clm_policy.config.project import setting
    from clm_policy.memory.backends import FILE, check_backend

    chosen = setting("memory.backend", flag)
    return check_backend(chosen, "memory.backend") if chosen else FILE


def _announce(plan: RunPlan, memory: str, resume: str | None, *, text: bool) -> None:
    """What the run ignored (standard error), then, in text, what it is about to play, under
    which policy, into which memory repository — and the session it found taken, if any."""
    policy, state = plan.policy, plan.state
    for notice in plan.notices:
        echo(f"clm-policy: {notice}", err=True)
    if not text:
        return
    verb = "on" if plan.openai is not None else "of"
    what = f"resuming session {resume} {verb}" if plan.resumed else "playing"
    if plan.openai is not None and not plan.resumed:
        what = "working on"
    where = "a new" if plan.create_memory else "the"
    echo(
        f"{what} {plan.shown} under policy {policy.name} (profile {plan.profile}) into "
        f"{where} memory repository {memory}"
    )
    if plan.mem0 is not None:
        echo(f"  memory backend {plan.memory_backend}: Mem0 with {plan.mem0.shown}")
    if plan.resumed and plan.spec is not None:  # run.json's, unless given anew
        echo(f"  policy {policy.path}, scenario {plan.record['scenario']}")
    elif plan.openai is not None and plan.resumed and plan.openai_from is not None:
        url_from, model_from = plan.openai_from
        echo(
            f"  endpoint {plan.openai.base_url} ({url_from}), model {plan.openai.model} "
            f"({model_from})"
        )
    elif plan.openai is not None:
        echo(
            f"  session {state.session_id}, at most {plan.max_steps} steps; done when the "
            f"model answers {plan.openai.done_marker!r}"
        )
    if plan.taken is not None:
        how = {
            "completed": "it completed",
            "failed": "it failed",
            "handoff": "it was handed off",
            "unreadable": "its state does not validate",
        }.get(plan.taken_stopped or "") or _to_continue(memory, plan.taken)
        echo(f"session {plan.taken} exists already ({how}); this run is session {state.session_id}")


def _execute(plan: RunPlan, memory: str, ctrl_c: _CtrlC, *, assume_yes: bool, fmt: str) -> RunDone:
    """Carry ``plan`` out: each compaction and handoff printed as it is committed (text), each
    decision the policy wants confirmed asked at a terminal (or confirmed by --yes), and what
    the memory backend could not do reported on standard error."""
    from clm_policy.loop.runs import execute

    text = fmt == "text"
    sessions = [plan.state.session_id]  # the session the lines are of (steps count per session)

    def listener(event: str, data: dict[str, Any]) -> None:
        if event == "waiting":  # Ctrl-C during a step
            ctrl_c.heard(bool(data.get("again")))
            return
        if not text or event == "continue":
            return
        entry = data["entry"]
        if entry.session != sessions[-1]:
            echo(f"  session {entry.session}, from the handoff of {sessions[-1]}:")
            sessions.append(entry.session)
        commit = f"commit {entry.commit[:12]}" if entry.commit else ""
        echo(
            f"  step {entry.step:>4}  {entry.context_tokens:>9,} tokens  "
            f"{event:<9} {entry.rule or '-':<15} {commit}"
        )

    def confirmer(decision: Decision, state: SessionState) -> bool | None:
        if assume_yes:
            return True
        if not sys.stdin.isatty() or fmt == "json":
            return None
        question = (
            f"session {state.session_id} step {state.step_index}: {decision.action.value} "
            f"now? ({decision.rationale})"
        )
        try:
            return click.confirm(terminal_safe(question), default=True)
        except click.Abort as exc:  # click's answer to Ctrl-C and to the end of input
            if isinstance(exc.__context__, KeyboardInterrupt):
                raise KeyboardInterrupt from None  # the run commits the session, interrupted
            return None  # Ctrl-D: no answer; the decision awaits one, as without a terminal
        except OSError:  # the terminal went away (hung up): no answer either
            return None

    done = execute(plan, memory, listener=listener, confirmer=confirmer)
    for failure in done.failures:  # recorded, not raised: git has everything
        echo(
            f"clm-policy: mem0 could not {failure.operation} ({failure.reason}); the memory "
            "repository has everything",
            err=True,
        )
    return done


def _report(plan: RunPlan, done: RunDone, memory: str, fmt: str) -> int:
    """Print how the run ended, as JSON or as text; the exit code: 4 when a decision awaits
    confirmation, else 0."""
    pending = done.pending.as_dict() if done.pending is not None else None
    if fmt == "json":
        echo_json(_as_json(plan, done, memory, pending))
    else:
        _summary(done, memory, pending)
    return EXIT_NEEDS_CONFIRMATION if pending is not None else 0


def _as_json(
    plan: RunPlan, done: RunDone, memory: str, pending: dict[str, Any] | None
) -> dict[str, Any]:
    """How the run ended, as ``--format json`` prints it."""
    result = done.result
    return {
        "agent": plan.agent,
        "scenario": plan.scenario_shown,
        "model": plan.openai.model if plan.openai is not None else None,
        "policy": plan.policy.name,
        "profile": plan.profile,
        "memory": memory,
        "memory_backend": plan.memory_backend,
        "memory_failures": [dataclasses.asdict(f) for f in done.failures],
        "stopped_reason": result.stopped_reason,
        "steps": result.steps,
        "sessions": result.sessions,
        "compact_count": result.compact_count,
        "handoffs": [{"commit": h.commit, "manifest": h.manifest_path} for h in result.handoffs],
        "pending": pending,
        "timeline": [dataclasses.asdict(e) for e in result.timeline],
        "final_state": result.final_state.as_dict(),
    }


def _summary(done: RunDone, memory: str, pending: dict[str, Any] | None) -> None:
    """How the run ended, in text: the timeline, the openai agent's last reply, why it
    stopped, the decision awaiting confirmation, and the commands to look further."""
    result = done.result
    _timeline(result)
    reply = getattr(done.agent, "last_reply", None)
    if reply is not None:
        echo(f"last reply: {shorten(' '.join(reply.split()), LAST_REPLY)}")
    echo(
        f"stopped: {result.stopped_reason} after {plural(result.steps, 'step')}; "
        f"{plural(result.compact_count, 'compaction')}, {plural(len(result.handoffs), 'handoff')}, "
        f"sessions {', '.join(result.sessions)}"
    )
    if pending is not None:
        final = result.final_state.session_id
        echo(f"pending: {pending['action']} ({pending['trigger']}): {pending['rationale']}")
        echo(f"  confirm with: clm-policy run --memory {memory} --resume {final} --yes")
    echo("next:")
    echo(f"  clm-policy log --memory {memory}                 # why each one happened")
    if result.handoffs:
        echo(
            f"  clm-policy show --memory {memory} {result.handoffs[-1].commit[:12]}   # the handoff"
        )
    echo(f"  clm-policy status --memory {memory}              # the sessions")
    echo(f"  clm-policy report --memory {memory} -o report.html   # the figures, one page")


def _to_continue(memory: str, session: str) -> str:
    """How to continue the session ``session`` a new run did not take: the resume command
    when it would go on, else why not."""
    from clm_policy.loop.runs import going_on

    on = going_on(memory, session)
    if on.resume is None:
        return f"it cannot be resumed: {on.refusal}"
    options = "".join(f" {a}" for a in on.resume)
    return f"to continue it: clm-policy run --memory {memory} --resume {session}{options}"


def _timeline(result: LoopResult) -> None:
    """The run's decisions as a table: every step, or only its compactions and handoffs when
    there are more than :data:`TIMELINE_ALL`."""
    entries = result.timeline
    if not entries:  # stopped before any step was decided (a confirmation at the first)
        return
    shown = (
        entries if len(entries) <= TIMELINE_ALL else [e for e in entries if e.action != "continue"]
    )
    echo("")
    echo("timeline" + ("" if shown is entries else " (compactions and handoffs)") + ":")
    width = max([12, *(len(e.session) for e in shown)])
    echo(f"  {'session':<{width}} {'step':>5} {'context':>10}  {'decision':<9} rule")
    for e in shown:
        echo(
            f"  {e.session:<{width}} {e.step:>5} {e.context_tokens:>10,}  {e.action:<9} "
            f"{e.rule or '-'}"
        )
    echo("")
