"""The handoff manifest — GENERATED from clm_policy/models/shapes/manifest.py by
clm_policy/models/generate.py (which says what is here): do not edit, run
``python -m clm_policy.models.generate --write`` after changing the declaration.
"""

from __future__ import annotations

from clm_policy.base.record import Record, field
from clm_policy.models.enums import ManifestStatus, WordsSource
from clm_policy.models.state import TokenSnapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


class AgentWords(Record, kw_only=True):
    """What the handing-off agent wrote on purpose, kept word for word."""

    source: WordsSource
    text: str
    step: int | None = None
    HASHABLE = False

    def as_dict(self) -> dict[str, Any]:
        return {'source': self.source.value, 'text': self.text, 'step': self.step}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AgentWords:
        return cls(source=WordsSource(data['source']), text=data['text'], step=data['step'])


class Check(Record, kw_only=True):
    """A check (a test, a build, a lint, a type check) and its latest run."""

    command: str
    status: str
    result: str
    earlier: str | None = None
    HASHABLE = False

    def as_dict(self) -> dict[str, Any]:
        return {
            'command': self.command,
            'status': self.status,
            'result': self.result,
            'earlier': self.earlier,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Check:
        return cls(
            command=data['command'],
            status=data['status'],
            result=data['result'],
            earlier=data['earlier'],
        )


class HandoffRecord(Record, kw_only=True):
    """What clm-policy recorded from the transcript, besides the files and the user's
    messages (each in the manifest's own fields): never the agent's judgement."""

    tasks: list[str] = field(default_factory=list)
    tasks_before_request: bool = False
    checks: list[Check] = field(default_factory=list)
    environment: list[str] = field(default_factory=list)
    made_artifacts: list[str] = field(default_factory=list)
    subagents: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    read_artifacts: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    last_activity: str | None = None
    contradictions: list[str] = field(default_factory=list)
    HASHABLE = False

    def as_dict(self) -> dict[str, Any]:
        return {
            'tasks': list(self.tasks),
            'tasks_before_request': self.tasks_before_request,
            'checks': [item.as_dict() for item in self.checks],
            'environment': list(self.environment),
            'made_artifacts': list(self.made_artifacts),
            'subagents': list(self.subagents),
            'failures': list(self.failures),
            'read_artifacts': list(self.read_artifacts),
            'said': list(self.said),
            'reasoning': list(self.reasoning),
            'last_activity': self.last_activity,
            'contradictions': list(self.contradictions),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HandoffRecord:
        return cls(
            tasks=list(data['tasks']),
            tasks_before_request=data['tasks_before_request'],
            checks=[Check.from_dict(item) for item in data['checks']],
            environment=list(data['environment']),
            made_artifacts=list(data['made_artifacts']),
            subagents=list(data['subagents']),
            failures=list(data['failures']),
            read_artifacts=list(data['read_artifacts']),
            said=list(data['said']),
            reasoning=list(data['reasoning']),
            last_activity=data['last_activity'],
            contradictions=list(data['contradictions']),
        )


class HandoffManifest(Record, kw_only=True):
    """The handoff manifest (seed plan, section 5.5): its fourteen fields required, the
    handoff's additions optional, no other field."""

    schema_version: int
    goal: str
    status: ManifestStatus
    source_of_truth: list[str]
    changed_artifacts: list[str]
    commands_and_results: list[str]
    verified: list[str]
    not_verified: list[str]
    assumptions_risks: list[str]
    blockers: list[str]
    next_safe_action: str
    memory_keys: list[str]
    token_snapshot: TokenSnapshot
    timestamp: str
    decision_rationale: str
    requests: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    remaining: list[str] = field(default_factory=list)
    open_failures: list[str] = field(default_factory=list)
    moved_artifacts: list[str] = field(default_factory=list)
    deleted_artifacts: list[str] = field(default_factory=list)
    transcript: str | None = None
    last_message: str | None = None
    agent_words: AgentWords | None = None
    record: HandoffRecord = field(default_factory=HandoffRecord)
    agent_id: str | None = None
    HASHABLE = False

    def as_dict(self) -> dict[str, Any]:
        return {
            'schema_version': self.schema_version,
            'goal': self.goal,
            'status': self.status.value,
            'source_of_truth': list(self.source_of_truth),
            'changed_artifacts': list(self.changed_artifacts),
            'commands_and_results': list(self.commands_and_results),
            'verified': list(self.verified),
            'not_verified': list(self.not_verified),
            'assumptions_risks': list(self.assumptions_risks),
            'blockers': list(self.blockers),
            'next_safe_action': self.next_safe_action,
            'memory_keys': list(self.memory_keys),
            'token_snapshot': self.token_snapshot.as_dict(),
            'timestamp': self.timestamp,
            'decision_rationale': self.decision_rationale,
            'requests': list(self.requests),
            'constraints': list(self.constraints),
            'decisions': list(self.decisions),
            'done': list(self.done),
            'remaining': list(self.remaining),
            'open_failures': list(self.open_failures),
            'moved_artifacts': list(self.moved_artifacts),
            'deleted_artifacts': list(self.deleted_artifacts),
            'transcript': self.transcript,
            'last_message': self.last_message,
            'agent_words': None if self.agent_words is None else self.agent_words.as_dict(),
            'record': self.record.as_dict(),
            'agent_id': self.agent_id,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HandoffManifest:
        return cls(
            schema_version=data['schema_version'],
            goal=data['goal'],
            status=ManifestStatus(data['status']),
            source_of_truth=list(data['source_of_truth']),
            changed_artifacts=list(data['changed_artifacts']),
            commands_and_results=list(data['commands_and_results']),
            verified=list(data['verified']),
            not_verified=list(data['not_verified']),
            assumptions_risks=list(data['assumptions_risks']),
            blockers=list(data['blockers']),
            next_safe_action=data['next_safe_action'],
            memory_keys=list(data['memory_keys']),
            token_snapshot=TokenSnapshot.from_dict(data['token_snapshot']),
            timestamp=data['timestamp'],
            decision_rationale=data['decision_rationale'],
            requests=list(data['requests']),
            constraints=list(data['constraints']),
            decisions=list(data['decisions']),
            done=list(data['done']),
            remaining=list(data['remaining']),
            open_failures=list(data['open_failures']),
            moved_artifacts=list(data['moved_artifacts']),
            deleted_artifacts=list(data['deleted_artifacts']),
            transcript=data['transcript'],
            last_message=data['last_message'],
            agent_words=None if data['agent_words'] is None else AgentWords.from_dict(data['agent_words']),
            record=HandoffRecord.from_dict(data['record']),
            agent_id=data['agent_id'],
        )
