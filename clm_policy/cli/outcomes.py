"""What ``clm-policy compact`` prints (and the JSON of a handoff, which a compaction whose
recall is too low makes instead), for click's command and the quick path alike: no click here.
"""

from __future__ import annotations

from clm_policy.base.errors import plural
from clm_policy.base.termsafe import echo, echo_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from clm_policy.base.errors import OutputClosed, OutputFailed
    from clm_policy.lifecycle.byhand import ByHand, Committed
    from clm_policy.lifecycle.compaction import CompactionResult
    from clm_policy.lifecycle.pipelines import CompactOutcome, HandoffOutcome
    from clm_policy.lifecycle.verify import Recall


def show_compact(
    hand: ByHand, done: CompactOutcome | HandoffOutcome | Committed, fmt: str, memory: str
) -> int:
    """Print what ``byhand.compact`` did (``fmt``: text or json); the exit code (0). An output
    that cannot be written (``> /dev/full``, ``| head``) says that the commit is made."""
    from clm_policy.base.errors import OutputClosed, OutputFailed
    from clm_policy.lifecycle.byhand import Committed

    try:
        if isinstance(done, Committed):
            return committed_already(hand, done, fmt)
        return _show_committed(hand, done, fmt, memory)
    except (OutputClosed, OutputFailed) as exc:
        if isinstance(done, Committed):
            raise
        raise said_committed(exc, committed_note(done)) from None


def committed_note(done: CompactOutcome | HandoffOutcome) -> str:
    """What a command whose output failed after its commit adds to the error: a script that
    took the exit code for a failure would compact or hand off again."""
    from clm_policy.lifecycle.pipelines import CompactOutcome

    if isinstance(done, CompactOutcome):
        return f"the compaction is committed all the same: commit {done.commit[:12]} ({done.path})"
    return (
        f"the handoff is committed all the same: commit {done.commit[:12]} on "
        f"{done.ref.removeprefix('refs/heads/')} ({done.handoff_path})"
    )


def said_committed(exc: OutputClosed | OutputFailed, note: str) -> OutputClosed | OutputFailed:
    """``exc`` saying ``note`` too (:func:`committed_note`)."""
    from clm_policy.base.errors import OutputClosed, OutputFailed

    if isinstance(exc, OutputClosed):
        return OutputClosed(exc.message, left=note)
    return OutputFailed(f"{exc.message}; {note}")


def _show_committed(
    hand: ByHand, done: CompactOutcome | HandoffOutcome, fmt: str, memory: str
) -> int:
    """Print the compaction committed, or the handoff made instead of it."""
    from clm_policy.lifecycle.pipelines import CompactOutcome

    state, why = hand.state, hand.why
    if not isinstance(done, CompactOutcome):
        return verify_failed(hand, done, fmt)
    result = done.result
    assert result.recall is not None
    if fmt == "json":
        echo_json(
            {
                "event": "compact",
                "commit": done.commit,
                "session": state.session_id,
                "step": state.step_index,
                "rule": why.rule,
                "path": done.path,
                "context_before": result.context_before,
                "context_after": result.context_after,
                "messages_kept": len(result.messages) - 1,
                "redactions": done.redactions,
                "summarizer": result.summarizer_trailer,
                # a model's summary measured against facts it did not pick; the
                # deterministic summary is built from them: only what it kept is said
                "recall": None if _ours(result) else recall_json(result.recall),
                "kept": recall_json(result.recall) if _ours(result) else None,
                "state": result.state.as_dict(),
            }
        )
        return 0
    echo(
        f"compacted session {state.session_id} at step {state.step_index} "
        f"({why.rule}): commit {done.commit[:12]}"
    )
    echo(f"  summary   {done.path}")
    kept = len(result.messages) - 1  # (the first is the summary)
    echo(
        f"  context   {result.context_before} -> {result.context_after} tokens (estimated), "
        f"{kept} recent message{'' if kept == 1 else 's'} kept"
    )
    echo(f"  redacted  {plural(done.redactions, 'secret')}")
    if _ours(result):
        echo(
            f"  kept      {result.recall.trailer} of the session's facts (the deterministic "
            "summary is built from them)"
        )
    else:
        echo(f"  recall    {result.recall.trailer} of the session's facts")
    if result.summarizer_trailer != "deterministic":
        tried = f" ({result.tried} was asked)" if result.tried else ""
        echo(f"  summary   by {result.summarizer_trailer}{tried}")
    echo(f"  next      clm-policy log --memory {memory} --session {state.session_id}")
    return 0


def _ours(result: CompactionResult) -> bool:
    """Whether the compaction's summary is the deterministic one (a model's failed or lost
    facts and fell back to it, too)."""
    return bool(result.summarizer_trailer == "deterministic" or result.fallback)


def committed_already(hand: ByHand, done: Committed, fmt: str) -> int:
    """A compaction or a handoff at a position already committed: say so, commit nothing
    (exit 0)."""
    state = hand.state
    if fmt == "json":
        echo_json(
            {
                "event": done.event,
                "commit": done.commit,
                "committed": False,
                "session": state.session_id,
                "step": state.step_index,
                "context_tokens": state.tokens.context_tokens,
                **({"handoff_path": done.file} if done.event == "handoff" else {}),
            }
        )
        return 0
    done_word = "handed off" if done.event == "handoff" else "compacted"
    what = f"commit {done.commit[:12]}" + (f" ({done.file})" if done.file else "")
    echo(
        f"session {state.session_id} at step {state.step_index} "
        f"({state.tokens.context_tokens} tokens) is {done_word} already: {what}; nothing new "
        "to commit"
    )
    return 0


def recall_json(recall: Recall | None) -> dict[str, Any] | None:
    if recall is None:
        return None
    return {
        "value": round(recall.value, 4),
        "found": recall.found,
        "asked": recall.asked,
        "by_kind": {k: list(v) for k, v in recall.by_kind.items()},
        "missing": [[f.kind, f.text] for f in recall.missing],
    }


def verify_failed(hand: ByHand, done: HandoffOutcome, fmt: str) -> int:
    """The compaction's recall was under min_recall: what the handoff made instead says."""
    state, why = hand.state, hand.why
    if fmt == "json":
        recall = recall_json(done.agent_recall)
        doc = handoff_json(hand, done, rationale=why.rationale, recall=recall)
        del doc["manifest"]
        echo_json(doc)
        return 0
    echo(
        f"compaction of session {state.session_id} at step {state.step_index} not committed: "
        f"{why.rationale}"
    )
    echo(
        f"handed off instead ({why.rule}): commit {done.commit[:12]} on "
        f"{done.ref.removeprefix('refs/heads/')}"
    )
    echo(f"  manifest  {done.manifest_path}")
    echo(f"  next safe action: {done.manifest.next_safe_action}")
    return 0


def handoff_json(hand: ByHand, done: HandoffOutcome, **extra: object) -> dict[str, Any]:
    """What ``--format json`` says of a committed handoff: ``extra`` keys last but the seed."""
    state, why = hand.state, hand.why
    return {
        "event": "handoff",
        "commit": done.commit,
        "ref": done.ref,
        "session": state.session_id,
        "step": state.step_index,
        "rule": why.rule,
        "manifest_path": done.manifest_path,
        "handoff_path": done.handoff_path,
        "manifest": done.manifest.as_dict(),
        "redactions": done.redactions,
        **({"written_by": w} if (w := why.extra_trailers.get("Clm-Summarizer")) else {}),
        **extra,
        "seed": [m.as_dict() for m in done.seed],
    }
