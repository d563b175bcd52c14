"""Plain value classes for the per-prompt paths: equality, hashing, ``repr`` and ``replace``.

The per-prompt paths do without ``dataclasses`` (it imports ``inspect``; docs/architecture.md,
"The hot path and its rules"). A class here lists its constructor fields in ``FIELDS`` and
writes its own ``__init__``; :class:`Record` gives it what ``@dataclass`` would:
``==`` over ``COMPARED`` (default: all of ``FIELDS``), a matching ``hash`` for the immutable
ones, a ``repr`` and :meth:`Record.replace`. Instances are treated as immutable unless the
class says otherwise; nothing enforces it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar, Self


class Record:
    """Base of a plain value class (see the module docstring)."""

    __slots__ = ()
    FIELDS: ClassVar[tuple[str, ...]] = ()
    COMPARED: ClassVar[tuple[str, ...] | None] = None  # None: every field of FIELDS
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
