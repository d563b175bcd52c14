"""The compaction and handoff pipelines: build the content and commit it.

Each pipeline builds one :class:`~clm_policy.memory.change.Change`; the write path redacts all
of it (contents, paths, message; the count lands in the ``Clm-Redactions`` trailer). The raw
state is cleaned by that same change before anything is cut to a summary line or folded, and
the manifest is validated by pydantic and by its JSON schema after redaction and before
anything is written. The state handed back to the caller (for the agent to continue with) is
not redacted; the persisted ``state.json`` is. Raw transcripts are never written: a compaction
writes its summary, its hint and the state it leaves (hint + the last few messages); a handoff
its manifest, its Markdown rendering and the final state without its messages.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from clm_policy.base.credentials import mask_credentials
from clm_policy.base.errors import InputError
from clm_policy.base.record import Record, field
from clm_policy.base.timestamp import utc_now
from clm_policy.lifecycle.compaction import (
    DETERMINISTIC,
    CompactionResult,
    DeterministicSummarizer,
    Summarizer,
    TextSummary,
    compact,
    compact_verified,
    what_it_reads,
)
from clm_policy.lifecycle.estimate import estimate_tokens
from clm_policy.lifecycle.seed import seed_text
from clm_policy.lifecycle.verify import (
    Recall,
    VerificationFailed,
    facts,
    inventory,
    verify,
)
from clm_policy.memory.change import Change, JsonDoc, JsonLines
from clm_policy.memory.git.run import GitError
from clm_policy.memory.git.write import MemoryRepo, NothingToCommit
from clm_policy.memory.layout import (
    check_key,
    check_session,
    compaction_path,
    handoff_key,
    handoff_path,
    manifest_path,
    session_dir,
)
from clm_policy.memory.trailers import CommitMessage, event_subject
from clm_policy.models.enums import CHARS_PER_TOKEN, MessageRole
from clm_policy.models.state import Message, SessionState
from clm_policy.policy.engine import DEFAULT_MIN_RECALL, DEFAULT_SEED_TOKENS

TYPE_CHECKING = False
if TYPE_CHECKING:  # a handoff's modules are imported by run_handoff: compact needs none of them
    from collections.abc import Callable
    from datetime import datetime

    from clm_policy.lifecycle.compose import Composed
    from clm_policy.memory.store import MemoryStore
    from clm_policy.models.manifest import HandoffManifest

Logs = Mapping[str, JsonLines]
"""Decision and metric records to append, per ``.jsonl`` path."""


class Provenance(Record):
    """Why the pipeline runs: the deciding rule and its rationale, the policy
    (``path@content-hash``) and any more trailers (for the commit)."""

    rule: str | None = None
    rationale: str | None = None
    policy: str | None = None
    extra_trailers: Mapping[str, str] = field(default_factory=dict)
    HASHABLE = False


NO_PROVENANCE = Provenance()
"""No rule, no policy (shared, never changed)."""


class CompactOutcome(Record):
    """A committed compaction: the commit, the summary's path, the compaction, the secrets
    redacted."""

    commit: str
    path: str
    result: CompactionResult
    redactions: int
    HASHABLE = False


class HandoffOutcome(Record):
    """A committed handoff. ``agent_recall``: how many of the session's facts the agent's own
    words hold; ``push_failed``: why the push failed, for a caller that went on without it."""

    commit: str
    manifest: HandoffManifest
    manifest_path: str
    handoff_path: str
    seed: list[Message]
    ref: str
    redactions: int
    push_attempts: int | None = None
    agent_recall: Recall | None = None
    push_failed: str | None = None
    HASHABLE = False


class HandedOffAlready(InputError):
    """A handoff asked for at the position of the session's newest handoff (the same step and
    context: nothing new since): nothing is committed. ``commit``: that handoff's."""

    def __init__(self, state: SessionState, commit: str, handoff_file: str | None) -> None:
        what = f"commit {commit[:12]}" + (f" ({handoff_file})" if handoff_file else "")
        super().__init__(
            f"session {state.session_id} at step {state.step_index} "
            f"({state.tokens.context_tokens} tokens) is handed off already: {what}; nothing new "
            "to commit"
        )
        self.commit = commit
        self.handoff_file = handoff_file


class PushError(GitError):
    """The commit exists locally; pushing it failed. ``outcome``: the handoff committed
    (:func:`run_handoff` sets it), for a caller that goes on without the push."""

    outcome: HandoffOutcome | None = None


def state_doc(state: SessionState) -> JsonDoc:
    """``state.json``, checked: the reader must accept what is written."""
    from clm_policy.models.state_io import state_from

    data = state.as_dict()
    state_from(data)
    return JsonDoc(data)


def check_identifiers(state: SessionState) -> None:
    """The state's identifiers are committed as written: each must be valid and no secret."""
    check_session(state.session_id)
    if state.parent_session:
        check_session(state.parent_session)
    for key in state.memory_keys:
        check_key(key)


def trailers(state: SessionState, event: str, why: Provenance, **more: str) -> dict[str, str]:
    found = {
        "Clm-Event": event,
        "Clm-Session": state.session_id,
        "Clm-Step": str(state.step_index),
        "Clm-Context-Tokens": str(state.tokens.context_tokens),
    }
    if state.parent_session:
        found["Clm-Parent-Session"] = state.parent_session
    if why.rule:
        found["Clm-Rule"] = why.rule
    if why.policy:
        found["Clm-Policy"] = why.policy
    found.update(more)
    found.update(why.extra_trailers)
    return found


def _message(
    state: SessionState, event: str, why: Provenance, body: str, **more: str
) -> CommitMessage:
    subject = event_subject(event, state.session_id, state.step_index, why.rule)
    return CommitMessage(subject, body, trailers(state, event, why, **more))


SUMMARY_KEPT = "Clm-Summary-Kept"


def recall_trailers(
    recall: Recall, prefix: str = "Clm-Recall", *, kinds: bool = False
) -> dict[str, str]:
    """``Clm-Recall`` (``0.93 (13/14)``) and, when facts were missed, ``Clm-Recall-Missing``
    (``decisions 1``); with ``kinds``, ``Clm-Recall-Kinds`` (``goal 1/1, requests 2/3``).
    ``prefix`` names another recall (``Clm-Recall-Agent``: the agent's own summary)."""
    found = {prefix: recall.trailer}
    if recall.missing:
        found[f"{prefix}-Missing"] = recall.missing_counts
    if kinds and recall.by_kind:
        found[f"{prefix}-Kinds"] = recall.kinds_text
    return found


def run_compaction(
    repo: MemoryRepo,
    state: SessionState,
    *,
    retain: int,
    why: Provenance = NO_PROVENANCE,
    now: datetime | None = None,
    appends: Logs | None = None,
    files: Mapping[str, JsonDoc] | None = None,
    summarizer: Summarizer = DETERMINISTIC,
    min_recall: float | None = None,
    on_verified: Callable[[Recall], None] | None = None,
    context_line: str | None = None,
) -> CompactOutcome:
    """Compact ``state``, verify it and commit the summary document and the persisted state.

    The caller's compaction is made from the raw state; what is committed, and verified, from
    the state the change cleaned (another summarizer is asked once, on that). A model's
    summary carries ``Clm-Recall``: facts its writer did not pick. The deterministic summary is
    built from those same facts, so its check says only what survived the cleaning:
    ``Clm-Summary-Kept`` (never a quality figure; ``on_verified`` is not told of it).

    Under ``min_recall`` nothing is committed and
    :class:`~clm_policy.lifecycle.verify.VerificationFailed` is raised (the caller hands off).
    Without it (a snapshot while an agent compacts on its own) the recall is recorded only.
    ``on_verified`` is told the recall before the commit (the run loop records it in
    metrics.jsonl, which the commit holds). ``context_line`` replaces the body's ``Context:``
    line: a snapshot cannot know the context after the agent's compaction."""
    check_identifiers(state)
    when = now or utc_now()
    change = Change(files, appends)
    # what the compaction reads is cleaned (a summarizer of ours reads only the last messages)
    ours = isinstance(summarizer, DeterministicSummarizer)
    read = what_it_reads(state, retain) if ours else state
    clean = change.clean(read)
    threshold = DEFAULT_MIN_RECALL if min_recall is None else min_recall
    recorded = compact_verified(
        clean,
        retain=retain,
        summarizer=summarizer,
        min_recall=threshold,
        now=when,
        trigger=why.rule,
    )
    assert recorded.recall is not None
    if min_recall is not None and recorded.recall.below(min_recall):
        raise VerificationFailed(recorded.recall, min_recall, recorded.summarizer_trailer)
    deterministic = ours or bool(recorded.fallback)
    if on_verified is not None and not deterministic:
        on_verified(recorded.recall)
    result = _callers_compaction(
        state, recorded, retain=retain, deterministic=deterministic, now=when, trigger=why.rule
    )
    path = compaction_path(state.session_id, state.step_index)
    change.files[path] = recorded.document
    # the context as the caller's compaction measured it (a marker is not the secret's size)
    kept = recorded.state.replace(tokens=result.state.tokens)
    change.files[f"{session_dir(state.session_id)}/state.json"] = state_doc(kept)
    message = _compaction_message(
        state, why, clean, result, recorded, deterministic=deterministic, context_line=context_line
    )
    commit = repo.commit(message, change)
    return CompactOutcome(commit, path, result, change.redactions)


def _callers_compaction(
    state: SessionState,
    recorded: CompactionResult,
    *,
    retain: int,
    deterministic: bool,
    now: datetime,
    trigger: str | None,
) -> CompactionResult:
    """The caller's compaction: made from the raw state, with ``recorded``'s summary, recall
    and summarizer."""
    told = DETERMINISTIC if deterministic else TextSummary(recorded.summary, recorded.summarizer)
    return compact(
        state, retain=retain, summarizer=told, now=now, trigger=trigger, verify_facts=False
    ).replace(
        recall=recorded.recall,
        summarizer=recorded.summarizer,
        fallback=recorded.fallback,
        tried=recorded.tried,
    )


def _compaction_message(
    state: SessionState,
    why: Provenance,
    clean: SessionState,
    result: CompactionResult,
    recorded: CompactionResult,
    *,
    deterministic: bool,
    context_line: str | None,
) -> CommitMessage:
    assert recorded.recall is not None
    context = context_line or (
        f"Context: {result.context_before} -> {result.context_after} tokens (estimated)"
    )
    body = f"Goal: {clean.goal or '(none)'}\n{context}\n" + (
        f"Why: {why.rationale}\n" if why.rationale else ""
    )
    recall = recall_trailers(recorded.recall, SUMMARY_KEPT if deterministic else "Clm-Recall")
    summarizer = {"Clm-Summarizer": recorded.summarizer_trailer}
    return _message(state, "compact", why, body, **recall, **summarizer)


def committed_snapshot(repo: MemoryRepo, state: SessionState) -> str | None:
    """The commit of this session's newest compaction when taken at ``state``'s step and
    context: committing ``state`` again would record nothing new."""
    from clm_policy.memory.audit import committed_at, read_log

    newest = read_log(repo, session=state.session_id, event="compact", limit=1)
    return committed_at(newest, state.step_index, state.tokens.context_tokens)


def check_handed_off(repo: MemoryRepo, state: SessionState, *, branch: bool = False) -> None:
    """Raise :class:`HandedOffAlready` when the session's newest handoff on the checked-out
    branch (``branch``: on its newest handoff branch, ``clm/handoff/<session>-N``) was taken
    at ``state``'s step and context: nothing happened since that it would record (the same
    state file, transcript or persisted session again, a second hook)."""
    from clm_policy.memory.audit import committed_at, read_log

    rev = _newest_handoff_branch(repo, state.session_id) if branch else "HEAD"
    if rev is None:
        return
    newest = read_log(repo, session=state.session_id, event="handoff", limit=1, rev=rev)
    found = committed_at(newest, state.step_index, state.tokens.context_tokens)
    if found is not None:
        raise HandedOffAlready(state, found, newest[0].trailers.get("Clm-Handoff"))


def _newest_handoff_branch(repo: MemoryRepo, session_id: str) -> str | None:
    """The session's handoff branch of the highest number here, None when it has none."""
    prefix = f"refs/heads/clm/handoff/{session_id}-"
    listed = repo.git("for-each-ref", "--format=%(refname)", f"{prefix}*", check=False)
    numbered = [(int(n[len(prefix) :]), n) for n in listed.split() if n[len(prefix) :].isdigit()]
    return max(numbered)[1] if numbered else None


def _next_handoff_number(repo: MemoryRepo, session_id: str, remote: str | None = None) -> int:
    """The session's next handoff number: one more than its handoffs at HEAD and its handoff
    branches; with ``remote`` (a handoff on its own branch, to be pushed there), past the
    numbers of the remote's handoff branches too, so that another clone's handoff of the same
    session is never pushed over (nor its files met again when both are merged)."""
    folder = f"{session_dir(session_id)}/handoffs/"
    listed = repo.git("ls-tree", "--name-only", "-r", "HEAD", "--", folder, check=False)
    pattern = f"clm/handoff/{session_id}-*"
    local = repo.git("for-each-ref", "--format=%(refname)", f"refs/heads/{pattern}", check=False)
    names = local.split()
    number = len(listed.split()) + len(names) + 1
    if remote is not None:  # (a remote it cannot reach: the push says so, after the commit)
        out = repo.git("ls-remote", "--heads", "--", remote, pattern, check=False)
        names += [line.split("\t", 1)[-1] for line in out.splitlines()]
    prefix = f"refs/heads/clm/handoff/{session_id}-"
    taken = {int(n[len(prefix) :]) for n in names if n[len(prefix) :].isdigit()}
    while number in taken:
        number += 1
    return number


def run_handoff(
    repo: MemoryRepo,
    handoff: Composed | SessionState,
    *,
    why: Provenance = NO_PROVENANCE,
    branch: bool = False,
    push: str | None = None,
    now: datetime | None = None,
    appends: Logs | None = None,
    files: Mapping[str, JsonDoc] | None = None,
    pr_body: str | None = None,
    seed_tokens: int = DEFAULT_SEED_TOKENS,
    seed_chars: int | None = None,
    seed_size: Callable[[str], int] = len,
    agent_id: str | None = None,
    store: MemoryStore | None = None,
    memory_dir: str | None = None,
) -> HandoffOutcome:
    """Commit the handoff ``handoff`` composes (:func:`~clm_policy.lifecycle.compose.compose`;
    a bare state is composed as it is): the manifest (validated), its Markdown and the state,
    on the checked-out branch, or on ``clm/handoff/<session>-<n>`` with ``branch``; push if
    asked. Returns the seed the next session starts from (:mod:`clm_policy.lifecycle.seed`)
    within ``seed_chars`` (default ``seed_tokens`` x 4) as ``seed_size`` measures it
    (characters, or what the agent counts: Codex takes bytes). A failed push raises
    :class:`PushError`, saying the commit exists (and holding it). ``pr_body`` (with
    ``branch``): the file the pull-request body is written to, checked before the commit,
    written before the push. The trailers say what was measured (docs/verification.md).
    ``store``: the memory backend of the seed's topics (default: ``repo``'s git topics);
    ``memory_dir``: the memory repository as the user names it, for the seed's last line.
    A handoff at the step and context of the session's newest handoff (on the checked-out
    branch; with ``branch``, on its newest handoff branch) commits nothing:
    :class:`HandedOffAlready` (:func:`check_handed_off`)."""
    from clm_policy.lifecycle.compose import Composed
    from clm_policy.memory.redact import untag

    if not isinstance(handoff, Composed):
        handoff = Composed(handoff, handoff)
    state = handoff.state
    check_identifiers(state)
    _check_destination(branch=branch, push=push, pr_body=pr_body)
    change = Change(files, appends)
    clean = change.clean(state)
    manifest = _handoff_manifest(change, handoff, clean, why, now=now, agent_id=agent_id)
    # The number and the manifest's name are chosen under the lock the commit takes: two
    # handoffs of a session at once never take the same files (the later one would
    # overwrite the earlier's).
    with repo.locked():
        check_handed_off(repo, state, branch=branch)
        number = _next_handoff_number(repo, state.session_id, push if branch else None)
        m_path = _manifest_file(repo, manifest, state.session_id, number, branch=branch)
        h_path = handoff_path(state.session_id, number)
        checked = _add_handoff_files(change, state, clean, manifest, m_path, h_path)
        # what the next session starts from, checked for the facts before it is committed (its
        # memory read before anything is written: a refusal stops here)
        seed = seed_text(
            manifest,
            memory=memory_hits(repo, manifest, store),
            budget=seed_chars if seed_chars is not None else seed_tokens * CHARS_PER_TOKEN,
            read_more=read_more(h_path, memory_dir or repo.root),
            constraints=clean.constraints,
            decisions=clean.decisions,
            size=seed_size,
        )
        extra, agent_recall = _measured(change, handoff, manifest, seed)
        # the seed as the next session's system message: its markers as committed, untagged
        messages = [Message(role=MessageRole.SYSTEM, content=untag(seed), name=SEED_NAME)]
        more = {"Clm-Manifest": m_path, "Clm-Handoff": h_path, **extra}
        commit, ref = _commit_handoff(
            repo, change, state, why, manifest, more, number, branch=branch
        )
    manifest = checked[-1]
    if pr_body is not None:  # before the push: the body is there even if the push fails
        from clm_policy.lifecycle.prbody import write_pull_request

        write_pull_request(repo, pr_body, ref)
    done = HandoffOutcome(
        commit, manifest, m_path, h_path, messages, ref, change.redactions, None, agent_recall
    )
    return _push_handoff(repo, push, done) if push else done


def _check_destination(*, branch: bool, push: str | None, pr_body: str | None) -> None:
    """Refuse the remote and the pull-request body's file before anything is committed."""
    if push:
        from clm_policy.memory.git.run import check_name

        check_name("remote", push)
    if pr_body is not None:
        from clm_policy.lifecycle.prbody import check_body_path

        if not branch:
            raise InputError("a pull-request body needs the handoff on a branch of its own")
        check_body_path(pr_body)


def check_remote(repo: MemoryRepo, remote: str) -> None:
    """Refuse ``remote`` unless ``repo`` names it or it is a URL or a path (a handoff by hand;
    a hook's commits and says the push failed: its handoff is not lost to a remote set
    wrong)."""
    from clm_policy.memory.git.run import check_name

    check_name("remote", remote)
    if any(sign in remote for sign in "/:\\"):
        return
    if repo.run("remote", "get-url", "--", remote)[0] != 0:
        raise InputError(
            f"{repo.shown}: no remote named {remote!r} (git -C {repo.shown} remote -v lists "
            "them); nothing was committed"
        )


def _handoff_manifest(
    change: Change,
    handoff: Composed,
    clean: SessionState,
    why: Provenance,
    *,
    now: datetime | None,
    agent_id: str | None,
) -> HandoffManifest:
    """The handoff's manifest, built from the cleaned state and redacted by ``change``."""
    from clm_policy.lifecycle.handoff import build_manifest

    rationale = why.rationale or (f"rule {why.rule}" if why.rule else "handoff requested")
    manifest = build_manifest(
        clean, change.clean(rationale), now=now or utc_now(), composed=handoff
    )
    # its agent words and record came beside the state, which the change cleaned: so are they
    words = manifest.agent_words
    manifest = manifest.replace(
        agent_words=None if words is None else change.clean(words),
        record=change.clean(manifest.record),
    )
    if agent_id is not None:
        manifest = manifest.replace(agent_id=agent_id)
    return manifest


def _manifest_file(
    repo: MemoryRepo, manifest: HandoffManifest, session_id: str, number: int, *, branch: bool
) -> str:
    """The manifest's path: its own name, with ``-<number>`` when a handoff already holds
    that name (at HEAD, in the work tree, or with ``branch`` on any branch)."""
    from clm_policy.lifecycle.handoff import manifest_filename

    m_path = manifest_path(manifest_filename(manifest, session_id))
    taken = repo.show_file(m_path) is not None or os.path.lexists(os.path.join(repo.root, m_path))
    if not taken and branch:  # another branch's handoff (its own pull request) may hold it
        taken = bool(repo.git("log", "--all", "-1", "--format=%H", "--", m_path, check=False))
    if taken:
        # a second handoff of this session within the same second: keep both
        m_path = m_path.removesuffix(".json") + f"-{number}.json"
    return m_path


def _add_handoff_files(
    change: Change,
    state: SessionState,
    clean: SessionState,
    manifest: HandoffManifest,
    m_path: str,
    h_path: str,
) -> list[HandoffManifest]:
    """Add the manifest, its Markdown and the final state to ``change``; the list returned
    receives the manifest as validated when the commit writes it."""
    from clm_policy.lifecycle.handoff import render_manifest_markdown
    from clm_policy.models.shapes.manifest import validate_manifest

    checked: list[HandoffManifest] = []
    change.files[m_path] = JsonDoc(
        manifest.as_dict(), lambda data: checked.append(validate_manifest(data))
    )
    change.files[h_path] = render_manifest_markdown(
        manifest, session_id=state.session_id, step=state.step_index
    )
    # The session ends here: its state is kept for the record without the conversation (the
    # next session starts from the seed, not from a transcript).
    change.files[f"{session_dir(state.session_id)}/state.json"] = state_doc(
        clean.replace(messages=[])
    )
    return checked


def _measured(
    change: Change, handoff: Composed, manifest: HandoffManifest, seed: str
) -> tuple[dict[str, str], Recall | None]:
    """The handoff's trailers of what was measured, and the agent's recall (None when it
    wrote no handoff)."""
    asked = inventory(change.clean(handoff.base))
    extra = {
        "Clm-Seed-Tokens": str(estimate_tokens(seed)),
        "Clm-Seed-Kept": verify(asked, [seed]).trailer,
    }
    agent_recall = None
    if manifest.agent_words is not None:
        agent_recall = verify(asked, [manifest.agent_words.text])
        extra.update(recall_trailers(agent_recall, "Clm-Recall-Agent", kinds=True))
        if manifest.record.contradictions:
            extra["Clm-Contradictions"] = str(len(manifest.record.contradictions))
    return extra, agent_recall


def _commit_handoff(
    repo: MemoryRepo,
    change: Change,
    state: SessionState,
    why: Provenance,
    manifest: HandoffManifest,
    more: Mapping[str, str],
    number: int,
    *,
    branch: bool,
) -> tuple[str, str]:
    """Commit the handoff on the checked-out branch, or on ``clm/handoff/<session>-<n>``
    with ``branch``: the commit and the ref of its branch."""
    body = (
        f"Goal: {manifest.goal}\nNext safe action: {manifest.next_safe_action}\n"
        f"Why: {manifest.decision_rationale}\n"
    )
    message = _message(state, "handoff", why, body, **more)
    if branch:
        ref = f"refs/heads/clm/handoff/{state.session_id}-{number}"
        if change.appends:
            raise InputError("a handoff on its own branch cannot append decision logs")
        return repo.commit_to_branch(ref, message, change), ref
    commit = repo.commit(message, change)
    return commit, f"refs/heads/{repo.branch()}"


def _push_handoff(repo: MemoryRepo, remote: str, done: HandoffOutcome) -> HandoffOutcome:
    """Push ``done``'s branch to ``remote``: ``done`` with the attempts it took, or a
    :class:`PushError` saying the commit exists and how to push it (holding ``done``)."""
    try:
        attempts = repo.push(remote, done.ref)
        if attempts > 1:  # rebased onto what the remote had: the commit pushed is a new one
            done = done.replace(commit=repo.git("rev-parse", "--verify", done.ref))
        return done.replace(push_attempts=attempts)
    except (GitError, InputError) as exc:
        from clm_policy.memory.git.write import PushRejected

        name = done.ref.removeprefix("refs/heads/")
        masked = mask_credentials(remote)  # the URL's token is not repeated in a message
        advice = f"Push it yourself: git -C {repo.shown} push -- {masked} {name}"
        if isinstance(exc, PushRejected):  # pushing it again as it is would be rejected
            advice = exc.advice[:1].upper() + exc.advice[1:]
        failed = PushError(
            f"the handoff is committed locally ({done.commit[:12]} on {name}), but pushing it "
            f"to {masked!r} failed: {str(exc).rstrip('.')}. {advice}"
        )
        failed.outcome = done
        raise failed from None


SEED_NAME = "clm-handoff"


def read_more(handoff_file: str, memory_dir: str | None) -> str:
    """How the next agent reads the whole handoff: ``clm-policy show`` (with the memory
    repository as the user named it) or the MCP tool ``memory_read`` (its key)."""
    where = f"--memory {memory_dir} " if memory_dir else ""
    return (
        f"`clm-policy show {where}{handoff_file}`, or the MCP tool memory_read with the key "
        f"`{handoff_key(handoff_file)}`."
    )


def memory_hits(
    repo: MemoryRepo, manifest: HandoffManifest, store: MemoryStore | None = None
) -> list[tuple[str, str]]:
    """The seed's memory entries: ``store``'s (the git topics by default) for the manifest's
    memory keys, goal and next safe action."""
    from clm_policy.memory.store import SEED_HITS, GitMemoryStore

    chosen = store if store is not None else GitMemoryStore(repo)
    return chosen.seed(
        manifest.memory_keys, manifest.goal, about=manifest.next_safe_action, limit=SEED_HITS
    )


def record_session_start(
    repo: MemoryRepo,
    state: SessionState,
    *,
    record: Mapping[str, object],
    why: Provenance = NO_PROVENANCE,
) -> str:
    """Commit a session's start: its first ``state.json`` and ``run.json`` (to resume it)."""
    check_identifiers(state)
    folder = session_dir(state.session_id)
    change = Change(
        {f"{folder}/run.json": JsonDoc(dict(record)), f"{folder}/state.json": state_doc(state)}
    )
    started = f"Session started: {change.clean(state.goal) or '(no goal)'}"
    message = _message(state, "start", why, started)
    return repo.commit(message, change)


def record_agent_summary(
    repo: MemoryRepo,
    state: SessionState,
    summary: str,
    *,
    why: Provenance = NO_PROVENANCE,
    context: tuple[int | None, int | None] = (None, None),
) -> str:
    """Commit the summary an agent wrote of its own context when it compacted (Claude Code's
    ``compact_summary``) as ``sessions/<id>/summaries/<step>.md``.

    ``context``: the agent's own figures before and after (Claude Code's
    ``compactMetadata.preTokens``/``postTokens``); without the one after, the commit says the
    context is unknown and has no ``Clm-Context-Tokens`` (never a 0 it did not measure).
    When the memory has the session's state (the snapshot committed before the agent
    compacted), the summary is verified against its facts (front matter, ``Clm-Recall``)."""
    from clm_policy.memory.sessions import load_session

    check_identifiers(state)
    path = f"{session_dir(state.session_id)}/summaries/{state.step_index:06d}.md"
    change = Change()
    cleaned = change.clean(summary)
    try:  # the session's state.json at HEAD, when there is one that can be read
        recall: Recall | None = verify(facts(load_session(repo, state.session_id).state), [cleaned])
    except InputError:
        recall = None
    before, after = context
    front = [
        f"session: {json.dumps(state.session_id)}",
        f"step: {state.step_index}",
        f"rule: {json.dumps(why.rule)}",
        f"context_before: {json.dumps(before)}",
        f"context_after: {json.dumps(after)}",
    ]
    if recall is not None:
        front += [
            f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in recall.front_matter().items()
        ]
    text = "---\n" + "\n".join(front) + f"\n---\n\n# The agent's own summary\n\n{cleaned.strip()}\n"
    found = trailers(state, "summary", why, **(recall_trailers(recall) if recall else {}))
    if after is None:
        figures = "Context after the compaction: unknown until the agent's next response."
        del found["Clm-Context-Tokens"]
    else:
        shown = before if before is not None else "unknown"
        figures = f"Context: {shown} -> {after} tokens (the agent's own figures)."
        found["Clm-Context-Tokens"] = str(after)
    message = CommitMessage(
        event_subject("summary", state.session_id, state.step_index, why.rule),
        f"The agent compacted its context; its summary is {path}.\n{figures}",
        found,
    )
    change.files[path] = text
    return repo.commit(message, change)


def record_session_end(
    repo: MemoryRepo,
    state: SessionState,
    reason: str,
    *,
    why: Provenance = NO_PROVENANCE,
    record: Mapping[str, object],
    appends: Logs | None = None,
) -> str | None:
    """Commit the end of a run: ``run.json``, the state (unless a handoff committed it) and
    the decisions and metrics not yet in git; None, and no commit, when all that is in git."""
    folder = session_dir(state.session_id)
    change = Change({f"{folder}/run.json": JsonDoc(dict(record))}, appends)
    if reason != "handoff":  # the handoff commit already keeps the final state
        change.files[f"{folder}/state.json"] = state_doc(state)
    message = CommitMessage(
        event_subject("session", state.session_id, state.step_index, reason),
        f"Session ended: {reason}.",
        trailers(state, "session", why),
    )
    try:
        return repo.commit(message, change)
    except NothingToCommit:
        return None
