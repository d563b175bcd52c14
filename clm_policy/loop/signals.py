"""Tell a persisted session what only a person knows (``clm-policy signal``): a phase is done,
or a signal's value. Checked against the session's policy, committed; the next decision on
the session (a resumed run, ``decide --session``) sees it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from clm_policy.base.errors import InputError
from clm_policy.models.enums import SignalValue


@dataclass(frozen=True)
class Signalled:
    commit: str | None  # None: the session said so already (no empty commits)
    what: str  # as committed (secrets redacted)
    policy: str | None = None
    """The policy the session's run recorded (None: the default); ``decide --session`` needs
    it named."""


def signal_session(
    memory: str,
    session: str,
    signals: Mapping[str, SignalValue],
    *,
    phase_done: bool = False,
    as_written: Sequence[str] | None = None,
) -> Signalled:
    """Set ``signals`` on ``session`` and, with ``phase_done``, mark a phase boundary; commit
    the new state. ``as_written``: the signals as the person wrote them, for the commit
    message. Raises :class:`InputError` and commits nothing when there is nothing to say, the
    session is unknown or has ended (as ``run --resume`` refuses it), or a signal does not
    fit the policy."""

    import shlex

    from clm_policy.lifecycle.pipelines import state_doc
    from clm_policy.loop.status import why_ended
    from clm_policy.memory.change import Change, JsonDoc
    from clm_policy.memory.git.write import MemoryRepo, NothingToCommit
    from clm_policy.memory.layout import session_dir
    from clm_policy.memory.redact import redact_text
    from clm_policy.memory.sessions import load_session
    from clm_policy.memory.trailers import CommitMessage, event_subject
    from clm_policy.models.enums import TaskStatus

    if not phase_done and not signals:
        raise InputError("nothing to signal: a phase done, or NAME=VALUE signals")
    written = (
        list(as_written) if as_written is not None else [f"{n}={v}" for n, v in signals.items()]
    )
    with MemoryRepo(memory) as repo:
        persisted = load_session(repo, session)
        ended = why_ended(repo, session, persisted)
        if ended is not None:  # no decision reads it any more: refused before any commit
            raise InputError(
                f"{ended}; nothing to signal: only a session that goes on reads a signal "
                f"(clm-policy status --memory {shlex.quote(memory)} lists the sessions)"
            )
        state = persisted.state
        recorded = persisted.run.get("policy")
        policy = str(recorded) if recorded and recorded != "default" else None
        if signals:
            check_signals(policy or "default", signals)
        state.signals = {**state.signals, **signals}
        if phase_done:
            state.status = TaskStatus.PHASE_BOUNDARY
        what = ", ".join([*(["phase-done"] if phase_done else []), *written])
        message = CommitMessage(
            event_subject("signal", session, state.step_index, what),
            f"Signalled by hand: {what}.",
            {"Clm-Event": "signal", "Clm-Session": session, "Clm-Step": str(state.step_index)},
        )
        folder = session_dir(session)
        files = {f"{folder}/state.json": state_doc(state)}
        if persisted.run.get("decided") is True:  # a resume decides on the new state first
            files[f"{folder}/run.json"] = JsonDoc({**persisted.run, "decided": False})
        change = Change(files)
        try:
            commit: str | None = repo.commit(message, change)
        except NothingToCommit:
            commit = None
    return Signalled(commit, redact_text(what).text, policy)  # shown as committed


def check_signals(policy_ref: str, signals: Mapping[str, SignalValue]) -> None:
    """Refuse a signal the policy ``policy_ref`` does not declare, or a value not of its type."""
    from clm_policy.base.errors import quote
    from clm_policy.base.suggest import suggest
    from clm_policy.formats.textio import with_article
    from clm_policy.models.fields import signal_value_fits
    from clm_policy.policy.cache import load_policy_cached

    policy = load_policy_cached(policy_ref)
    for name, value in signals.items():
        if name not in policy.signals:
            known = ", ".join(policy.signals) or "none"
            raise InputError(
                f"signal {quote(name)} is not declared by policy {policy.name}"
                f"{suggest(name, policy.signals)} (declared: {known})"
            )
        kind = policy.signals[name].type
        if not signal_value_fits(kind, value):  # a value quoted, not a 5,000-digit number
            said = f"must be {with_article(kind)}, got {quote(value)}"
            raise InputError(f"signal {quote(name)} {said}")
