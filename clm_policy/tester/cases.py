"""Read one policy test file: its schema, its cases and where each one is written.

A file that cannot be used — YAML syntax, schema, duplicate case names — raises one
:class:`~clm_policy.errors.InputError` at ``file:line:col``. A case whose ``given`` is not a
valid SessionState does not spoil the file: it carries its own error, and the runner reports
that case alone as an ERROR.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from clm_policy.errors import InputError, Location, quote
from clm_policy.models.policy_test import GivenState, PolicyTestCase, PolicyTestFile
from clm_policy.textio import TEST_FILE_LIMIT
from clm_policy.validate import kind_of, located_errors
from clm_policy.yamlio import PathKey, YamlDocument, parse_yaml, read_yaml_text


@dataclass(frozen=True, slots=True)
class Case:
    """A case of a test file, with where it starts and, if any, what is wrong with its state."""

    index: int
    spec: PolicyTestCase
    where: Location
    given_error: InputError | None = None


@dataclass(frozen=True)
class SuiteFile:
    """A valid test file: its model, its cases and its document (to locate any of its parts)."""

    file: str
    path: Path
    spec: PolicyTestFile
    doc: YamlDocument
    cases: list[Case]

    def locate(self, path: tuple[PathKey, ...], *, key: bool = False) -> Location:
        return self.doc.location(path, key=key)


def load_suite(path: Path, display: str | None = None) -> SuiteFile:
    """Read and validate the test file at ``path``; raise InputError if it cannot be used."""
    shown = display or str(path)
    doc = parse_yaml(read_yaml_text(path, shown, limit=TEST_FILE_LIMIT, what="policy test"), shown)
    if doc.root is None:
        raise InputError("empty file: expected a YAML mapping", Location(shown, 1, 1))
    if not isinstance(doc.root, dict):
        # the kind only, never the text: this may be any file at all
        raise InputError(
            f"expected a mapping at the top of the test file, got {kind_of(doc.root)}",
            doc.location([]),
        )
    spec, given_errors = _validate(doc)
    first: dict[str, int] = {}
    for i, case in enumerate(spec.cases):
        if case.name in first:
            line = doc.location(("cases", first[case.name], "name")).line
            raise InputError(
                f"duplicate case name {quote(case.name)} (first at line {line})",
                doc.location(("cases", i, "name")),
            )
        first[case.name] = i
    cases = [
        Case(i, case, doc.location(("cases", i)), given_errors.get(i))
        for i, case in enumerate(spec.cases)
    ]
    return SuiteFile(doc.file, path, spec, doc, cases)


def _parse(data: Any) -> PolicyTestFile:
    # JSON mode, strict: the semantics of the JSON schema (enums by name, "5" no integer)
    return PolicyTestFile.model_validate_json(json.dumps(data), strict=True)


def _validate(doc: YamlDocument) -> tuple[PolicyTestFile, dict[int, InputError]]:
    """The file's model, and the error of each case whose ``given`` does not validate.

    One pydantic call validates the whole file (fast); only when it fails are the cases with
    a bad ``given`` set apart and validated one by one, for an error of their own.
    """
    try:
        return _parse(doc.root), {}
    except ValidationError as exc:
        bad = sorted(
            {
                loc[1]
                for loc in (e["loc"] for e in exc.errors(include_url=False))
                if len(loc) >= 3 and loc[0] == "cases" and loc[2] == "given"
                if isinstance(loc[1], int)
            }
        )
        if not bad:
            raise located_errors(doc, exc, PolicyTestFile)[0] from None
    cases = list(doc.root["cases"])
    for i in bad:
        cases[i] = {**cases[i], "given": {}}
    try:
        spec = _parse({**doc.root, "cases": cases})
    except ValidationError as exc:
        raise located_errors(doc, exc, PolicyTestFile)[0] from None
    return spec, {i: _given_error(doc, i) for i in bad}


def _given_error(doc: YamlDocument, index: int) -> InputError:
    sub = doc.sub(("cases", index, "given"))
    if not isinstance(sub.root, dict):
        return InputError(
            f"given: expected a mapping (a SessionState), got {kind_of(sub.root)}",
            sub.location([]),
        )
    try:
        GivenState.model_validate_json(json.dumps(sub.root), strict=True)
    except ValidationError as exc:
        first = located_errors(sub, exc, GivenState)[0]
        return InputError(f"given: {first.message}", first.location)
    raise AssertionError("a given that failed in its file validated alone")  # pragma: no cover
