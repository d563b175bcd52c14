"""``clm-policy status`` and ``clm-policy signal``: read and nudge persisted sessions."""

from __future__ import annotations

import shlex
from typing import Any

import click

from clm_policy.base.errors import InputError, plural
from clm_policy.base.termsafe import echo, echo_json
from clm_policy.cli.options import format_option, memory_option, session_option

SKIPPED_SHOWN = 10
"""Sessions that cannot be read named at most (then how many more)."""


@click.command()
@memory_option()
@session_option("One session in detail.")
@format_option("text", "json")
def status(memory: str, session: str | None, fmt: str) -> int:
    """The persisted sessions: status, step, context fill, compactions and handoffs, the last
    decisions; with --session, one in detail.

    \b
    Examples:
      clm-policy status --memory clm-memory
      clm-policy status --memory clm-memory --session demo --format json

    Exit codes: 0, 2 bad input (not a memory repository, an unknown session).
    """
    from clm_policy.loop.status import session_status

    found = session_status(memory, session)
    for sid, exc in found.skipped[:SKIPPED_SHOWN]:
        echo(f"clm-policy: skipping session {sid}: {exc}", err=True)
    if len(found.skipped) > SKIPPED_SHOWN:
        echo(
            f"clm-policy: skipping {plural(len(found.skipped) - SKIPPED_SHOWN, 'more session')}",
            err=True,
        )
    for note in found.notes:
        echo(f"clm-policy: {note}", err=True)
    rows = found.rows
    if not rows and found.skipped:  # sessions there are, none readable: not "none yet"
        raise InputError(f"{memory}: no session could be read ({len(found.skipped)} skipped)")
    if fmt == "json":
        echo_json(rows if session is None else rows[0])
    elif not rows:
        echo(f"{memory}: no sessions yet (clm-policy run --memory {memory})")
    elif session is None:
        _table(rows, memory)
    else:
        _one(rows[0], memory)
    return 0


def _table(rows: list[dict[str, Any]], memory: str) -> None:
    """One line per session, then what a person may want to do about some of them."""
    width = max(len("session"), *(len(r["session"]) for r in rows))
    echo(
        f"{'session':<{width}}  {'status':<14} {'step':>5} {'context':>10} {'fill':>6} "
        f"{'compact':>7} {'handoff':>7} {'recall':>6}  last decision"
    )
    agents = {r["session"]: len(r["agents"]) for r in rows if r["agents"]}
    for r in rows:
        fill = f"{r['fill']:.0%}" if r["fill"] is not None else "-"
        last = r["last_decisions"][-1] if r["last_decisions"] else None
        said = f"{last['action']} ({last.get('trigger') or '-'})" if last else "-"
        echo(
            f"{r['session']:<{width}}  {_shown_status(r):<14} {r['step']:>5} "
            f"{r['context_tokens']:>10,} {fill:>6} {r['compactions']:>7} "
            f"{r['handoffs']:>7} {_recall(r):>6}  {said}"
        )
    for sid, count in agents.items():
        echo(
            f"agents: session {sid} started {plural(count, 'agent')}: clm-policy status "
            f"--memory {memory} --session {sid}"
        )
    for r in rows:
        if r["pending"]:
            echo(
                f"pending: session {r['session']} awaits confirmation of "
                f"{r['pending'].get('action')} ({r['pending'].get('trigger') or '-'}); "
                f"confirm with: clm-policy run --memory {memory} --resume {r['session']} --yes"
            )


def _one(r: dict[str, Any], memory: str) -> None:
    """One session in detail."""
    echo(
        f"session   {r['session']}"
        + (f" (continued from {r['parent_session']})" if r["parent_session"] else "")
    )
    echo(f"goal      {r['goal']}")
    task = f" (task {r['status']})" if r["handed_off"] else ""
    echo(
        f"status    {_shown_status(r)}{task} at step {r['step']}; run stopped: "
        f"{r['stopped'] or '-'}"
    )
    echo(
        f"context   {r['context_tokens']:,} tokens"
        + (f" of {r['context_window']:,}" if r["context_window"] else "")
    )
    echo(f"events    {plural(r['compactions'], 'compaction')}, {plural(r['handoffs'], 'handoff')}")
    if r["recall"] is not None:
        missing = f"; missing {r['recall_missing']}" if r["recall_missing"] else ""
        echo(
            f"recall    {_recall(r)} ({r['recall_facts']} facts) at the last "
            f"{r['recall_event']}{missing}"
        )
    if r["pending"]:
        echo(
            f"pending   {r['pending'].get('action')}: {r['pending'].get('rationale')} "
            f"(confirm: clm-policy run --memory {memory} --resume {r['session']} --yes)"
        )
    for item in r["blockers"]:
        echo(f"blocker   {item}")
    for agent in r["agents"]:
        kind = f" ({agent['agent_type']})" if agent["agent_type"] else ""
        echo(
            f"agent     {agent['agent_id']}{kind}: topic {agent['memory_key']} "
            f"(clm-policy log --agent {agent['agent_id']})"
        )
    echo("last decisions:")
    for d in r["last_decisions"]:
        echo(
            f"  step {d.get('step')}: {d.get('action')} ({d.get('trigger') or '-'}) "
            f"{d.get('rationale')}"
        )


def _shown_status(row: dict[str, Any]) -> str:
    return "handed off" if row["handed_off"] else str(row["status"])


def _recall(row: dict[str, Any]) -> str:
    """The recall of a status row with two decimals, rounded down (as ``Clm-Recall``); ``-``
    when the session has none."""
    if row["recall"] is None:
        return "-"
    found, asked = (int(x) for x in row["recall_facts"].split("/"))
    hundredths = found * 100 // asked if asked else 100
    return f"{hundredths // 100}.{hundredths % 100:02d}"


@click.command()
@memory_option()
@session_option("The persisted session.", required=True)
@click.option(
    "--phase-done",
    is_flag=True,
    help="The current phase is finished: the next decision sees a phase boundary.",
)
@click.argument("assignments", nargs=-1, metavar="[NAME=VALUE]...")
def signal(memory: str, session: str, phase_done: bool, assignments: tuple[str, ...]) -> int:
    """Tell a persisted session something only you know: a phase is done, or a signal's
    value (NAME=VALUE, checked against the session's policy). Committed; the next decision
    (`clm-policy run --resume ID`, `clm-policy decide --session ID`) sees it. The last line
    is the command that goes on from here: `run --resume` when the session can resume, else
    `decide --session` (a session that `run` did not make). A session that ended (completed,
    failed, handed off) is refused, as `run --resume` refuses it: nothing is committed.

    \b
    Examples:
      clm-policy run --memory paused --max-steps 10   # a session that goes on: demo
      clm-policy signal --memory paused --session demo --phase-done
      clm-policy signal --memory paused --session demo degradation=true

    Exit codes: 0 committed, 2 bad input (an unknown session or one that ended, an undeclared
    signal, a wrong value; nothing written).
    """
    from clm_policy.lifecycle.sources import parse_signals
    from clm_policy.loop.runs import going_on
    from clm_policy.loop.signals import signal_session

    if not phase_done and not assignments:
        raise click.UsageError("give --phase-done and/or NAME=VALUE signals")
    signals = parse_signals(assignments, "a signal")
    done = signal_session(memory, session, signals, phase_done=phase_done, as_written=assignments)
    if done.commit is None:
        echo(f"session {session} says {done.what} already; nothing changed")
    else:
        echo(f"signalled session {session}: {done.what} (commit {done.commit[:12]})")
    on = going_on(memory, session)
    if on.resume is not None:
        options = "".join(f" {a}" for a in on.resume)
        echo(f"next: clm-policy run --memory {memory} --resume {session}{options}")
    else:  # a command that would fail is no suggestion: say why, and what still works
        echo(f"`clm-policy run --resume` cannot go on with it: {on.refusal}")
        policy = f" --policy {shlex.quote(done.policy)}" if done.policy else ""
        echo(
            f"next: clm-policy decide --memory {shlex.quote(memory)} --session {session}"
            f"{policy} --explain   # what the policy says of it now"
        )
    return 0
