"""A compaction or a handoff asked for by hand (``clm-policy compact`` and ``handoff``).

The policy decides on the session's state anyway, and the commit records why it ran: the
policy's deciding rule when the policy wants the same action, else ``manual`` with what the
policy would have done.
"""

from __future__ import annotations

from clm_policy.base.errors import StateError
from clm_policy.base.record import Record
from clm_policy.lifecycle.sources import Request, check, resolve

TYPE_CHECKING = False
if TYPE_CHECKING:
    from clm_policy.lifecycle.pipelines import CompactOutcome, HandoffOutcome, Provenance
    from clm_policy.models.decision import Decision
    from clm_policy.models.state import SessionState
    from clm_policy.policy.engine import Policy, Profile
    from clm_policy.transcripts.reading import TranscriptReading

HAND_SOURCES = ("state", "session", "transcript")
"""What a compaction or a handoff by hand works on: a whole session, never bare figures."""


class Committed(Record):
    """A compaction or a handoff asked for at a position already committed: nothing new is
    committed. ``event``: ``compact`` or ``handoff``; ``file``: the committed document."""

    commit: str
    event: str = "compact"
    file: str | None = None


class ByHand(Record):
    """What a hand-run pipeline works on, and why its commit says it ran."""

    policy: Policy
    state: SessionState
    profile: Profile
    why: Provenance
    reading: TranscriptReading | None = None
    HASHABLE = False


def prepare(
    action: str, policy_ref: str, memory: str, source: Request, profile: str | None
) -> ByHand:
    """The policy, the state ``source`` gives, the profile and the provenance of ``action``;
    writes nothing. Raises :class:`~clm_policy.base.errors.UsageError` when ``source`` names
    none or several of :data:`HAND_SOURCES`, :class:`~clm_policy.base.errors.InputError` (a
    :class:`StateError` located in the state's file) when it cannot be read."""
    from clm_policy.policy.cache import load_policy_cached

    check(source, HAND_SOURCES)
    policy = load_policy_cached(policy_ref)
    if source.memory is None:
        source = source.replace(memory=memory)
    resolved = resolve(source, full=True, sources=HAND_SOURCES)
    state = resolved.state
    try:
        decision = policy.decide(state, profile)
        prof = policy.profile(profile or state.profile)
    except StateError as exc:
        raise resolved.locate(exc) from None
    return ByHand(policy, state, prof, provenance(policy, decision, action), resolved.reading)


def provenance(policy: Policy, decision: Decision, action: str) -> Provenance:
    """Why ``action`` runs: the policy's rule when it decides ``action`` too, else ``manual``
    with what it would have done."""
    from clm_policy.lifecycle.pipelines import Provenance

    where = policy.provenance
    if decision.action.value == action:
        return Provenance(decision.trigger, decision.rationale, where)
    said = f"{decision.action.value}" + (f" ({decision.rationale})" if decision.rationale else "")
    return Provenance("manual", f"{action} requested by hand; the policy says {said}", where)


def compact(
    policy_ref: str,
    memory: str,
    source: Request,
    profile: str | None = None,
    *,
    summarizer: str | None = None,
) -> tuple[ByHand, CompactOutcome | HandoffOutcome | Committed]:
    """Compact the session now, keeping the profile's ``retain_recent_messages``, with the
    summarizer ``summarizer`` names (else ``CLM_POLICY_SUMMARIZER``, else deterministic).

    A compaction whose recall is under the profile's ``min_recall`` is not committed: the
    session is handed off instead (trigger ``verify_failed``), and that is what is returned.
    A compaction of the session at a position already committed (the same step and context:
    the same transcript again; a persisted session, ``--session``, at the step of its newest
    compaction: the state that compaction left, whose summary it would summarize again)
    commits nothing: :class:`Committed` names the commit."""
    import os

    from clm_policy.lifecycle.summarizers import summarizer_from_env
    from clm_policy.memory.audit import PendingLog, committed_at
    from clm_policy.memory.git.write import MemoryRepo

    chosen = summarizer_from_env(os.environ, summarizer)
    hand = prepare("compact", policy_ref, memory, source, profile)
    state = hand.state
    with MemoryRepo(memory) as repo:
        # Is this position committed already (pipelines.committed_snapshot)? git looks for the
        # session's newest compaction while the compaction's modules load.
        newest = PendingLog(repo, session=state.session_id, event="compact", limit=1)
        try:
            from clm_policy.lifecycle.pipelines import (
                HandedOffAlready,
                run_compaction,
                run_handoff,
            )
            from clm_policy.lifecycle.verify import VerificationFailed
        finally:
            entries = newest.entries()
        found = committed_at(entries, state.step_index, state.tokens.context_tokens)
        if found is None and source.session is not None:  # the state the compaction left
            found = committed_at(entries, state.step_index, None)
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
            why = hand.why.replace(rule=exc.trigger, rationale=exc.rationale)
            hand = hand.replace(why=why)
            try:
                done = run_handoff(repo, hand.state, why=why)
            except HandedOffAlready as already:  # (this compaction failed here before)
                done = Committed(already.commit, "handoff", already.handoff_file)
    return hand, done


def handoff(
    policy_ref: str,
    memory: str,
    source: Request,
    profile: str | None = None,
    *,
    branch: bool = False,
    push: str | None = None,
    pr_body: str | None = None,
    reply: str | None = None,
) -> tuple[ByHand, HandoffOutcome | Committed]:
    """Hand the session off now (:mod:`clm_policy.lifecycle.compose`): ``reply`` is the
    agent's own handoff, kept whole beside what the transcript (or the state) records.

    A handoff at the step and context of the session's newest one (the same state file or
    transcript again, ``--session`` after a handoff) commits nothing: :class:`Committed`
    names the commit (the pipeline's :func:`~clm_policy.lifecycle.pipelines.check_handed_off`
    says)."""
    import os

    from clm_policy.lifecycle.compose import compose, words_of_reply, words_of_transcript
    from clm_policy.lifecycle.model_handoff import with_model
    from clm_policy.lifecycle.pipelines import HandedOffAlready, check_remote, run_handoff
    from clm_policy.memory.git.write import MemoryRepo

    if push:
        with MemoryRepo(memory) as repo:
            check_remote(repo, push)
    hand = prepare("handoff", policy_ref, memory, source, profile)
    words, reading = words_of_reply(reply), hand.reading
    why = hand.why
    if reading is not None:
        words = words or words_of_transcript(reading)
        words, by_model = with_model(reading, words, os.environ, strict=True)
        why = why.replace(extra_trailers={**why.extra_trailers, **by_model})
        hand = hand.replace(why=why)
    whole = reading if reading is not None else hand.state
    composed = compose(whole, words, session_id=hand.state.session_id, profile=profile)
    with MemoryRepo(memory) as repo:
        try:
            done = run_handoff(
                repo,
                composed,
                why=why,
                branch=branch,
                push=push,
                pr_body=pr_body,
                seed_tokens=hand.profile.seed_tokens,
                memory_dir=memory,
            )
        except HandedOffAlready as exc:
            return hand, Committed(exc.commit, "handoff", exc.handoff_file)
    return hand, done
