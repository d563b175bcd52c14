"""Read one policy test file case by case: its header, each case and where it is written.

The file is streamed (:class:`~clm_policy.formats.yamlio.YamlStream`): cases are read and
validated in small batches and handed out one by one, then dropped by the runner, so memory
does not grow with the number of cases.

A file that cannot be used — YAML syntax, schema, duplicate case names — is one
:class:`~clm_policy.base.errors.InputError` at ``file:line:col``, the same one as if the file had
been read and validated whole: any YAML error first, then the schema error first by
position, then the first duplicate name. It is raised once the file is read to its end, and
once one is known no more cases are handed out (what the runner did with earlier ones is
void). A case whose ``given`` is not a valid SessionState does not spoil the file: it carries
its own error, and the runner reports that case alone as an ERROR.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError

from clm_policy.base.errors import InputError, Location, quote
from clm_policy.formats.validate import kind_of, locate_errors
from clm_policy.formats.yamlio import PathKey, YamlDocument, YamlStream
from clm_policy.models.policytest import GivenState, PolicyTestCase, PolicyTestFile
from clm_policy.models.state import SessionState, read_state

if TYPE_CHECKING:
    from typing import TypeVar

    Spec = TypeVar("Spec", PolicyTestFile, PolicyTestCase)

CASES = "cases"
BATCH = 64  # cases validated together: one pydantic call for many, the memory of a few


@dataclass(frozen=True, slots=True)
class Case:
    """A valid case of a test file, its own document and, if any, what is wrong with its state."""

    index: int
    spec: PolicyTestCase
    doc: YamlDocument  # the case alone: paths into it start at the case
    given_error: InputError | None = None

    @property
    def where(self) -> Location:
        """Where the case starts."""
        return self.doc.location(())

    @property
    def state(self) -> SessionState:
        """The case's ``given`` as the state a decision reads (``session_id`` ``test`` when it
        names none): read from the case's data, which pydantic accepted already."""
        root = self.doc.root
        given = root.get("given", {}) if isinstance(root, dict) else {}
        found = read_state({"session_id": "test", **given}) if isinstance(given, dict) else None
        if found is None:  # the reader accepts what pydantic accepts: a test holds it so
            found = SessionState.from_dict(self.spec.given.model_dump(mode="json"))
        return found


@dataclass(frozen=True)
class Header:
    """What a test file says about all its cases: the policy and the profile they run under."""

    policy: str
    profile: str | None
    doc: YamlDocument  # the top-level mapping, without the cases


class SuiteReader:
    """Reads one test file (its text, shown as ``file``), case by case.

    :meth:`cases` hands out the valid cases under :attr:`header`: the top-level keys written
    before the cases, or ``run_under`` when given. A top-level key may follow the cases; then
    :attr:`rerun` says that the cases must be read again under :attr:`final` (the runner
    does so: the cases ran under a header that was not the file's).
    """

    def __init__(self, text: str, file: str, run_under: Header | None = None) -> None:
        self.text = text
        self.file = file
        self.header = run_under
        self.final: Header | None = None
        self.rerun = False

    def cases(self) -> Iterator[Case]:
        stream = YamlStream(self.text, self.file, CASES)
        self._error: InputError | None = None  # the first schema error by position
        self._duplicate: InputError | None = None
        self._first_line: dict[str, int] = {}
        count = 0
        batch: list[YamlDocument] = []
        for doc in stream.items():
            if count == 0 and self.header is None:
                self.header, found = _header(stream.header, final=False)
                self._error = _earlier(self._error, found)
            count += 1
            batch.append(doc)
            if len(batch) == BATCH:
                yield from self._batch(batch, count - len(batch))
                batch = []
        yield from self._batch(batch, count - len(batch))
        top = stream.header
        if not isinstance(top.root, dict):
            # the kind only, never the text: this may be any file at all
            got = kind_of(top.root)
            message = f"expected a mapping at the top of the test file, got {got}"
            raise InputError(message, top.location([]))
        whole = top.root.get(CASES) if count == 0 else None
        # cases not streamed (an anchor on them, an alias): read from the whole list
        late = whole if isinstance(whole, list) else []
        count = count or len(late)
        self.final, found = _header(top, final=True, streamed=count)
        self._error = _earlier(self._error, found)
        if late:
            self.header = self.header or self.final
            for start in range(0, count, BATCH):
                docs = [top.sub((CASES, i)) for i in range(start, min(start + BATCH, count))]
                yield from self._batch(docs, start)
        if self._error is not None:
            raise self._error
        if self._duplicate is not None:
            raise self._duplicate
        run_under = (self.header.policy, self.header.profile) if self.header is not None else None
        assert self.final is not None
        self.rerun = run_under != (self.final.policy, self.final.profile)

    def _batch(self, docs: list[YamlDocument], start: int) -> Iterator[Case]:
        """The valid cases of ``docs`` (the cases from index ``start`` on), validated in one go
        (one case at a time only when one of them is invalid)."""
        if not docs:
            return
        read: list[tuple[Case | None, InputError | None]]
        try:
            specs = _case_list().validate_json(json.dumps([d.root for d in docs]), strict=True)
        except ValidationError:
            read = [_case(d, start + i) for i, d in enumerate(docs)]
        else:
            pairs = enumerate(zip(specs, docs, strict=True))
            read = [(Case(start + i, spec, d), None) for i, (spec, d) in pairs]
        for case, found in read:
            self._error = _earlier(self._error, found)
            if case is None:
                continue
            name_at = case.doc.location(("name",))
            if case.spec.name in self._first_line:
                if self._duplicate is None:
                    first = self._first_line[case.spec.name]
                    message = f"duplicate case name {quote(case.spec.name)} (first at line {first})"
                    self._duplicate = InputError(message, name_at)
            else:
                self._first_line[case.spec.name] = name_at.line
            if self._error is None and self._duplicate is None and self.header is not None:
                yield case


@functools.cache
def _case_list() -> TypeAdapter[list[PolicyTestCase]]:
    return TypeAdapter(list[PolicyTestCase])


def _earlier(a: InputError | None, b: InputError | None) -> InputError | None:
    """The error written first (``a`` on a tie: it was found first)."""
    return min((e for e in (a, b) if e is not None), key=_position, default=None)


def _position(error: InputError) -> tuple[int, int]:
    where = error.location
    return (where.line, where.col) if where is not None else (0, 0)


def _parse(model: type[Spec], data: Any) -> Spec:
    # JSON mode, strict: the semantics of the JSON schema (enums by name, "5" no integer)
    return model.model_validate_json(json.dumps(data), strict=True)


def _header(
    doc: YamlDocument, *, final: bool, streamed: int = 0
) -> tuple[Header | None, InputError | None]:
    """The header of a test file (the top-level mapping) and its first error, if any.

    The cases are validated one by one, not here: when ``streamed`` (their number) is not
    zero, they are left out and "at least one case" holds. Before the end of the file (not
    ``final``), a missing key is no error: it may come later.
    """
    root = doc.root
    if not isinstance(root, dict):
        return None, None
    try:
        spec = _parse(PolicyTestFile, {**root, CASES: []} if streamed or not final else root)
    except ValidationError as exc:
        cases_given = streamed > 0 or not final
        errors = [
            e
            for e in exc.errors(include_url=False)
            if (final or e["type"] != "missing")
            and not (cases_given and e["type"] == "too_short" and tuple(e["loc"]) == (CASES,))
        ]
        if errors:
            return None, locate_errors(doc, errors, PolicyTestFile)[0]
        policy, profile = root.get("policy"), root.get("profile")
        if not isinstance(policy, str):
            return None, None
        return Header(policy, profile, doc), None
    return Header(spec.policy, spec.profile, doc), None


def _case(doc: YamlDocument, index: int) -> tuple[Case | None, InputError | None]:
    """The case at ``doc`` (the ``index``-th), or the error that spoils its file."""
    prefix: tuple[PathKey, ...] = (CASES, index)
    try:
        return Case(index, _parse(PolicyTestCase, doc.root), doc), None
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    others = [e for e in errors if e["loc"][:1] != ("given",)]
    if others:
        return None, locate_errors(doc, others, PolicyTestFile, prefix)[0]
    try:
        spec = _parse(PolicyTestCase, {**doc.root, "given": {}})
    except ValidationError as exc:  # pragma: no cover - the errors were all in given
        return None, locate_errors(doc, exc.errors(include_url=False), PolicyTestFile)[0]
    return Case(index, spec, doc, _given_error(doc)), None


def _given_error(doc: YamlDocument) -> InputError:
    sub = doc.sub(("given",))
    if not isinstance(sub.root, dict):
        return InputError(
            f"given: expected a mapping (a SessionState), got {kind_of(sub.root)}",
            sub.location([]),
        )
    try:
        GivenState.model_validate_json(json.dumps(sub.root), strict=True)
    except ValidationError as exc:
        first = locate_errors(sub, exc.errors(include_url=False), GivenState)[0]
        return InputError(f"given: {first.message}", first.location)
    raise AssertionError("a given that failed in its case validated alone")  # pragma: no cover


def policy_named(text: str, file: str) -> str | None:
    """The ``policy:`` a test file names (as written), read up to its first case when it
    comes before them (as it does in every shipped test file); None when it names none or
    is no test file at all."""
    stream = YamlStream(text, file, CASES)
    try:
        for _ in stream.items():
            found = _named(stream.header)
            if found is not None:
                return found
    except InputError:
        return None
    return _named(stream.header)


def _named(doc: YamlDocument) -> str | None:
    root = doc.root
    policy = root.get("policy") if isinstance(root, dict) else None
    return policy if isinstance(policy, str) else None
