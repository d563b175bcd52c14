"""``clm-policy compact`` and ``clm-policy handoff``: run a pipeline on a SessionState and
commit it to the memory repository."""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

from clm_policy.base.errors import plural
from clm_policy.base.termsafe import echo, echo_json
from clm_policy.cli.options import (
    format_option,
    memory_option,
    policy_option,
    profile_option,
    session_option,
    state_option,
    transcript_options,
)
from clm_policy.cli.outcomes import (
    committed_already,
    committed_note,
    handoff_json,
    said_committed,
    show_compact,
)
from clm_policy.lifecycle.sources import Request

if TYPE_CHECKING:
    from collections.abc import Iterator

    from clm_policy.cli.options import F
    from clm_policy.lifecycle.byhand import ByHand
    from clm_policy.lifecycle.pipelines import HandoffOutcome


def _options(command: F) -> F:
    command = format_option("text", "json")(command)
    command = profile_option("Task profile (default: the state's, else the policy's).")(command)
    command = policy_option("Policy recorded in the commit.")(command)
    command = session_option("A session persisted in the memory repository.")(command)
    command = state_option()(command)
    command = transcript_options(command)
    return memory_option()(command)


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
    context re-estimated) is written to sessions/ID/state.json. A summary a model wrote
    (--summarizer) is verified: its recall of the session's facts is recorded (Clm-Recall), and
    under the profile's min_recall the session is handed off instead (verify_failed). The
    deterministic summary is built from those facts, so what it kept is recorded as
    Clm-Summary-Kept, not as a recall.

    \b
    Examples:
      clm-policy compact --memory clm-memory --state session.json
      clm-policy compact --transcript ~/.claude/projects/-home-me-shop/<session>.jsonl

    Exit codes: 0 committed (or compacted already: nothing new), 2 bad input (at file:line:col;
    nothing written), 130 interrupted.
    """
    from clm_policy.lifecycle import byhand

    source = Request.of(click.get_current_context().params)  # checked by the resolver
    if state_src == "-":
        from clm_policy.cli.entry import note_state_if_terminal

        note_state_if_terminal("compact")
    hand, done = byhand.compact(policy_ref, memory, source, profile, summarizer=summarizer)
    return show_compact(hand, done, fmt, memory)


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
@click.option(
    "--reply",
    "reply_file",
    metavar="FILE|-",
    help=(
        "The agent's own handoff (its reply to the handoff request), a text file or - for "
        "standard input: kept word for word beside what the session records. A session "
        "state, a transcript, a policy or a JSON object is refused (exit 2)."
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
    reply_file: str | None,
) -> int:
    """Hand a session off: commit a schema-valid manifest and its rendering for people, and
    make the seed the next session starts from (no transcript; its size is printed, the seed
    itself with --format json): the agent's own handoff (--reply) word for word, and what
    clm-policy recorded from the session. When the agent
    wrote none and CLM_POLICY_SUMMARIZER=openai is set, a model writes the handoff from the
    transcript (docs/verification.md, "When the agent wrote none").

    \b
    Examples:
      clm-policy handoff --memory clm-memory --state session.json
      clm-policy handoff --memory clm-memory --state session.json --branch --push origin
      clm-policy handoff -m clm-memory -s session.json --branch --push origin --pr-body pr.md
      clm-policy handoff --transcript ~/.codex/sessions/2026/11/30/rollout-<id>.jsonl
      clm-policy handoff --transcript session.jsonl --reply handoff.md

    A handoff of the session at the step and context of its newest handoff (the same state
    file or transcript again, --session after a handoff) commits nothing and says so.

    Exit codes: 0 committed (or handed off already: nothing new), 2 bad input (nothing
    written) or an output that cannot be written (the commit is made; standard error says
    so), 130 interrupted, 141 output closed (the same).
    """
    from clm_policy.lifecycle import byhand

    if pr_body is not None and not branch:
        raise click.UsageError("--pr-body needs --branch: a pull request needs a branch of its own")
    source = Request.of(click.get_current_context().params)
    reply = _read_reply(reply_file, state_src) if reply_file is not None else None
    if state_src == "-":
        from clm_policy.cli.entry import note_state_if_terminal

        note_state_if_terminal("handoff")
    hand, done = byhand.handoff(
        policy_ref, memory, source, profile, branch=branch, push=push, pr_body=pr_body, reply=reply
    )
    if isinstance(done, byhand.Committed):
        return committed_already(hand, done, fmt)
    with _committed_all_the_same(done):
        return _say_handed_off(hand, done, memory, fmt, push, pr_body)


@contextmanager
def _committed_all_the_same(done: HandoffOutcome) -> Iterator[None]:
    """An output that could not be written (``> /dev/full``, ``| head``) after the commit:
    the error says the handoff is committed all the same (a script that took the exit code
    for a failure would hand off again)."""
    from clm_policy.base.errors import OutputClosed, OutputFailed

    try:
        yield
    except (OutputClosed, OutputFailed) as exc:
        raise said_committed(exc, committed_note(done)) from None


def _say_handed_off(
    hand: ByHand,
    done: HandoffOutcome,
    memory: str,
    fmt: str,
    push: str | None,
    pr_body: str | None,
) -> int:
    """Print what the handoff committed (text or JSON): exit 0."""
    state, why = hand.state, hand.why
    request = _pull_request(memory, done, state.session_id, state.step_index, pr_body)
    if fmt == "json":
        extra = {"pushed": push, "push_attempts": done.push_attempts, "pull_request": request}
        echo_json(handoff_json(hand, done, **extra))
        return 0
    echo(
        f"handed off session {state.session_id} at step {state.step_index} ({why.rule}): "
        f"commit {done.commit[:12]} on {done.ref.removeprefix('refs/heads/')}"
    )
    echo(f"  manifest  {done.manifest_path}")
    echo(f"  for people {done.handoff_path}")
    echo(f"  next safe action: {done.manifest.next_safe_action}")
    writer = why.extra_trailers.get("Clm-Summarizer")
    if writer is not None:  # the agent wrote none: a model was asked (docs/verification.md)
        echo(f"  handoff   written by {writer}")
    echo(f"  redacted  {plural(done.redactions, 'secret')}")
    if push:
        echo(f"  pushed to {push} ({plural(done.push_attempts or 0, 'attempt')})")
    size = sum(len(m.content) for m in done.seed)
    echo(f"  seed      {size:,} characters for the next session (--format json prints it)")
    if request is not None:
        echo(f"  pr body   {pr_body}")
        echo(f"  open it   {request['command']}")
    return 0


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


REPLY_LIMIT = 1024 * 1024  # the most of an agent's reply read (a handoff is a page)


def _read_reply(path: str, state_src: str | None) -> str:
    """The agent's reply: UTF-8 text (a byte order mark dropped) from a file or standard
    input (``-``), bounded; an empty one is refused (a pipe that gave nothing is a mistake,
    not a handoff)."""
    from clm_policy.base.errors import InputError
    from clm_policy.formats.textio import decode, read_bytes
    from clm_policy.lifecycle.sources import refuse_other_document

    if path == "-":
        if state_src == "-":
            raise click.UsageError("--reply - and --state - cannot both read standard input")
        from clm_policy.base.stdin import read_stdin
        from clm_policy.cli.entry import note_if_terminal

        note_if_terminal("handoff --reply -", "", what="the agent's handoff, its text,")
        data, where = read_stdin(REPLY_LIMIT), "<stdin>"
    else:  # a regular file only (a FIFO would block), read up to the limit
        data, where = read_bytes(path, limit=REPLY_LIMIT, what="reply"), path
    # a BOM (Windows editors, PowerShell) is the file's encoding, not the agent's first word:
    # kept, it hid the first heading and the manifest's goal was the record's
    text = decode(data, where, REPLY_LIMIT, "reply").removeprefix("\ufeff")
    if not text.strip():
        raise InputError(f"--reply {where}: empty (the agent's handoff is its text)")
    refuse_other_document(text, path, "the agent's handoff")  # a state, a policy, ...
    return text
