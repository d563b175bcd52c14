"""Static types of policy expressions, for the ``type-mismatch`` check.

Every name has a declared type (docs/policy.md), so the type of each part of an expression is
known at load. Types are sets of kinds — ``int``, ``float``, ``bool``, ``str``, ``none``,
``seq`` (a list or tuple literal) — or ``any`` when nothing can be said. A mismatch is an
operation whose operands can never meet: a bool compared to a number, a string ordered
against a number, arithmetic on a string, a number tested for membership in a string — or a
name of a few known values (``status``) compared with a string that is none of them.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass

from clm_policy.base.errors import shorten
from clm_policy.base.suggest import suggest
from clm_policy.models.enums import TaskStatus
from clm_policy.policy.expr import OPERATORS
from clm_policy.policy.names import NameInfo

Kinds = frozenset[str]

ANY: Kinds = frozenset({"any"})
BOOL: Kinds = frozenset({"bool"})
INT: Kinds = frozenset({"int"})
FLOAT: Kinds = frozenset({"float"})
STR: Kinds = frozenset({"str"})
NONE: Kinds = frozenset({"none"})
SEQ: Kinds = frozenset({"seq"})
NUMBER = frozenset({"int", "float"})
VALUES: dict[str, tuple[str, ...]] = {"status": tuple(s.value for s in TaskStatus)}
"""The names that hold one of a few strings, and those strings."""


def _excerpt(node: ast.AST) -> str:
    """The part of an expression a message shows, cut short (an expression may be long)."""
    return shorten(ast.unparse(node))


_RESULTS: Mapping[str, Kinds] = {
    "len": INT,
    "int": INT,
    "float": FLOAT,
    "str": STR,
    "bool": BOOL,
    "any": BOOL,
    "all": BOOL,
    "sum": NUMBER,
    "round": NUMBER,
    "abs": NUMBER,
}


_CONSTANTS: tuple[tuple[type, Kinds], ...] = (
    (type(None), NONE),
    (bool, BOOL),  # before int: a bool is an int too
    (int, INT),
    (float, FLOAT),
    (str, STR),
)


@dataclass(frozen=True)
class Mismatch:
    node: ast.AST
    message: str


def declared(info: NameInfo) -> Kinds:
    return frozenset("none" if part == "None" else part for part in info.type.split("|"))


def _show(kinds: Kinds) -> str:
    shown = kinds - NONE or kinds
    both = shown >= NUMBER
    return " or ".join(sorted({"number" if both and k in NUMBER else k for k in shown}))


def _categories(kinds: Kinds) -> set[str]:
    """The kinds but none, a number of either kind as ``number``."""
    return {"number" if k in NUMBER else k for k in kinds - NONE}


class Inferrer:
    """Infers kinds bottom-up and reports each mismatch it meets."""

    def __init__(self, names: Mapping[str, NameInfo]) -> None:
        self.names = names
        self.found: list[Mismatch] = []
        self.elements: dict[int, Kinds] = {}  # element kinds of list/tuple literals, by id

    def kinds(self, node: ast.AST) -> Kinds:
        method = getattr(self, f"_{type(node).__name__}", None)
        return method(node) if method is not None else ANY

    def report(self, node: ast.AST, message: str) -> None:
        self.found.append(Mismatch(node, message))

    # -- leaves ---------------------------------------------------------------------------

    def _Constant(self, node: ast.Constant) -> Kinds:
        return next((k for t, k in _CONSTANTS if isinstance(node.value, t)), ANY)

    def _Name(self, node: ast.Name) -> Kinds:
        info = self.names.get(node.id)
        return declared(info) if info is not None else ANY

    def _List(self, node: ast.List | ast.Tuple) -> Kinds:
        self.elements[id(node)] = frozenset().union(*map(self.kinds, node.elts)) or ANY
        return SEQ

    _Tuple = _List

    # -- operators -------------------------------------------------------------------------

    def _BoolOp(self, node: ast.BoolOp) -> Kinds:
        return frozenset().union(*map(self.kinds, node.values))

    def _UnaryOp(self, node: ast.UnaryOp) -> Kinds:
        operand = self.kinds(node.operand)
        if isinstance(node.op, ast.Not):
            return BOOL
        if "any" not in operand and not operand & NUMBER:
            self.report(node, f"unary minus/plus on {_show(operand)}: {_excerpt(node)}")
            return ANY
        return operand & NUMBER or ANY

    def _BinOp(self, node: ast.BinOp) -> Kinds:
        left, right = self.kinds(node.left), self.kinds(node.right)
        if "any" in left or "any" in right:
            return ANY
        op = OPERATORS.get(type(node.op), "?")
        lcat, rcat = _categories(left), _categories(right)
        allowed = {("number", "number")}
        if isinstance(node.op, ast.Add):
            allowed |= {("str", "str"), ("seq", "seq")}
        if isinstance(node.op, ast.Mult):
            allowed |= {("str", "number"), ("number", "str"), ("seq", "number"), ("number", "seq")}
        if not any((a, b) in allowed for a in lcat for b in rcat):
            self.report(node, f"'{op}' on {_show(left)} and {_show(right)}: {_excerpt(node)}")
            return ANY
        if "str" in lcat | rcat:
            return STR if isinstance(node.op, ast.Add | ast.Mult) else ANY
        if "seq" in lcat | rcat:
            return SEQ
        if isinstance(node.op, ast.Div) or "float" in left | right:
            return FLOAT if isinstance(node.op, ast.Div) else NUMBER
        return INT

    def _Compare(self, node: ast.Compare) -> Kinds:
        left_node: ast.expr = node.left
        left = self.kinds(left_node)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.kinds(right_node)
            self._compare(node, op, left_node, left, right_node, right)
            left_node, left = right_node, right
        return BOOL

    def _compare(
        self,
        node: ast.Compare,
        op: ast.cmpop,
        lnode: ast.expr,
        left: Kinds,
        rnode: ast.expr,
        right: Kinds,
    ) -> None:
        if "any" in left or "any" in right or isinstance(op, ast.Is | ast.IsNot):
            return
        text = shorten(f"{ast.unparse(lnode)} {OPERATORS.get(type(op), '?')} {ast.unparse(rnode)}")
        if isinstance(op, ast.In | ast.NotIn):
            if right - NONE == STR and not left & STR:
                self.report(node, f"{_show(left)} tested for membership in a string: {text}")
            elif "seq" in right:
                self._values(node, lnode, rnode)
                elements = self.elements.get(id(rnode), ANY)
                if "any" not in elements and not _meet(left, elements, equality=True):
                    shown = _show(elements)
                    self.report(node, f"{_show(left)} can never be one of {shown} values: {text}")
            return
        equality = isinstance(op, ast.Eq | ast.NotEq)
        if equality or isinstance(op, ast.In | ast.NotIn):
            self._values(node, lnode, rnode)
        if not _meet(left, right, equality=equality):
            never = " (never equal)" if equality else ""
            compares = f"'{OPERATORS[type(op)]}' compares {_show(left)} with {_show(right)}"
            self.report(node, f"{compares}{never}: {text}")

    def _values(self, node: ast.Compare, lnode: ast.expr, rnode: ast.expr) -> None:
        """A name of a few known values (:data:`VALUES`) compared with, or looked up among,
        strings that are none of them: always false (true for ``!=``)."""
        for name_node, other in ((lnode, rnode), (rnode, lnode)):
            name = name_node.id if isinstance(name_node, ast.Name) else ""
            values = VALUES.get(name)
            if values is None:
                continue
            items = other.elts if isinstance(other, ast.List | ast.Tuple) else [other]
            strings = [
                i.value for i in items if isinstance(i, ast.Constant) and type(i.value) is str
            ]
            for value in strings:
                if value not in values:
                    self.report(
                        node,
                        f"{name} is never {shorten(repr(value))} (it is one of "
                        f"{', '.join(values)}){suggest(value, values)}",
                    )

    def _IfExp(self, node: ast.IfExp) -> Kinds:
        self.kinds(node.test)
        return self.kinds(node.body) | self.kinds(node.orelse)

    def _Call(self, node: ast.Call) -> Kinds:
        args = [self.kinds(arg) for arg in node.args]
        name = node.func.id if isinstance(node.func, ast.Name) else ""
        if name in ("min", "max") and args:
            out: Kinds = frozenset().union(*args)
            return out if "seq" not in out else ANY
        return _RESULTS.get(name, ANY)


def _meet(left: Kinds, right: Kinds, *, equality: bool) -> bool:
    """Whether a value of ``left`` and one of ``right`` can be compared meaningfully."""
    if equality and ("none" in left or "none" in right):
        return True
    lcat, rcat = _categories(left), _categories(right)
    if not lcat or not rcat:
        return True
    if equality:
        return bool(lcat & rcat)
    return bool(lcat & rcat & {"number", "str"})


def check_expression(tree: ast.expr, names: Mapping[str, NameInfo]) -> tuple[Kinds, list[Mismatch]]:
    """The kinds ``tree`` evaluates to, and the mismatches inside it."""
    inferrer = Inferrer(names)
    return inferrer.kinds(tree), inferrer.found
