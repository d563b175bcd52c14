"""The schema of a policy test file (``*.test.yaml``), declared once.

schemas/policy-test.schema.json is generated from :class:`PolicyTestFile`. A test file is data
with JSON semantics: it is validated strictly in JSON mode (``"5"`` is no integer, ``yes`` is
no boolean; enums take their names), exactly as ``clm-policy decide --state`` reads a state.
What needs the policy — rule, guard and profile names, declared signals — is checked by
:mod:`clm_policy.tester.runner` against the policy the file names.
"""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from clm_policy.models.policy import ActionName, Identifier
from clm_policy.models.shapes.state import SessionState

_STRICT = ConfigDict(extra="forbid", strict=True, defer_build=True)


def _optional(schema: dict[str, Any]) -> None:
    """Schema of a key that may be left out but not null: no ``default: null`` to suggest."""
    schema.pop("default", None)


_left_out = partial(Field, default=None, json_schema_extra=_optional)
"""A field's default of a key that may be left out (not checked) but not null."""


GuardIds = list[Identifier]


class GivenState(SessionState):
    """A case's state: a SessionState whose ``session_id`` may be left out."""

    session_id: str = Field(default="test", min_length=1)


class Expectation(BaseModel):
    """What a case expects of the decision. Only the keys given are checked."""

    model_config = _STRICT

    action: ActionName = Field(description="the decided action, after guards")
    trigger: Identifier | None = Field(
        default=None, description="id of the rule that decided; null: no rule held"
    )
    proposed: ActionName | SkipJsonSchema[None] = _left_out(
        description="the action the rules proposed, before guards"
    )
    blocked_by: GuardIds | SkipJsonSchema[None] = _left_out(
        description="ids of the guards that blocked, in policy order"
    )
    warnings: GuardIds | SkipJsonSchema[None] = _left_out(
        description="ids of the warn guards that held, in policy order"
    )
    overridden: GuardIds | SkipJsonSchema[None] = _left_out(
        description="ids of the guards force bypassed, in policy order"
    )
    forced: bool | SkipJsonSchema[None] = _left_out(
        description="true when force bypassed a blocking guard"
    )
    rationale: str | SkipJsonSchema[None] = _left_out(description="the rendered rationale, exactly")

    @model_validator(mode="after")
    def _no_nulls(self) -> Expectation:
        for name in sorted(self.model_fields_set - {"trigger"}):
            if getattr(self, name) is None:
                raise ValueError(f"{name}: null is not allowed (leave the key out to not check it)")
        return self


class PolicyTestCase(BaseModel):
    """One case: a state, how to decide it, and what the decision must be."""

    model_config = _STRICT

    name: str = Field(min_length=1, description="what the case shows; unique in the file")
    description: str | None = None
    given: GivenState = Field(
        default_factory=GivenState,
        description="the SessionState to decide (session_id defaults to 'test')",
    )
    profile: Identifier | None = Field(
        default=None, description="profile to decide under (default: the state's, the file's)"
    )
    force: bool = Field(default=False, description="bypass guards marked overridable")
    skip: Annotated[str, Field(min_length=1)] | None = Field(
        default=None, description="skip this case, for this reason"
    )
    expect: Expectation


class PolicyTestFile(BaseModel):
    """A clm-policy policy test file (version 1)."""

    model_config = _STRICT

    version: Literal[1]
    description: str | None = None
    policy: str = Field(
        min_length=1,
        description="the policy under test: a path relative to this file, or a bundled name",
    )
    profile: Identifier | None = Field(
        default=None, description="profile for cases whose case and state name none"
    )
    cases: list[PolicyTestCase] = Field(min_length=1)
