"""Run policy test files: decide every case under its policy and compare with ``expect``.

Each distinct policy is loaded once per run. A case runs as ``policy.outcome(given, profile,
force=force)``; its profile is the case's, else the state's own (``given.profile``), else the
file's, else the policy's default. Only the fields ``expect`` gives are compared; a FAIL then
gets the full explain trace (computed for failures only: it costs ten times a decision).
Before deciding, every name a case uses is checked against the policy, so that a typo in a
rule, guard, profile or signal name is an ERROR rather than a quiet FAIL or PASS.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from clm_policy.errors import ClmError, EvaluationError, InputError, Location, StateError, quote
from clm_policy.models.policy_test import Expectation
from clm_policy.policy.cache import load_policy_cached
from clm_policy.policy.engine import Outcome, Policy
from clm_policy.policy.names import suggest
from clm_policy.policy.sources import resolve_source
from clm_policy.tester.cases import Case, SuiteFile, load_suite
from clm_policy.tester.coverage import Coverage, PolicyCoverage
from clm_policy.tester.results import CaseResult, RunReport, Verdict
from clm_policy.yamlio import paused_gc

# The fields of ``expect``, in the order results list them.
FIELDS = (
    "action",
    "trigger",
    "proposed",
    "blocked_by",
    "warnings",
    "overridden",
    "forced",
    "rationale",
)
_GUARD_LISTS = ("blocked_by", "warnings", "overridden")


@dataclass
class _Subject:
    """A policy under test, with what cases are checked against and its coverage."""

    policy: Policy
    rules: list[str]
    guards: list[str]
    coverage: PolicyCoverage


class Runner:
    """Runs test files, sharing loaded policies and coverage between them."""

    def __init__(self, keyword: str | None = None) -> None:
        self.keyword = keyword
        self._needle = keyword.lower() if keyword is not None else None
        self.subjects: dict[Path, _Subject | ClmError] = {}
        self.coverage = Coverage()
        self.deselected = 0

    def run_file(self, path: Path, shown: str) -> list[CaseResult]:
        try:
            suite = load_suite(path, shown)
        except InputError as exc:
            where = exc.location or Location(shown)
            return [
                CaseResult(shown, where.line, None, Verdict.ERROR, message=exc.message, where=where)
            ]
        cases = suite.cases
        if self._needle is not None:
            cases = [c for c in cases if self._needle in c.spec.name.lower()]
            self.deselected += len(suite.cases) - len(cases)
        if not cases:
            return []
        subject = self._subject(suite)
        if isinstance(subject, ClmError):
            where = suite.locate(("policy",))
            message = f"cannot load policy {quote(suite.spec.policy)}: {subject}"
            return [
                CaseResult(
                    suite.file, c.where.line, c.spec.name, Verdict.ERROR, None, message, where
                )
                for c in cases
            ]
        return [self._run_case(suite, case, subject) for case in cases]

    def _subject(self, suite: SuiteFile) -> _Subject | ClmError:
        ref = suite.spec.policy
        try:
            path, shown = resolve_source(ref, suite.path.parent)
        except ClmError as exc:
            return exc
        key = path.resolve()
        if key not in self.subjects:
            source: str | Path = (
                ref if shown.startswith("<bundled>") else Path(os.path.normpath(path))
            )
            try:
                policy = load_policy_cached(source)
            except ClmError as exc:
                self.subjects[key] = exc
            else:
                coverage = PolicyCoverage.of(policy)
                self.coverage.policies.append(coverage)
                self.subjects[key] = _Subject(
                    policy,
                    [r.id for r in policy.rules],
                    [g.id for guards in policy.guards.values() for g in guards],
                    coverage,
                )
        return self.subjects[key]

    def _run_case(self, suite: SuiteFile, case: Case, subject: _Subject) -> CaseResult:
        spec, policy = case.spec, subject.policy

        def error(message: str, where: Location) -> CaseResult:
            return CaseResult(
                suite.file, case.where.line, spec.name, Verdict.ERROR, policy.path, message, where
            )

        if spec.skip is not None:
            return CaseResult(
                suite.file, case.where.line, spec.name, Verdict.SKIP, policy.path, spec.skip
            )
        if case.given_error is not None:
            return error(case.given_error.message, case.given_error.location or case.where)
        problem = _unknown_name(suite, case, subject)
        if problem is not None:
            return error(*problem)
        profile = spec.profile or (None if spec.given.profile else suite.spec.profile)
        try:
            outcome = policy.outcome(spec.given, profile, force=spec.force)
        except StateError as exc:
            where = case.where
            if exc.path is not None:
                where = suite.locate(("cases", case.index, "given", *exc.path), key=True)
            return error(exc.message, where)
        except EvaluationError as exc:
            return error(f"evaluation failed: {exc}", case.where)
        subject.coverage.record(outcome)
        expected, actual = _compare(spec.expect, outcome)
        verdict = Verdict.PASS if expected == actual else Verdict.FAIL
        result = CaseResult(
            suite.file,
            case.where.line,
            spec.name,
            verdict,
            policy.path,
            expected=expected,
            actual=actual,
        )
        if verdict is Verdict.PASS:
            return result
        message = "; ".join(
            f"{k}: expected {_show(v)}, got {_show(actual[k])}"
            for k, v in expected.items()
            if v != actual[k]
        )
        trace = policy.explain(spec.given, profile, force=spec.force)
        return replace(result, message=message, trace=trace)

    def report(self, files: list[str], results: list[CaseResult]) -> RunReport:
        return RunReport(files, results, self.coverage, self.keyword, self.deselected)


def run_tests(files: Sequence[tuple[Path, str]], keyword: str | None = None) -> RunReport:
    """Run the test files (``(path, name to show)``, as :func:`.discover.discover` gives)."""
    runner = Runner(keyword)
    results: list[CaseResult] = []
    with paused_gc():  # a run builds many small objects and no reference cycles
        for path, shown in files:
            results += runner.run_file(path, shown)
    return runner.report([shown for _, shown in files], results)


def _show(value: Any) -> str:
    return json.dumps(value)


def _unknown_name(suite: SuiteFile, case: Case, subject: _Subject) -> tuple[str, Location] | None:
    """The first name the case uses that the policy does not have: (message, where)."""
    spec, policy, at = case.spec, subject.policy, ("cases", case.index)
    for name, path in (
        (spec.profile, (*at, "profile")),
        (spec.given.profile, (*at, "given", "profile")),
        (suite.spec.profile, ("profile",)),
    ):
        if name is not None:
            if name not in policy.profiles:
                known = ", ".join(policy.profiles)
                return (
                    f"unknown profile {quote(name)}{suggest(name, policy.profiles)} "
                    f"(policy {policy.name} has: {known})",
                    suite.locate(path),
                )
            break
    expect = spec.expect
    trigger = expect.trigger
    if trigger is not None and trigger not in subject.rules:
        return (
            f"expect.trigger: policy {policy.name} has no rule '{trigger}'"
            f"{suggest(trigger, subject.rules)} (rules: {', '.join(subject.rules)})",
            suite.locate((*at, "expect", "trigger")),
        )
    for field in _GUARD_LISTS:
        for j, guard in enumerate(getattr(expect, field) or ()):
            if guard not in subject.guards:
                known = ", ".join(subject.guards) or "none"
                return (
                    f"expect.{field}: policy {policy.name} has no guard '{guard}'"
                    f"{suggest(guard, subject.guards)} (guards: {known})",
                    suite.locate((*at, "expect", field, j)),
                )
    return None


def _compare(expect: Expectation, outcome: Outcome) -> tuple[dict[str, Any], dict[str, Any]]:
    """The asserted fields of ``expect``, and the same fields of ``outcome``."""
    given = expect.model_fields_set
    expected: dict[str, Any] = {}
    actual: dict[str, Any] = {}
    for name in FIELDS:
        if name not in given:
            continue
        expected[name] = getattr(expect, name)
        if name in _GUARD_LISTS:
            actual[name] = [f.guard for f in getattr(outcome, name)]
        elif name in ("action", "proposed"):
            actual[name] = getattr(outcome, name).value
        else:
            actual[name] = getattr(outcome, name)
    return expected, actual
