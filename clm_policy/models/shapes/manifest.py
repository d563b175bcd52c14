"""The handoff manifest, declared once: what a fresh session needs to take over a task (seed
plan §5.5), and its check at the edges.

The document's ``schema_version`` and the fourteen §5.5 fields, all required, then the
fields a handoff from a real session adds, each optional with an empty default, and
``agent_id`` (seed M4.3: which agent of the task handed off; the agents of a task share a
memory namespace, ``agents/<session>/``, and ``memory_keys`` names their records). Session
linkage (session id, parent session, step, rule) travels in the commit trailers instead.

:func:`validate_manifest` checks a manifest against both the model and the schema before
anyone writes it; :func:`read_manifest` reads one of any version clm-policy knows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from functools import cache
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
)

from clm_policy.base.errors import InputError, Location
from clm_policy.models import manifest as plain
from clm_policy.models.enums import ManifestStatus, WordsSource
from clm_policy.models.shapes.state import TokenSnapshot
from clm_policy.models.versions import MANIFEST, MANIFEST_VERSION, Upgraded, upgrade

# "2026-08-04T12:00:00Z", optionally with up to six fractional digits; UTC only ("Z").
# [0-9], not \d: both regex engines (pydantic's and jsonschema's) read \d as any Unicode digit.
TIMESTAMP_PATTERN = (
    r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
    r"T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,6})?Z$"
)
# Memory keys (DESIGN §6): segments of [A-Za-z0-9_-] joined by "/"; so no "..", no leading
# "/" (absolute path), no empty segment.
MEMORY_KEY_PATTERN = r"^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$"

# "non-empty after strip": pydantic strips, and the pattern makes the JSON schema refuse a
# blank string too, so both validators agree.
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, pattern=r"\S")]
MemoryKey = Annotated[str, StringConstraints(pattern=MEMORY_KEY_PATTERN, max_length=200)]
AGENT_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
AgentId = Annotated[str, StringConstraints(pattern=AGENT_ID_PATTERN)]


class AgentWords(BaseModel):
    """What the handing-off agent wrote on purpose, kept word for word."""

    model_config = ConfigDict(extra="forbid")

    source: WordsSource = Field(description="where the words come from")
    text: Text = Field(description="the agent's words, whole, as it wrote them (redacted)")
    step: int | None = Field(
        default=None,
        ge=0,
        description="for a summary: the step it was written at (the record after it is newer)",
    )


class Check(BaseModel):
    """A check (a test, a build, a lint, a type check) and its latest run."""

    model_config = ConfigDict(extra="forbid")

    command: Text = Field(description="the command, as run (on one line)")
    status: str = Field(
        pattern=r"^(passed|failed|unknown|pending)$",
        description="its latest run's result: passed, failed, unknown (no exit code or "
        "summary) or pending (no result yet)",
    )
    result: str = Field(description="what the output said (the summary line, the exit code)")
    earlier: str | None = Field(
        default=None, description="an earlier result the latest one replaces, when different"
    )


class HandoffRecord(BaseModel):
    """What clm-policy recorded from the transcript, besides the files and the user's
    messages (each in the manifest's own fields): never the agent's judgement."""

    model_config = ConfigDict(extra="forbid")

    tasks: list[str] = Field(
        default_factory=list,
        description="the agent's task list as it kept it, '[x] ' done, '[~] ' in progress, "
        "'[ ] ' not started",
    )
    tasks_before_request: bool = Field(
        default=False,
        description="the task list was last updated before the person's latest request, and "
        "the session worked on after it: the list may be the earlier request's",
    )
    checks: list[Check] = Field(
        default_factory=list, description="each check with its latest result, oldest first"
    )
    environment: list[str] = Field(
        default_factory=list,
        description="git and process state the commands left: branch, commits, pushes (and "
        "their refusals), remotes, stashes, servers started or stopped",
    )
    made_artifacts: list[str] = Field(
        default_factory=list, description="files commands made (builds, generators, downloads)"
    )
    subagents: list[str] = Field(
        default_factory=list, description="the agents the session started, with what they did"
    )
    failures: list[str] = Field(
        default_factory=list,
        description="commands (other than checks) and edits whose latest attempt failed and "
        "that were not done since, with the line that says why",
    )
    read_artifacts: list[str] = Field(
        default_factory=list,
        description="files the agent read and did not change, the most recent last",
    )
    said: list[str] = Field(
        default_factory=list,
        description="the agent's last messages to the person (its words, not a handoff), "
        "oldest first",
    )
    reasoning: list[str] = Field(
        default_factory=list,
        description="the agent's last reasoning the transcript shows (thinking, reasoning "
        "summaries), oldest first: context, not instructions",
    )
    last_activity: str | None = Field(
        default=None, description="what the session was last doing (its last tool call)"
    )
    contradictions: list[str] = Field(
        default_factory=list,
        description="where the record disagrees with the agent's words, one line each",
    )


class HandoffManifest(BaseModel):
    """The handoff manifest (seed plan, section 5.5): its fourteen fields required, the
    handoff's additions optional, no other field."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    schema_version: int = Field(
        ge=MANIFEST_VERSION,
        le=MANIFEST_VERSION,
        description="the version of this document's shape (older ones: clm-policy migrate)",
    )
    goal: Text = Field(description="what the task is for, in one or a few sentences")
    status: ManifestStatus = Field(description="where the task stands")
    source_of_truth: list[str] = Field(
        description="files, documents or URLs the next session must trust over memory"
    )
    changed_artifacts: list[str] = Field(description="what this session changed")
    commands_and_results: list[str] = Field(description="commands run and what they returned")
    verified: list[str] = Field(description="facts checked, with how")
    not_verified: list[str] = Field(description="what still needs checking")
    assumptions_risks: list[str] = Field(description="assumptions made and risks seen")
    blockers: list[str] = Field(description="what stops progress; empty when nothing does")
    next_safe_action: Text = Field(description="the first thing the next session should do")
    memory_keys: list[MemoryKey] = Field(description="memory entries worth reading first")
    token_snapshot: TokenSnapshot = Field(
        description=(
            "token figures at handoff: context_tokens is what the window held, "
            "input/output/total_tokens are cumulative over the session"
        )
    )
    timestamp: str = Field(
        pattern=TIMESTAMP_PATTERN, description="when the manifest was made, ISO-8601 UTC ('Z')"
    )
    decision_rationale: Text = Field(description="why the session was handed off")
    requests: list[str] = Field(
        default_factory=list,
        description=(
            "every request the user made, in order (the goal is the latest substantive one)"
        ),
    )
    constraints: list[str] = Field(
        default_factory=list, description="what the user said must or must not be done"
    )
    decisions: list[str] = Field(default_factory=list, description="decisions taken and by whom")
    done: list[str] = Field(default_factory=list, description="work finished")
    remaining: list[str] = Field(
        default_factory=list,
        description="work still to do, in order: the task in progress first",
    )
    open_failures: list[str] = Field(
        default_factory=list,
        description=(
            "checks whose last run failed and that no later run passed, with the output's summary"
        ),
    )
    moved_artifacts: list[str] = Field(
        default_factory=list, description="files renamed, as 'old -> new'"
    )
    deleted_artifacts: list[str] = Field(default_factory=list, description="files deleted")
    transcript: str | None = Field(
        default=None, description="the earlier session's transcript, for what the manifest lacks"
    )
    last_message: str | None = Field(
        default=None,
        description=(
            "the earlier agent's last message, as context: what it said last, never the next step"
        ),
    )
    agent_words: AgentWords | None = Field(
        default=None,
        description="what the agent wrote on purpose at handoff, word for word (null: it wrote "
        "nothing: the handoff is the record alone)",
    )
    record: HandoffRecord = Field(
        default_factory=HandoffRecord,
        description="what clm-policy recorded from the transcript beside the files and requests",
    )
    agent_id: AgentId | None = Field(
        default=None,
        description=(
            "which agent of the task handed off: 'main' for the session's own agent, an "
            "agent's id (Claude Code's agent_id) otherwise; null when not known"
        ),
    )

    @field_validator("timestamp")
    @classmethod
    def _real_date(cls, value: str) -> str:
        # The pattern checks the shape; this catches dates like 2026-02-30.
        datetime.fromisoformat(value)
        return value


def validate_manifest(
    data: Mapping[str, Any] | plain.HandoffManifest, *, source: str | None = None
) -> plain.HandoffManifest:
    """The plain manifest of ``data`` as pydantic read it (strict JSON types, texts stripped),
    once the shipped JSON schema accepts it too: what is written, and what is read, passes here.

    Raises :class:`InputError` naming the failing field (``memory_keys[1]``) at ``source``.
    """
    where = Location(source) if source else None
    if isinstance(data, plain.HandoffManifest):
        data = data.as_dict()
    try:
        text = json.dumps(data)
    except (TypeError, ValueError) as exc:
        raise InputError(f"handoff manifest: not JSON data ({exc})", where) from None
    try:
        manifest = HandoffManifest.model_validate_json(text, strict=True)
    except ValidationError as exc:
        raise InputError(f"handoff manifest: {pydantic_problem(exc)}", where) from None
    error = _best_schema_error(json.loads(text))
    if error is not None:
        raise InputError(f"handoff manifest: {error}", where)
    return plain.HandoffManifest.from_dict(manifest.model_dump(mode="json"))


def read_manifest(
    data: Mapping[str, Any], *, source: str
) -> tuple[plain.HandoffManifest, Upgraded]:
    """A manifest of any version clm-policy knows, validated as the current one, and how it
    was read (``.upgraded``: it was older; the caller says so in one line)."""
    if not isinstance(data, Mapping):
        raise InputError("handoff manifest: not a JSON object", Location(source))
    read = upgrade(MANIFEST, data, source)
    return validate_manifest(read.data, source=source), read


def pydantic_problem(exc: ValidationError) -> str:
    """The first error of ``exc`` as ``field.path: message``."""
    err = exc.errors(include_url=False)[0]
    loc = err["loc"]
    if err["type"] == "missing":
        return f"missing required field '{_display(loc)}'"
    if err["type"] == "extra_forbidden":
        return f"unknown field '{_display(loc)}'"
    msg = str(err["msg"]).removeprefix("Value error, ")
    msg = msg[:1].lower() + msg[1:]
    return f"{_display(loc)}: {msg}" if loc else msg


def _display(loc: tuple[int | str, ...] | list[int | str]) -> str:
    out = ""
    for step in loc:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


def _best_schema_error(instance: Any) -> str | None:
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

    error = best_match(_schema_validator().iter_errors(instance))
    if error is None:
        return None
    path = _display(list(error.absolute_path))
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = [k for k in error.validator_value if k not in error.instance]
        return f"missing required field '{_display([*error.absolute_path, missing[0]])}'"
    return f"{path}: {error.message}" if path else error.message


@cache
def _schema_validator() -> Any:  # jsonschema ships no type information
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

    from clm_policy.base.resources import schema_path

    schema = json.loads(schema_path("handoff-manifest").read_text(encoding="utf-8"))
    return Draft202012Validator(schema)
