"""The state a decision reads, declared once: messages, steps, token figures, status, signals.

``SessionState`` as JSON is the public input of ``clm-policy decide --state`` (docs/state.md).
A field marked :class:`~clm_policy.models.fields.Reads` is read by the engine (and, with a
name, by rules).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from clm_policy.models.enums import MAX_COUNT, MessageRole, TaskStatus
from clm_policy.models.fields import STATE_CHECKS, Reads
from clm_policy.models.versions import STATE_VERSION

_MODEL = ConfigDict(extra="forbid", defer_build=True)
# a signal's value: NaN and infinities are no JSON, so a state holding one could not be written
StateSignal = bool | int | Annotated[float, Field(allow_inf_nan=False)] | str


class Message(BaseModel):
    """One message of the conversation an agent holds in its context."""

    model_config = _MODEL

    role: MessageRole
    content: str
    name: str | None = None
    tokens: int | None = Field(
        default=None,
        ge=0,
        le=MAX_COUNT,
        description="the message's size in tokens, when known (else chars/4)",
    )


class AgentStepResult(BaseModel):
    """What one agent step produced; token figures are those of that step's request."""

    model_config = _MODEL

    messages_added: list[Message] = Field(default_factory=list)
    tool_calls: int = Field(default=0, ge=0)
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    task_status: TaskStatus = TaskStatus.RUNNING
    notes: str = ""


class TokenSnapshot(BaseModel):
    """Token figures of a session.

    ``context_tokens`` is what sits in the context window now: thresholds compare against it
    and a compaction lowers it. ``input/output/total_tokens`` are cumulative over all
    requests, for cost metrics; they never go down and are never compared to thresholds
    (a request's input already contains the whole conversation, so their sum counts the
    same context again and again).
    """

    model_config = _MODEL

    context_tokens: Annotated[
        int, Reads("tokens.context", "tokens in the context window now (what thresholds use)")
    ] = Field(default=0, ge=0, le=MAX_COUNT)
    input_tokens: Annotated[
        int, Reads("tokens.input", "cumulative input tokens of all requests")
    ] = Field(default=0, ge=0, le=MAX_COUNT)
    output_tokens: Annotated[
        int, Reads("tokens.output", "cumulative output tokens of all requests")
    ] = Field(default=0, ge=0, le=MAX_COUNT)
    total_tokens: Annotated[int, Reads("tokens.total", "cumulative input + output tokens")] = Field(
        default=0, ge=0, le=MAX_COUNT
    )
    context_window: Annotated[int | None, Reads()] = Field(
        default=None,
        gt=0,
        le=MAX_COUNT,
        description="the model's context window in tokens, when known",
    )
    model: Annotated[str | None, Reads()] = Field(
        default=None, description="the model that produced the figures"
    )
    estimated: Annotated[
        bool, Reads("tokens.estimated", "true when the token figures are estimates")
    ] = Field(default=False, description="true when the figures are estimates (characters / 4)")


class SessionState(BaseModel):
    """Everything clm-policy knows about one working session of an agent."""

    model_config = _MODEL

    session_id: str = Field(min_length=1)
    goal: str = ""
    status: Annotated[
        TaskStatus,
        Reads("status", "task status: running|waiting|phase_boundary|completed|failed|blocked"),
    ] = TaskStatus.RUNNING
    step_index: Annotated[int, Reads("step", "steps taken in this session (state.step_index)")] = (
        Field(default=0, ge=0, le=MAX_COUNT, description="steps taken in this session")
    )
    last_compact_step: Annotated[int | None, Reads()] = Field(
        default=None,
        ge=0,
        le=MAX_COUNT,
        description="step_index of the last compaction; null if never",
    )
    compact_count: Annotated[int, Reads("compact_count", "compactions in this session so far")] = (
        Field(default=0, ge=0, le=MAX_COUNT)
    )
    profile: Annotated[str | None, Reads()] = Field(
        default=None, description="task profile to decide under, unless the caller names one"
    )
    tokens: Annotated[TokenSnapshot, Reads()] = Field(default_factory=TokenSnapshot)
    signals: Annotated[dict[str, StateSignal], Reads()] = Field(
        default_factory=dict,
        description="facts only an integration knows, declared by the policy (name -> value)",
    )
    messages: Annotated[list[Message], Reads()] = Field(default_factory=list)
    human_interventions: Annotated[
        int, Reads("human_interventions", "human interventions recorded in the state")
    ] = Field(default=0, ge=0, le=MAX_COUNT)
    requests: list[str] = Field(
        default_factory=list,
        description=(
            "every request the user made, in order (the goal is the latest substantive one)"
        ),
    )
    constraints: list[str] = Field(default_factory=list)
    decisions: list[str] = Field(default_factory=list)
    done: list[str] = Field(
        default_factory=list, description="work the agent finished (its completed tasks)"
    )
    remaining: list[str] = Field(
        default_factory=list,
        description="work still to do, in order: the task in progress first, then the pending ones",
    )
    next_action: str = Field(
        default="", description="the next step the agent itself stated, when it stated one"
    )
    open_failures: list[str] = Field(
        default_factory=list,
        description=(
            "checks (tests, builds, linters) whose last run failed and that no later run passed"
        ),
    )
    changed_artifacts: list[str] = Field(default_factory=list)
    moved_artifacts: list[str] = Field(
        default_factory=list, description="files renamed, as 'old -> new'"
    )
    deleted_artifacts: list[str] = Field(default_factory=list)
    commands_and_results: list[str] = Field(default_factory=list)
    verified: list[str] = Field(default_factory=list)
    not_verified: list[str] = Field(default_factory=list)
    assumptions_risks: list[str] = Field(default_factory=list)
    blockers: Annotated[list[str], Reads()] = Field(default_factory=list)
    source_of_truth: list[str] = Field(default_factory=list)
    memory_keys: list[str] = Field(default_factory=list)
    transcript: str | None = Field(
        default=None, description="the agent's transcript the state was read from"
    )
    parent_session: str | None = Field(
        default=None, description="the session this one was handed off from"
    )
    schema_version: int = Field(
        default=STATE_VERSION,
        ge=1,
        le=STATE_VERSION,
        description=(
            "the version of this document's shape; a state without it is read as the current "
            "one (a memory repository's older ones: clm-policy migrate)"
        ),
    )

    @model_validator(mode="after")
    def _checks(self) -> SessionState:
        for check in STATE_CHECKS:
            problem = check(self)
            if problem is not None:
                raise ValueError(problem)
        return self
