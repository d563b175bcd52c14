"""Generates clm_policy/models/plain.py from the state's one declaration (models/state.py).

``python -m clm_policy.models.shape`` prints the module; ``--write`` writes it;
``--check`` exits 1 when the file differs (the test suite runs the same comparison). What is
generated, for the pydantic-free paths that run per prompt:

- ``FigureTokens`` and ``FigureState``: the fields the engine reads (marked
  :class:`~clm_policy.models.fields.Reads`), with the model's defaults;
- ``DIRECT_NAMES``: each name a rule reads straight from a field, its type and meaning;
- ``direct_values(state)``: those names' values for a state (the engine adds the derived ones);
- ``Finding`` and ``OutcomeFields``: a GuardFinding and a Decision as plain data, with
  ``as_dict`` (exactly ``model_dump(mode="json")``) and ``decision_values`` (what
  :meth:`~clm_policy.policy.engine.Outcome.to_decision` builds the pydantic Decision from);
- ``plain_state(data)``: a ``FigureState`` for JSON data that is plainly valid — exact JSON
  types, every bound, no unknown key, :data:`~clm_policy.models.fields.STATE_CHECKS` — or None,
  so that the caller validates with pydantic instead, which accepts more (its lax
  conversions) and says well what is wrong. It never accepts what pydantic refuses;
- ``PlainMessage``, ``PlainTokens`` and ``PlainState``: every field of Message, TokenSnapshot
  and SessionState, with the models' defaults and ``as_dict`` (exactly ``model_dump(mode=
  "json")``), and ``plain_session(data)``: the same check as ``plain_state``, giving the whole
  state (what a compaction works on without pydantic).
"""

from __future__ import annotations

import enum
import sys
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from clm_policy.models.fields import Reads

TARGET = Path(__file__).with_name("plain.py")

HEADER = '''"""The state as the per-prompt paths see it — GENERATED from clm_policy/models/state.py.

Do not edit: run ``python -m clm_policy.models.shape --write`` after changing the state's
declaration (a test fails until then). See clm_policy/models/shape.py for what is here.
"""

from __future__ import annotations

from clm_policy.models.enums import Action, MessageRole, TaskStatus
from clm_policy.models.fields import STATE_CHECKS, NameInfo
from clm_policy.base.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sized
    from typing import Any

    from clm_policy.models.enums import SignalValue

_SCALARS = (bool, int, float, str)
'''


class ShapeError(TypeError):
    """A field of a kind the generator does not know: teach it here before using it."""


def _unwrap(annotation: Any) -> tuple[Any, list[Any]]:
    """The type inside ``Annotated[...]`` and its metadata."""
    metadata: list[Any] = []
    while typing.get_origin(annotation) is typing.Annotated:
        annotation, *more = typing.get_args(annotation)
        metadata += more
    return annotation, metadata


def _optional(annotation: Any) -> tuple[Any, bool]:
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return rest[0], True
    return annotation, False


def _reads(info: FieldInfo) -> Reads | None:
    return next((m for m in info.metadata if isinstance(m, Reads)), None)


def _bounds(info: FieldInfo) -> list[str]:
    """Conditions on ``{v}`` from the field's numeric and length constraints."""
    conditions = []
    for m in info.metadata:
        if isinstance(m, annotated_types.Ge):
            conditions.append(f"{{v}} >= {m.ge!r}")
        elif isinstance(m, annotated_types.Gt):
            conditions.append(f"{{v}} > {m.gt!r}")
        elif isinstance(m, annotated_types.Le):
            conditions.append(f"{{v}} <= {m.le!r}")
        elif isinstance(m, annotated_types.Lt):
            conditions.append(f"{{v}} < {m.lt!r}")
        elif isinstance(m, annotated_types.MinLen):
            conditions.append(f"len({{v}}) >= {m.min_length!r}")
        elif isinstance(m, annotated_types.MaxLen):
            conditions.append(f"len({{v}}) <= {m.max_length!r}")
        elif not isinstance(m, Reads):
            raise ShapeError(f"unknown constraint {m!r}")
    return conditions


def _type_name(annotation: Any) -> str:
    """A rule name's type in the names table: int, float, bool or str, with |None."""
    inner, optional = _optional(annotation)
    if isinstance(inner, type) and issubclass(inner, enum.Enum):
        base = "str"
    elif inner in (int, float, bool, str):
        base = inner.__name__
    else:
        raise ShapeError(f"a rule cannot read a value of type {annotation!r}")
    return f"{base}|None" if optional else base


class _Writer:
    """Builds the checking functions, one per model, and the classes."""

    def __init__(self, figures: dict[type[BaseModel], str]) -> None:
        self.functions: dict[str, list[str]] = {}
        self.figures = figures  # the models built into a figure class, and its name
        self.plain: dict[type[BaseModel], str] = {}  # every model checked, and its plain class

    def check(
        self, value: str, annotation: Any, conditions: Sequence[str], indent: str
    ) -> list[str]:
        """Lines that ``return None`` unless ``value`` is plainly of ``annotation``; they may
        rebind ``value`` to the converted value (an enum member, a nested figure)."""
        inner, optional = _optional(annotation)
        inner, more = _unwrap(inner)
        lines: list[str] = []
        body = indent + ("    " if optional else "")
        if optional:
            lines.append(f"{indent}if {value} is not None:")
        if inner in (int, str, bool, float):
            test = f"type({value}) is {inner.__name__}"
            if inner is float:  # finite: JSON has no NaN or infinity
                test += f" and {value} - {value} == 0"
            checks = [test, *(c.format(v=value) for c in conditions)]
            lines.append(f"{body}if not ({' and '.join(checks)}):")
            lines.append(f"{body}    return None")
        elif isinstance(inner, type) and issubclass(inner, enum.Enum):
            members = tuple(m.value for m in inner)
            lines.append(f"{body}if type({value}) is not str or {value} not in {members!r}:")
            lines.append(f"{body}    return None")
            lines.append(f"{body}{value} = {inner.__name__}({value})")
        elif isinstance(inner, type) and issubclass(inner, BaseModel):
            name = self.model(inner)
            lines.append(f"{body}{value} = {name}({value}, full)")
            lines.append(f"{body}if {value} is None:")
            lines.append(f"{body}    return None")
        elif typing.get_origin(inner) is list:
            (item,) = typing.get_args(inner)
            lines.append(f"{body}if type({value}) is not list:")
            lines.append(f"{body}    return None")
            item_model, _ = _unwrap(item)
            if isinstance(item_model, type) and issubclass(item_model, BaseModel):
                # each item checked, and made a plain object when ``full``
                lines.append(f"{body}items = []")
                lines.append(f"{body}for item in {value}:")
                lines += self.check("item", item, [], body + "    ")
                lines.append(f"{body}    items.append(item)")
                lines.append(f"{body}{value} = items")
            else:
                lines.append(f"{body}for item in {value}:")
                lines += self.check("item", item, [], body + "    ")
        elif typing.get_origin(inner) is dict:
            key, item = typing.get_args(inner)
            if key is not str:
                raise ShapeError(f"dict keys must be str, not {key!r}")
            lines.append(f"{body}if type({value}) is not dict:")
            lines.append(f"{body}    return None")
            lines.append(f"{body}for item in {value}.values():")
            lines += self.check("item", item, [], body + "    ")
        elif typing.get_origin(inner) in (typing.Union, types.UnionType):
            for arg in typing.get_args(inner):
                plain, _ = _unwrap(arg)
                if plain not in (bool, int, float, str):
                    raise ShapeError(f"a union of scalars only, not {inner!r}")
            lines.append(
                f"{body}if type({value}) not in _SCALARS or "
                f"(type({value}) is float and not {value} - {value} == 0):"
            )
            lines.append(f"{body}    return None")
        else:
            raise ShapeError(f"cannot check a field of type {annotation!r}")
        del more
        return lines

    def model(self, model: type[BaseModel]) -> str:
        """The name of the function checking a ``model`` (written once)."""
        name = f"_plain_{model.__name__.lower()}"
        if name in self.functions:
            return name
        self.functions[name] = []  # taken, for a model that holds itself
        self.plain[model] = _PLAIN_NAMES.get(model.__name__, f"Plain{model.__name__}")
        keys = tuple(model.model_fields)
        figures = self.figures.get(model)
        read = [n for n, f in model.model_fields.items() if _reads(f) is not None]
        lines = [
            f"def {name}(data: Any, full: bool = False) -> Any:",
            f'    """``data`` as a plainly valid {model.__name__}, or None: with ``full`` a',
            f'    {self.plain[model]}, else {figures or "the data itself"}."""',
            f"    if type(data) is not dict or not data.keys() <= _KEYS_{model.__name__.upper()}:",
            "        return None",
        ]
        for field, info in model.model_fields.items():
            value = f"f_{field}"
            if info.is_required():
                lines.append(f"    if {field!r} not in data:")
                lines.append("        return None")
                lines.append(f"    {value} = data[{field!r}]")
            else:
                lines.append(f"    {value} = data.get({field!r}, _MISSING)")
            check = self.check(value, info.annotation, _bounds(info), "        ")
            if not info.is_required():
                lines.append(f"    if {value} is _MISSING:")
                lines.append(f"        {value} = {_default_code(info)}")
                lines.append("    else:")
                lines += check
            else:
                lines += [line[4:] for line in check]
        if figures == "FigureState":
            lines.append("    values = {")
            lines += [f"        {f!r}: f_{f}," for f in keys]
            lines.append("    }")
            lines.append("    if any(check(values) is not None for check in STATE_CHECKS):")
            lines.append("        return None")
        every = ", ".join(f"{f}=f_{f}" for f in keys)
        lines.append("    if full:")
        lines.append(f"        return {self.plain[model]}({every})")
        if figures is not None:
            args = ", ".join(f"{f}=f_{f}" for f in read)
            lines.append(f"    return {figures}({args})")
        else:
            lines.append("    return data")
        self.functions[name] = [
            f"_KEYS_{model.__name__.upper()} = frozenset({keys!r})",
            "",
            "",
            *lines,
        ]
        return name


_PLAIN_NAMES = {"SessionState": "PlainState", "TokenSnapshot": "PlainTokens"}
"""The plain class of a model, when its name is not ``Plain<model>``."""


def _default_code(info: FieldInfo) -> str:
    if info.default_factory is not None:
        factory = info.default_factory
        if factory in (list, dict):
            return "[]" if factory is list else "{}"
        assert isinstance(factory, type)
        return f"_plain_{factory.__name__.lower()}({{}}, full)"
    default = info.default
    if isinstance(default, enum.Enum):
        return f"{type(default).__name__}.{default.name}"
    return repr(default)


def _figure_class(model: type[BaseModel], name: str) -> list[str]:
    """A plain class of the fields of ``model`` the engine reads, with the model's defaults."""
    fields = [(n, f) for n, f in model.model_fields.items() if _reads(f) is not None]
    doc = f"The {model.__name__} fields the engine reads, without pydantic."
    lines = _class_head(name, doc, [n for n, _ in fields])
    body = []
    for n, f in fields:
        annotation, default = _plain_annotation(f)
        lines.append(f"        {n}: {annotation} = {default},")
        if default == "None" and annotation.startswith(("FigureTokens", "Mapping")):
            fill = "FigureTokens()" if annotation.startswith("FigureTokens") else "{}"
            body.append(f"        self.{n} = {fill} if {n} is None else {n}")
        else:
            body.append(f"        self.{n} = {n}")
    lines.append("    ) -> None:")
    lines += body
    return lines


def _plain_annotation(info: FieldInfo) -> tuple[str, str]:
    annotation, _ = _unwrap(info.annotation)
    inner, optional = _optional(annotation)
    origin = typing.get_origin(inner)
    if origin is list:
        return "Sized", "()"
    if origin is dict:
        return "Mapping[str, SignalValue] | None", "None"
    if isinstance(inner, type) and issubclass(inner, BaseModel):
        return "FigureTokens | None", "None"
    if isinstance(inner, type) and issubclass(inner, enum.Enum):
        return inner.__name__, _default_code(info)
    text = inner.__name__ + (" | None" if optional else "")
    return text, _default_code(info)


def _class_head(name: str, doc: str, fields: list[str]) -> list[str]:
    """A generated class's first lines, up to its ``__init__``'s parameters."""
    return [
        f"class {name}(Record):",
        f'    """{doc}"""',
        "",
        "    FIELDS = (",
        *(f"        {f!r}," for f in fields),
        "    )",
        "    __slots__ = FIELDS",
        "    HASHABLE = False",
        "",
        "    def __init__(",
        "        self,",
    ]


def _whole_class(model: type[BaseModel], names: dict[type[BaseModel], str]) -> list[str]:
    """A plain class of every field of ``model`` (its nested models are ``names``' classes),
    keyword-only with the model's defaults, and ``as_dict``: exactly ``model_dump(mode=
    "json")``. A list or a dict is the caller's own, as a model's field is after
    validation; a default one is new for each object."""
    name = names[model]
    params, body, dumped = [], [], []
    for field, info in model.model_fields.items():
        annotation, _ = _unwrap(info.annotation)
        inner, optional = _optional(annotation)
        item = typing.get_args(inner)[0] if typing.get_origin(inner) is list else None
        fill: str | None = None  # the default made in the body (a list, a dict, a model)
        if item is not None:
            item, _ = _unwrap(item)
            if item in names:
                text, value = f"list[{names[item]}]", f"[item.as_dict() for item in self.{field}]"
            elif item in (int, float, bool, str):
                text, value = f"list[{item.__name__}]", f"list(self.{field})"
            else:
                raise ShapeError(f"a list of {item!r}")
            fill = "[]"
        elif typing.get_origin(inner) is dict:
            text, value, fill = "dict[str, SignalValue]", f"dict(self.{field})", "{}"
        elif inner in names:
            text, value = names[inner], f"self.{field}.as_dict()"
            fill = f"{names[inner]}()"
        elif isinstance(inner, type) and issubclass(inner, enum.Enum):
            text = inner.__name__
            value = f"self.{field}.value"
            if optional:
                value += f" if self.{field} is not None else None"
        elif inner in (int, float, bool, str):
            text, value = inner.__name__, f"self.{field}"
        else:
            raise ShapeError(f"a field of type {annotation!r}")
        if optional:
            text += " | None"
        if info.is_required():
            if fill is not None:
                raise ShapeError(f"a required collection {field!r}")
            params.append(f"        {field}: {text},")
            body.append(f"        self.{field} = {field}")
        elif fill is not None:
            params.append(f"        {field}: {text} | None = None,")
            body.append(f"        self.{field} = {fill} if {field} is None else {field}")
        else:
            params.append(f"        {field}: {text} = {_default_code(info)},")
            body.append(f"        self.{field} = {field}")
        dumped.append(f"            {field!r}: {value},")
    doc = f"Every field of a {model.__name__}, without pydantic."
    head = _class_head(name, doc, list(model.model_fields))
    return [
        *head,
        "        *,",
        *params,
        "    ) -> None:",
        *body,
        "",
        "    def as_dict(self) -> dict[str, Any]:",
        '        """Exactly the pydantic model\'s ``model_dump(mode="json")``."""',
        "        return {",
        *dumped,
        "        }",
    ]


def _result_class(model: type[BaseModel], name: str, nested: dict[type, str]) -> list[str]:
    """A plain class of every field of ``model`` (a result the engine builds), with
    ``as_dict`` and ``decision_values``; a list of a nested model is a tuple of ``nested``."""
    fields = list(model.model_fields.items())
    keys = [f for f, _ in fields]
    params, json_values, python_values = [], [], []
    for field, info in fields:
        annotation, _ = _unwrap(info.annotation)
        inner, optional = _optional(annotation)
        item = typing.get_args(inner)[0] if typing.get_origin(inner) is list else None
        if item is not None and item in nested:
            params.append(f"{field}: tuple[{nested[item]}, ...]")
            json_values.append(f"[item.as_dict() for item in self.{field}]")
            python_values.append(f"[finding(item) for item in self.{field}]")
            continue
        if isinstance(inner, type) and issubclass(inner, enum.Enum):
            text = inner.__name__
            json_values.append(
                f"self.{field}.value"
                + (" if self.{field} is not None else None" if optional else "")
            )
        elif inner in (int, float, bool, str):
            text = inner.__name__
            json_values.append(f"self.{field}")
        else:
            raise ShapeError(f"a result field of type {annotation!r}")
        params.append(f"{field}: {text}{' | None' if optional else ''}")
        python_values.append(f"self.{field}")
    lines = [
        *_class_head(name, f"A {model.__name__} as plain data, without pydantic.", keys),
        *(f"        {p}," for p in params),
        "    ) -> None:",
        *(f"        self.{f} = {f}" for f, _ in fields),
        "",
        "    def as_dict(self) -> dict[str, Any]:",
        '        """Exactly the pydantic model\'s ``model_dump(mode="json")``."""',
        "        return {",
        *(f"            {f!r}: {v}," for (f, _), v in zip(fields, json_values, strict=True)),
        "        }",
    ]
    if any("finding(" in v for v in python_values):
        lines += [
            "",
            "    def decision_values(self, finding: Callable[[Any], Any]) -> dict[str, Any]:",
            '        """The pydantic model\'s field values, nested results made by ``finding``."""',
            "        return {",
            *(f"            {f!r}: {v}," for (f, _), v in zip(fields, python_values, strict=True)),
            "        }",
        ]
    return lines


def _names(model: type[BaseModel], prefix: str = "") -> list[tuple[str, str, str, str]]:
    """(rule name, type, meaning, attribute path) of every directly read field."""
    found = []
    for field, info in model.model_fields.items():
        reads = _reads(info)
        if reads is None:
            continue
        annotation, _ = _unwrap(info.annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            found += _names(annotation, f"{prefix}{field}.")
        elif reads.name is not None:
            found.append((reads.name, _type_name(annotation), reads.doc, prefix + field))
    return found


def render(state: type[BaseModel] | None = None) -> str:
    """The source of clm_policy/models/plain.py for ``state`` (default: SessionState)."""
    if state is None:
        from clm_policy.models.state import SessionState

        state = state or SessionState
    tokens = state.model_fields["tokens"].annotation
    if not (isinstance(tokens, type) and issubclass(tokens, BaseModel)):
        raise ShapeError("a state's tokens are a model of their own")
    writer = _Writer({tokens: "FigureTokens", state: "FigureState"})
    entry = writer.model(state)
    names = _names(state)
    out = [HEADER, "_MISSING = object()", "", ""]
    out += [*_figure_class(tokens, "FigureTokens"), "", ""]
    out += [*_figure_class(state, "FigureState"), "", ""]
    from clm_policy.models.decision import Decision, GuardFinding

    for model in reversed(writer.plain):  # the state's own models, nested ones first
        out += [*_whole_class(model, writer.plain), "", ""]
    out += [*_result_class(GuardFinding, "Finding", {}), "", ""]
    out += [*_result_class(Decision, "OutcomeFields", {GuardFinding: "Finding"}), "", ""]
    out.append("DIRECT_NAMES: dict[str, NameInfo] = {")
    out += [f"    {n!r}: NameInfo({t!r}, {d!r})," for n, t, d, _ in names]
    out += ["}", '"""The names rules read straight from a state field."""', "", ""]
    out.append("def direct_values(state: Any) -> dict[str, Any]:")
    out.append('    """The values of :data:`DIRECT_NAMES` for ``state`` (a SessionState or a')
    out.append('    FigureState)."""')
    out.append("    tokens = state.tokens")
    out.append("    return {")
    for n, _, _, path in names:
        attr = f"tokens.{path.split('.', 1)[1]}" if path.startswith("tokens.") else f"state.{path}"
        info = state.model_fields.get(path)
        enum_valued = False
        if info is not None:
            plain, _ = _unwrap(info.annotation)
            enum_valued = isinstance(plain, type) and issubclass(plain, enum.Enum)
        out.append(f"        {n!r}: {attr}{'.value' if enum_valued else ''},")
    out += ["    }", "", ""]
    out.append("def plain_state(data: object) -> FigureState | None:")
    out.append('    """A FigureState for plainly valid SessionState JSON data, else None."""')
    out.append(f"    state: FigureState | None = {entry}(data)")
    out.append("    return state")
    out += ["", ""]
    out.append("def plain_session(data: object) -> PlainState | None:")
    out.append('    """The whole PlainState for plainly valid SessionState JSON, else None."""')
    out.append(f"    state: PlainState | None = {entry}(data, True)")
    out.append("    return state")
    for lines in reversed(list(writer.functions.values())):
        out += ["", "", *lines]
    return "\n".join(out).rstrip() + "\n"


def main(argv: Sequence[str]) -> int:
    text = render()
    if "--write" in argv:
        TARGET.write_text(text, encoding="utf-8")
        return 0
    if "--check" in argv:
        return 0 if TARGET.read_text(encoding="utf-8") == text else 1
    from clm_policy.base.termsafe import echo

    echo(text, nl=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
