"""Plain value classes for the per-prompt paths: fields declared once, equality, hashing,
``repr`` and ``replace``.

The per-prompt paths do without ``dataclasses`` (it imports ``inspect``; docs/architecture.md,
"The hot path and its rules"). A :class:`Record` declares its fields as annotations, as a
dataclass does (``name: str``, ``limit: int = 3``; a list made new for each object, and for
None given: ``field(default_factory=list)``); the class gets ``FIELDS`` (their names, in
order), ``__slots__`` and an ``__init__`` taking them in that order (``kw_only=True`` as a
class keyword: by name only; compiled once the class has built a few objects), unless it
writes its own ``__init__`` (a field that converts or checks what it is given) or lists
``FIELDS`` itself. A subclass adds no fields. A record also gets ``==`` over ``COMPARED``
(every field but those in ``UNCOMPARED``), a matching ``hash`` for the immutable ones, a
``repr`` and :meth:`Record.replace`. Instances are treated as immutable unless the class says
otherwise; nothing enforces it. Type checkers read a record as a dataclass
(``dataclass_transform``).

:func:`text_or_none` is what such a field takes from JSON data read from outside (a hook's
or the status line's input, a session's ``run.json``, the records a report reads): a name or
a word, or None for anything else. It lives here, beside the records it fills, rather than in
a module of its own, because every per-prompt path loads this one already.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar, Self, TypeVar, dataclass_transform

    T = TypeVar("T")
else:

    def dataclass_transform(**_: object) -> object:
        return lambda cls: cls


class _New:
    """A field's default made new for each object (:func:`field`)."""

    __slots__ = ("factory",)

    def __init__(self, factory: Callable[[], object]) -> None:
        self.factory = factory


def field(*, default_factory: Callable[[], T]) -> T:
    """A field whose default is ``default_factory()``, made for each object that is given
    none or None (``tags: list[str] = field(default_factory=list)``)."""
    return _New(default_factory)  # type: ignore[return-value]


_MUTABLE = (list, dict, set, bytearray)


def _init(name: str, fields: tuple[str, ...], defaults: dict[str, object], kw_only: bool) -> object:
    """An ``__init__`` that stores ``fields`` (made once per class, as dataclasses do)."""
    new = {f for f, value in defaults.items() if isinstance(value, _New)}
    params = ", ".join(["*"] * kw_only + [f"{f}=_d_{f}" if f in defaults else f for f in fields])
    body = "".join(
        f"\n    self.{f} = _d_{f}.factory() if {f} is None or {f} is _d_{f} else {f}"
        if f in new
        else f"\n    self.{f} = {f}"
        for f in fields
    )
    namespace: dict[str, object] = {f"_d_{f}": value for f, value in defaults.items()}
    exec(f"def __init__(self, {params}) -> None:{body}", namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{name}.__init__"  # type: ignore[attr-defined]
    return init


@dataclass_transform(eq_default=True, field_specifiers=(field,))
class _Fields(type):
    """Makes ``FIELDS``, ``__slots__``, ``COMPARED`` and ``__init__`` of a record's annotations."""

    def __new__(
        mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any], kw_only: bool = False
    ) -> _Fields:
        notes = namespace.get("__annotations__", {})
        fields = tuple(f for f, note in notes.items() if not str(note).startswith("ClassVar"))
        if fields and "FIELDS" not in namespace:
            if any(getattr(base, "FIELDS", ()) for base in bases):
                raise TypeError(f"{name}: a record's fields are declared in one class")
            defaults = {f: namespace.pop(f) for f in fields if f in namespace}
            if any(isinstance(value, _MUTABLE) for value in defaults.values()):
                raise TypeError(f"{name}: a mutable default is shared; use field(default_factory=)")
            namespace["FIELDS"] = fields
            namespace["REQUIRED"] = tuple(f for f in fields if f not in defaults)
            namespace["__slots__"] = fields
            unsaid = namespace.get("UNCOMPARED", ())
            namespace.setdefault("COMPARED", tuple(f for f in fields if f not in unsaid))
            if "__init__" not in namespace:
                namespace["__init__"] = _first_init(name, fields, defaults, kw_only)
        return super().__new__(mcs, name, bases, namespace)


_COMPILED_AFTER = 32
"""Objects a record class builds field by field before its ``__init__`` is compiled: a short
process (a hook, ``decide``) compiles none; one that builds thousands compiles it once."""


def _first_init(
    name: str, fields: tuple[str, ...], defaults: dict[str, object], kw_only: bool
) -> object:
    """An ``__init__`` that sets the fields one by one for a class's first objects, then puts
    the compiled one (:func:`_init`) in its place. Anything but plain arguments (too many, one
    unknown or missing) goes to the compiled one at once, which says what is wrong as Python
    does."""
    built = 0
    positional = 0 if kw_only else len(fields)
    known = frozenset(fields)
    required = frozenset(f for f in fields if f not in defaults)
    filled = tuple((f, defaults.get(f)) for f in fields)

    def __init__(self: Record, *args: object, **kwargs: object) -> None:
        nonlocal built
        built += 1
        given = dict(zip(fields, args, strict=False))
        if kwargs:
            plain = kwargs.keys() <= known and given.keys().isdisjoint(kwargs)
            given.update(kwargs)
        else:
            plain = True
        if (
            not plain
            or built > _COMPILED_AFTER
            or len(args) > positional
            or required - given.keys()
        ):
            real = _init(name, fields, defaults, kw_only)
            owner = next(c for c in type(self).__mro__ if c.__dict__.get("__init__") is __init__)
            owner.__init__ = real  # type: ignore[misc]
            real(self, *args, **kwargs)  # type: ignore[operator]
            return
        for name_, default in filled:
            value = given.get(name_, default)
            if isinstance(default, _New) and (value is None or value is default):
                value = default.factory()
            setattr(self, name_, value)

    return __init__


class Record(metaclass=_Fields):
    """Base of a plain value class (see the module docstring)."""

    __slots__ = ()
    FIELDS: ClassVar[tuple[str, ...]] = ()
    REQUIRED: ClassVar[tuple[str, ...]] = ()  # the fields without a default
    COMPARED: ClassVar[tuple[str, ...] | None] = None  # None: every field of FIELDS
    UNCOMPARED: ClassVar[tuple[str, ...]] = ()
    HASHABLE: ClassVar[bool] = True

    def _compared(self) -> tuple[Any, ...]:
        names = self.FIELDS if self.COMPARED is None else self.COMPARED
        return tuple(getattr(self, name) for name in names)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Record)
        return self._compared() == other._compared()

    def __hash__(self) -> int:
        if not self.HASHABLE:
            raise TypeError(f"unhashable type: '{type(self).__name__}'")
        return hash((type(self).__name__, self._compared()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.FIELDS)
        return f"{type(self).__name__}({shown})"

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` (field names of ``FIELDS`` only)."""
        unknown = set(changes) - set(self.FIELDS)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {sorted(unknown)[0]!r}")
        return type(self)(**{name: getattr(self, name) for name in self.FIELDS} | changes)


def text_or_none(value: object) -> str | None:
    """``value`` when it is a string that is not empty, else None."""
    return value if isinstance(value, str) and value else None
