"""The schema of one policy file, declared once.

Every policy file is validated against :class:`PolicyFile` (strict types, unknown keys
refused); schemas/policy.schema.json is generated from it (``clm-policy schema policy``) and a
test keeps the two equal. Cross-file semantics (extends, soft < hard, names in expressions)
are checked by :mod:`clm_policy.policy.load` on top of this.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from clm_policy.models.enums import MAX_COUNT
from clm_policy.models.fields import default_misfit

ID_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]*$"
SHARE_PATTERN = r"^(100|[1-9]?[0-9])(\.[0-9]+)?%$"

Identifier = Annotated[str, StringConstraints(pattern=ID_PATTERN, max_length=64)]
Share = Annotated[str, StringConstraints(pattern=SHARE_PATTERN)]
Threshold = Annotated[
    Annotated[int, Field(ge=0, le=MAX_COUNT)] | Share,
    Field(description="tokens (an integer) or a share of the context window ('70%')"),
]
ActionName = Literal["continue", "compact", "handoff"]
GuardedAction = Literal["compact", "handoff"]
SignalType = Literal["bool", "int", "float", "str"]

_STRICT = ConfigDict(extra="forbid", strict=True, defer_build=True)


class ProfileSpec(BaseModel):
    """Thresholds and settings of one task profile (or of ``defaults``, which all inherit)."""

    model_config = _STRICT

    description: str | None = None
    soft_compact: Threshold | None = Field(
        default=None, description="context size at which to compact"
    )
    hard_handoff: Threshold | None = Field(
        default=None, description="context size at which to hand off to a fresh session"
    )
    min_steps_between_compacts: Annotated[int, Field(ge=0, le=MAX_COUNT)] | None = None
    prefer_handoff_on_phase: bool | None = None
    retain_recent_messages: Annotated[int, Field(ge=0, le=MAX_COUNT)] | None = None
    context_window: Annotated[int, Field(gt=0, le=MAX_COUNT)] | None = Field(
        default=None, description="the context window this profile assumes, in tokens"
    )
    min_recall: Annotated[float, Field(ge=0, le=1)] | None = Field(
        default=None,
        description=(
            "share of the session's facts a compaction's next context must hold (default 0.9); "
            "under it the compaction becomes a handoff (verify_failed)"
        ),
    )
    seed_tokens: Annotated[int, Field(ge=100, le=MAX_COUNT)] | None = Field(
        default=None,
        description=(
            "the most a handoff's seed may take, in tokens (characters / 4; default 2500): "
            "the most useful facts first, the rest left in the manifest"
        ),
    )


class SignalSpec(BaseModel):
    """A fact an integration supplies, with its type and the value used when it does not."""

    model_config = _STRICT

    type: SignalType
    default: bool | int | float | str
    description: str | None = None

    @model_validator(mode="after")
    def _default_matches_type(self) -> SignalSpec:
        misfit = default_misfit(self.type, self.default)
        if misfit is not None:
            raise ValueError(misfit)
        return self


class PriceSpec(BaseModel):
    """What a model's tokens cost, in US dollars (or any one currency) per million tokens."""

    model_config = _STRICT

    input: Annotated[float, Field(ge=0, le=1_000_000, allow_inf_nan=False)] = Field(
        description="price per million input tokens"
    )
    output: Annotated[float, Field(ge=0, le=1_000_000, allow_inf_nan=False)] = Field(
        description="price per million output tokens"
    )


class _Placed(BaseModel):
    """Fields a child policy uses to place, override or remove a parent's entry by id."""

    model_config = _STRICT

    id: Identifier
    description: str | None = None
    before: Identifier | None = Field(default=None, description="insert before this id")
    after: Identifier | None = Field(default=None, description="insert after this id")
    disable: bool = Field(default=False, description="remove the parent's entry of this id")


class RuleSpec(_Placed):
    """An ordered rule: the first whose ``when`` holds decides the action."""

    when: str | None = Field(default=None, description="sandboxed expression")
    action: ActionName | None = None
    because: str | None = Field(
        default=None, description="rationale template; {expression} placeholders"
    )


class GuardSpec(_Placed):
    """A precondition on an action: when ``when`` holds, the action is blocked or warned."""

    when: str | None = Field(default=None, description="sandboxed expression")
    severity: Literal["block", "warn"] | None = None
    overridable: bool | None = Field(
        default=None, description="force bypasses this blocking guard (and no other)"
    )
    message: str | None = Field(default=None, description="template; {expression} placeholders")


class PolicyFile(BaseModel):
    """One clm-policy policy file (version 1)."""

    model_config = _STRICT

    version: Literal[1]
    name: Identifier | None = Field(default=None, description="defaults to the file name")
    description: str | None = None
    extends: str | None = Field(
        default=None,
        description="a bundled policy name (default) or a path relative to this file",
    )
    default_profile: Identifier | None = None
    defaults: ProfileSpec | None = None
    profiles: dict[Identifier, ProfileSpec] = Field(default_factory=dict)
    models: dict[str, Annotated[int, Field(gt=0, le=MAX_COUNT)]] = Field(
        default_factory=dict,
        description="context window by model name (longest prefix of the state's model wins)",
    )
    prices: dict[str, PriceSpec] = Field(
        default_factory=dict,
        description="token prices by model name (longest prefix of a session's model wins; "
        "'default' prices a session whose model matches none) for `clm-policy report`'s cost",
    )
    signals: dict[Identifier, SignalSpec] = Field(default_factory=dict)
    rules: list[RuleSpec] = Field(default_factory=list)
    otherwise: ActionName | None = Field(default=None, description="when no rule holds")
    guards: dict[GuardedAction, list[GuardSpec]] = Field(default_factory=dict)
    confirm: list[GuardedAction] | None = Field(
        default=None,
        description="actions a person must confirm before `clm-policy run` carries them out",
    )
