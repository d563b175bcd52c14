"""A compaction or a handoff asked for by hand (``clm-policy compact`` and ``handoff``).

The session's state comes from one place — a SessionState file (or standard input), a session
persisted in the memory repository, or a real agent's transcript —; the policy decides on it
anyway, and the commit records why it ran: the policy's deciding rule when the policy wants the
same action, else ``manual`` with what the policy would have done.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from clm_policy.base.errors import InputError, StateError

if TYPE_CHECKING:
    from clm_policy.lifecycle.pipelines import CompactOutcome, HandoffOutcome, Provenance
    from clm_policy.models.state import SessionState
    from clm_policy.policy.engine import Outcome, Policy, Profile


@dataclass(frozen=True)
class Source:
    """Where the state comes from: exactly one of ``state`` (a file, or ``-``), ``session``
    (in the memory repository) and ``transcript``."""

    state: str | None = None
    session: str | None = None
    transcript: str | None = None
    transcript_format: str = "auto"


@dataclass(frozen=True)
class Committed:
    """A compaction asked for at a position already committed: nothing new is committed."""

    commit: str


@dataclass(frozen=True)
class ByHand:
    """What a hand-run pipeline works on, and why its commit says it ran."""

    policy: Policy
    state: SessionState
    profile: Profile
    why: Provenance


def prepare(
    action: str, policy_ref: str, memory: str, source: Source, profile: str | None
) -> ByHand:
    """The policy, the state ``source`` gives, the profile and the provenance of ``action``.

    Raises :class:`InputError` (a :class:`StateError` located in the state's file when it
    came from one) and writes nothing."""
    from clm_policy.policy.cache import load_policy_cached

    given = [x for x in (source.state, source.session, source.transcript) if x is not None]
    if len(given) != 1:
        raise InputError("give one of a state file, a persisted session and a transcript")
    policy = load_policy_cached(policy_ref)
    locate = None
    if source.transcript is not None:
        from clm_policy.transcripts.reading import read_transcript

        state = read_transcript(source.transcript, source.transcript_format).to_state()
    elif source.session is not None:
        from clm_policy.memory.git.write import MemoryRepo
        from clm_policy.memory.sessions import load_session

        with MemoryRepo(memory) as repo:
            state = load_session(repo, source.session).state
    else:
        from clm_policy.models.state_io import read_state

        assert source.state is not None
        read = read_state(source.state)
        state, locate = read.state, read.locate
    try:
        decision = policy.outcome(state, profile)
        prof = policy.profile(profile or state.profile)
    except StateError as exc:
        raise (locate(exc) if locate else exc) from None
    return ByHand(policy, state, prof, provenance(policy, decision, action))


def provenance(policy: Policy, decision: Outcome, action: str) -> Provenance:
    """Why ``action`` runs: the policy's rule when it decides ``action`` too, else ``manual``
    with what it would have done."""
    from clm_policy.lifecycle.pipelines import Provenance

    where = f"{policy.path}@{policy.digest}"
    if decision.action.value == action:
        return Provenance(decision.trigger, decision.rationale, where)
    said = f"{decision.action.value}" + (f" ({decision.rationale})" if decision.rationale else "")
    return Provenance("manual", f"{action} requested by hand; the policy says {said}", where)


def compact(
    policy_ref: str,
    memory: str,
    source: Source,
    profile: str | None = None,
    *,
    summarizer: str | None = None,
) -> tuple[ByHand, CompactOutcome | HandoffOutcome | Committed]:
    """Compact the session now, keeping the profile's ``retain_recent_messages``, with the
    summarizer ``summarizer`` names (else ``CLM_POLICY_SUMMARIZER``, else deterministic).

    A compaction whose recall is under the profile's ``min_recall`` is not committed: the
    session is handed off instead (trigger ``verify_failed``), and that is what is returned.
    A compaction of the session at a position already committed (the same step and context:
    the same transcript again) commits nothing: :class:`Committed` names the commit."""
    import os

    from clm_policy.lifecycle.pipelines import committed_snapshot, run_compaction, run_handoff
    from clm_policy.lifecycle.summarizers import summarizer_from_env
    from clm_policy.lifecycle.verify import VerificationFailed
    from clm_policy.memory.git.write import MemoryRepo

    chosen = summarizer_from_env(os.environ, summarizer)
    hand = prepare("compact", policy_ref, memory, source, profile)
    with MemoryRepo(memory) as repo:
        found = committed_snapshot(repo, hand.state)
        if found is not None:
            return hand, Committed(found)
        try:
            done: CompactOutcome | HandoffOutcome | Committed = run_compaction(
                repo,
                hand.state,
                retain=hand.profile.retain_recent_messages,
                why=hand.why,
                summarizer=chosen,
                min_recall=hand.profile.min_recall,
            )
        except VerificationFailed as exc:
            why = replace(hand.why, rule=exc.trigger, rationale=exc.rationale)
            hand = replace(hand, why=why)
            done = run_handoff(repo, hand.state, why=why)
    return hand, done


def handoff(
    policy_ref: str,
    memory: str,
    source: Source,
    profile: str | None = None,
    *,
    branch: bool = False,
    push: str | None = None,
    pr_body: str | None = None,
) -> tuple[ByHand, HandoffOutcome]:
    """Hand the session off now (on a branch of its own, and pushed, when asked; with its
    pull-request body written to ``pr_body``)."""
    from clm_policy.lifecycle.pipelines import run_handoff
    from clm_policy.memory.git.write import MemoryRepo

    hand = prepare("handoff", policy_ref, memory, source, profile)
    with MemoryRepo(memory) as repo:
        done = run_handoff(
            repo, hand.state, why=hand.why, branch=branch, push=push, pr_body=pr_body
        )
    return hand, done
