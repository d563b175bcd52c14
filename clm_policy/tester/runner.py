"""Run policy test files: decide every case under its policy and compare with ``expect``.

A file is read case by case (:class:`.cases.SuiteReader`): each case is decided as it is read
and only its result is kept, so memory does not grow with the cases. The results of a file
are kept aside until it is read to its end: a file that turns out to be unusable is one
ERROR, as if it had been validated whole first. Each distinct policy is loaded once per run,
when a first case needs it. A case runs as ``policy.decide(given, profile,
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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from clm_policy.base.errors import (
    ClmError,
    EvaluationError,
    InputError,
    Location,
    StateError,
    quote,
)
from clm_policy.base.suggest import suggest
from clm_policy.formats.textio import TEST_FILE_LIMIT
from clm_policy.formats.yamlio import paused_gc, read_yaml_text
from clm_policy.models.decision import Decision
from clm_policy.models.policytest import Expectation
from clm_policy.policy.cache import load_policy_cached
from clm_policy.policy.engine import Policy
from clm_policy.policy.sources import locate_source, reach
from clm_policy.tester.cases import Case, Header, SuiteReader
from clm_policy.tester.coverage import Coverage, PolicyCoverage, exercised
from clm_policy.tester.results import CaseResult, RunReport, Verdict

_GUARD_LISTS = ("blocked_by", "warnings", "overridden")
# The fields of ``expect``, in the order results list them.
FIELDS = ("action", "trigger", "proposed", *_GUARD_LISTS, "forced", "rationale")


@dataclass
class _Subject:
    """A policy under test, with what cases are checked against and its coverage."""

    policy: Policy
    rules: list[str]
    guards: list[str]
    coverage: PolicyCoverage
    reported: bool = False  # its coverage is in the run's (a file that used it was read)


@dataclass
class _FileRun:
    """What running the cases of one file produced, set aside until the file is read to its
    end (an error found there voids it)."""

    file: str
    results: list[CaseResult] = field(default_factory=list)
    deselected: int = 0
    subject: _Subject | ClmError | None = None
    covered: set[str] = field(default_factory=set)


class Runner:
    """Runs test files, sharing loaded policies and coverage between them."""

    def __init__(self, keyword: str | None = None) -> None:
        self.keyword = keyword
        self._needle = keyword.lower() if keyword is not None else None
        self.subjects: dict[str, _Subject | ClmError] = {}
        self.coverage = Coverage()
        self.deselected = 0

    def run_file(self, path: Path, shown: str) -> list[CaseResult]:
        """Every result of one test file; a file that cannot be used is one ERROR."""
        try:
            text = read_yaml_text(path, shown, limit=TEST_FILE_LIMIT, what="policy test")
            reader = SuiteReader(text, shown)
            run = self._run_cases(reader, path)
            if reader.rerun:  # a top-level key after the cases: run them under the file's
                reader = SuiteReader(text, shown, reader.final)
                run = self._run_cases(reader, path)
        except InputError as exc:
            where = exc.location or Location(shown)
            return [
                CaseResult(shown, where.line, None, Verdict.ERROR, message=exc.message, where=where)
            ]
        subject = run.subject
        if isinstance(subject, _Subject):
            if not subject.reported:
                subject.reported = True
                self.coverage.policies.append(subject.coverage)
            subject.coverage.covered |= run.covered
        self.deselected += run.deselected
        return run.results

    def _run_cases(self, reader: SuiteReader, path: Path) -> _FileRun:
        run = _FileRun(reader.file)
        needle = self._needle
        for case in reader.cases():
            if needle is not None and needle not in case.spec.name.lower():
                run.deselected += 1
                continue
            header = reader.header
            assert header is not None  # cases are handed out under a header
            if run.subject is None:
                run.subject = self._subject(header.policy, path)
            if isinstance(run.subject, ClmError):
                message = f"cannot load policy {quote(header.policy)}: {run.subject}"
                where = header.doc.location(("policy",))
                line, name = case.where.line, case.spec.name
                run.results.append(
                    CaseResult(run.file, line, name, Verdict.ERROR, message=message, where=where)
                )
            else:
                run.results.append(self._run_case(run, header, case, run.subject))
        return run

    def _subject(self, ref: str, test_file: Path) -> _Subject | ClmError:
        try:
            path, shown = locate_source(ref, test_file.parent, within=reach(test_file), what="it")
        except ClmError as exc:
            return exc
        key = os.path.realpath(path)
        if key not in self.subjects:
            source = ref if shown.startswith("<bundled>") else Path(os.path.normpath(path))
            try:
                policy = load_policy_cached(source)
            except ClmError as exc:
                self.subjects[key] = exc
            else:
                self.subjects[key] = _Subject(
                    policy,
                    [r.id for r in policy.rules],
                    [g.id for guards in policy.guards.values() for g in guards],
                    PolicyCoverage.of(policy),
                )
        return self.subjects[key]

    def _run_case(self, run: _FileRun, header: Header, case: Case, subject: _Subject) -> CaseResult:
        spec, policy = case.spec, subject.policy

        def error(message: str, where: Location) -> CaseResult:
            return CaseResult(
                run.file, case.where.line, spec.name, Verdict.ERROR, policy.path, message, where
            )

        if spec.skip is not None:
            return CaseResult(
                run.file, case.where.line, spec.name, Verdict.SKIP, policy.path, spec.skip
            )
        if case.given_error is not None:
            return error(case.given_error.message, case.given_error.location or case.where)
        problem = _unknown_name(header, case, subject)
        if problem is not None:
            return error(*problem)
        profile = spec.profile or (None if spec.given.profile else header.profile)
        state = case.state
        try:
            outcome = policy.decide(state, profile, force=spec.force)
        except StateError as exc:
            where = case.where
            if exc.path is not None:
                where = case.doc.location(("given", *exc.path), key=True)
            return error(exc.message, where)
        except EvaluationError as exc:
            return error(f"evaluation failed: {exc}", case.where)
        run.covered.update(exercised(outcome))
        expected, actual = _compare(spec.expect, outcome)
        verdict = Verdict.PASS if expected == actual else Verdict.FAIL
        result = CaseResult(
            run.file,
            case.where.line,
            spec.name,
            verdict,
            policy.path,
            expected=expected,
            actual=expected if verdict is Verdict.PASS else actual,  # one dict kept, not two
        )
        if verdict is Verdict.PASS:
            return result
        message = "; ".join(
            f"{k}: expected {json.dumps(v)}, got {json.dumps(actual[k])}"
            for k, v in expected.items()
            if v != actual[k]
        )
        trace = policy.explain(state, profile, force=spec.force)
        return replace(result, message=message, trace=trace)


def run_tests(files: Sequence[tuple[Path, str]], keyword: str | None = None) -> RunReport:
    """Run the test files (``(path, name to show)``, as :func:`.discover.discover` gives)."""
    runner = Runner(keyword)
    results: list[CaseResult] = []
    with paused_gc():  # a run builds many small objects and no reference cycles
        for path, shown in files:
            results += runner.run_file(path, shown)
    names = [shown for _, shown in files]
    return RunReport(names, results, runner.coverage, runner.keyword, runner.deselected)


def _unknown_name(header: Header, case: Case, subject: _Subject) -> tuple[str, Location] | None:
    """The first name the case uses that the policy does not have: (message, where)."""
    spec, policy = case.spec, subject.policy
    for name, doc, path in (
        (spec.profile, case.doc, ("profile",)),
        (spec.given.profile, case.doc, ("given", "profile")),
        (header.profile, header.doc, ("profile",)),
    ):
        if name is not None:
            if name not in policy.profiles:
                known = ", ".join(policy.profiles)
                return (
                    f"unknown profile {quote(name)}{suggest(name, policy.profiles)} "
                    f"(policy {policy.name} has: {known})",
                    doc.location(path),
                )
            break
    expect = spec.expect
    trigger = expect.trigger
    if trigger is not None and trigger not in subject.rules:
        null = "; for no rule, write null" if trigger in ("None", "none", "Null", "NULL") else ""
        return (
            f"expect.trigger: policy {policy.name} has no rule '{trigger}'"
            f"{suggest(trigger, subject.rules) or null} (rules: {', '.join(subject.rules)})",
            case.doc.location(("expect", "trigger")),
        )
    for field_name in _GUARD_LISTS:
        for j, guard in enumerate(getattr(expect, field_name) or ()):
            if guard not in subject.guards:
                known = ", ".join(subject.guards) or "none"
                return (
                    f"expect.{field_name}: policy {policy.name} has no guard '{guard}'"
                    f"{suggest(guard, subject.guards)} (guards: {known})",
                    case.doc.location(("expect", field_name, j)),
                )
    return None


def _compare(expect: Expectation, outcome: Decision) -> tuple[dict[str, Any], dict[str, Any]]:
    """The asserted fields of ``expect``, and the same fields of ``outcome``."""
    names = [name for name in FIELDS if name in expect.model_fields_set]
    return {n: getattr(expect, n) for n in names}, {n: _field(outcome, n) for n in names}


def _field(outcome: Decision, name: str) -> Any:
    """A field of ``outcome`` as ``expect`` writes it: guards by id, actions by name."""
    value = getattr(outcome, name)
    if name in _GUARD_LISTS:
        return [f.guard for f in value]
    return value.value if name in ("action", "proposed") else value
