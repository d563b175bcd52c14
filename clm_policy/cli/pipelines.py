"""``clm-policy compact`` and ``clm-policy handoff``: run a pipeline on a SessionState and
commit it to the memory repository."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from clm_policy.base.termsafe import echo
from clm_policy.cli.options import (
    format_option,
    memory_option,
    policy_option,
    profile_option,
    session_option,
    state_option,
    transcript_options,
)

if TYPE_CHECKING:
    from clm_policy.lifecycle.byhand import ByHand
    from clm_policy.lifecycle.pipelines import HandoffOutcome
    from clm_policy.lifecycle.sources import Request
    from clm_policy.lifecycle.verify import Recall


def _options(command: Any) -> Any:
    command = format_option("text", "json")(command)
    command = profile_option("Task profile (default: the state's, else the policy's).")(command)
    command = policy_option("Policy recorded in the commit.")(command)
    command = session_option("A session persisted in the memory repository.")(command)
    command = state_option()(command)
    command = transcript_options(command)
    return memory_option()(command)


def _source(
    state_src: str | None,
    session: str | None,
    transcript: str | None,
    transcript_format: str,
    memory: str,
) -> Request:
    """Where the state comes from: exactly one of --state, --session and --transcript
    (checked by the library's resolver, clm_policy.lifecycle.sources)."""
    from clm_policy.lifecycle.sources import Request

    return Request(
        state=state_src,
        session=session,
        transcript=transcript,
        transcript_format=transcript_format,
        memory=memory,
    )


@click.command()
@_options
@click.option(
    "--summarizer",
    type=click.Choice(["deterministic", "openai"]),
    help="Who writes the summary (default: CLM_POLICY_SUMMARIZER, else deterministic); openai "
    "reads CLM_POLICY_SUMMARIZER_MODEL, _BASE_URL, _API_KEY, _TIMEOUT and falls back to the "
    "deterministic summary when it fails or loses facts.",
)
def compact(
    memory: str,
    transcript: str | None,
    transcript_format: str,
    state_src: str | None,
    session: str | None,
    policy_ref: str,
    profile: str | None,
    fmt: str,
    summarizer: str | None,
) -> int:
    """Compact a session now: commit its structured summary and hint, keep the last
    messages (the profile's retain_recent_messages), lower its context.

    The commit records why: the policy's deciding rule when the policy would compact too,
    else `manual` with what the policy would have done. The new state (messages replaced,
    context re-estimated) is written to sessions/ID/state.json. The compaction is verified:
    its recall of the session's facts is recorded (Clm-Recall); under the profile's min_recall
    the session is handed off instead (verify_failed).

    \b
    Examples:
      clm-policy compact --memory clm-memory --state session.json
      clm-policy compact --transcript ~/.claude/projects/-home-me-shop/<session>.jsonl
    """
    from clm_policy.lifecycle import byhand
    from clm_policy.lifecycle.pipelines import CompactOutcome

    source = _source(state_src, session, transcript, transcript_format, memory)
    hand, done = byhand.compact(policy_ref, memory, source, profile, summarizer=summarizer)
    state, why = hand.state, hand.why
    if isinstance(done, byhand.Committed):
        return _committed_already(hand, done, fmt)
    if not isinstance(done, CompactOutcome):
        return _verify_failed(hand, done, fmt)
    result = done.result
    assert result.recall is not None
    if fmt == "json":
        echo(
            json.dumps(
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
                    "recall": _recall_json(result.recall),
                    "state": result.state.model_dump(mode="json"),
                },
                indent=2,
            )
        )
        return 0
    echo(
        f"compacted session {state.session_id} at step {state.step_index} "
        f"({why.rule}): commit {done.commit[:12]}"
    )
    echo(f"  summary   {done.path}")
    echo(
        f"  context   {result.context_before} -> {result.context_after} tokens (estimated), "
        f"{len(result.messages) - 1} recent messages kept"
    )
    echo(f"  redacted  {done.redactions} secret(s)")
    echo(f"  recall    {result.recall.trailer} of the session's facts")
    if result.summarizer_trailer != "deterministic":
        tried = f" ({result.tried} was asked)" if result.tried else ""
        echo(f"  summary   by {result.summarizer_trailer}{tried}")
    echo(f"  next      clm-policy log --memory {memory} --session {state.session_id}")
    return 0


def _committed_already(hand: ByHand, done: Any, fmt: str) -> int:
    """A compaction at a position already committed: say so, commit nothing (exit 0)."""
    state = hand.state
    if fmt == "json":
        echo(
            json.dumps(
                {
                    "event": "compact",
                    "commit": done.commit,
                    "committed": False,
                    "session": state.session_id,
                    "step": state.step_index,
                    "context_tokens": state.tokens.context_tokens,
                },
                indent=2,
            )
        )
        return 0
    echo(
        f"session {state.session_id} at step {state.step_index} "
        f"({state.tokens.context_tokens} tokens) is compacted already: commit "
        f"{done.commit[:12]}; nothing new to commit"
    )
    return 0


def _recall_json(recall: Recall | None) -> dict[str, Any] | None:
    if recall is None:
        return None
    return {
        "value": round(recall.value, 4),
        "found": recall.found,
        "asked": recall.asked,
        "by_kind": {k: list(v) for k, v in recall.by_kind.items()},
        "missing": [[f.kind, f.text] for f in recall.missing],
    }


def _verify_failed(hand: ByHand, done: HandoffOutcome, fmt: str) -> int:
    """The compaction's recall was under min_recall: what the handoff made instead says."""
    state, why = hand.state, hand.why
    if fmt == "json":
        doc = _handoff_json(hand, done)
        doc.pop("manifest")
        doc["rationale"] = why.rationale
        doc["recall"] = _recall_json(done.recall)
        echo(json.dumps({**doc, "seed": doc.pop("seed")}, indent=2))
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


@click.command()
@_options
@click.option(
    "--branch",
    is_flag=True,
    help="Commit on a new branch clm/handoff/SESSION-N (for a pull request).",
)
@click.option(
    "--push",
    metavar="REMOTE",
    help="Push the commit to REMOTE (fetch, rebase and retry when rejected; never force).",
)
@click.option(
    "--pr-body",
    metavar="FILE",
    help=(
        "With --branch: write the branch's pull-request body to FILE (Markdown: the manifest, "
        "what changed since the session's previous handoff, the recall) and print the "
        "`gh pr create` command that opens it."
    ),
)
def handoff(
    memory: str,
    transcript: str | None,
    transcript_format: str,
    state_src: str | None,
    session: str | None,
    policy_ref: str,
    profile: str | None,
    fmt: str,
    branch: bool,
    push: str | None,
    pr_body: str | None,
) -> int:
    """Hand a session off: commit a schema-valid manifest and its rendering for people, and
    print the seed messages the next session starts from (no transcript).

    \b
    Examples:
      clm-policy handoff --memory clm-memory --state session.json
      clm-policy handoff --memory clm-memory --state session.json --branch --push origin
      clm-policy handoff -m clm-memory -s session.json --branch --push origin --pr-body pr.md
      clm-policy handoff --transcript ~/.codex/sessions/2026/11/30/rollout-<id>.jsonl
    """
    from clm_policy.lifecycle import byhand

    if pr_body is not None and not branch:
        raise click.UsageError("--pr-body needs --branch: a pull request needs a branch of its own")
    source = _source(state_src, session, transcript, transcript_format, memory)
    hand, done = byhand.handoff(
        policy_ref, memory, source, profile, branch=branch, push=push, pr_body=pr_body
    )
    state, why = hand.state, hand.why
    request = _pull_request(memory, done, state.session_id, state.step_index, pr_body)
    if fmt == "json":
        doc = _handoff_json(hand, done)
        doc.update(pushed=push, push_attempts=done.push_attempts, pull_request=request)
        echo(json.dumps({**doc, "seed": doc.pop("seed")}, indent=2))
        return 0
    echo(
        f"handed off session {state.session_id} at step {state.step_index} ({why.rule}): "
        f"commit {done.commit[:12]} on {done.ref.removeprefix('refs/heads/')}"
    )
    echo(f"  manifest  {done.manifest_path}")
    echo(f"  for people {done.handoff_path}")
    echo(f"  next safe action: {done.manifest.next_safe_action}")
    echo(f"  redacted  {done.redactions} secret(s)")
    if push:
        echo(f"  pushed to {push} ({done.push_attempts} attempt(s))")
    echo(
        f"  seed      {len(done.seed)} message(s) for the next session (--format json prints them)"
    )
    if request is not None:
        echo(f"  pr body   {pr_body}")
        echo(f"  open it   {request['command']}")
    return 0


def _handoff_json(hand: ByHand, done: HandoffOutcome) -> dict[str, Any]:
    """What ``--format json`` says of a committed handoff (its callers add their own keys;
    the seed stays last)."""
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
        "manifest": done.manifest.model_dump(mode="json"),
        "redactions": done.redactions,
        "seed": [m.model_dump(mode="json") for m in done.seed],
    }


def _pull_request(
    memory: str, done: HandoffOutcome, session: str, step: int, body_file: str | None
) -> dict[str, str | None] | None:
    """The pull request whose body was written to ``body_file``: title, branches, command."""
    if body_file is None:
        return None
    from clm_policy.lifecycle import prbody
    from clm_policy.memory.git.write import MemoryRepo

    with MemoryRepo(memory) as repo:
        base = prbody.base_branch(repo)
    head = done.ref.removeprefix("refs/heads/")
    title = prbody.title(done.manifest, session, step)
    return {
        "title": title,
        "head": head,
        "base": base,
        "body_file": body_file,
        "command": prbody.gh_command(title, head, base, body_file),
    }
