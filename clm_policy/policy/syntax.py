"""Python's syntax tree for policy expressions, without importing :mod:`ast`.

The sandbox (:mod:`.expr`), the evaluator (:mod:`.evaluate`) and the pruning of rules
(:mod:`.prune`) work on the interpreter's own node classes: those of :mod:`_ast`, the very
classes :mod:`ast` re-exports (``syntax.Name is ast.Name``), so a tree made here is an ``ast``
tree to every other module. What they take from :mod:`ast` itself is four helpers, and
importing it costs a process ~1 ms (most of it ``ast``'s unparser): every hook loads the cached
policy and checks its expressions again (policy/cache.py), so this is on the prompt's path. The
helpers are here, doing what :mod:`ast`'s do — :func:`parse`, :func:`copy_location`,
:func:`fix_missing_locations` and :class:`NodeTransformer` — and a test holds them equal to
:mod:`ast`'s on every expression of the project's policies and of the sandbox's escape
catalogue.
"""

from __future__ import annotations

from _ast import (
    AST,
    Add,
    And,
    Attribute,
    Await,
    BinOp,
    BoolOp,
    Call,
    Compare,
    Constant,
    Dict,
    DictComp,
    Div,
    Eq,
    Expression,
    FloorDiv,
    GeneratorExp,
    Gt,
    GtE,
    IfExp,
    In,
    Is,
    IsNot,
    JoinedStr,
    Lambda,
    List,
    ListComp,
    Load,
    Lt,
    LtE,
    Mod,
    Mult,
    Name,
    NamedExpr,
    Not,
    NotEq,
    NotIn,
    Or,
    Pow,
    PyCF_ONLY_AST,
    Set,
    SetComp,
    Slice,
    Starred,
    Sub,
    Subscript,
    Tuple,
    UAdd,
    UnaryOp,
    USub,
    Yield,
    YieldFrom,
    arg,
    arguments,
    cmpop,
    expr,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, TypeVar

    _Node = TypeVar("_Node", bound=AST)

__all__ = [
    "AST",
    "Add",
    "And",
    "Attribute",
    "Await",
    "BinOp",
    "BoolOp",
    "Call",
    "Compare",
    "Constant",
    "Dict",
    "DictComp",
    "Div",
    "Eq",
    "Expression",
    "FloorDiv",
    "GeneratorExp",
    "Gt",
    "GtE",
    "IfExp",
    "In",
    "Is",
    "IsNot",
    "JoinedStr",
    "Lambda",
    "List",
    "ListComp",
    "Load",
    "Lt",
    "LtE",
    "Mod",
    "Mult",
    "Name",
    "NamedExpr",
    "NodeTransformer",
    "Not",
    "NotEq",
    "NotIn",
    "Or",
    "Pow",
    "Set",
    "SetComp",
    "Slice",
    "Starred",
    "Sub",
    "Subscript",
    "Tuple",
    "UAdd",
    "USub",
    "UnaryOp",
    "Yield",
    "YieldFrom",
    "arg",
    "arguments",
    "cmpop",
    "copy_location",
    "expr",
    "fix_missing_locations",
    "parse",
]

_POSITIONS = ("lineno", "col_offset", "end_lineno", "end_col_offset")


def parse(source: str, mode: str = "exec") -> Any:
    """The tree of ``source`` (``ast.parse(source, mode=mode)``); a :class:`SyntaxError` when
    it is not Python."""
    return compile(source, "<unknown>", mode, PyCF_ONLY_AST)


def _children(node: AST) -> Iterator[AST]:
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, AST):
            yield value
        elif isinstance(value, list):
            yield from (item for item in value if isinstance(item, AST))


def copy_location(new: _Node, old: AST) -> _Node:
    """``new`` with ``old``'s position (its line and column, start and end), as
    ``ast.copy_location`` gives it."""
    for name in _POSITIONS:
        if name in old._attributes and name in new._attributes:
            value = getattr(old, name, None)
            # the end is optional: copied even when it is None
            if value is not None or (name.startswith("end_") and hasattr(old, name)):
                setattr(new, name, value)
    return new


def fix_missing_locations(node: _Node) -> _Node:
    """``node`` with a position on every node of its tree that has none: its parent's (line 1,
    column 0 at the top), as ``ast.fix_missing_locations`` does."""
    _fix(node, 1, 0, 1, 0)
    return node


def _fix(node: Any, line: int, col: int, end_line: int, end_col: int) -> None:
    attributes = node._attributes
    if "lineno" in attributes:
        if hasattr(node, "lineno"):
            line = node.lineno
        else:
            node.lineno = line
    if "end_lineno" in attributes:
        if getattr(node, "end_lineno", None) is None:
            node.end_lineno = end_line
        else:
            end_line = node.end_lineno
    if "col_offset" in attributes:
        if hasattr(node, "col_offset"):
            col = node.col_offset
        else:
            node.col_offset = col
    if "end_col_offset" in attributes:
        if getattr(node, "end_col_offset", None) is None:
            node.end_col_offset = end_col
        else:
            end_col = node.end_col_offset
    for child in _children(node):
        _fix(child, line, col, end_line, end_col)


class NodeTransformer:
    """``ast.NodeTransformer``: :meth:`visit` calls ``visit_<class name>`` (else
    :meth:`generic_visit`, which visits every child and puts what that returns in its
    place: None removes it, a list of nodes replaces one item of a list)."""

    def visit(self, node: AST) -> Any:
        visitor = getattr(self, "visit_" + node.__class__.__name__, self.generic_visit)
        return visitor(node)

    def generic_visit(self, node: AST) -> AST:
        for name in node._fields:
            try:
                old = getattr(node, name)
            except AttributeError:
                continue
            if isinstance(old, list):
                new: list[Any] = []
                for value in old:
                    if isinstance(value, AST):
                        value = self.visit(value)
                        if value is None:
                            continue
                        if not isinstance(value, AST):
                            new.extend(value)
                            continue
                    new.append(value)
                old[:] = new
            elif isinstance(old, AST):
                replaced = self.visit(old)
                if replaced is None:
                    delattr(node, name)
                else:
                    setattr(node, name, replaced)
        return node
