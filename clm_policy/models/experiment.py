"""An experiment file (``clm-policy experiment FILE``): arms — policy x profile x memory
backend x summarizer — played on the same workloads.

Validated like every YAML file (errors at file:line:col); schemas/experiment.schema.json is
generated from :class:`ExperimentFile`. docs/experiments.md describes each field.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

_STRICT = ConfigDict(extra="forbid", strict=True, defer_build=True)
NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,60}$"
WORKLOAD_KINDS = ("scenario", "scenarios", "recorded", "transcript")


class ArmSpec(BaseModel):
    """One way of running the workloads."""

    model_config = _STRICT

    name: str = Field(pattern=NAME, description="the arm's name in the report")
    policy: str = Field(
        default="default", description="a bundled policy name, or a file (relative to this one)"
    )
    profile: str | None = Field(
        default=None, description="the task profile (default: each workload's, else the policy's)"
    )
    memory: Literal["file", "mem0", "hybrid"] = Field(
        default="file", description="the memory backend (each arm has its own repository)"
    )
    summarizer: Literal["deterministic", "openai"] = Field(
        default="deterministic",
        description="who writes compaction summaries (openai: CLM_POLICY_SUMMARIZER_* from the "
        "environment)",
    )


class WorkloadSpec(BaseModel):
    """What the arms play: exactly one of ``scenario``, ``scenarios``, ``recorded``,
    ``transcript``."""

    model_config = _STRICT

    scenario: str | None = Field(
        default=None, description="a bundled scenario name, or a scenario file"
    )
    scenarios: str | None = Field(
        default=None, description="a glob of scenario files (relative to this file)"
    )
    recorded: str | None = Field(
        default=None,
        description="a memory repository: the scenarios its `clm-policy run` sessions played",
    )
    transcript: str | None = Field(
        default=None,
        description="a glob of Claude Code or Codex transcripts, each played as a trace of its "
        "token figures",
    )
    profile: str | None = Field(default=None, description="the profile, unless the arm names one")
    max_steps: Annotated[int, Field(ge=1, le=1_000_000)] | None = None
    continue_after_handoff: bool = Field(
        default=True, description="after a handoff, go on in a new session seeded from it"
    )

    @model_validator(mode="after")
    def _one_kind(self) -> WorkloadSpec:
        given = [k for k in WORKLOAD_KINDS if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                f"a workload names exactly one of {', '.join(WORKLOAD_KINDS)}"
                + (f" (this one: {', '.join(given)})" if given else "")
            )
        return self

    @property
    def kind(self) -> str:
        return next(k for k in WORKLOAD_KINDS if getattr(self, k) is not None)

    @property
    def ref(self) -> str:
        value = getattr(self, self.kind)
        assert isinstance(value, str)
        return value


class Mem0Spec(BaseModel):
    """Where the mem0 and hybrid arms' model runs."""

    model_config = _STRICT

    model: Literal["offline", "endpoint"] = Field(
        default="endpoint",
        description="offline: the deterministic stand-in (no model); endpoint: the one "
        "CLM_POLICY_MEM0_BASE_URL names (never a file: the endpoint is yours)",
    )
    timeout: Annotated[float, Field(gt=0, le=600, allow_inf_nan=False)] | None = Field(
        default=None, description="seconds one Mem0 call may take"
    )


class ExperimentFile(BaseModel):
    """clm-policy experiment file (version 1)."""

    model_config = _STRICT

    version: Literal[1]
    name: str = Field(pattern=NAME)
    description: str | None = None
    seed: Annotated[int, Field(ge=0, le=2**32)] = Field(
        default=0, description="the bootstrap's random seed: the same file, the same figures"
    )
    baseline: str | None = Field(
        default=None, description="the arm the others are compared with (default: the first)"
    )
    bootstrap: Annotated[int, Field(ge=100, le=100_000)] = Field(
        default=2000, description="resamples of the workloads for each confidence interval"
    )
    confidence: Annotated[float, Field(ge=0.5, le=0.999, allow_inf_nan=False)] = 0.95
    mem0: Mem0Spec = Field(default_factory=Mem0Spec)
    arms: list[ArmSpec] = Field(min_length=1, max_length=50)
    workloads: list[WorkloadSpec] = Field(min_length=1, max_length=1000)
