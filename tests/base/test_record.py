"""base/record.py: a record's fields are declared once, as annotations; the class gets its
slots, its constructor, equality, hashing, repr and replace from them."""

from __future__ import annotations

import pytest

from clm_policy.base.record import Record, field, text_or_none


class Point(Record):
    x: int
    y: int = 0
    label: str | None = None
    UNCOMPARED = ("label",)


class Frozen(Record):
    names: tuple[str, ...] = ()
    HASHABLE = False


class Checked(Record):
    value: int

    def __init__(self, value: int) -> None:
        self.value = abs(value)


def test_fields_come_from_the_annotations_in_order() -> None:
    assert Point.FIELDS == ("x", "y", "label")
    assert getattr(Point, "__slots__") == ("x", "y", "label")  # noqa: B009 (typed as ())
    assert Point.COMPARED == ("x", "y")
    with pytest.raises(AttributeError):
        Point(1).other = 2  # type: ignore[attr-defined]


def test_the_constructor_takes_the_fields_by_position_or_name_with_their_defaults() -> None:
    point = Point(1, label="a")
    assert (point.x, point.y, point.label) == (1, 0, "a")
    assert Point(x=2, y=3).y == 3
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'x'"):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        Point(1, z=2)  # type: ignore[call-arg]


def test_equality_and_hash_leave_out_the_uncompared_fields() -> None:
    assert Point(1, 2, "a") == Point(1, 2, "b")
    assert hash(Point(1, 2, "a")) == hash(Point(1, 2, "b"))
    assert Point(1, 2) != Point(1, 3)
    assert Point(1) != Frozen()
    with pytest.raises(TypeError, match="unhashable type: 'Frozen'"):
        hash(Frozen())


def test_repr_and_replace() -> None:
    assert repr(Point(1, 2, "a")) == "Point(x=1, y=2, label='a')"
    assert Point(1, 2, "a").replace(y=5) == Point(1, 5)
    with pytest.raises(TypeError, match="Point has no field 'z'"):
        Point(1).replace(z=1)


def test_a_class_that_writes_its_own_constructor_keeps_it() -> None:
    assert Checked(-4).value == 4
    assert Checked.FIELDS == ("value",)


def test_a_mutable_default_is_refused_when_the_class_is_made() -> None:
    with pytest.raises(TypeError, match="Shared: a mutable default is shared; use field"):

        class Shared(Record):
            items: list[int] = []  # noqa: RUF012 (the mistake under test)


def test_a_subclass_keeps_its_base_fields_and_adds_none() -> None:
    class Named(Point):
        def describe(self) -> str:
            return f"{self.label}@{self.x}"

    assert Named(1, label="a").describe() == "a@1"
    assert Point(1).x == 1  # the base's constructor, made once, still serves the base
    with pytest.raises(TypeError, match="Wider: a record's fields are declared in one class"):

        class Wider(Point):
            z: int = 0


class Tagged(Record):
    name: str
    tags: list[str] = field(default_factory=list)


def test_a_factory_default_is_new_for_each_object_and_for_none() -> None:
    first, second = Tagged("a"), Tagged("b", None)  # type: ignore[arg-type]
    first.tags.append("x")
    assert (first.tags, second.tags) == (["x"], [])
    given = ["y"]
    assert Tagged("c", given).tags is given


class Named(Record, kw_only=True):
    name: str
    size: int = 0


def test_a_keyword_only_record_takes_its_fields_by_name() -> None:
    assert Named(name="a").size == 0
    assert Named.REQUIRED == ("name",)
    with pytest.raises(TypeError, match="takes 1 positional argument"):
        Named("a")  # type: ignore[call-arg]


def test_the_first_objects_are_built_field_by_field_then_the_constructor_is_compiled() -> None:
    class Pair(Record):
        left: int
        right: list[int] = field(default_factory=list)

    first = Pair.__init__
    built = [Pair(n, right=None) if n % 2 else Pair(left=n) for n in range(40)]  # type: ignore[arg-type]
    assert Pair.__init__ is not first  # compiled after the first few
    assert [(p.left, p.right) for p in built] == [(n, []) for n in range(40)]
    assert len({id(p.right) for p in built}) == 40  # a new list for each


def test_a_json_field_that_must_be_a_word() -> None:
    assert text_or_none("claude-sonnet-4-6") == "claude-sonnet-4-6"
    assert [text_or_none(v) for v in ("", None, 3, ["a"], {"a": 1}, True)] == [None] * 6
