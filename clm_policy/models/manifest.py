"""The handoff manifest — GENERATED from clm_policy/models/shapes/manifest.py.

Do not edit: run ``python -m clm_policy.models.generate --write`` after changing the
declaration (a test fails until then). clm_policy/models/generate.py says what is here.
"""

from __future__ import annotations

from clm_policy.base.record import Record
from clm_policy.models.enums import ManifestStatus, WordsSource
from clm_policy.models.state import TokenSnapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, ClassVar


class AgentWords(Record):
    """What the handing-off agent wrote on purpose, kept word for word."""

    FIELDS: ClassVar[tuple[str, ...]] = ('source', 'text', 'step')
    REQUIRED: ClassVar[tuple[str, ...]] = ('source', 'text')
    __slots__ = FIELDS
    HASHABLE = False

    def __init__(self, *, source: WordsSource, text: str, step: int | None = None) -> None:
        self.source = source
        self.text = text
        self.step = step

    def as_dict(self) -> dict[str, Any]:
        return {'source': self.source.value, 'text': self.text, 'step': self.step}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AgentWords:
        return cls(source=WordsSource(data['source']), text=data['text'], step=data['step'])


class Check(Record):
    """A check (a test, a build, a lint, a type check) and its latest run."""

    FIELDS: ClassVar[tuple[str, ...]] = ('command', 'status', 'result', 'earlier')
    REQUIRED: ClassVar[tuple[str, ...]] = ('command', 'status', 'result')
    __slots__ = FIELDS
    HASHABLE = False

    def __init__(
        self, *, command: str, status: str, result: str, earlier: str | None = None
    ) -> None:
        self.command = command
        self.status = status
        self.result = result
        self.earlier = earlier

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


class HandoffRecord(Record):
    """What clm-policy recorded from the transcript, besides the files and the user's
    messages (each in the manifest's own fields): never the agent's judgement."""

    FIELDS: ClassVar[tuple[str, ...]] = (
        'tasks', 'tasks_before_request', 'checks', 'environment', 'made_artifacts', 'subagents',
        'failures', 'read_artifacts', 'said', 'reasoning', 'last_activity', 'contradictions',
    )
    REQUIRED: ClassVar[tuple[str, ...]] = ()
    __slots__ = FIELDS
    HASHABLE = False

    def __init__(
        self,
        *,
        tasks: list[str] | None = None,
        tasks_before_request: bool = False,
        checks: list[Check] | None = None,
        environment: list[str] | None = None,
        made_artifacts: list[str] | None = None,
        subagents: list[str] | None = None,
        failures: list[str] | None = None,
        read_artifacts: list[str] | None = None,
        said: list[str] | None = None,
        reasoning: list[str] | None = None,
        last_activity: str | None = None,
        contradictions: list[str] | None = None,
    ) -> None:
        self.tasks = [] if tasks is None else tasks
        self.tasks_before_request = tasks_before_request
        self.checks = [] if checks is None else checks
        self.environment = [] if environment is None else environment
        self.made_artifacts = [] if made_artifacts is None else made_artifacts
        self.subagents = [] if subagents is None else subagents
        self.failures = [] if failures is None else failures
        self.read_artifacts = [] if read_artifacts is None else read_artifacts
        self.said = [] if said is None else said
        self.reasoning = [] if reasoning is None else reasoning
        self.last_activity = last_activity
        self.contradictions = [] if contradictions is None else contradictions

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


class HandoffManifest(Record):
    """The handoff manifest (seed plan, section 5.5): its fourteen fields required, the
    handoff's additions optional, no other field."""

    FIELDS: ClassVar[tuple[str, ...]] = (
        'schema_version', 'goal', 'status', 'source_of_truth', 'changed_artifacts',
        'commands_and_results', 'verified', 'not_verified', 'assumptions_risks', 'blockers',
        'next_safe_action', 'memory_keys', 'token_snapshot', 'timestamp', 'decision_rationale',
        'requests', 'constraints', 'decisions', 'done', 'remaining', 'open_failures',
        'moved_artifacts', 'deleted_artifacts', 'transcript', 'last_message', 'agent_words',
        'record', 'agent_id',
    )
    REQUIRED: ClassVar[tuple[str, ...]] = (
        'schema_version', 'goal', 'status', 'source_of_truth', 'changed_artifacts',
        'commands_and_results', 'verified', 'not_verified', 'assumptions_risks', 'blockers',
        'next_safe_action', 'memory_keys', 'token_snapshot', 'timestamp', 'decision_rationale',
    )
    __slots__ = FIELDS
    HASHABLE = False

    def __init__(
        self,
        *,
        schema_version: int,
        goal: str,
        status: ManifestStatus,
        source_of_truth: list[str],
        changed_artifacts: list[str],
        commands_and_results: list[str],
        verified: list[str],
        not_verified: list[str],
        assumptions_risks: list[str],
        blockers: list[str],
        next_safe_action: str,
        memory_keys: list[str],
        token_snapshot: TokenSnapshot,
        timestamp: str,
        decision_rationale: str,
        requests: list[str] | None = None,
        constraints: list[str] | None = None,
        decisions: list[str] | None = None,
        done: list[str] | None = None,
        remaining: list[str] | None = None,
        open_failures: list[str] | None = None,
        moved_artifacts: list[str] | None = None,
        deleted_artifacts: list[str] | None = None,
        transcript: str | None = None,
        last_message: str | None = None,
        agent_words: AgentWords | None = None,
        record: HandoffRecord | None = None,
        agent_id: str | None = None,
    ) -> None:
        self.schema_version = schema_version
        self.goal = goal
        self.status = status
        self.source_of_truth = source_of_truth
        self.changed_artifacts = changed_artifacts
        self.commands_and_results = commands_and_results
        self.verified = verified
        self.not_verified = not_verified
        self.assumptions_risks = assumptions_risks
        self.blockers = blockers
        self.next_safe_action = next_safe_action
        self.memory_keys = memory_keys
        self.token_snapshot = token_snapshot
        self.timestamp = timestamp
        self.decision_rationale = decision_rationale
        self.requests = [] if requests is None else requests
        self.constraints = [] if constraints is None else constraints
        self.decisions = [] if decisions is None else decisions
        self.done = [] if done is None else done
        self.remaining = [] if remaining is None else remaining
        self.open_failures = [] if open_failures is None else open_failures
        self.moved_artifacts = [] if moved_artifacts is None else moved_artifacts
        self.deleted_artifacts = [] if deleted_artifacts is None else deleted_artifacts
        self.transcript = transcript
        self.last_message = last_message
        self.agent_words = agent_words
        self.record = HandoffRecord() if record is None else record
        self.agent_id = agent_id

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
