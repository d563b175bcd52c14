"""The compaction and handoff pipelines: build the content, redact it, commit it.

Everything that reaches git goes through a :class:`~clm_policy.memory.redact.Redactor` first
(its count lands in the ``Clm-Redactions`` trailer); the manifest is validated by pydantic and
by its JSON schema after redaction and before anything is written. The state handed back to
the caller (for the agent to continue with) is not redacted; the persisted ``state.json`` is.
Raw transcripts are never written: a compaction writes its summary, its hint and the state
it leaves (hint + the last few messages, redacted); a handoff its manifest, its Markdown
rendering and the final state without its messages.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from clm_policy.lifecycle.compaction import CompactionResult, compact
from clm_policy.lifecycle.handoff import (
    build_manifest,
    manifest_filename,
    render_manifest_markdown,
    seed_messages,
)
from clm_policy.memory.gitwrite import MemoryRepo
from clm_policy.memory.layout import (
    check_session,
    compaction_path,
    handoff_path,
    manifest_path,
    session_dir,
)
from clm_policy.memory.redact import Redactor
from clm_policy.memory.store import GitMemoryStore
from clm_policy.memory.trailers import CommitMessage, event_subject
from clm_policy.models.manifest import HandoffManifest, validate_manifest
from clm_policy.models.state import Message, SessionState

SEED_HITS = 3


@dataclass(frozen=True)
class Provenance:
    """Why the pipeline runs: the deciding rule and policy (for the trailers)."""

    rule: str | None = None
    rationale: str | None = None
    policy: str | None = None  # path@content-hash
    extra_trailers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CompactOutcome:
    commit: str
    path: str
    result: CompactionResult
    redactions: int


@dataclass(frozen=True)
class HandoffOutcome:
    commit: str
    manifest: HandoffManifest
    manifest_path: str
    handoff_path: str
    seed: list[Message]
    ref: str
    redactions: int
    push_attempts: int | None = None


def _state_json(state: SessionState, redactor: Redactor) -> str:
    return json.dumps(redactor.data(state.model_dump(mode="json")), indent=2) + "\n"


def _trailers(state: SessionState, event: str, why: Provenance, **more: str) -> dict[str, str]:
    trailers = {
        "Clm-Event": event,
        "Clm-Session": state.session_id,
        "Clm-Step": str(state.step_index),
        "Clm-Context-Tokens": str(state.tokens.context_tokens),
    }
    if state.parent_session:
        trailers["Clm-Parent-Session"] = state.parent_session
    if why.rule:
        trailers["Clm-Rule"] = why.rule
    if why.policy:
        trailers["Clm-Policy"] = why.policy
    trailers.update(more)
    trailers.update(why.extra_trailers)
    return trailers


def run_compaction(
    repo: MemoryRepo,
    state: SessionState,
    *,
    retain: int,
    why: Provenance = Provenance(),
    now: datetime | None = None,
    appends: Mapping[str, str] | None = None,
) -> CompactOutcome:
    """Compact ``state`` and commit the summary document and the persisted state."""
    check_session(state.session_id)
    result = compact(state, retain=retain, now=now or datetime.now(UTC), trigger=why.rule)
    redactor = Redactor()
    path = compaction_path(state.session_id, state.step_index)
    files = {
        path: redactor.text(result.document),
        f"{session_dir(state.session_id)}/state.json": _state_json(result.state, redactor),
    }
    logs = {p: redactor.text(text) for p, text in (appends or {}).items()}
    body = redactor.text(
        f"Goal: {state.goal or '(none)'}\n"
        f"Context: {result.context_before} -> {result.context_after} tokens (estimated)\n"
        + (f"Why: {why.rationale}\n" if why.rationale else "")
    )
    trailers = _trailers(state, "compact", why, **{"Clm-Redactions": str(redactor.total)})
    message = CommitMessage(
        event_subject("compact", state.session_id, state.step_index, why.rule), body, trailers
    )
    commit = repo.commit(message, files, logs)
    return CompactOutcome(commit, path, result, redactor.total)


def _next_handoff_number(repo: MemoryRepo, session_id: str) -> int:
    folder = f"{session_dir(session_id)}/handoffs/"
    listed = repo.git("ls-tree", "--name-only", "-r", "HEAD", "--", folder, check=False)
    refs = repo.git(
        "for-each-ref", "--format=%(refname)", f"refs/heads/clm/handoff/{session_id}-*", check=False
    )
    return len(listed.split()) + len(refs.split()) + 1


def run_handoff(
    repo: MemoryRepo,
    state: SessionState,
    *,
    why: Provenance = Provenance(),
    branch: bool = False,
    push: str | None = None,
    now: datetime | None = None,
    appends: Mapping[str, str] | None = None,
) -> HandoffOutcome:
    """Write the handoff manifest (validated), its Markdown and the state; commit them on the
    checked-out branch, or on ``clm/handoff/<session>-<n>`` with ``branch``; push if asked.
    Returns the seed messages for the next session (manifest, goal, next action, top memory
    hits; no transcript)."""
    check_session(state.session_id)
    rationale = why.rationale or (f"rule {why.rule}" if why.rule else "handoff requested")
    manifest = build_manifest(state, rationale, now=now or datetime.now(UTC))
    redactor = Redactor()
    manifest = validate_manifest(redactor.data(manifest.model_dump(mode="json")))
    number = _next_handoff_number(repo, state.session_id)
    m_path = manifest_path(manifest_filename(manifest, state.session_id))
    if repo.show_file(m_path) is not None or (repo.root / m_path).exists():
        # a second handoff of this session within the same second: keep both
        m_path = m_path.removesuffix(".json") + f"-{number}.json"
    h_path = handoff_path(state.session_id, number)
    files = {
        m_path: json.dumps(manifest.model_dump(mode="json"), indent=2) + "\n",
        h_path: redactor.text(
            render_manifest_markdown(manifest, session_id=state.session_id, step=state.step_index)
        ),
        # The session ends here: its state is kept for the record without the conversation
        # (the next session starts from the seed, not from a transcript).
        f"{session_dir(state.session_id)}/state.json": _state_json(
            state.model_copy(update={"messages": []}), redactor
        ),
    }
    logs = {p: redactor.text(text) for p, text in (appends or {}).items()}
    body = (
        f"Goal: {manifest.goal}\nNext safe action: {manifest.next_safe_action}\n"
        f"Why: {manifest.decision_rationale}\n"
    )
    trailers = _trailers(
        state, "handoff", why, **{"Clm-Manifest": m_path, "Clm-Redactions": str(redactor.total)}
    )
    message = CommitMessage(
        event_subject("handoff", state.session_id, state.step_index, why.rule), body, trailers
    )
    if branch:
        ref = f"refs/heads/clm/handoff/{state.session_id}-{number}"
        commit = repo.commit_to_branch(ref, message, files)
    else:
        commit = repo.commit(message, files, logs)
        ref = f"refs/heads/{repo.branch()}"
    attempts = repo.push(push, ref) if push else None
    hits = _memory_hits(repo, manifest)
    return HandoffOutcome(
        commit,
        manifest,
        m_path,
        h_path,
        seed_messages(manifest, hits),
        ref,
        redactor.total,
        attempts,
    )


def _memory_hits(repo: MemoryRepo, manifest: HandoffManifest) -> list[tuple[str, str]]:
    """The manifest's memory keys first, then topics matching the goal, at most SEED_HITS."""
    store = GitMemoryStore(repo)
    hits: dict[str, str] = {}
    for key in manifest.memory_keys:
        content = store.read(key)
        if content is not None:
            hits.setdefault(key, content)
    words = [w for w in manifest.goal.split() if len(w) > 3][:3]
    for word in words:
        if len(hits) >= SEED_HITS:
            break
        for entry in store.search(word, limit=SEED_HITS):
            hits.setdefault(entry.key, entry.content)
    return list(hits.items())[:SEED_HITS]


def record_session_end(
    repo: MemoryRepo,
    state: SessionState,
    reason: str,
    *,
    why: Provenance = Provenance(),
    record: Mapping[str, object],
    appends: Mapping[str, str] | None = None,
) -> str:
    """Commit the end of a run: ``run.json`` (how it stopped), the state (unless a handoff
    already committed it) and the decisions and metrics not yet in git."""
    redactor = Redactor()
    folder = session_dir(state.session_id)
    files = {f"{folder}/run.json": json.dumps(record, indent=2, sort_keys=True) + "\n"}
    if reason != "handoff":  # the handoff commit already keeps the final state
        files[f"{folder}/state.json"] = _state_json(state, redactor)
    logs = {p: redactor.text(text) for p, text in (appends or {}).items()}
    trailers = _trailers(state, "session", why, **{"Clm-Redactions": str(redactor.total)})
    message = CommitMessage(
        event_subject("session", state.session_id, state.step_index, reason),
        f"Session ended: {reason}.",
        trailers,
    )
    return repo.commit(message, files, logs)
