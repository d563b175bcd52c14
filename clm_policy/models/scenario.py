"""A scenario for the simulated agent: scripted steps that grow the context.

Validated like every YAML file (errors at file:line:col); schemas/scenario.schema.json is
generated from :class:`ScenarioFile`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from clm_policy.models.enums import MAX_COUNT, TaskStatus

_STRICT = ConfigDict(extra="forbid", strict=True, defer_build=True)
# what one step may add: with repeats and steps, the session's context and cumulative counts
# stay far below a state's limit (MAX_COUNT)
MAX_STEP_TOKENS = 10**9
StatusName = Literal["running", "waiting", "phase_boundary", "completed", "failed", "blocked"]


class ScenarioStep(BaseModel):
    """One agent step: what it says, how many tokens that adds, and what it changes."""

    model_config = _STRICT

    say: str = Field(description="the assistant's message")
    user: str | None = Field(default=None, description="a user message before it")
    tool: str | None = Field(default=None, description="a tool result after it")
    tokens: Annotated[int, Field(ge=0, le=MAX_STEP_TOKENS)] | None = Field(
        default=None, description="tokens the step adds to the context (default: chars/4)"
    )
    tool_calls: Annotated[int, Field(ge=0, le=MAX_STEP_TOKENS)] = 0
    status: StatusName | None = Field(default=None, description="task status after the step")
    signals: dict[str, bool | int | Annotated[float, Field(allow_inf_nan=False)] | str] = Field(
        default_factory=dict
    )
    changed: list[str] = Field(default_factory=list, description="artifacts changed")
    commands: list[str] = Field(default_factory=list, description="'command: result' lines")
    verified: list[str] = Field(default_factory=list)
    not_verified: list[str] = Field(default_factory=list)
    blockers: list[str] = Field(default_factory=list)
    resolved: list[str] = Field(default_factory=list, description="blockers no longer open")
    decisions: list[str] = Field(default_factory=list)
    handoff: str | None = Field(
        default=None,
        description="what the agent writes when clm-policy asks for its handoff after this "
        "step (its reply to the request, kept word for word); none: it writes nothing",
    )
    needs: list[str] = Field(
        default_factory=list,
        description="facts the step needs in the context it is given (the seed, the hint, the "
        "messages kept); one not found fails the task, or costs a human intervention with "
        "on_missing: ask (docs/experiments.md)",
    )
    on_missing: Literal["fail", "ask"] = Field(
        default="ask",
        description="a needed fact not in the context: ask (a person says it again: one human "
        "intervention) or fail (the task fails here)",
    )
    repeat: Annotated[int, Field(ge=1, le=100_000)] = Field(
        default=1, description="play this step this many times ({n} in texts: the repetition)"
    )

    @property
    def task_status(self) -> TaskStatus | None:
        return TaskStatus(self.status) if self.status is not None else None


class ScenarioFile(BaseModel):
    """clm-policy simulated-agent scenario (version 1)."""

    model_config = _STRICT

    version: Literal[1]
    name: str | None = None
    description: str | None = None
    goal: str = Field(min_length=1)
    session: str = Field(default="sim", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,100}$")
    profile: str | None = None
    context_window: Annotated[int, Field(gt=0, le=MAX_COUNT)] | None = None
    model: str | None = None
    system_prompt_tokens: Annotated[int, Field(ge=0, le=MAX_STEP_TOKENS)] = 0
    report_usage: bool = Field(
        default=True,
        description="the agent reports provider usage; false: the monitor estimates (chars/4)",
    )
    constraints: list[str] = Field(default_factory=list)
    source_of_truth: list[str] = Field(default_factory=list)
    memory_keys: list[str] = Field(default_factory=list)
    continue_after_handoff: bool = Field(
        default=False,
        description="after a handoff, `clm-policy run` goes on in a new session seeded from it "
        "(as --continue-after-handoff; --stop-at-handoff overrides it)",
    )
    steps: list[ScenarioStep] = Field(min_length=1)
