"""The state as the per-prompt paths see it — GENERATED from clm_policy/models/state.py.

Do not edit: run ``python -m clm_policy.models.shape --write`` after changing the state's
declaration (a test fails until then). See clm_policy/models/shape.py for what is here.
"""

from __future__ import annotations

from clm_policy.models.enums import Action, MessageRole, TaskStatus
from clm_policy.models.fields import STATE_CHECKS, NameInfo
from clm_policy.base.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sized
    from typing import Any

    from clm_policy.models.enums import SignalValue

_SCALARS = (bool, int, float, str)

_MISSING = object()


class FigureTokens(Record):
    """The TokenSnapshot fields the engine reads, without pydantic."""

    FIELDS = (
        'context_tokens',
        'input_tokens',
        'output_tokens',
        'total_tokens',
        'context_window',
        'model',
        'estimated',
    )
    __slots__ = FIELDS
    HASHABLE = False

    def __init__(
        self,
        context_tokens: int = 0,
        input_tokens: int = 0,
        output_tokens: int = 0,
        total_tokens: int = 0,
        context_window: int | None = None,
        model: str | None = None,
        estimated: bool = False,
    ) -> None:
        self.context_tokens = context_tokens
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.total_tokens = total_tokens
        self.context_window = context_window
        self.model = model
        self.estimated = estimated


class FigureState(Record):
    """The SessionState fields the engine reads, without pydantic."""

    FIELDS = (
        'status',
        'step_index',
        'last_compact_step',
        'compact_count',
        'profile',
        'tokens',
        'signals',
        'messages',
        'human_interventions',
        'blockers',
    )
    __slots__ = FIELDS
    HASHABLE = False

    def __init__(
        self,
        status: TaskStatus = TaskStatus.RUNNING,
        step_index: int = 0,
        last_compact_step: int | None = None,
        compact_count: int = 0,
        profile: str | None = None,
        tokens: FigureTokens | None = None,
        signals: Mapping[str, SignalValue] | None = None,
        messages: Sized = (),
        human_interventions: int = 0,
        blockers: Sized = (),
    ) -> None:
        self.status = status
        self.step_index = step_index
        self.last_compact_step = last_compact_step
        self.compact_count = compact_count
        self.profile = profile
        self.tokens = FigureTokens() if tokens is None else tokens
        self.signals = {} if signals is None else signals
        self.messages = messages
        self.human_interventions = human_interventions
        self.blockers = blockers


class PlainMessage(Record):
    """Every field of a Message, without pydantic."""

    FIELDS = (
        'role',
        'content',
        'name',
        'tokens',
    )
    __slots__ = FIELDS
    HASHABLE = False

    def __init__(
        self,
        *,
        role: MessageRole,
        content: str,
        name: str | None = None,
        tokens: int | None = None,
    ) -> None:
        self.role = role
        self.content = content
        self.name = name
        self.tokens = tokens

    def as_dict(self) -> dict[str, Any]:
        """Exactly the pydantic model's ``model_dump(mode="json")``."""
        return {
            'role': self.role.value,
            'content': self.content,
            'name': self.name,
            'tokens': self.tokens,
        }


class PlainTokens(Record):
    """Every field of a TokenSnapshot, without pydantic."""

    FIELDS = (
        'context_tokens',
        'input_tokens',
        'output_tokens',
        'total_tokens',
        'context_window',
        'model',
        'estimated',
    )
    __slots__ = FIELDS
    HASHABLE = False

    def __init__(
        self,
        *,
        context_tokens: int = 0,
        input_tokens: int = 0,
        output_tokens: int = 0,
        total_tokens: int = 0,
        context_window: int | None = None,
        model: str | None = None,
        estimated: bool = False,
    ) -> None:
        self.context_tokens = context_tokens
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.total_tokens = total_tokens
        self.context_window = context_window
        self.model = model
        self.estimated = estimated

    def as_dict(self) -> dict[str, Any]:
        """Exactly the pydantic model's ``model_dump(mode="json")``."""
        return {
            'context_tokens': self.context_tokens,
            'input_tokens': self.input_tokens,
            'output_tokens': self.output_tokens,
            'total_tokens': self.total_tokens,
            'context_window': self.context_window,
            'model': self.model,
            'estimated': self.estimated,
        }


class PlainState(Record):
    """Every field of a SessionState, without pydantic."""

    FIELDS = (
        'session_id',
        'goal',
        'status',
        'step_index',
        'last_compact_step',
        'compact_count',
        'profile',
        'tokens',
        'signals',
        'messages',
        'human_interventions',
        'requests',
        'constraints',
        'decisions',
        'done',
        'remaining',
        'next_action',
        'open_failures',
        'changed_artifacts',
        'moved_artifacts',
        'deleted_artifacts',
        'commands_and_results',
        'verified',
        'not_verified',
        'assumptions_risks',
        'blockers',
        'source_of_truth',
        'memory_keys',
        'transcript',
        'parent_session',
        'schema_version',
    )
    __slots__ = FIELDS
    HASHABLE = False

    def __init__(
        self,
        *,
        session_id: str,
        goal: str = '',
        status: TaskStatus = TaskStatus.RUNNING,
        step_index: int = 0,
        last_compact_step: int | None = None,
        compact_count: int = 0,
        profile: str | None = None,
        tokens: PlainTokens | None = None,
        signals: dict[str, SignalValue] | None = None,
        messages: list[PlainMessage] | None = None,
        human_interventions: int = 0,
        requests: list[str] | None = None,
        constraints: list[str] | None = None,
        decisions: list[str] | None = None,
        done: list[str] | None = None,
        remaining: list[str] | None = None,
        next_action: str = '',
        open_failures: list[str] | None = None,
        changed_artifacts: list[str] | None = None,
        moved_artifacts: list[str] | None = None,
        deleted_artifacts: list[str] | None = None,
        commands_and_results: list[str] | None = None,
        verified: list[str] | None = None,
        not_verified: list[str] | None = None,
        assumptions_risks: list[str] | None = None,
        blockers: list[str] | None = None,
        source_of_truth: list[str] | None = None,
        memory_keys: list[str] | None = None,
        transcript: str | None = None,
        parent_session: str | None = None,
        schema_version: int = 2,
    ) -> None:
        self.session_id = session_id
        self.goal = goal
        self.status = status
        self.step_index = step_index
        self.last_compact_step = last_compact_step
        self.compact_count = compact_count
        self.profile = profile
        self.tokens = PlainTokens() if tokens is None else tokens
        self.signals = {} if signals is None else signals
        self.messages = [] if messages is None else messages
        self.human_interventions = human_interventions
        self.requests = [] if requests is None else requests
        self.constraints = [] if constraints is None else constraints
        self.decisions = [] if decisions is None else decisions
        self.done = [] if done is None else done
        self.remaining = [] if remaining is None else remaining
        self.next_action = next_action
        self.open_failures = [] if open_failures is None else open_failures
        self.changed_artifacts = [] if changed_artifacts is None else changed_artifacts
        self.moved_artifacts = [] if moved_artifacts is None else moved_artifacts
        self.deleted_artifacts = [] if deleted_artifacts is None else deleted_artifacts
        self.commands_and_results = [] if commands_and_results is None else commands_and_results
        self.verified = [] if verified is None else verified
        self.not_verified = [] if not_verified is None else not_verified
        self.assumptions_risks = [] if assumptions_risks is None else assumptions_risks
        self.blockers = [] if blockers is None else blockers
        self.source_of_truth = [] if source_of_truth is None else source_of_truth
        self.memory_keys = [] if memory_keys is None else memory_keys
        self.transcript = transcript
        self.parent_session = parent_session
        self.schema_version = schema_version

    def as_dict(self) -> dict[str, Any]:
        """Exactly the pydantic model's ``model_dump(mode="json")``."""
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


class Finding(Record):
    """A GuardFinding as plain data, without pydantic."""

    FIELDS = (
        'guard',
        'severity',
        'message',
    )
    __slots__ = FIELDS
    HASHABLE = False

    def __init__(
        self,
        guard: str,
        severity: str,
        message: str,
    ) -> None:
        self.guard = guard
        self.severity = severity
        self.message = message

    def as_dict(self) -> dict[str, Any]:
        """Exactly the pydantic model's ``model_dump(mode="json")``."""
        return {
            'guard': self.guard,
            'severity': self.severity,
            'message': self.message,
        }


class OutcomeFields(Record):
    """A Decision as plain data, without pydantic."""

    FIELDS = (
        'action',
        'trigger',
        'rationale',
        'proposed',
        'blocked_by',
        'warnings',
        'overridden',
        'forced',
        'policy',
        'profile',
        'context_tokens',
        'context_window',
        'window_source',
    )
    __slots__ = FIELDS
    HASHABLE = False

    def __init__(
        self,
        action: Action,
        trigger: str | None,
        rationale: str,
        proposed: Action,
        blocked_by: tuple[Finding, ...],
        warnings: tuple[Finding, ...],
        overridden: tuple[Finding, ...],
        forced: bool,
        policy: str,
        profile: str,
        context_tokens: int,
        context_window: int | None,
        window_source: str | None,
    ) -> None:
        self.action = action
        self.trigger = trigger
        self.rationale = rationale
        self.proposed = proposed
        self.blocked_by = blocked_by
        self.warnings = warnings
        self.overridden = overridden
        self.forced = forced
        self.policy = policy
        self.profile = profile
        self.context_tokens = context_tokens
        self.context_window = context_window
        self.window_source = window_source

    def as_dict(self) -> dict[str, Any]:
        """Exactly the pydantic model's ``model_dump(mode="json")``."""
        return {
            'action': self.action.value,
            'trigger': self.trigger,
            'rationale': self.rationale,
            'proposed': self.proposed.value,
            'blocked_by': [item.as_dict() for item in self.blocked_by],
            'warnings': [item.as_dict() for item in self.warnings],
            'overridden': [item.as_dict() for item in self.overridden],
            'forced': self.forced,
            'policy': self.policy,
            'profile': self.profile,
            'context_tokens': self.context_tokens,
            'context_window': self.context_window,
            'window_source': self.window_source,
        }

    def decision_values(self, finding: Callable[[Any], Any]) -> dict[str, Any]:
        """The pydantic model's field values, nested results made by ``finding``."""
        return {
            'action': self.action,
            'trigger': self.trigger,
            'rationale': self.rationale,
            'proposed': self.proposed,
            'blocked_by': [finding(item) for item in self.blocked_by],
            'warnings': [finding(item) for item in self.warnings],
            'overridden': [finding(item) for item in self.overridden],
            'forced': self.forced,
            'policy': self.policy,
            'profile': self.profile,
            'context_tokens': self.context_tokens,
            'context_window': self.context_window,
            'window_source': self.window_source,
        }


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


def direct_values(state: Any) -> dict[str, Any]:
    """The values of :data:`DIRECT_NAMES` for ``state`` (a SessionState or a
    FigureState)."""
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


def plain_state(data: object) -> FigureState | None:
    """A FigureState for plainly valid SessionState JSON data, else None."""
    state: FigureState | None = _plain_sessionstate(data)
    return state


def plain_session(data: object) -> PlainState | None:
    """The whole PlainState for plainly valid SessionState JSON, else None."""
    state: PlainState | None = _plain_sessionstate(data, True)
    return state


_KEYS_MESSAGE = frozenset(('role', 'content', 'name', 'tokens'))


def _plain_message(data: Any, full: bool = False) -> Any:
    """``data`` as a plainly valid Message, or None: with ``full`` a
    PlainMessage, else the data itself."""
    if type(data) is not dict or not data.keys() <= _KEYS_MESSAGE:
        return None
    if 'role' not in data:
        return None
    f_role = data['role']
    if type(f_role) is not str or f_role not in ('system', 'user', 'assistant', 'tool'):
        return None
    f_role = MessageRole(f_role)
    if 'content' not in data:
        return None
    f_content = data['content']
    if not (type(f_content) is str):
        return None
    f_name = data.get('name', _MISSING)
    if f_name is _MISSING:
        f_name = None
    else:
        if f_name is not None:
            if not (type(f_name) is str):
                return None
    f_tokens = data.get('tokens', _MISSING)
    if f_tokens is _MISSING:
        f_tokens = None
    else:
        if f_tokens is not None:
            if not (type(f_tokens) is int and f_tokens >= 0 and f_tokens <= 9223372036854775807):
                return None
    if full:
        return PlainMessage(role=f_role, content=f_content, name=f_name, tokens=f_tokens)
    return data


_KEYS_TOKENSNAPSHOT = frozenset(('context_tokens', 'input_tokens', 'output_tokens', 'total_tokens', 'context_window', 'model', 'estimated'))


def _plain_tokensnapshot(data: Any, full: bool = False) -> Any:
    """``data`` as a plainly valid TokenSnapshot, or None: with ``full`` a
    PlainTokens, else FigureTokens."""
    if type(data) is not dict or not data.keys() <= _KEYS_TOKENSNAPSHOT:
        return None
    f_context_tokens = data.get('context_tokens', _MISSING)
    if f_context_tokens is _MISSING:
        f_context_tokens = 0
    else:
        if not (type(f_context_tokens) is int and f_context_tokens >= 0 and f_context_tokens <= 9223372036854775807):
            return None
    f_input_tokens = data.get('input_tokens', _MISSING)
    if f_input_tokens is _MISSING:
        f_input_tokens = 0
    else:
        if not (type(f_input_tokens) is int and f_input_tokens >= 0 and f_input_tokens <= 9223372036854775807):
            return None
    f_output_tokens = data.get('output_tokens', _MISSING)
    if f_output_tokens is _MISSING:
        f_output_tokens = 0
    else:
        if not (type(f_output_tokens) is int and f_output_tokens >= 0 and f_output_tokens <= 9223372036854775807):
            return None
    f_total_tokens = data.get('total_tokens', _MISSING)
    if f_total_tokens is _MISSING:
        f_total_tokens = 0
    else:
        if not (type(f_total_tokens) is int and f_total_tokens >= 0 and f_total_tokens <= 9223372036854775807):
            return None
    f_context_window = data.get('context_window', _MISSING)
    if f_context_window is _MISSING:
        f_context_window = None
    else:
        if f_context_window is not None:
            if not (type(f_context_window) is int and f_context_window > 0 and f_context_window <= 9223372036854775807):
                return None
    f_model = data.get('model', _MISSING)
    if f_model is _MISSING:
        f_model = None
    else:
        if f_model is not None:
            if not (type(f_model) is str):
                return None
    f_estimated = data.get('estimated', _MISSING)
    if f_estimated is _MISSING:
        f_estimated = False
    else:
        if not (type(f_estimated) is bool):
            return None
    if full:
        return PlainTokens(context_tokens=f_context_tokens, input_tokens=f_input_tokens, output_tokens=f_output_tokens, total_tokens=f_total_tokens, context_window=f_context_window, model=f_model, estimated=f_estimated)
    return FigureTokens(context_tokens=f_context_tokens, input_tokens=f_input_tokens, output_tokens=f_output_tokens, total_tokens=f_total_tokens, context_window=f_context_window, model=f_model, estimated=f_estimated)


_KEYS_SESSIONSTATE = frozenset(('session_id', 'goal', 'status', 'step_index', 'last_compact_step', 'compact_count', 'profile', 'tokens', 'signals', 'messages', 'human_interventions', 'requests', 'constraints', 'decisions', 'done', 'remaining', 'next_action', 'open_failures', 'changed_artifacts', 'moved_artifacts', 'deleted_artifacts', 'commands_and_results', 'verified', 'not_verified', 'assumptions_risks', 'blockers', 'source_of_truth', 'memory_keys', 'transcript', 'parent_session', 'schema_version'))


def _plain_sessionstate(data: Any, full: bool = False) -> Any:
    """``data`` as a plainly valid SessionState, or None: with ``full`` a
    PlainState, else FigureState."""
    if type(data) is not dict or not data.keys() <= _KEYS_SESSIONSTATE:
        return None
    if 'session_id' not in data:
        return None
    f_session_id = data['session_id']
    if not (type(f_session_id) is str and len(f_session_id) >= 1):
        return None
    f_goal = data.get('goal', _MISSING)
    if f_goal is _MISSING:
        f_goal = ''
    else:
        if not (type(f_goal) is str):
            return None
    f_status = data.get('status', _MISSING)
    if f_status is _MISSING:
        f_status = TaskStatus.RUNNING
    else:
        if type(f_status) is not str or f_status not in ('running', 'waiting', 'phase_boundary', 'completed', 'failed', 'blocked'):
            return None
        f_status = TaskStatus(f_status)
    f_step_index = data.get('step_index', _MISSING)
    if f_step_index is _MISSING:
        f_step_index = 0
    else:
        if not (type(f_step_index) is int and f_step_index >= 0 and f_step_index <= 9223372036854775807):
            return None
    f_last_compact_step = data.get('last_compact_step', _MISSING)
    if f_last_compact_step is _MISSING:
        f_last_compact_step = None
    else:
        if f_last_compact_step is not None:
            if not (type(f_last_compact_step) is int and f_last_compact_step >= 0 and f_last_compact_step <= 9223372036854775807):
                return None
    f_compact_count = data.get('compact_count', _MISSING)
    if f_compact_count is _MISSING:
        f_compact_count = 0
    else:
        if not (type(f_compact_count) is int and f_compact_count >= 0 and f_compact_count <= 9223372036854775807):
            return None
    f_profile = data.get('profile', _MISSING)
    if f_profile is _MISSING:
        f_profile = None
    else:
        if f_profile is not None:
            if not (type(f_profile) is str):
                return None
    f_tokens = data.get('tokens', _MISSING)
    if f_tokens is _MISSING:
        f_tokens = _plain_tokensnapshot({}, full)
    else:
        f_tokens = _plain_tokensnapshot(f_tokens, full)
        if f_tokens is None:
            return None
    f_signals = data.get('signals', _MISSING)
    if f_signals is _MISSING:
        f_signals = {}
    else:
        if type(f_signals) is not dict:
            return None
        for item in f_signals.values():
            if type(item) not in _SCALARS or (type(item) is float and not item - item == 0):
                return None
    f_messages = data.get('messages', _MISSING)
    if f_messages is _MISSING:
        f_messages = []
    else:
        if type(f_messages) is not list:
            return None
        items = []
        for item in f_messages:
            item = _plain_message(item, full)
            if item is None:
                return None
            items.append(item)
        f_messages = items
    f_human_interventions = data.get('human_interventions', _MISSING)
    if f_human_interventions is _MISSING:
        f_human_interventions = 0
    else:
        if not (type(f_human_interventions) is int and f_human_interventions >= 0 and f_human_interventions <= 9223372036854775807):
            return None
    f_requests = data.get('requests', _MISSING)
    if f_requests is _MISSING:
        f_requests = []
    else:
        if type(f_requests) is not list:
            return None
        for item in f_requests:
            if not (type(item) is str):
                return None
    f_constraints = data.get('constraints', _MISSING)
    if f_constraints is _MISSING:
        f_constraints = []
    else:
        if type(f_constraints) is not list:
            return None
        for item in f_constraints:
            if not (type(item) is str):
                return None
    f_decisions = data.get('decisions', _MISSING)
    if f_decisions is _MISSING:
        f_decisions = []
    else:
        if type(f_decisions) is not list:
            return None
        for item in f_decisions:
            if not (type(item) is str):
                return None
    f_done = data.get('done', _MISSING)
    if f_done is _MISSING:
        f_done = []
    else:
        if type(f_done) is not list:
            return None
        for item in f_done:
            if not (type(item) is str):
                return None
    f_remaining = data.get('remaining', _MISSING)
    if f_remaining is _MISSING:
        f_remaining = []
    else:
        if type(f_remaining) is not list:
            return None
        for item in f_remaining:
            if not (type(item) is str):
                return None
    f_next_action = data.get('next_action', _MISSING)
    if f_next_action is _MISSING:
        f_next_action = ''
    else:
        if not (type(f_next_action) is str):
            return None
    f_open_failures = data.get('open_failures', _MISSING)
    if f_open_failures is _MISSING:
        f_open_failures = []
    else:
        if type(f_open_failures) is not list:
            return None
        for item in f_open_failures:
            if not (type(item) is str):
                return None
    f_changed_artifacts = data.get('changed_artifacts', _MISSING)
    if f_changed_artifacts is _MISSING:
        f_changed_artifacts = []
    else:
        if type(f_changed_artifacts) is not list:
            return None
        for item in f_changed_artifacts:
            if not (type(item) is str):
                return None
    f_moved_artifacts = data.get('moved_artifacts', _MISSING)
    if f_moved_artifacts is _MISSING:
        f_moved_artifacts = []
    else:
        if type(f_moved_artifacts) is not list:
            return None
        for item in f_moved_artifacts:
            if not (type(item) is str):
                return None
    f_deleted_artifacts = data.get('deleted_artifacts', _MISSING)
    if f_deleted_artifacts is _MISSING:
        f_deleted_artifacts = []
    else:
        if type(f_deleted_artifacts) is not list:
            return None
        for item in f_deleted_artifacts:
            if not (type(item) is str):
                return None
    f_commands_and_results = data.get('commands_and_results', _MISSING)
    if f_commands_and_results is _MISSING:
        f_commands_and_results = []
    else:
        if type(f_commands_and_results) is not list:
            return None
        for item in f_commands_and_results:
            if not (type(item) is str):
                return None
    f_verified = data.get('verified', _MISSING)
    if f_verified is _MISSING:
        f_verified = []
    else:
        if type(f_verified) is not list:
            return None
        for item in f_verified:
            if not (type(item) is str):
                return None
    f_not_verified = data.get('not_verified', _MISSING)
    if f_not_verified is _MISSING:
        f_not_verified = []
    else:
        if type(f_not_verified) is not list:
            return None
        for item in f_not_verified:
            if not (type(item) is str):
                return None
    f_assumptions_risks = data.get('assumptions_risks', _MISSING)
    if f_assumptions_risks is _MISSING:
        f_assumptions_risks = []
    else:
        if type(f_assumptions_risks) is not list:
            return None
        for item in f_assumptions_risks:
            if not (type(item) is str):
                return None
    f_blockers = data.get('blockers', _MISSING)
    if f_blockers is _MISSING:
        f_blockers = []
    else:
        if type(f_blockers) is not list:
            return None
        for item in f_blockers:
            if not (type(item) is str):
                return None
    f_source_of_truth = data.get('source_of_truth', _MISSING)
    if f_source_of_truth is _MISSING:
        f_source_of_truth = []
    else:
        if type(f_source_of_truth) is not list:
            return None
        for item in f_source_of_truth:
            if not (type(item) is str):
                return None
    f_memory_keys = data.get('memory_keys', _MISSING)
    if f_memory_keys is _MISSING:
        f_memory_keys = []
    else:
        if type(f_memory_keys) is not list:
            return None
        for item in f_memory_keys:
            if not (type(item) is str):
                return None
    f_transcript = data.get('transcript', _MISSING)
    if f_transcript is _MISSING:
        f_transcript = None
    else:
        if f_transcript is not None:
            if not (type(f_transcript) is str):
                return None
    f_parent_session = data.get('parent_session', _MISSING)
    if f_parent_session is _MISSING:
        f_parent_session = None
    else:
        if f_parent_session is not None:
            if not (type(f_parent_session) is str):
                return None
    f_schema_version = data.get('schema_version', _MISSING)
    if f_schema_version is _MISSING:
        f_schema_version = 2
    else:
        if not (type(f_schema_version) is int and f_schema_version >= 1 and f_schema_version <= 2):
            return None
    values = {
        'session_id': f_session_id,
        'goal': f_goal,
        'status': f_status,
        'step_index': f_step_index,
        'last_compact_step': f_last_compact_step,
        'compact_count': f_compact_count,
        'profile': f_profile,
        'tokens': f_tokens,
        'signals': f_signals,
        'messages': f_messages,
        'human_interventions': f_human_interventions,
        'requests': f_requests,
        'constraints': f_constraints,
        'decisions': f_decisions,
        'done': f_done,
        'remaining': f_remaining,
        'next_action': f_next_action,
        'open_failures': f_open_failures,
        'changed_artifacts': f_changed_artifacts,
        'moved_artifacts': f_moved_artifacts,
        'deleted_artifacts': f_deleted_artifacts,
        'commands_and_results': f_commands_and_results,
        'verified': f_verified,
        'not_verified': f_not_verified,
        'assumptions_risks': f_assumptions_risks,
        'blockers': f_blockers,
        'source_of_truth': f_source_of_truth,
        'memory_keys': f_memory_keys,
        'transcript': f_transcript,
        'parent_session': f_parent_session,
        'schema_version': f_schema_version,
    }
    if any(check(values) is not None for check in STATE_CHECKS):
        return None
    if full:
        return PlainState(session_id=f_session_id, goal=f_goal, status=f_status, step_index=f_step_index, last_compact_step=f_last_compact_step, compact_count=f_compact_count, profile=f_profile, tokens=f_tokens, signals=f_signals, messages=f_messages, human_interventions=f_human_interventions, requests=f_requests, constraints=f_constraints, decisions=f_decisions, done=f_done, remaining=f_remaining, next_action=f_next_action, open_failures=f_open_failures, changed_artifacts=f_changed_artifacts, moved_artifacts=f_moved_artifacts, deleted_artifacts=f_deleted_artifacts, commands_and_results=f_commands_and_results, verified=f_verified, not_verified=f_not_verified, assumptions_risks=f_assumptions_risks, blockers=f_blockers, source_of_truth=f_source_of_truth, memory_keys=f_memory_keys, transcript=f_transcript, parent_session=f_parent_session, schema_version=f_schema_version)
    return FigureState(status=f_status, step_index=f_step_index, last_compact_step=f_last_compact_step, compact_count=f_compact_count, profile=f_profile, tokens=f_tokens, signals=f_signals, messages=f_messages, human_interventions=f_human_interventions, blockers=f_blockers)
