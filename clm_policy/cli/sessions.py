"""``clm-policy status`` and ``clm-policy signal``: read and nudge persisted sessions."""

from __future__ import annotations

import json
from typing import Any

import click

from clm_policy.cli.options import format_option, memory_option


@click.command()
@memory_option()
@click.option("--session", metavar="ID", help="One session in detail.")
@format_option("text", "json")
def status(memory: str, session: str | None, fmt: str) -> int:
    """The persisted sessions: status, step, context fill, compactions and handoffs, the last
    decisions; with --session, one in detail.

    \b
    Examples:
      clm-policy status --memory clm-memory
      clm-policy status --memory clm-memory --session demo --format json
    """
    from clm_policy.errors import InputError
    from clm_policy.memory.audit import read_log
    from clm_policy.memory.gitwrite import MemoryRepo
    from clm_policy.memory.sessions import last_decisions, load_session, session_ids

    with MemoryRepo(memory) as repo:
        ids = [session] if session else session_ids(repo)
        log = read_log(repo, rev="--all")
        rows: list[dict[str, Any]] = []
        for sid in ids:
            try:
                persisted = load_session(repo, sid)
            except InputError as exc:
                if session is not None:
                    raise
                click.echo(f"clm-policy: skipping session {sid}: {exc}", err=True)
                continue
            s = persisted.state
            events = [e.event for e in log if e.session == sid]
            window = s.tokens.context_window
            rows.append(
                {
                    "session": sid,
                    "status": s.status.value,
                    "step": s.step_index,
                    "context_tokens": s.tokens.context_tokens,
                    "context_window": window,
                    "fill": round(s.tokens.context_tokens / window, 3) if window else None,
                    "compactions": events.count("compact"),
                    "handoffs": events.count("handoff"),
                    "stopped": persisted.stopped,
                    "parent_session": s.parent_session,
                    "pending": persisted.pending,
                    "last_decisions": last_decisions(repo, sid, 5 if session else 1),
                    "goal": s.goal,
                    "blockers": s.blockers,
                    "not_verified": s.not_verified,
                }
            )
    if fmt == "json":
        click.echo(json.dumps(rows if session is None else rows[0], indent=2))
        return 0
    if not rows:
        click.echo(f"{memory}: no sessions yet (clm-policy run --memory {memory})")
        return 0
    if session is None:
        click.echo(
            f"{'session':<16} {'status':<15} {'step':>5} {'context':>10} {'fill':>6} "
            f"{'compact':>7} {'handoff':>7}  last decision"
        )
        for r in rows:
            fill = f"{r['fill']:.0%}" if r["fill"] is not None else "-"
            last = r["last_decisions"][-1] if r["last_decisions"] else None
            said = f"{last['action']} ({last.get('trigger') or '-'})" if last else "-"
            click.echo(
                f"{r['session']:<16} {r['status']:<15} {r['step']:>5} "
                f"{r['context_tokens']:>10,} {fill:>6} {r['compactions']:>7} "
                f"{r['handoffs']:>7}  {said}"
            )
        for r in rows:
            if r["pending"]:
                click.echo(
                    f"pending: session {r['session']} awaits confirmation of "
                    f"{r['pending'].get('action')} ({r['pending'].get('trigger') or '-'}); "
                    f"confirm with: clm-policy run --memory {memory} --resume {r['session']} --yes"
                )
        return 0
    r = rows[0]
    click.echo(
        f"session   {r['session']}"
        + (f" (continued from {r['parent_session']})" if r["parent_session"] else "")
    )
    click.echo(f"goal      {r['goal']}")
    click.echo(f"status    {r['status']} at step {r['step']}; run stopped: {r['stopped'] or '-'}")
    click.echo(
        f"context   {r['context_tokens']:,} tokens"
        + (f" of {r['context_window']:,}" if r["context_window"] else "")
    )
    click.echo(f"events    {r['compactions']} compaction(s), {r['handoffs']} handoff(s)")
    if r["pending"]:
        click.echo(
            f"pending   {r['pending'].get('action')}: {r['pending'].get('rationale')} "
            f"(confirm: clm-policy run --memory {memory} --resume {r['session']} --yes)"
        )
    for item in r["blockers"]:
        click.echo(f"blocker   {item}")
    click.echo("last decisions:")
    for d in r["last_decisions"]:
        click.echo(
            f"  step {d.get('step')}: {d.get('action')} ({d.get('trigger') or '-'}) "
            f"{d.get('rationale')}"
        )
    return 0


@click.command()
@memory_option()
@click.option("--session", required=True, metavar="ID", help="The persisted session.")
@click.option(
    "--phase-done",
    is_flag=True,
    help="The current phase is finished: the next decision sees a phase boundary.",
)
@click.argument("assignments", nargs=-1, metavar="[NAME=VALUE]...")
def signal(memory: str, session: str, phase_done: bool, assignments: tuple[str, ...]) -> int:
    """Tell a persisted session something only you know: a phase is done, or a signal's
    value (NAME=VALUE, checked against the session's policy). Committed; the next decision
    (`clm-policy run --resume ID`, `clm-policy decide --session ID`) sees it.

    \b
    Examples:
      clm-policy signal --memory clm-memory --session demo --phase-done
      clm-policy signal --memory clm-memory --session demo degradation=true
    """
    from clm_policy.cli.decide import parse_signal
    from clm_policy.errors import InputError
    from clm_policy.lifecycle.pipelines import state_doc
    from clm_policy.memory.change import Change
    from clm_policy.memory.gitwrite import MemoryRepo
    from clm_policy.memory.layout import session_dir
    from clm_policy.memory.redact import redact_text
    from clm_policy.memory.sessions import load_session
    from clm_policy.memory.trailers import CommitMessage, event_subject
    from clm_policy.models.enums import TaskStatus
    from clm_policy.policy.cache import load_policy_cached

    if not phase_done and not assignments:
        raise click.UsageError("give --phase-done and/or NAME=VALUE signals")
    with MemoryRepo(memory) as repo:
        persisted = load_session(repo, session)
        state = persisted.state
        signals = dict(parse_signal(a) for a in assignments)
        if signals:
            policy = load_policy_cached(str(persisted.run.get("policy") or "default"))
            for name, value in signals.items():
                if name not in policy.signals:
                    known = ", ".join(policy.signals) or "none"
                    raise InputError(
                        f"signal '{name}' is not declared by policy {policy.name} "
                        f"(declared: {known})"
                    )
                from clm_policy.policy.names import signal_value_fits

                if not signal_value_fits(policy.signals[name].type, value):
                    raise InputError(
                        f"signal '{name}' must be a {policy.signals[name].type}, got {value!r}"
                    )
        state.signals = {**state.signals, **signals}
        if phase_done:
            state.status = TaskStatus.PHASE_BOUNDARY
        what = ", ".join([*(["phase-done"] if phase_done else []), *assignments])
        message = CommitMessage(
            event_subject("signal", session, state.step_index, what),
            f"Signalled by hand: {what}.",
            {"Clm-Event": "signal", "Clm-Session": session, "Clm-Step": str(state.step_index)},
        )
        change = Change({f"{session_dir(session)}/state.json": state_doc(state)})
        commit = repo.commit(message, change)
        what = redact_text(what).text  # printed as committed
    click.echo(
        f"signalled session {session}: {what} (commit {commit[:12]}); "
        f"next: clm-policy run --memory {memory} --resume {session}"
    )
    return 0
