"""Load a policy file and the files it extends, and merge them into one resolved policy.

``extends`` names a bundled policy (``default``) or a path relative to the extending file. A
child's ``defaults`` apply to every profile, inherited ones included; it overrides profiles
field by field and signals by name; it overrides rules and guards by
``id`` (fields merge; the entry keeps its place unless ``before``/``after`` moves it), adds new
ones (appended, or placed with ``before``/``after``), and removes a parent's with
``disable: true``. Every merged value remembers the file and position it came from, so later
errors still point at the right line. Each file of a chain is parsed and validated once per
process, however many files extend it.

A file is validated against the policy model (pydantic, which says where it is wrong); the
merge reads the file's data: pydantic's strict validation converts nothing (but an integer
where a number is expected, which the merge converts too).
"""

from __future__ import annotations

from pathlib import Path

from clm_policy.base.digest import sha256
from clm_policy.base.errors import ClmError, LoadCheck, Location, PolicyError, Sink, shorten
from clm_policy.base.paths import Reach
from clm_policy.base.record import Record, field
from clm_policy.formats.textio import path_kind
from clm_policy.formats.yamlio import PathKey, YamlDocument, load_yaml
from clm_policy.policy.sources import locate_source, reach

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    PolicyData = dict[str, Any]
    """A policy file's data, valid against the policy schema (models/policy.py's PolicyFile)."""
    DocumentReader = Callable[[Path, str], YamlDocument]


class Origin(Record):
    """Where a value was written: the document and the path to it inside."""

    doc: YamlDocument
    path: tuple[PathKey, ...]
    HASHABLE = False

    @property
    def location(self) -> Location:
        return self.doc.location(self.path)

    @property
    def key_location(self) -> Location:
        return self.doc.location(self.path, key=True)


class Entry(Record):
    """A rule or guard after merging: its fields, each with the origin of its value; ``origin``
    is the latest declaration of this id."""

    id: str
    origin: Origin
    fields: dict[str, tuple[Any, Origin]] = field(default_factory=dict)
    HASHABLE = False

    def get(self, name: str) -> Any:
        return self.fields[name][0] if name in self.fields else None

    def origin_of(self, name: str) -> Origin:
        return self.fields[name][1] if name in self.fields else self.origin


class ResolvedPolicy(Record):
    """The merged declarations of a policy and its ancestors, not yet compiled. ``paths``: the
    files of the chain on disk, root ancestor first; ``prices``: (input, output) by model."""

    name: str
    path: str
    files: list[YamlDocument]
    paths: list[Path]
    description: str | None = None
    default_profile: tuple[str, Origin] | None = None
    defaults: dict[str, tuple[Any, Origin]] = field(default_factory=dict)
    profiles: dict[str, dict[str, tuple[Any, Origin]]] = field(default_factory=dict)
    profile_origins: dict[str, Origin] = field(default_factory=dict)
    models: dict[str, int] = field(default_factory=dict)
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    signals: dict[str, tuple[dict[str, Any], Origin]] = field(default_factory=dict)
    rules: list[Entry] = field(default_factory=list)
    otherwise: str = "continue"
    confirm: tuple[str, ...] = ()
    guards: dict[str, list[Entry]] = field(default_factory=dict)
    HASHABLE = False

    @property
    def digest(self) -> str:
        """A short content hash over every file of the chain (for audit trailers, caches)."""
        h = sha256()
        for doc in self.files:
            h.update(doc.file.encode() + b"\0" + doc.text.encode() + b"\0")
        return str(h.hexdigest())[:12]


_PLACEMENT = ("id", "before", "after", "disable", "description")


def load_resolved(
    source: str | Path, *, sink: Sink | None = None, read: DocumentReader = load_yaml
) -> ResolvedPolicy:
    """Load ``source`` and its ``extends`` chain and merge them.

    Problems in the chain itself (a file that does not parse or validate, a cycle, a missing
    parent) always raise. Problems found while merging go to ``sink``: raised at once by
    default, or collected (lint) while the offending entry is skipped. ``read`` loads one
    file (lint passes a memoising reader).
    """
    sink = sink or Sink()
    located, shown = locate_source(source)
    chain = _load_chain(Path(located), shown, [], read, reach(located))
    _, root_doc, root_spec = chain[-1]
    resolved = ResolvedPolicy(
        name=root_spec.get("name") or Path(root_doc.file).stem.split(".")[0],
        path=root_doc.file,
        files=[doc for _, doc, _ in chain],
        paths=[p for p, _, _ in chain],
    )
    for _, doc, spec in chain:
        _merge(resolved, doc, spec, sink)
    # every rule needs when and action, every guard when and severity
    resolved.rules = _complete(resolved.rules, ("when", "action"), "rule", sink)
    for action, entries in resolved.guards.items():
        resolved.guards[action] = _complete(entries, ("when", "severity"), f"{action} guard", sink)
    return resolved


def _load_chain(
    path: Path, shown: str, seen: list[Path], read: DocumentReader, within: Reach
) -> list[tuple[Path, YamlDocument, PolicyData]]:
    doc = read(path, shown)
    spec = _validated(doc)
    key = path.resolve()
    extends = spec.get("extends")
    if extends is None:
        return [(key, doc, spec)]
    where = doc.location(["extends"])
    try:
        target, parent_shown = locate_source(extends, path.parent, within=within)
    except PolicyError as exc:
        message = exc.message
        if exc.location is not None:  # the target is there but cannot be a policy
            message = f"extends target {exc.location.file}: {message}"
        raise PolicyError(message, where, check=LoadCheck.EXTENDS) from None
    parent_path = Path(target)
    if parent_path.resolve() in [*seen, key]:
        cycle = " -> ".join(str(p.name) for p in [*seen, key, parent_path.resolve()])
        raise PolicyError(f"extends cycle: {cycle}", where, check=LoadCheck.EXTENDS)
    if path_kind(parent_path) != "file":
        raise PolicyError(
            f"extends target not found: {shorten(extends)}", where, check=LoadCheck.EXTENDS
        )
    parent = _load_chain(parent_path, parent_shown, [*seen, key], read, within)
    return [*parent, (key, doc, spec)]


_SPECS: dict[int, tuple[YamlDocument, PolicyData]] = {}


def schema_errors(doc: YamlDocument, *, quick: bool = True) -> list[ClmError]:
    """Every error of ``doc`` against the policy schema, sorted by position (lint reports them
    all). A document without any is remembered: loading it does not check it again.
    ``quick``: a file the kept validator accepts (:mod:`clm_policy.policy.schemacheck`) is
    valid without pydantic; lint, which answers a person asking, always asks pydantic."""
    known = _SPECS.get(id(doc))
    if known is not None and known[0] is doc:
        return []
    from clm_policy.policy import schemacheck

    if not (quick and schemacheck.valid(doc.root)):  # pydantic decides, and says where
        from clm_policy.formats.validate import document_errors
        from clm_policy.models.policy import PolicyFile

        errors: list[ClmError] = list(document_errors(doc, PolicyFile, "policy")[1])
        schemacheck.remember(PolicyFile.__pydantic_core_schema__)
        if errors:
            return errors
    assert isinstance(doc.root, dict)
    if len(_SPECS) >= 256:
        _SPECS.clear()
    _SPECS[id(doc)] = (doc, doc.root)  # the document is kept, so its id stays its own
    return []


def _validated(doc: YamlDocument) -> PolicyData:
    """``doc``'s data, validated as a policy file, once per document (:func:`load_yaml` hands
    out the same document for the same file, and many files extend the same parent)."""
    errors = schema_errors(doc)
    if errors:
        raise errors[0]
    return _SPECS[id(doc)][1]


def _merge(res: ResolvedPolicy, doc: YamlDocument, spec: PolicyData, sink: Sink) -> None:
    if spec.get("description") is not None:
        res.description = spec["description"]
    if spec.get("default_profile") is not None:
        res.default_profile = (spec["default_profile"], Origin(doc, ("default_profile",)))
    if spec.get("otherwise") is not None:
        res.otherwise = spec["otherwise"]
    if spec.get("confirm") is not None:
        res.confirm = tuple(dict.fromkeys(spec["confirm"]))
    defaults = spec.get("defaults")
    if defaults is not None:
        # A file's defaults apply to every profile known so far, inherited ones included:
        # a later file beats an earlier one, and within a file a profile beats defaults.
        for name, given in defaults.items():
            value = (given, Origin(doc, ("defaults", name)))
            res.defaults[name] = value
            for fields in res.profiles.values():
                fields[name] = value
    for pname, profile in spec.get("profiles", {}).items():
        fields = res.profiles.setdefault(pname, {})
        res.profile_origins.setdefault(pname, Origin(doc, ("profiles", pname)))
        for name, given in profile.items():
            fields[name] = (given, Origin(doc, ("profiles", pname, name)))
    res.models.update(spec.get("models", {}))
    res.prices.update(
        (m, (float(p["input"]), float(p["output"]))) for m, p in spec.get("prices", {}).items()
    )
    for sname, signal in spec.get("signals", {}).items():
        given = {"type": signal["type"], "default": signal["default"]}
        given["description"] = signal.get("description")
        res.signals[sname] = (given, Origin(doc, ("signals", sname)))
    res.rules = _merge_entries(res.rules, spec.get("rules", []), doc, ("rules",), "rule", sink)
    for action, guards in spec.get("guards", {}).items():
        res.guards[action] = _merge_entries(
            res.guards.get(action, []), guards, doc, ("guards", action), f"{action} guard", sink
        )


def _merge_entries(
    parent: list[Entry],
    specs: list[PolicyData],
    doc: YamlDocument,
    base: tuple[PathKey, ...],
    kind: str,
    sink: Sink,
) -> list[Entry]:
    result = list(parent)
    first_seen: dict[str, Location] = {}
    for i, spec in enumerate(specs):
        origin = Origin(doc, (*base, i))
        id_loc = doc.location([*base, i, "id"])
        ident = spec["id"]
        if ident in first_seen:
            line = first_seen[ident].line
            message = f"duplicate {kind} id '{ident}' (first at line {line})"
            sink.report(PolicyError(message, id_loc, check=LoadCheck.DUPLICATE_ID))
            continue
        first_seen[ident] = id_loc
        index = next((j for j, e in enumerate(result) if e.id == ident), None)
        given = [n for n in spec if n not in _PLACEMENT]
        before, after = spec.get("before"), spec.get("after")
        if spec.get("disable", False):
            if index is None:
                _refuse(sink, f"disable: no inherited {kind} has id '{ident}'", id_loc)
            elif given:
                _refuse(
                    sink,
                    f"{kind} '{ident}' is disabled: remove its other keys ({', '.join(given)})",
                    doc.location([*base, i, given[0]], key=True),
                )
            else:
                del result[index]
            continue
        if before is not None and after is not None:
            where = doc.location([*base, i, "after"], key=True)
            _refuse(sink, f"{kind} '{ident}' gives both before and after", where)
            continue
        anchor = before or after
        if anchor is not None and not any(e.id == anchor for e in result if e.id != ident):
            known = ", ".join(e.id for e in result if e.id != ident) or "none"
            which = "before" if before else "after"
            where = doc.location([*base, i, which])
            _refuse(sink, f"{which}: no {kind} has id '{anchor}' (ids: {known})", where)
            anchor = None
        entry = result.pop(index) if index is not None else Entry(ident, origin)
        entry.origin = origin
        for name in given:
            entry.fields[name] = (spec[name], Origin(doc, (*base, i, name)))
        if anchor is None:
            result.insert(index if index is not None else len(result), entry)
            continue
        target = next(j for j, e in enumerate(result) if e.id == anchor)
        result.insert(target if before else target + 1, entry)
    return result


def _refuse(sink: Sink, message: str, where: Location) -> None:
    """Report an entry a child policy cannot place, override or remove (check ``extends``)."""
    sink.report(PolicyError(message, where, check=LoadCheck.EXTENDS))


def _complete(entries: list[Entry], needed: tuple[str, str], what: str, sink: Sink) -> list[Entry]:
    """The entries that have every field of ``needed``; each one missing is reported."""
    kept: list[Entry] = []
    for entry in entries:
        missing = [n for n in needed if n not in entry.fields]
        for name in missing:
            message = f"{what} '{entry.id}' has no '{name}'"
            sink.report(PolicyError(message, entry.origin.location, check=LoadCheck.SCHEMA))
        if not missing:
            kept.append(entry)
    return kept
