"""Generates the plain classes the program works with from the documents' one declaration.

Each document (:data:`DOCUMENTS`) is declared once, as pydantic models in
:mod:`clm_policy.models.shapes`; this writes ``clm_policy/models/<document>.py``:

- one :class:`~clm_policy.base.record.Record` per model, of the same name, fields and defaults,
  with ``as_dict()`` (exactly the model's ``model_dump(mode="json")``) and, for a document the
  program reads back, ``from_dict(data)`` (of JSON data already checked);
- for the state: ``READ_FIELDS``, ``COUNTED_FIELDS``, the type-only protocols ``StateLike`` and
  ``TokenSnapshotLike`` (what a decision reads), ``DIRECT_NAMES`` and ``direct_values(state)``
  (the names rules read straight from a field), and ``read_state(data)``: the state of JSON
  data that is plainly valid (exact JSON types, every bound, no unknown key,
  :data:`~clm_policy.models.fields.STATE_CHECKS`), else None. It never accepts what pydantic
  refuses; pydantic then says what is wrong (:mod:`clm_policy.models.state_io`).

``python -m clm_policy.models.generate`` prints the modules; ``--write`` writes them;
``--check`` exits 1 when a file differs.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
import sys
import textwrap
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from clm_policy.models.fields import Reads

FOLDER = Path(__file__).parent

DOCUMENTS: dict[str, tuple[str, tuple[str, ...], bool]] = {
    # module -> its title, its root models in shapes.<module> (a model an earlier document
    # holds is imported from there), whether it is read back (from_dict): a decision is not
    "state": ("The state a decision reads", ("SessionState", "AgentStepResult"), True),
    "decision": ("The decision and its explain trace", ("Explanation",), False),
    "manifest": ("The handoff manifest", ("HandoffManifest",), True),
}

SCALARS = (bool, int, float, str)
ENUMS = "clm_policy.models.enums"


class ShapeError(TypeError):
    """A field of a kind the generator does not know: teach it here before using it."""


@dataclasses.dataclass
class Kind:
    """A field's type as the generated code sees it: ``form`` is ``scalar`` (int, float, bool,
    str), ``union`` (of scalars), ``enum``, ``model``, ``list`` or ``dict`` (``item``: the
    kind of its items); ``target`` the type itself."""

    form: str
    target: Any
    optional: bool = False
    item: Kind | None = None

    def text(self) -> str:
        """The annotation in the generated code."""
        if self.form == "union":
            base = " | ".join("None" if t is type(None) else t.__name__ for t in self.target)
        elif self.item is not None:  # a list, or a dict of str keys
            key = "str, " if self.form == "dict" else ""
            base = f"{self.form}[{key}{self.item.text()}]"
        else:
            base = self.target.__name__
        return f"{base} | None" if self.optional else base


def _wrapped(head: str, names: tuple[str, ...], tail: str = "") -> list[str]:
    """``head`` and the tuple ``names`` on one line, or on as few lines of 100 characters as
    they fill when that is long."""
    line = f"{head}{names!r}{tail}"
    if len(line) <= 100:
        return [line]
    indent = " " * (len(head) - len(head.lstrip()) + 4)
    items = " ".join(f"{name!r}," for name in names)
    # lines under 100 characters; names are identifiers, so textwrap breaks only between them
    lines = textwrap.wrap(items, 99, initial_indent=indent, subsequent_indent=indent)
    return [f"{head}(", *lines, f"{indent[:-4]}){tail}"]


def _unwrap(annotation: Any) -> Any:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def kind_of(annotation: Any) -> Kind:
    annotation = _unwrap(annotation)
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [_unwrap(a) for a in typing.get_args(annotation)]
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return dataclasses.replace(kind_of(rest[0]), optional=True)
        if all(a in SCALARS or a is type(None) for a in args):
            return Kind("union", tuple(args))
        raise ShapeError(f"a union of scalars only, not {annotation!r}")
    if origin is list:
        return Kind("list", list, item=kind_of(typing.get_args(annotation)[0]))
    if origin is dict:
        key, item = typing.get_args(annotation)
        if key is not str:
            raise ShapeError(f"dict keys must be str, not {key!r}")
        return Kind("dict", dict, item=kind_of(item))
    if annotation in SCALARS:
        return Kind("scalar", annotation)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        if annotation.__module__ != ENUMS:
            raise ShapeError(f"{annotation.__name__}: enumerations live in {ENUMS}")
        return Kind("enum", annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return Kind("model", annotation)
    raise ShapeError(f"a field of type {annotation!r}")


def _reads(info: FieldInfo) -> Reads | None:
    return next((m for m in info.metadata if isinstance(m, Reads)), None)


_BOUNDS = {
    annotated_types.Ge: ("{v} >= ", "ge"),
    annotated_types.Gt: ("{v} > ", "gt"),
    annotated_types.Le: ("{v} <= ", "le"),
    annotated_types.Lt: ("{v} < ", "lt"),
    annotated_types.MinLen: ("len({v}) >= ", "min_length"),
    annotated_types.MaxLen: ("len({v}) <= ", "max_length"),
}  # the condition on {v} of each numeric and length constraint, and its bound's name


def _bounds(info: FieldInfo) -> list[str]:
    """Conditions on ``{v}`` from the field's numeric and length constraints."""
    conditions = []
    for m in info.metadata:
        if type(m) in _BOUNDS:
            test, bound = _BOUNDS[type(m)]
            conditions.append(f"{test}{getattr(m, bound)!r}")
        elif not isinstance(m, Reads):
            raise ShapeError(f"the reader cannot check {m!r}")
    return conditions


def _default(info: FieldInfo) -> str:
    """The default's code (a field with a factory has None, filled in the body)."""
    default = info.default
    if isinstance(default, enum.Enum):
        return f"{type(default).__name__}.{default.name}"
    return repr(default)


def _factory(info: FieldInfo) -> str | None:
    """The name of what makes a field's default for each object (None: no factory)."""
    factory = info.default_factory
    if factory is None:
        return None
    if factory in (list, dict) or (isinstance(factory, type) and issubclass(factory, BaseModel)):
        return str(factory.__name__)
    raise ShapeError(f"a default factory {factory!r}")


def _converted(kind: Kind, value: str, load: bool = False) -> str:
    """``value`` (of ``kind``) as JSON data; with ``load``, JSON data ``value`` (checked, of
    ``kind``) as the field's value."""
    if kind.form in ("scalar", "union"):
        return value
    name = kind.target.__name__
    if kind.form == "enum":
        code = f"{name}({value})" if load else f"{value}.value"
    elif kind.form == "model":
        code = f"{name}.from_dict({value})" if load else f"{value}.as_dict()"
    else:
        assert kind.item is not None
        if kind.item.form in ("scalar", "union"):
            code = f"{kind.form}({value})"
        elif kind.form == "list":
            code = f"[{_converted(kind.item, 'item', load)} for item in {value}]"
        else:
            raise ShapeError("a dict of scalars only")
    return f"None if {value} is None else {code}" if kind.optional else code


def _laid(head: str, items: list[str], tail: str) -> list[str]:
    """``head``, the ``items`` and ``tail`` laid out as ruff formats a call: on one line, else
    the items on one line of their own, else one a line (lines of 100 characters at most)."""
    indent = " " * (len(head) - len(head.lstrip()))
    for lines in (
        [f"{head}{', '.join(items)}{tail}"],
        [head, f"{indent}    {', '.join(items)}", f"{indent}{tail}"],
    ):
        if max(map(len, lines)) <= 100:
            return lines
    return [head, *(f"{indent}    {item}," for item in items), f"{indent}{tail}"]


def _class(model: type[BaseModel], read: bool) -> list[str]:
    """The plain class of ``model``: its fields, ``as_dict`` and, when it is ``read`` back,
    ``from_dict``."""
    name = model.__name__
    doc = textwrap.indent(inspect.cleandoc(model.__doc__ or name), "    ").lstrip()
    fields = list(model.model_fields.items())
    declared, dumped, loaded = [], [], []
    for field, info in fields:
        kind = kind_of(info.annotation)
        factory = _factory(info)
        if info.is_required():
            declared.append(f"    {field}: {kind.text()}")
        elif factory is not None:
            declared.append(f"    {field}: {kind.text()} = field(default_factory={factory})")
        else:
            declared.append(f"    {field}: {kind.text()} = {_default(info)}")
        dumped.append(f"{field!r}: {_converted(kind, f'self.{field}')}")
        loaded.append(f"{field}={_converted(kind, f'data[{field!r}]', load=True)}")
    loading = [
        "",
        "    @classmethod",
        f"    def from_dict(cls, data: Mapping[str, Any]) -> {name}:",
        *_laid("        return cls(", loaded, ")"),
    ]
    return [
        f"class {name}(Record, kw_only=True):",
        f'    """{doc}"""',
        "",
        *declared,
        "    HASHABLE = False",
        "",
        "    def as_dict(self) -> dict[str, Any]:",
        *_laid("        return {", dumped, "}"),
        *(loading if read else []),
    ]


class _Reader:
    """The functions that read a model from JSON data when it is plainly valid."""

    def __init__(self) -> None:
        self.functions: dict[str, list[str]] = {}
        self.enums: dict[type[enum.Enum], str] = {}

    def model(self, model: type[BaseModel], checks: bool = False) -> str:
        """The name of the function reading ``model`` (written once); with ``checks``, it
        applies :data:`~clm_policy.models.fields.STATE_CHECKS` too."""
        name = "read_state" if checks else f"_read_{model.__name__.lower()}"
        if name in self.functions:
            return name
        self.functions[name] = []  # taken, for a model that holds itself
        if model.__pydantic_decorators__.model_validators and not checks:
            raise ShapeError(f"{model.__name__}: a model validator the reader does not know")
        keys = f"_{model.__name__.upper()}_KEYS"
        doc = f"The {model.__name__} of JSON data" if checks else f"``data`` as a {model.__name__}"
        signature = "data: object, refused: dict[str, int] | None = None" if checks else "data: Any"
        lines = [
            f"def {name}({signature}) -> {model.__name__} | None:",
            f'    """{doc} when it is plainly valid, else None.{_REFUSED if checks else ""}"""',
            f"    if type(data) is not dict or not data.keys() <= {keys}:",
            "        return None",
        ]
        tests = []
        for field, info in model.model_fields.items():
            bound, test = self.field(f"f_{field}", field, info)
            lines += [line.replace("{REFUSED}", "refused" if checks else "None") for line in bound]
            tests.append(test)
        every = ", ".join(f"{f}=f_{f}" for f in model.model_fields)
        lines += ["    if not (", f"        {tests[0]}", *(f"        and {t}" for t in tests[1:])]
        lines += ["    ):", "        return None"]
        if not checks:
            lines.append(f"    return {model.__name__}({every})")
        else:
            lines.append(f"    found = {model.__name__}({every})")
            lines.append("    if any(check(found) is not None for check in STATE_CHECKS):")
            lines += ["        return None", "    return found"]
        self.functions[name] = [f"{keys} = frozenset({model.__name__}.FIELDS)", "", "", *lines]
        return name

    def field(self, value: str, field: str, info: FieldInfo) -> tuple[list[str], str]:
        """Lines that bind ``value`` to the field's value (None: refused, when it is no
        scalar), and the test it passes when it is valid."""
        kind = kind_of(info.annotation)
        conditions = _bounds(info)
        factory = _factory(info)
        fill = factory and {"list": "[]", "dict": "{}"}.get(factory, f"{factory}()")
        missing = "_MISSING" if info.is_required() or fill is not None else _default(info)
        if kind.form == "enum" and not info.is_required():
            missing = repr(info.default.value)
        lines = [f"    {value} = data.get({field!r}, {missing})"]
        if kind.form in ("scalar", "union"):
            test = self.scalar(value, kind, conditions)
            if kind.optional and " and " in test:
                test = f"({test})"
            if kind.optional and missing == "None":
                return lines, f"({value} is None or {test})"
            if kind.optional:
                return lines, f"{value} is not _MISSING and ({value} is None or {test})"
            return lines, test
        if kind.form == "enum":
            if kind.optional or conditions:
                raise ShapeError(f"{field}: an optional or bounded enumeration")
            # the table of its members by value, written once
            table = self.enums.setdefault(kind.target, f"_{kind.target.__name__.upper()}")
            lines.append(f"    {value} = {table}.get({value}) if type({value}) is str else None")
        elif fill is None or kind.optional or conditions:
            raise ShapeError(f"{field}: the reader knows collections and models with a factory")
        elif kind.form == "model":
            read = self.model(kind.target)
            lines.append(f"    {value} = {fill} if {value} is _MISSING else {read}({value})")
        else:
            assert kind.item is not None
            item = kind.item
            if kind.form == "list" and item.form == "model":
                read = f"_read_list(data, {field!r}, {self.model(item.target)}, {{REFUSED}})"
            elif item.form == "scalar" and kind.form == "list":
                read = f"_list_of(data, {field!r}, {item.target.__name__}, {{REFUSED}})"
            elif item.form == "union" and kind.form == "dict":
                if type(None) in item.target or set(item.target) != set(SCALARS):
                    raise ShapeError(f"{field}: a dict of any scalar but null only")
                read = f"_scalar_values(data, {field!r})"
            else:
                raise ShapeError(f"{field}: a {kind.text()}")
            lines = [f"    {value} = {read}"]
        return lines, f"{value} is not None"

    def scalar(self, value: str, kind: Kind, conditions: list[str]) -> str:
        """The test that ``value`` is of the scalar ``kind`` within ``conditions``."""
        if kind.form == "union":
            if set(kind.target) - {type(None)} != set(SCALARS):
                raise ShapeError("a union of any scalar only")
            return f"_scalar({value})"
        test = f"type({value}) is {kind.target.__name__}"
        if kind.target is float:  # finite: JSON has no NaN or infinity
            test += f" and {value} - {value} == 0"
        return " and ".join([test, *(c.format(v=value) for c in conditions)])


_REFUSED = """

    With ``refused``, the index of the first item refused in each list is put under the
    list's name."""

HELPERS = '''

def _scalar(value: object) -> bool:
    """A JSON number (finite), string or boolean."""
    if isinstance(value, float):
        return value - value == 0
    kind = type(value)
    return kind is str or kind is int or kind is bool


def _list_of(
    data: dict[str, Any], key: str, kind: type, refused: dict[str, int] | None
) -> list[Any] | None:
    """``data[key]`` when it is a list of ``kind`` (a new empty one when it is missing)."""
    value = data.get(key, _MISSING)
    if value is _MISSING:
        return []
    if type(value) is list and all(type(i) is kind for i in value):
        return value
    if refused is not None and type(value) is list:
        refused[key] = next(i for i, item in enumerate(value) if type(item) is not kind)
    return None


def _scalar_values(data: dict[str, Any], key: str) -> dict[str, Any] | None:
    """``data[key]`` when it maps names to JSON scalars (a new empty one when it is missing)."""
    value = data.get(key, _MISSING)
    if value is _MISSING:
        return {}
    return value if type(value) is dict and all(_scalar(i) for i in value.values()) else None


def _read_list(
    data: dict[str, Any],
    key: str,
    read: Callable[[Any], _T | None],
    refused: dict[str, int] | None,
) -> list[_T] | None:
    """Each item of the list ``data[key]`` read by ``read`` (a new empty list when it is
    missing); None when it is no list or an item is refused."""
    value = data.get(key, _MISSING)
    if value is _MISSING:
        return []
    if type(value) is not list:
        return None
    items = []
    for index, item in enumerate(value):
        found = read(item)
        if found is None:
            if refused is not None:
                refused[key] = index
            return None
        items.append(found)
    return items'''


def _names(model: type[BaseModel], prefix: str = "") -> list[tuple[str, str, str, str]]:
    """(rule name, type, meaning, attribute path) of every directly read field (the path of
    an enumeration's value ends in ``.value``)."""
    found = []
    for field, info in model.model_fields.items():
        reads = _reads(info)
        if reads is None:
            continue
        kind = kind_of(info.annotation)
        if kind.form == "model":
            found += _names(kind.target, f"{prefix}{field}.")
        elif reads.name is not None:
            path = prefix + field
            if kind.form == "enum":
                text, path = "str", f"{path}.value"
            elif kind.form == "scalar":
                text = kind.target.__name__
            else:
                raise ShapeError(f"a rule cannot read a value of type {kind.text()}")
            if kind.optional:
                text += "|None"
            found.append((reads.name, text, reads.doc, path))
    return found


def _protocols(model: type[BaseModel], name: str = "StateLike") -> list[str]:
    """Type-only protocols of what the engine reads of ``model`` (its fields marked
    ``Reads``; a list as any sized collection, a nested model as its own protocol)."""
    nested: list[str] = []
    counted = any(kind_of(f.annotation).form == "list" for f in model.model_fields.values())
    lines = [
        f"    class {name}(Protocol):",
        f'        """What a decision reads of a {model.__name__}'
        + (' (of a list, only its length)."""' if counted else '."""'),
        "",
    ]
    for field, info in model.model_fields.items():
        if _reads(info) is None:
            continue
        kind = kind_of(info.annotation)
        if kind.form == "list":
            text = "Sized"
        elif kind.form == "dict":
            assert kind.item is not None
            text = f"Mapping[str, {kind.item.text()}]"
        elif kind.form == "model":
            text = f"{kind.target.__name__}Like"
            nested += _protocols(kind.target, text)
        else:
            text = kind.text()
        lines += ["        @property", f"        def {field}(self) -> {text}: ..."]
    return [*nested, *lines, ""]


def _names_table(state: type[BaseModel]) -> list[str]:
    names = _names(state)
    read = [f for f, info in state.model_fields.items() if _reads(info) is not None]
    counted = [f for f in read if kind_of(state.model_fields[f].annotation).form == "list"]
    return [
        *_wrapped("READ_FIELDS = ", tuple(read)),
        '"""The fields of a state the engine reads (marked ``Reads`` in the declaration)."""',
        f"COUNTED_FIELDS = {tuple(counted)!r}",
        '"""The lists among them: a decision reads only how many items they hold."""',
        "",
        "DIRECT_NAMES: dict[str, NameInfo] = {",
        *(f"    {n!r}: NameInfo({t!r}, {d!r})," for n, t, d, _ in names),
        "}",
        '"""The names rules read straight from a state field."""',
        "",
        "",
        "def direct_values(state: StateLike) -> dict[str, Any]:",
        '    """The values of :data:`DIRECT_NAMES` for ``state``."""',
        "    tokens = state.tokens",
        "    return {",
        *(
            f"        {n!r}: {p if p.startswith('tokens.') else 'state.' + p},"
            for n, _, _, p in names
        ),
        "    }",
    ]


def _innermost(info: FieldInfo) -> Kind:
    """The kind of a field, or of the items of its (nested) collections."""
    kind = kind_of(info.annotation)
    while kind.item is not None:
        kind = kind.item
    return kind


def _held(model: type[BaseModel], into: list[type[BaseModel]]) -> None:
    """``model`` and the models its fields hold, those first, appended to ``into`` once."""
    for info in model.model_fields.values():
        kind = _innermost(info)
        if kind.form == "model" and kind.target not in into:
            _held(kind.target, into)
    if model not in into:
        into.append(model)


def _enums(models: list[type[BaseModel]]) -> set[str]:
    kinds = [_innermost(info) for model in models for info in model.model_fields.values()]
    return {kind.target.__name__ for kind in kinds if kind.form == "enum"}


def render(document: str, root: type[BaseModel] | None = None) -> str:
    """The source of clm_policy/models/<document>.py (``root``: the state's root model in
    place of the declared SessionState, for a test)."""
    shapes = importlib.import_module(f"clm_policy.models.shapes.{document}")
    title, names, read_back = DOCUMENTS[document]
    roots = [getattr(shapes, name) for name in names]
    if root is not None:
        roots[0] = root
    owner: dict[type[BaseModel], str] = {}
    for other in DOCUMENTS:
        if other == document:
            break
        earlier: list[type[BaseModel]] = []
        module = importlib.import_module(f"clm_policy.models.shapes.{other}")
        for name in DOCUMENTS[other][1]:
            _held(getattr(module, name), earlier)
        owner.update(dict.fromkeys(earlier, other))
    every: list[type[BaseModel]] = []
    for model in roots:
        _held(model, every)
    own = [m for m in every if m not in owner]
    reader = roots[0] if document == "state" else None  # the root read_state reads
    factories = any(_factory(info) for m in own for info in m.model_fields.values())
    imports = [f"from clm_policy.base.record import Record{', field' if factories else ''}"]
    enums = sorted(_enums(own))
    if enums:
        imports.append(f"from clm_policy.models.enums import {', '.join(enums)}")
    if reader is not None:
        imports.append("from clm_policy.models.fields import STATE_CHECKS, NameInfo")
    for other in dict.fromkeys(owner[m] for m in every if m in owner):
        held = ", ".join(m.__name__ for m in every if owner.get(m) == other)
        imports.append(f"from clm_policy.models.{other} import {held}")
    if reader is not None:
        checking = [
            "    from collections.abc import Callable, Mapping, Sized",
            "    from typing import Any, Protocol, TypeVar",
            "",
            '    _T = TypeVar("_T")',
            "",
            *_protocols(reader),
        ]
    else:
        checking = ["    from collections.abc import Mapping"] if read_back else []
        checking += ["    from typing import Any"]
    out = [
        f'"""{title} — GENERATED from clm_policy/models/shapes/{document}.py by',
        "clm_policy/models/generate.py (which says what is here): do not edit, run",
        "``python -m clm_policy.models.generate --write`` after changing the declaration.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        *imports,
        "",
        "TYPE_CHECKING = False",
        "if TYPE_CHECKING:",
        *checking,
        "",
    ]
    if reader is not None:
        out += ["_MISSING: Any = object()", ""]
    for model in own:
        out += ["", *_class(model, read_back), ""]
    if reader is not None:
        out += ["", *_names_table(reader)]
        read = _Reader()
        read.model(reader, checks=True)
        for kind, table in read.enums.items():
            members = ", ".join(f"{m.value!r}: {kind.__name__}.{m.name}" for m in kind)
            out += ["", "", f"{table} = {{{members}}}"]
        for lines in reversed(list(read.functions.values())):
            out += ["", "", *lines]
        out.append(HELPERS)
    return "\n".join(out).rstrip() + "\n"


def main(argv: Sequence[str]) -> int:
    texts = {name: render(name) for name in DOCUMENTS}
    if "--write" in argv:
        for name, text in texts.items():
            (FOLDER / f"{name}.py").write_text(text, encoding="utf-8")
        return 0
    if "--check" in argv:
        stale = [n for n, t in texts.items() if (FOLDER / f"{n}.py").read_text("utf-8") != t]
        return 1 if stale else 0
    from clm_policy.base.termsafe import echo

    for text in texts.values():
        echo(text, nl=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
