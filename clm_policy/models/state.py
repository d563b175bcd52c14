"""The state a decision reads — GENERATED from clm_policy/models/shapes/state.py by
clm_policy/models/generate.py (which says what is here): do not edit, run
``python -m clm_policy.models.generate --write`` after changing the declaration.
"""

from __future__ import annotations

from clm_policy.base.record import Record, field
from clm_policy.models.enums import MessageRole, TaskStatus
from clm_policy.models.fields import STATE_CHECKS, NameInfo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sized
    from typing import Any, Protocol, TypeVar

    _T = TypeVar("_T")

    class TokenSnapshotLike(Protocol):
        """What a decision reads of a TokenSnapshot."""

        @property
        def context_tokens(self) -> int: ...
        @property
        def input_tokens(self) -> int: ...
        @property
        def output_tokens(self) -> int: ...
        @property
        def total_tokens(self) -> int: ...
        @property
        def context_window(self) -> int | None: ...
        @property
        def model(self) -> str | None: ...
        @property
        def estimated(self) -> bool: ...

    class StateLike(Protocol):
        """What a decision reads of a SessionState (of a list, only its length)."""

        @property
        def status(self) -> TaskStatus: ...
        @property
        def step_index(self) -> int: ...
        @property
        def last_compact_step(self) -> int | None: ...
        @property
        def compact_count(self) -> int: ...
        @property
        def profile(self) -> str | None: ...
        @property
        def tokens(self) -> TokenSnapshotLike: ...
        @property
        def signals(self) -> Mapping[str, bool | int | float | str]: ...
        @property
        def messages(self) -> Sized: ...
        @property
        def human_interventions(self) -> int: ...
        @property
        def blockers(self) -> Sized: ...


_MISSING: Any = object()


class TokenSnapshot(Record, kw_only=True):
    """Token figures of a session.

    ``context_tokens`` is what sits in the context window now: thresholds compare against it
    and a compaction lowers it. ``input/output/total_tokens`` are cumulative over all
    requests, for cost metrics; they never go down and are never compared to thresholds
    (a request's input already contains the whole conversation, so their sum counts the
    same context again and again)."""

    context_tokens: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    context_window: int | None = None
    model: str | None = None
    estimated: bool = False
    HASHABLE = False

    def as_dict(self) -> dict[str, Any]:
        return {
            'context_tokens': self.context_tokens,
            'input_tokens': self.input_tokens,
            'output_tokens': self.output_tokens,
            'total_tokens': self.total_tokens,
            'context_window': self.context_window,
            'model': self.model,
            'estimated': self.estimated,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TokenSnapshot:
        return cls(
            context_tokens=data['context_tokens'],
            input_tokens=data['input_tokens'],
            output_tokens=data['output_tokens'],
            total_tokens=data['total_tokens'],
            context_window=data['context_window'],
            model=data['model'],
            estimated=data['estimated'],
        )


class Message(Record, kw_only=True):
    """One message of the conversation an agent holds in its context."""

    role: MessageRole
    content: str
    name: str | None = None
    tokens: int | None = None
    HASHABLE = False

    def as_dict(self) -> dict[str, Any]:
        return {
            'role': self.role.value,
            'content': self.content,
            'name': self.name,
            'tokens': self.tokens,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Message:
        return cls(
            role=MessageRole(data['role']),
            content=data['content'],
            name=data['name'],
            tokens=data['tokens'],
        )


class SessionState(Record, kw_only=True):
    """Everything clm-policy knows about one working session of an agent."""

    session_id: str
    goal: str = ''
    status: TaskStatus = TaskStatus.RUNNING
    step_index: int = 0
    last_compact_step: int | None = None
    compact_count: int = 0
    profile: str | None = None
    tokens: TokenSnapshot = field(default_factory=TokenSnapshot)
    signals: dict[str, bool | int | float | str] = field(default_factory=dict)
    messages: list[Message] = field(default_factory=list)
    human_interventions: int = 0
    requests: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    remaining: list[str] = field(default_factory=list)
    next_action: str = ''
    open_failures: list[str] = field(default_factory=list)
    changed_artifacts: list[str] = field(default_factory=list)
    moved_artifacts: list[str] = field(default_factory=list)
    deleted_artifacts: list[str] = field(default_factory=list)
    commands_and_results: list[str] = field(default_factory=list)
    verified: list[str] = field(default_factory=list)
    not_verified: list[str] = field(default_factory=list)
    assumptions_risks: list[str] = field(default_factory=list)
    blockers: list[str] = field(default_factory=list)
    source_of_truth: list[str] = field(default_factory=list)
    memory_keys: list[str] = field(default_factory=list)
    transcript: str | None = None
    parent_session: str | None = None
    schema_version: int = 2
    HASHABLE = False

    def as_dict(self) -> dict[str, Any]:
        return {
            'session_id': self.session_id,
            'goal': self.goal,
            'status': self.status.value,
            'step_index': self.step_index,
            'last_compact_step': self.last_compact_step,
            'compact_count': self.compact_count,
            'profile': self.profile,
            'tokens': self.tokens.as_dict(),
            'signals': dict(self.signals),
            'messages': [item.as_dict() for item in self.messages],
            'human_interventions': self.human_interventions,
            'requests': list(self.requests),
            'constraints': list(self.constraints),
            'decisions': list(self.decisions),
            'done': list(self.done),
            'remaining': list(self.remaining),
            'next_action': self.next_action,
            'open_failures': list(self.open_failures),
            'changed_artifacts': list(self.changed_artifacts),
            'moved_artifacts': list(self.moved_artifacts),
            'deleted_artifacts': list(self.deleted_artifacts),
            'commands_and_results': list(self.commands_and_results),
            'verified': list(self.verified),
            'not_verified': list(self.not_verified),
            'assumptions_risks': list(self.assumptions_risks),
            'blockers': list(self.blockers),
            'source_of_truth': list(self.source_of_truth),
            'memory_keys': list(self.memory_keys),
            'transcript': self.transcript,
            'parent_session': self.parent_session,
            'schema_version': self.schema_version,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SessionState:
        return cls(
            session_id=data['session_id'],
            goal=data['goal'],
            status=TaskStatus(data['status']),
            step_index=data['step_index'],
            last_compact_step=data['last_compact_step'],
            compact_count=data['compact_count'],
            profile=data['profile'],
            tokens=TokenSnapshot.from_dict(data['tokens']),
            signals=dict(data['signals']),
            messages=[Message.from_dict(item) for item in data['messages']],
            human_interventions=data['human_interventions'],
            requests=list(data['requests']),
            constraints=list(data['constraints']),
            decisions=list(data['decisions']),
            done=list(data['done']),
            remaining=list(data['remaining']),
            next_action=data['next_action'],
            open_failures=list(data['open_failures']),
            changed_artifacts=list(data['changed_artifacts']),
            moved_artifacts=list(data['moved_artifacts']),
            deleted_artifacts=list(data['deleted_artifacts']),
            commands_and_results=list(data['commands_and_results']),
            verified=list(data['verified']),
            not_verified=list(data['not_verified']),
            assumptions_risks=list(data['assumptions_risks']),
            blockers=list(data['blockers']),
            source_of_truth=list(data['source_of_truth']),
            memory_keys=list(data['memory_keys']),
            transcript=data['transcript'],
            parent_session=data['parent_session'],
            schema_version=data['schema_version'],
        )


class AgentStepResult(Record, kw_only=True):
    """What one agent step produced; token figures are those of that step's request."""

    messages_added: list[Message] = field(default_factory=list)
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    task_status: TaskStatus = TaskStatus.RUNNING
    notes: str = ''
    HASHABLE = False

    def as_dict(self) -> dict[str, Any]:
        return {
            'messages_added': [item.as_dict() for item in self.messages_added],
            'tool_calls': self.tool_calls,
            'input_tokens': self.input_tokens,
            'output_tokens': self.output_tokens,
            'task_status': self.task_status.value,
            'notes': self.notes,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AgentStepResult:
        return cls(
            messages_added=[Message.from_dict(item) for item in data['messages_added']],
            tool_calls=data['tool_calls'],
            input_tokens=data['input_tokens'],
            output_tokens=data['output_tokens'],
            task_status=TaskStatus(data['task_status']),
            notes=data['notes'],
        )


READ_FIELDS = (
    'status', 'step_index', 'last_compact_step', 'compact_count', 'profile', 'tokens', 'signals',
    'messages', 'human_interventions', 'blockers',
)
"""The fields of a state the engine reads (marked ``Reads`` in the declaration)."""
COUNTED_FIELDS = ('messages', 'blockers')
"""The lists among them: a decision reads only how many items they hold."""

DIRECT_NAMES: dict[str, NameInfo] = {
    'status': NameInfo('str', 'task status: running|waiting|phase_boundary|completed|failed|blocked'),
    'step': NameInfo('int', 'steps taken in this session (state.step_index)'),
    'compact_count': NameInfo('int', 'compactions in this session so far'),
    'tokens.context': NameInfo('int', 'tokens in the context window now (what thresholds use)'),
    'tokens.input': NameInfo('int', 'cumulative input tokens of all requests'),
    'tokens.output': NameInfo('int', 'cumulative output tokens of all requests'),
    'tokens.total': NameInfo('int', 'cumulative input + output tokens'),
    'tokens.estimated': NameInfo('bool', 'true when the token figures are estimates'),
    'human_interventions': NameInfo('int', 'human interventions recorded in the state'),
}
"""The names rules read straight from a state field."""


def direct_values(state: StateLike) -> dict[str, Any]:
    """The values of :data:`DIRECT_NAMES` for ``state``."""
    tokens = state.tokens
    return {
        'status': state.status.value,
        'step': state.step_index,
        'compact_count': state.compact_count,
        'tokens.context': tokens.context_tokens,
        'tokens.input': tokens.input_tokens,
        'tokens.output': tokens.output_tokens,
        'tokens.total': tokens.total_tokens,
        'tokens.estimated': tokens.estimated,
        'human_interventions': state.human_interventions,
    }


_TASKSTATUS = {'running': TaskStatus.RUNNING, 'waiting': TaskStatus.WAITING, 'phase_boundary': TaskStatus.PHASE_BOUNDARY, 'completed': TaskStatus.COMPLETED, 'failed': TaskStatus.FAILED, 'blocked': TaskStatus.BLOCKED}


_MESSAGEROLE = {'system': MessageRole.SYSTEM, 'user': MessageRole.USER, 'assistant': MessageRole.ASSISTANT, 'tool': MessageRole.TOOL}


_MESSAGE_KEYS = frozenset(Message.FIELDS)


def _read_message(data: Any) -> Message | None:
    """``data`` as a Message when it is plainly valid, else None."""
    if type(data) is not dict or not data.keys() <= _MESSAGE_KEYS:
        return None
    f_role = data.get('role', _MISSING)
    f_role = _MESSAGEROLE.get(f_role) if type(f_role) is str else None
    f_content = data.get('content', _MISSING)
    f_name = data.get('name', None)
    f_tokens = data.get('tokens', None)
    if not (
        f_role is not None
        and type(f_content) is str
        and (f_name is None or type(f_name) is str)
        and (f_tokens is None or (type(f_tokens) is int and f_tokens >= 0 and f_tokens <= 9223372036854775807))
    ):
        return None
    return Message(role=f_role, content=f_content, name=f_name, tokens=f_tokens)


_TOKENSNAPSHOT_KEYS = frozenset(TokenSnapshot.FIELDS)


def _read_tokensnapshot(data: Any) -> TokenSnapshot | None:
    """``data`` as a TokenSnapshot when it is plainly valid, else None."""
    if type(data) is not dict or not data.keys() <= _TOKENSNAPSHOT_KEYS:
        return None
    f_context_tokens = data.get('context_tokens', 0)
    f_input_tokens = data.get('input_tokens', 0)
    f_output_tokens = data.get('output_tokens', 0)
    f_total_tokens = data.get('total_tokens', 0)
    f_context_window = data.get('context_window', None)
    f_model = data.get('model', None)
    f_estimated = data.get('estimated', False)
    if not (
        type(f_context_tokens) is int and f_context_tokens >= 0 and f_context_tokens <= 9223372036854775807
        and type(f_input_tokens) is int and f_input_tokens >= 0 and f_input_tokens <= 9223372036854775807
        and type(f_output_tokens) is int and f_output_tokens >= 0 and f_output_tokens <= 9223372036854775807
        and type(f_total_tokens) is int and f_total_tokens >= 0 and f_total_tokens <= 9223372036854775807
        and (f_context_window is None or (type(f_context_window) is int and f_context_window > 0 and f_context_window <= 9223372036854775807))
        and (f_model is None or type(f_model) is str)
        and type(f_estimated) is bool
    ):
        return None
    return TokenSnapshot(context_tokens=f_context_tokens, input_tokens=f_input_tokens, output_tokens=f_output_tokens, total_tokens=f_total_tokens, context_window=f_context_window, model=f_model, estimated=f_estimated)


_SESSIONSTATE_KEYS = frozenset(SessionState.FIELDS)


def read_state(data: object, refused: dict[str, int] | None = None) -> SessionState | None:
    """The SessionState of JSON data when it is plainly valid, else None.

    With ``refused``, the index of the first item refused in each list is put under the
    list's name."""
    if type(data) is not dict or not data.keys() <= _SESSIONSTATE_KEYS:
        return None
    f_session_id = data.get('session_id', _MISSING)
    f_goal = data.get('goal', '')
    f_status = data.get('status', 'running')
    f_status = _TASKSTATUS.get(f_status) if type(f_status) is str else None
    f_step_index = data.get('step_index', 0)
    f_last_compact_step = data.get('last_compact_step', None)
    f_compact_count = data.get('compact_count', 0)
    f_profile = data.get('profile', None)
    f_tokens = data.get('tokens', _MISSING)
    f_tokens = TokenSnapshot() if f_tokens is _MISSING else _read_tokensnapshot(f_tokens)
    f_signals = _scalar_values(data, 'signals')
    f_messages = _read_list(data, 'messages', _read_message, refused)
    f_human_interventions = data.get('human_interventions', 0)
    f_requests = _list_of(data, 'requests', str, refused)
    f_constraints = _list_of(data, 'constraints', str, refused)
    f_decisions = _list_of(data, 'decisions', str, refused)
    f_done = _list_of(data, 'done', str, refused)
    f_remaining = _list_of(data, 'remaining', str, refused)
    f_next_action = data.get('next_action', '')
    f_open_failures = _list_of(data, 'open_failures', str, refused)
    f_changed_artifacts = _list_of(data, 'changed_artifacts', str, refused)
    f_moved_artifacts = _list_of(data, 'moved_artifacts', str, refused)
    f_deleted_artifacts = _list_of(data, 'deleted_artifacts', str, refused)
    f_commands_and_results = _list_of(data, 'commands_and_results', str, refused)
    f_verified = _list_of(data, 'verified', str, refused)
    f_not_verified = _list_of(data, 'not_verified', str, refused)
    f_assumptions_risks = _list_of(data, 'assumptions_risks', str, refused)
    f_blockers = _list_of(data, 'blockers', str, refused)
    f_source_of_truth = _list_of(data, 'source_of_truth', str, refused)
    f_memory_keys = _list_of(data, 'memory_keys', str, refused)
    f_transcript = data.get('transcript', None)
    f_parent_session = data.get('parent_session', None)
    f_schema_version = data.get('schema_version', 2)
    if not (
        type(f_session_id) is str and len(f_session_id) >= 1
        and type(f_goal) is str
        and f_status is not None
        and type(f_step_index) is int and f_step_index >= 0 and f_step_index <= 9223372036854775807
        and (f_last_compact_step is None or (type(f_last_compact_step) is int and f_last_compact_step >= 0 and f_last_compact_step <= 9223372036854775807))
        and type(f_compact_count) is int and f_compact_count >= 0 and f_compact_count <= 9223372036854775807
        and (f_profile is None or type(f_profile) is str)
        and f_tokens is not None
        and f_signals is not None
        and f_messages is not None
        and type(f_human_interventions) is int and f_human_interventions >= 0 and f_human_interventions <= 9223372036854775807
        and f_requests is not None
        and f_constraints is not None
        and f_decisions is not None
        and f_done is not None
        and f_remaining is not None
        and type(f_next_action) is str
        and f_open_failures is not None
        and f_changed_artifacts is not None
        and f_moved_artifacts is not None
        and f_deleted_artifacts is not None
        and f_commands_and_results is not None
        and f_verified is not None
        and f_not_verified is not None
        and f_assumptions_risks is not None
        and f_blockers is not None
        and f_source_of_truth is not None
        and f_memory_keys is not None
        and (f_transcript is None or type(f_transcript) is str)
        and (f_parent_session is None or type(f_parent_session) is str)
        and type(f_schema_version) is int and f_schema_version >= 1 and f_schema_version <= 2
    ):
        return None
    found = SessionState(session_id=f_session_id, goal=f_goal, status=f_status, step_index=f_step_index, last_compact_step=f_last_compact_step, compact_count=f_compact_count, profile=f_profile, tokens=f_tokens, signals=f_signals, messages=f_messages, human_interventions=f_human_interventions, requests=f_requests, constraints=f_constraints, decisions=f_decisions, done=f_done, remaining=f_remaining, next_action=f_next_action, open_failures=f_open_failures, changed_artifacts=f_changed_artifacts, moved_artifacts=f_moved_artifacts, deleted_artifacts=f_deleted_artifacts, commands_and_results=f_commands_and_results, verified=f_verified, not_verified=f_not_verified, assumptions_risks=f_assumptions_risks, blockers=f_blockers, source_of_truth=f_source_of_truth, memory_keys=f_memory_keys, transcript=f_transcript, parent_session=f_parent_session, schema_version=f_schema_version)
    if any(check(found) is not None for check in STATE_CHECKS):
        return None
    return found


def _scalar(value: object) -> bool:
    """A JSON number (finite), string or boolean."""
    if isinstance(value, float):
        return value - value == 0
    kind = type(value)
    return kind is str or kind is int or kind is bool


def _list_of(
    data: dict[str, Any], key: str, kind: type, refused: dict[str, int] | None
) -> list[Any] | None:
    """``data[key]`` when it is a list of ``kind`` (a new empty one when it is missing)."""
    value = data.get(key, _MISSING)
    if value is _MISSING:
        return []
    if type(value) is list and all(type(i) is kind for i in value):
        return value
    if refused is not None and type(value) is list:
        refused[key] = next(i for i, item in enumerate(value) if type(item) is not kind)
    return None


def _scalar_values(data: dict[str, Any], key: str) -> dict[str, Any] | None:
    """``data[key]`` when it maps names to JSON scalars (a new empty one when it is missing)."""
    value = data.get(key, _MISSING)
    if value is _MISSING:
        return {}
    return value if type(value) is dict and all(_scalar(i) for i in value.values()) else None


def _read_list(
    data: dict[str, Any],
    key: str,
    read: Callable[[Any], _T | None],
    refused: dict[str, int] | None,
) -> list[_T] | None:
    """Each item of the list ``data[key]`` read by ``read`` (a new empty list when it is
    missing); None when it is no list or an item is refused."""
    value = data.get(key, _MISSING)
    if value is _MISSING:
        return []
    if type(value) is not list:
        return None
    items = []
    for index, item in enumerate(value):
        found = read(item)
        if found is None:
            if refused is not None:
                refused[key] = index
            return None
        items.append(found)
    return items
