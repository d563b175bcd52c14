"""Find policy files, lint each one, and gather the problems.

A policy file is any ``*.yaml``/``*.yml`` under the given paths except policy test files
(``*.test.yaml``), hidden files and folders and other tools' packages (``node_modules``, a
virtual environment). Each file is loaded with every problem
collected (not just the first), each reported under the check it names (else
``policy-error``); the analyses run on what loaded, and disable comments apply (never to a
problem loading found). A file's problems that lie in another file it extends are reported at
its own ``extends:`` line when they come from how this file combines with its parent (a rule it
disabled leaving a signal unread, say); problems that belong to the parent itself are reported
there, once.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from clm_policy.base.errors import ClmError, InputError, Location, Sink
from clm_policy.formats.textio import TEST_SUFFIXES
from clm_policy.formats.yamlio import YamlDocument, load_yaml, paused_gc
from clm_policy.lint import directives
from clm_policy.lint.checks import ANALYSES, claiming
from clm_policy.lint.context import LintContext
from clm_policy.lint.problem import ERROR, Problem
from clm_policy.policy.compile import Compiled, compile_policy
from clm_policy.policy.load import load_resolved
from clm_policy.policy.load import schema_errors as policy_schema_errors
from clm_policy.policy.sources import discover as find_files


@dataclass
class LintReport:
    files: list[str]
    problems: list[Problem]
    read: list[str] = field(default_factory=list)
    """Every file the run read: the files linted and the parents they extend."""

    @property
    def errors(self) -> int:
        return sum(p.level == ERROR for p in self.problems)

    @property
    def warnings(self) -> int:
        return len(self.problems) - self.errors

    def failed(self, strict: bool = False) -> bool:
        return bool(self.errors or (strict and self.warnings))


def discover(paths: Sequence[str]) -> list[Path]:
    """The policy files named by ``paths`` (files, or folders searched recursively)."""

    def wanted(name: str) -> bool:
        return name.endswith((".yaml", ".yml")) and not name.endswith(TEST_SUFFIXES)

    def refused(text: str) -> InputError | None:
        if Path(text).name.endswith(TEST_SUFFIXES):
            return InputError(f"{text} is a policy test file: run `clm-policy test {text}`")
        return None

    return find_files(paths, wanted, "no policy files (*.yaml, *.yml) under", refused)


class _Reader:
    """Loads each file once per run (a team folder extends the same parents many times), and
    keeps what was compiled, so that the parents' rules are compiled once too."""

    def __init__(self) -> None:
        self.docs: dict[Path, YamlDocument] = {}
        self.compiled: Compiled = {}

    def __call__(self, path: Path, shown: str) -> YamlDocument:
        key = path.resolve()
        if key not in self.docs:
            self.docs[key] = load_yaml(path, shown)
        return self.docs[key]

    def text(self, file: str) -> str | None:
        return next((doc.text for doc in self.docs.values() if doc.file == file), None)


def lint_paths(paths: Sequence[str]) -> LintReport:
    files = discover(paths)
    linter = _Linter()
    with paused_gc():  # each file builds many small objects (syntax trees) and no cycles
        problems = {p for path in files for p in linter.lint(path, str(path))}
    named = {str(path) for path in files}
    parsed = {
        file: directives.parse(linter.read.text(file) or "")
        for file in {p.file for p in problems} | named
    }
    kept = [p for p in problems if not parsed[p.file].silences(p.line, p.check)]
    kept += [p for file in named for p in parsed[file].misnamed(file)]
    read = [str(path) for path in linter.read.docs]
    return LintReport(files=[str(p) for p in files], problems=sorted(set(kept)), read=read)


class _Linter:
    """Lints files, each once; remembers results to tell a parent's own problems from those
    a child causes by extending it."""

    def __init__(self) -> None:
        self.read = _Reader()
        self.done: dict[Path, list[Problem]] = {}

    def lint(self, path: Path, shown: str) -> list[Problem]:
        key = path.resolve()
        if key in self.done:
            return self.done[key]
        ctx = load_for_lint(path, shown, self.read)
        out = list(loading_problems(ctx))  # each where loading found it, in this file or not
        for module in ANALYSES:
            for problem in module.check(ctx):
                if problem.file != ctx.file:
                    problem = self._attribute(problem, ctx)
                out.append(problem)
        self.done[key] = out
        return out

    def _attribute(self, problem: Problem, ctx: LintContext) -> Problem:
        """A check found ``problem`` in a file ``ctx`` extends: keep it there if that file has
        it on its own, else report it at ``ctx``'s ``extends:`` (this file caused it)."""
        if ctx.resolved is not None:
            for doc, path in zip(ctx.resolved.files, ctx.resolved.paths, strict=True):
                if doc.file == problem.file and problem in self.lint(path, doc.file):
                    return problem
        return _relocate(problem, ctx)


def load_for_lint(path: Path, shown: str, read: _Reader) -> LintContext:
    """Load ``path`` collecting every problem, as far as the problems allow."""
    try:
        doc = read(path, shown)
    except ClmError as exc:
        return LintContext(file=shown, doc=None, errors=[exc])
    ctx = LintContext(file=shown, doc=doc)
    schema_errors: list[ClmError]
    try:
        schema_errors = list(policy_schema_errors(doc, quick=False))
    except ClmError as exc:  # an alias bomb, found while reading the tree
        schema_errors = [exc]
    if schema_errors:
        ctx.errors.extend(schema_errors)
        return ctx
    sink = Sink(collect=True)
    try:
        ctx.resolved = load_resolved(path, sink=sink, read=read)
        ctx.policy = compile_policy(ctx.resolved, sink, read.compiled)
    except ClmError as exc:
        sink.errors.append(exc)
    ctx.errors.extend(sink.errors)
    return ctx


def loading_problems(ctx: LintContext) -> Iterator[Problem]:
    """A problem for each error loading reported, under the check it names (checks.LOADING),
    else under ``policy-error``: none is dropped. One located at a file only (``file: no such
    file``) is reported at its first line."""
    for error in ctx.errors:
        module = claiming(error.check)
        where = error.location or Location(ctx.file)
        if where.line <= 0:
            where = Location(where.file, 1, 1)
        yield Problem.at(where, module.ID, module.LEVEL, error.message)


def _relocate(problem: Problem, ctx: LintContext) -> Problem:
    where = ctx.doc.location(["extends"]) if ctx.doc is not None else Location(ctx.file, 1, 1)
    return Problem(
        ctx.file,
        where.line,
        where.col,
        problem.check,
        problem.level,
        f"{problem.message} (in {problem.file}:{problem.line}:{problem.col}, as extended here)",
    )
