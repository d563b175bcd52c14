"""Evaluating checked expressions: the bounded operators, and expressions as Python code.

:func:`lower` turns a tree :func:`~clm_policy.policy.expr.compile_expression` accepted into a
Python function of the names mapping, once, so that a decision runs bytecode instead of
walking the tree. Every operator a hostile policy could use to build something huge (``+``,
``*``, ``%``, ``**``) and every function call goes through the bounded helpers the reference
evaluator (:class:`~clm_policy.policy.sandbox.Sandbox`) uses too; the other operators are
Python's own, as in simpleeval. The code has no builtins and reads no name but the helpers and
the mapping.
"""

from __future__ import annotations

import ast
import operator

from clm_policy.base.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    Evaluated = Callable[[Mapping[str, Any]], Any]


class Limits(Record):
    """Bounds one evaluator enforces; held per evaluator, never as module globals."""

    max_expression_length: int = 1000
    max_string_length: int = 10_000
    max_int_bits: int = 4096
    max_collection_length: int = 1000
    max_depth: int = 200


DEFAULT_LIMITS = Limits()

FUNCTIONS: Mapping[str, Callable[..., Any]] = {
    "abs": abs,
    "min": min,
    "max": max,
    "round": round,
    "len": len,
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "sum": sum,
    "any": any,
    "all": all,
}


class LimitExceeded(Exception):
    """An operation a :class:`Limits` bound refuses (reported as "refused: ...")."""


def _weight(value: Any, budget: int) -> int:
    """The size of ``value``: a string's length; a sequence's items, each counting one plus
    its own weight. The walk stops once the count exceeds ``budget``, so a repeat of a repeat
    (whose copies share their items) is never walked in full.
    """
    if isinstance(value, str):
        return len(value)
    count = 0
    stack = [value]
    while stack and count <= budget:
        item = stack.pop()
        if isinstance(item, str):
            count += len(item)
        elif isinstance(item, list | tuple):
            count += len(item)
            stack.extend(x for x in item if isinstance(x, str | list | tuple))
    return count


class Bounded:
    """The operators and functions that must respect a :class:`Limits`, for one limits."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits

    def power(self, a: Any, b: Any) -> Any:
        limit = self.limits.max_int_bits
        if isinstance(a, int) and isinstance(b, int) and b > 0:
            bits = max(abs(a).bit_length(), 1) * b
            if abs(a) > 1 and bits > limit:
                raise LimitExceeded(f"{a} ** {b} would exceed {limit} bits")
        result = a**b
        if isinstance(result, complex):
            raise TypeError(f"{a} ** {b} has no real value")
        return result

    def mult(self, a: Any, b: Any) -> Any:
        most = self.limits.max_string_length
        for seq, n in ((a, b), (b, a)):
            sized = isinstance(seq, str | list | tuple) and isinstance(n, int) and n > 0
            if sized and _weight(seq, most) * n > most:
                raise LimitExceeded("repeated string or list would be too long")
        both_int = isinstance(a, int) and isinstance(b, int)
        if both_int and a.bit_length() + b.bit_length() > self.limits.max_int_bits:
            raise LimitExceeded(f"product would exceed {self.limits.max_int_bits} bits")
        return a * b

    def add(self, a: Any, b: Any) -> Any:
        most = self.limits.max_string_length
        both = isinstance(a, str | list | tuple) and isinstance(b, str | list | tuple)
        if both and _weight(a, most) + _weight(b, most) > most:
            raise LimitExceeded("concatenation would be too long")
        return a + b

    @staticmethod
    def mod(a: Any, b: Any) -> Any:
        if isinstance(a, str):
            # printf-style formatting builds strings of any width from a short literal
            raise LimitExceeded("string formatting with % is not allowed (use a message)")
        return a % b

    @staticmethod
    def round_(number: Any, ndigits: Any = None) -> Any:
        if isinstance(ndigits, int) and abs(ndigits) > 100:
            # round(1, -10**9) computes 10 ** 10**9 first
            raise LimitExceeded(f"round() to {ndigits} digits")
        return round(number, ndigits)

    @staticmethod
    def sum_(values: Any, start: Any = 0) -> Any:
        items = list(values) if isinstance(values, list | tuple) else values
        for item in (start, *items):
            if isinstance(item, bool) or not isinstance(item, int | float):
                raise TypeError(f"sum() adds numbers only, got {type(item).__name__}")
        return sum(items, start)

    def functions(self) -> dict[str, Callable[..., Any]]:
        return {**FUNCTIONS, "round": self.round_, "sum": self.sum_}

    def check_result(self, value: Any) -> Any:
        """``value``, unless a function returned something past the limits."""
        most = self.limits.max_string_length
        if isinstance(value, str | list | tuple) and _weight(value, most) > most:
            raise LimitExceeded("result too long")
        if isinstance(value, int) and value.bit_length() > self.limits.max_int_bits:
            raise LimitExceeded(f"result exceeds {self.limits.max_int_bits} bits")
        return value


def operator_table(limits: Limits) -> dict[type[ast.AST], Callable[..., Any]]:
    """The operators by AST node type, bounded by ``limits`` (for the tree-walking evaluator)."""
    bounded = Bounded(limits)
    table: dict[type[ast.AST], Callable[..., Any]] = dict(_COMPARISONS.items())
    table.update(
        {
            ast.Add: bounded.add,
            ast.Sub: operator.sub,
            ast.Mult: bounded.mult,
            ast.Div: operator.truediv,
            ast.FloorDiv: operator.floordiv,
            ast.Mod: bounded.mod,
            ast.Pow: bounded.power,
            ast.Not: operator.not_,
            ast.USub: operator.neg,
            ast.UAdd: operator.pos,
        }
    )
    return table


# -- expressions as code ----------------------------------------------------------------------

_ARG = "n"  # the one parameter of a lowered expression: the names mapping
_BOUNDED = {ast.Add: "_add", ast.Mult: "_mul", ast.Mod: "_mod", ast.Pow: "_pow"}
_COMPARISONS: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda x, y: x in y,
    ast.NotIn: lambda x, y: x not in y,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}


def _helper_globals(limits: Limits) -> dict[str, Any]:
    bounded = Bounded(limits)
    check = bounded.check_result
    operators = operator_table(limits)
    scope: dict[str, Any] = {"__builtins__": {}, "_compare": _compare_chain}
    scope.update((helper, operators[op]) for op, helper in _BOUNDED.items())
    scope.update((f"_op_{kind.__name__}", compare) for kind, compare in _COMPARISONS.items())
    for name, function in bounded.functions().items():
        scope[f"_call_{name}"] = _checked(function, check)
    return scope


def _checked(function: Callable[..., Any], check: Callable[[Any], Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        return check(function(*args))

    return call


def _compare_chain(
    first: Any, steps: tuple[tuple[Callable[..., Any], Callable[[], Any]], ...]
) -> Any:
    """A chained comparison holding ``is``/``is not`` (Python's compiler warns on ``x is 1``
    written as code): each step's right side is evaluated only when the chain gets there,
    and the chain ends at the first false step, as Python's own does."""
    left = first
    result: Any = True
    for compare, right_of in steps:
        right = right_of()
        result = compare(left, right)
        if not result:
            return result
        left = right
    return result


_SCOPES: dict[Limits, dict[str, Any]] = {}


def lower(tree: ast.expr, limits: Limits) -> Evaluated:
    """A function of the names mapping that computes the checked expression ``tree``."""
    scope = _SCOPES.get(limits)
    if scope is None:
        scope = _SCOPES[limits] = _helper_globals(limits)
    function = ast.Expression(body=ast.Lambda(args=_arguments(_ARG), body=_lowered(tree)))
    code = compile(ast.fix_missing_locations(function), "<policy expression>", "eval")
    lowered: Evaluated = eval(code, scope)  # a checked tree, no builtins
    return lowered


def _arguments(*names: str) -> ast.arguments:
    return ast.arguments(
        posonlyargs=[],
        args=[ast.arg(arg=name) for name in names],
        kwonlyargs=[],
        kw_defaults=[],
        defaults=[],
    )


def _name(name: str) -> ast.Name:
    return ast.Name(id=name, ctx=ast.Load())


def _call(helper: str, args: list[ast.expr]) -> ast.Call:
    return ast.Call(func=_name(helper), args=args, keywords=[])


def _lowered(node: ast.expr) -> ast.expr:
    """``node`` as code: names become ``n["name"]``, bounded operators and function calls
    become calls of the helpers, lists become tuples (the values the sandbox gives)."""
    if isinstance(node, ast.Constant):
        return ast.Constant(value=node.value)
    if isinstance(node, ast.Name):
        return ast.Subscript(value=_name(_ARG), slice=ast.Constant(value=node.id), ctx=ast.Load())
    if isinstance(node, ast.BinOp):
        left, right = _lowered(node.left), _lowered(node.right)
        helper = _BOUNDED.get(type(node.op))
        if helper is not None:
            return _call(helper, [left, right])
        return ast.BinOp(left=left, op=node.op, right=right)
    if isinstance(node, ast.UnaryOp):
        return ast.UnaryOp(op=node.op, operand=_lowered(node.operand))
    if isinstance(node, ast.BoolOp):
        return ast.BoolOp(op=node.op, values=[_lowered(v) for v in node.values])
    if isinstance(node, ast.Compare):
        return _compare(node)
    if isinstance(node, ast.IfExp):
        return ast.IfExp(
            test=_lowered(node.test), body=_lowered(node.body), orelse=_lowered(node.orelse)
        )
    if isinstance(node, ast.List | ast.Tuple):
        return ast.Tuple(elts=[_lowered(e) for e in node.elts], ctx=ast.Load())
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return _call(f"_call_{node.func.id}", [_lowered(a) for a in node.args])
    # compile_expression lets nothing else through; refusing here keeps it that way
    raise TypeError(f"cannot evaluate {type(node).__name__}")


def _compare(node: ast.Compare) -> ast.expr:
    left = _lowered(node.left)
    rights = [_lowered(c) for c in node.comparators]
    if not any(isinstance(op, ast.Is | ast.IsNot) for op in node.ops):
        return ast.Compare(left=left, ops=node.ops, comparators=rights)
    steps: list[ast.expr] = [
        ast.Tuple(
            elts=[_name(f"_op_{type(op).__name__}"), ast.Lambda(args=_arguments(), body=right)],
            ctx=ast.Load(),
        )
        for op, right in zip(node.ops, rights, strict=True)
    ]
    return _call("_compare", [left, ast.Tuple(elts=steps, ctx=ast.Load())])
