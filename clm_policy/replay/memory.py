"""``replay --memory``: every recorded decision of a memory repository decided again under
another policy, and what would change.

One commit is read (HEAD unless asked otherwise): the run loop commits every session's
decisions on the checked-out branch, a push rebases onto it, and a handoff branch
(``clm/handoff/...``) never carries decision logs — so HEAD holds every decision there is.

Each decision is re-decided on the state it recorded, under the profile it was decided under
(with the thresholds its run was given, ``run --soft-compact/--hard-handoff`` in the session's
``run.json``, as the run decided it: the same policy replayed changes nothing), and compared
by action and deciding rule with what the policy said then (a person's answer to
a confirmation is not the policy's: the policy's own proposal is compared). Three results
besides *unchanged*: *changed* (grouped by old rule -> new rule, old action -> new action,
with examples), *refused* (the new policy cannot decide the recorded state: a profile or a
signal it does not declare, a share of a window it cannot know — as it would refuse in a real
run), and *not replayable* (the record lacks what a decision needs; see
:mod:`clm_policy.replay.records`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from clm_policy.base.errors import ClmError, InputError, quote
from clm_policy.base.progress import Progress
from clm_policy.loop.runs import with_overrides
from clm_policy.memory.git.write import MemoryRepo
from clm_policy.memory.layout import session_dir
from clm_policy.policy.compile import load_policy
from clm_policy.policy.engine import Policy
from clm_policy.replay.records import (
    Recorded,
    SkippedFile,
    decision_files,
    read_lines,
    recorded,
)
from clm_policy.transcripts.reading import json_object

EXAMPLES = 3  # kept per group of changes, refusals and unreplayable lines


@dataclass(frozen=True)
class Example:
    """One decision of a group: where it is, and what the old and new policy said."""

    session: str
    line: int
    step: int | None = None
    context_tokens: int | None = None
    old: str | None = None  # the old rationale
    new: str | None = None  # the new rationale

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class Change:
    """Decisions that changed the same way: old rule -> new rule, old action -> new action."""

    old_rule: str | None
    new_rule: str | None
    old_action: str
    new_action: str
    count: int = 0
    examples: list[Example] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "from": {"rule": self.old_rule, "action": self.old_action},
            "to": {"rule": self.new_rule, "action": self.new_action},
            "count": self.count,
            "examples": [e.as_dict() for e in self.examples],
        }


@dataclass
class Problem:
    """Decisions that could not be compared, for the same reason."""

    reason: str
    count: int = 0
    examples: list[Example] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "count": self.count,
            "examples": [e.as_dict() for e in self.examples],
        }


@dataclass
class MemoryReplay:
    """What replaying a memory repository's decisions under ``policy`` found."""

    memory: str
    rev: str
    commit: str | None  # None: the repository has no commit at all
    policy: str  # the policy's name
    policy_path: str
    sessions: int = 0
    decisions: int = 0  # lines read, blank lines left out
    unchanged: int = 0
    changes: list[Change] = field(default_factory=list)
    refused: list[Problem] = field(default_factory=list)
    not_replayable: list[Problem] = field(default_factory=list)
    skipped_files: list[SkippedFile] = field(default_factory=list)
    given_thresholds: list[str] = field(default_factory=list)  # sessions whose run set them

    @property
    def changed(self) -> int:
        return sum(c.count for c in self.changes)

    @property
    def refused_count(self) -> int:
        return sum(p.count for p in self.refused)

    @property
    def not_replayable_count(self) -> int:
        return sum(p.count for p in self.not_replayable)

    @property
    def replayed(self) -> int:
        return self.unchanged + self.changed

    def as_dict(self) -> dict[str, Any]:
        return {
            "memory": self.memory,
            "rev": self.rev,
            "commit": self.commit,
            "policy": {"name": self.policy, "path": self.policy_path},
            "sessions": self.sessions,
            "decisions": self.decisions,
            "replayed": self.replayed,
            "unchanged": self.unchanged,
            "changed": self.changed,
            "refused": self.refused_count,
            "not_replayable": self.not_replayable_count,
            "changes": [c.as_dict() for c in self.changes],
            "refusals": [p.as_dict() for p in self.refused],
            "not_replayable_reasons": [p.as_dict() for p in self.not_replayable],
            "skipped_files": [{"path": s.path, "reason": s.reason} for s in self.skipped_files],
            "sessions_with_run_thresholds": self.given_thresholds,
        }


def replay_memory(
    memory: str, policy_ref: str, *, rev: str = "HEAD", progress: bool | None = None
) -> MemoryReplay:
    """Decide every decision recorded in ``memory`` at ``rev`` again under ``policy_ref`` (a
    file or a bundled name). ``progress``: show it on a terminal (None: when stderr is one)."""
    policy = load_policy(policy_ref)
    with MemoryRepo(memory) as repo:
        commit = repo.resolve_commit(rev)
        if commit is None and (rev != "HEAD" or repo.head() is not None):
            raise InputError(f"{memory}: no commit named {quote(rev)}")
        result = MemoryReplay(memory, rev, commit, policy.name, policy.path)
        if commit is None:
            return result
        paths, skipped = decision_files(repo, commit)
        result.skipped_files = skipped
        result.sessions = len({path.split("/")[1] for path in paths})  # (a long one: files)
        changes: dict[tuple[str | None, str | None, str, str], Change] = {}
        refused: dict[str, Problem] = {}
        unreplayable: dict[str, Problem] = {}
        given = run_thresholds(repo, commit, sorted({path.split("/")[1] for path in paths}))
        result.given_thresholds = sorted(given)
        policies: dict[tuple[str, int | None, int | None], Policy] = {}
        with Progress("replaying decisions", enabled=progress) as shown:
            for line in read_lines(repo, commit, paths, skipped):
                if not line.text.strip():
                    continue
                result.decisions += 1
                shown.advance()
                item = recorded(line)
                if isinstance(item, str):
                    where = Example(line.session, line.number)
                    _note(unreplayable.setdefault(item, Problem(item)), where)
                    continue
                try:
                    soft, hard = given.get(item.session, (None, None))
                    run = (item.profile, soft, hard)
                    if run not in policies:
                        policies[run] = with_overrides(policy, item.profile, soft, hard)
                    new = policies[run].decide(item.state, item.profile)
                except ClmError as exc:
                    _note(refused.setdefault(exc.message, Problem(exc.message)), _example(item))
                    continue
                action = new.action.value
                if action == item.action and new.trigger == item.trigger:
                    result.unchanged += 1
                    continue
                key = (item.trigger, new.trigger, item.action, action)
                _note(changes.setdefault(key, Change(*key)), _example(item, new.rationale))
    result.changes = sorted(changes.values(), key=lambda c: -c.count)
    result.refused = sorted(refused.values(), key=lambda p: -p.count)
    result.not_replayable = sorted(unreplayable.values(), key=lambda p: -p.count)
    return result


def run_thresholds(
    repo: MemoryRepo, commit: str, sessions: list[str]
) -> dict[str, tuple[int | None, int | None]]:
    """The soft and hard limits (tokens) each session's run was given (``--soft-compact``,
    ``--hard-handoff``, kept in its ``run.json`` at ``commit``), for the sessions given any;
    read by one git process."""
    texts = repo.show_files([f"{commit}:{session_dir(s)}/run.json" for s in sessions])
    found = {}
    for session, text in zip(sessions, texts, strict=True):
        run = json_object(text or "") or {}
        soft, hard = (_tokens(run.get(key)) for key in ("soft_compact", "hard_handoff"))
        if soft is not None or hard is not None:
            found[session] = (soft, hard)
    return found


def _tokens(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _example(item: Recorded, new: str | None = None) -> Example:
    state = item.state
    step, context = state.step_index, state.tokens.context_tokens
    return Example(item.session, item.line, step, context, item.rationale, new)


def _note(group: Change | Problem, example: Example) -> None:
    """Count one more decision of ``group``, kept as an example while they are few."""
    group.count += 1
    if len(group.examples) < EXAMPLES:
        group.examples.append(example)
