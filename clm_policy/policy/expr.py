"""The expression sandbox: ``when:`` conditions and ``{...}`` placeholders in messages.

Two layers keep a hostile policy contained:

1. :func:`compile_expression` parses once at load and accepts only an allow-list of syntax
   (comparisons, boolean and arithmetic operators, conditionals, list/tuple literals, calls to
   a few pure functions). Dotted names such as ``tokens.context`` are resolved against the
   policy's known names and rewritten into single flat names, so there is no attribute access
   left at run time, no subscripts and no method calls. Anything else is a load error with the
   file:line:col of the offending part.
2. :class:`Sandbox` — a ``simpleeval`` evaluator whose operators enforce this evaluator's own
   :class:`Limits` (huge powers, repeats and concatenations are refused) — evaluates the tree
   on a dict of plain values.
"""

from __future__ import annotations

import ast
import operator
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from simpleeval import SimpleEval

from clm_policy.errors import EvaluationError, ExpressionError, Location
from clm_policy.policy.names import GROUPS, NameInfo, suggest


@dataclass(frozen=True, slots=True)
class Limits:
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

# The operators an expression may use, with how they are written.
OPERATORS: Mapping[type[ast.AST], str] = {
    ast.And: "and",
    ast.Or: "or",
    ast.Not: "not",
    ast.USub: "-",
    ast.UAdd: "+",
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
}

_REFUSED: Mapping[type[ast.AST], str] = {
    ast.Lambda: "lambda",
    ast.ListComp: "comprehension",
    ast.SetComp: "comprehension",
    ast.DictComp: "comprehension",
    ast.GeneratorExp: "comprehension",
    ast.NamedExpr: "assignment (:=)",
    ast.Subscript: "subscript ([...])",
    ast.Starred: "starred expression",
    ast.JoinedStr: "f-string",
    ast.Dict: "dict literal",
    ast.Set: "set literal",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
    ast.Slice: "slice",
}


@dataclass(frozen=True, slots=True)
class SourceSpan:
    """Where an expression's text starts in its file, to map columns inside it back."""

    start: Location
    block_indent: int = 0  # column later lines start at (block scalars); 0 = same as line 1

    def at(self, line: int, col: int) -> Location:
        """File location of (1-based) ``line``/``col`` inside the expression text."""
        if line <= 1:
            return self.start.shifted(cols=max(col, 1) - 1)
        base = self.block_indent or 1
        return Location(self.start.file, self.start.line + line - 1, base + max(col, 1) - 1)


@dataclass(frozen=True, slots=True)
class CompiledExpression:
    """An expression parsed, checked and rewritten at load; evaluate it with :class:`Sandbox`."""

    text: str
    tree: ast.expr
    names: tuple[str, ...]  # flat names read, in order of first appearance
    location: Location
    span: SourceSpan | None = None  # to place a node of ``tree`` in the file (lint)
    shift: int = 0  # columns the parsed text's first line differs from the file's
    # the text as parsed (a folded scalar's lines as written), so that the policy cache can
    # store source text and compile it again, checks included, instead of storing ``tree``
    source: str = ""

    def node_location(self, node: ast.AST) -> Location:
        """Where ``node`` (a part of ``tree``) starts in the file."""
        line = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0) + 1
        if self.span is None:
            return self.location
        return self.span.at(line, col - self.shift if line == 1 else col)


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


class _Checker(ast.NodeTransformer):
    """Refuses anything outside the allow-list and flattens dotted names."""

    def __init__(
        self, text: str, span: _Span, names: Mapping[str, NameInfo], limits: Limits
    ) -> None:
        self.text = text
        self.span = span
        self.known = names
        self.limits = limits
        self.read: dict[str, None] = {}
        self.depth = 0

    def fail(self, node: ast.AST, message: str, check: str | None = None) -> ExpressionError:
        line = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0) + 1
        return ExpressionError(message, self.span.at(line, col), check=check)

    def visit(self, node: ast.AST) -> Any:
        self.depth += 1
        try:
            if self.depth > self.limits.max_depth:
                raise self.fail(
                    node, f"expression nested too deeply (more than {self.limits.max_depth} levels)"
                )
            return super().visit(node)
        finally:
            self.depth -= 1

    def generic_visit(self, node: ast.AST) -> ast.AST:
        kind = type(node)
        if kind in _REFUSED:
            raise self.fail(node, f"not allowed in a policy expression: {_REFUSED[kind]}")
        allowed = (
            ast.Expression,
            ast.BoolOp,
            ast.BinOp,
            ast.UnaryOp,
            ast.Compare,
            ast.IfExp,
            ast.List,
            ast.Tuple,
            ast.Load,
            *tuple(OPERATORS),
        )
        if not isinstance(node, allowed):
            raise self.fail(node, f"not allowed in a policy expression: {kind.__name__}")
        if (
            isinstance(node, ast.BinOp | ast.UnaryOp | ast.BoolOp)
            and type(node.op) not in OPERATORS
        ):
            raise self.fail(node, f"operator not allowed: {type(node.op).__name__}")
        if isinstance(node, ast.Compare):
            for op in node.ops:
                if type(op) not in OPERATORS:
                    raise self.fail(node, f"operator not allowed: {type(op).__name__}")
        if (
            isinstance(node, ast.List | ast.Tuple)
            and len(node.elts) > self.limits.max_collection_length
        ):
            raise self.fail(node, "list literal too long")
        return super().generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        value = node.value
        if value is not None and not isinstance(value, bool | int | float | str):
            raise self.fail(node, f"literal not allowed: {type(value).__name__}")
        if isinstance(value, str) and len(value) > self.limits.max_string_length:
            raise self.fail(node, "string literal too long")
        if isinstance(value, int) and value.bit_length() > self.limits.max_int_bits:
            raise self.fail(node, "integer literal too large")
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if not isinstance(node.func, ast.Name):
            if type(node.func) in _REFUSED:
                raise self.fail(
                    node.func, f"not allowed in a policy expression: {_REFUSED[type(node.func)]}"
                )
            if isinstance(node.func, ast.Attribute):
                raise self.fail(node, "method calls are not allowed")
            raise self.fail(node, "only calls to allow-listed functions are allowed")
        name = node.func.id
        if name not in FUNCTIONS:
            raise self.fail(
                node,
                f"call to '{name}' is not allowed{suggest(name, FUNCTIONS)} "
                f"(allowed: {', '.join(sorted(FUNCTIONS))})",
            )
        if node.keywords:
            raise self.fail(node.keywords[0], "keyword arguments are not allowed")
        node.args = [self.visit(arg) for arg in node.args]
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        dotted = _dotted(node)
        if dotted is None:
            raise self.fail(node, "attribute access is only allowed on names like tokens.context")
        return self._resolve(node, dotted)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return self._resolve(node, node.id)

    def _resolve(self, node: ast.expr, dotted: str) -> ast.AST:
        if any(part.startswith("_") for part in dotted.split(".")):
            raise self.fail(node, f"names starting with '_' are not allowed: {dotted}")
        if dotted in FUNCTIONS:
            raise self.fail(node, f"'{dotted}' is a function: call it, e.g. {dotted}(...)")
        if dotted not in self.known:
            if dotted in GROUPS:
                members = sorted(n for n in self.known if n.startswith(dotted + "."))
                if not members:
                    raise self.fail(
                        node,
                        f"'{dotted}' is a group of names, and none is declared",
                        "unknown-name",
                    )
                shown = ", ".join(members[:4]) + (", ..." if len(members) > 4 else "")
                raise self.fail(
                    node,
                    f"'{dotted}' is a group of names, not a value: use {shown}",
                    "unknown-name",
                )
            hint = suggest(dotted, self.known)
            if not hint and dotted.startswith("signals."):
                hint = "; signals must be declared under 'signals:'"
            raise self.fail(node, f"unknown name '{dotted}'{hint}", "unknown-name")
        self.read.setdefault(dotted, None)
        flat = ast.Name(id=dotted, ctx=ast.Load())
        return ast.copy_location(flat, node)


def compile_expression(
    text: str,
    span: SourceSpan,
    names: Mapping[str, NameInfo],
    limits: Limits = DEFAULT_LIMITS,
    *,
    source: str | None = None,
) -> CompiledExpression:
    """Parse and check ``text``; raise :class:`ExpressionError` at the offending position.

    ``source`` is the text as laid out in the file when it differs from the value (a folded
    YAML scalar joins lines with spaces); it is what gets parsed, so positions stay exact.
    """
    if not isinstance(text, str) or not text.strip():
        raise ExpressionError("empty expression", span.start)
    if len(text) > limits.max_expression_length:
        raise ExpressionError(
            f"expression too long ({len(text)} characters; at most {limits.max_expression_length})",
            span.start,
        )
    body = source if source is not None else text
    for offset, char in enumerate(body):
        if ord(char) < 0x20 and char not in "\n\t\r":
            line = body.count("\n", 0, offset) + 1
            col = offset - (body.rfind("\n", 0, offset) + 1) + 1
            raise ExpressionError(
                f"control character U+{ord(char):04X} not allowed in an expression",
                span.at(line, col),
            )
    # An expression spanning lines is parsed inside parentheses (Python's own rule for line
    # continuation); a column on its first line is then one too far, which _Span corrects.
    multiline = "\n" in body.strip()
    lead = 0 if multiline else len(body) - len(body.lstrip())
    wrapped = _Span(span, shift=1 if multiline else -lead)
    parsed = "(" + body + "\n)" if multiline else body.strip()
    try:
        tree = ast.parse(parsed, mode="eval")
    except SyntaxError as exc:
        msg = exc.msg or "invalid syntax"
        line, col = exc.lineno or 1, exc.offset or 0
        last = parsed.count("\n") + (0 if multiline else 1)
        if line > last or col < 1:  # at our closing parenthesis, or at the end: end of text
            line = min(line, last)
            col = len(parsed.split("\n")[line - 1]) + 1
        raise ExpressionError(f"expression syntax error: {msg}", wrapped.at(line, col)) from None
    except (RecursionError, MemoryError):
        # CPython's parser reports deep nesting as an empty MemoryError
        raise ExpressionError("expression nested too deeply", span.start) from None
    except ValueError as exc:
        raise ExpressionError(f"expression cannot be parsed: {exc}", span.start) from None
    checker = _Checker(body, wrapped, names, limits)
    try:
        checked = checker.visit(tree)
    except RecursionError:
        raise ExpressionError("expression nested too deeply", span.start) from None
    assert isinstance(checked, ast.Expression)
    return CompiledExpression(
        text=" ".join(text.split()),
        tree=ast.fix_missing_locations(checked).body,
        names=tuple(checker.read),
        location=span.start,
        span=span,
        shift=wrapped.shift,
        source=body,
    )


class _Span:
    """Maps positions in the parsed text (perhaps parenthesised) back to the file."""

    def __init__(self, span: SourceSpan, shift: int) -> None:
        self.span = span
        self.start = span.start
        self.shift = shift

    def at(self, line: int, col: int) -> Location:
        return self.span.at(line, col - self.shift if line == 1 else col)


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


def _operators(limits: Limits) -> dict[type[ast.AST], Callable[..., Any]]:
    most = limits.max_string_length

    def power(a: Any, b: Any) -> Any:
        if isinstance(a, int) and isinstance(b, int) and b > 0:
            bits = max(abs(a).bit_length(), 1) * b
            if abs(a) > 1 and bits > limits.max_int_bits:
                raise LimitExceeded(f"{a} ** {b} would exceed {limits.max_int_bits} bits")
        result = a**b
        if isinstance(result, complex):
            raise TypeError(f"{a} ** {b} has no real value")
        return result

    def mult(a: Any, b: Any) -> Any:
        for seq, n in ((a, b), (b, a)):
            sized = isinstance(seq, str | list | tuple) and isinstance(n, int) and n > 0
            if sized and _weight(seq, most) * n > most:
                raise LimitExceeded("repeated string or list would be too long")
        both_int = isinstance(a, int) and isinstance(b, int)
        if both_int and a.bit_length() + b.bit_length() > limits.max_int_bits:
            raise LimitExceeded(f"product would exceed {limits.max_int_bits} bits")
        return a * b

    def add(a: Any, b: Any) -> Any:
        both = isinstance(a, str | list | tuple) and isinstance(b, str | list | tuple)
        if both and _weight(a, most) + _weight(b, most) > most:
            raise LimitExceeded("concatenation would be too long")
        return a + b

    def mod(a: Any, b: Any) -> Any:
        if isinstance(a, str):
            # printf-style formatting builds strings of any width from a short literal
            raise LimitExceeded("string formatting with % is not allowed (use a message)")
        return a % b

    return {
        ast.Add: add,
        ast.Sub: operator.sub,
        ast.Mult: mult,
        ast.Div: operator.truediv,
        ast.FloorDiv: operator.floordiv,
        ast.Mod: mod,
        ast.Pow: power,
        ast.Eq: operator.eq,
        ast.NotEq: operator.ne,
        ast.Lt: operator.lt,
        ast.LtE: operator.le,
        ast.Gt: operator.gt,
        ast.GtE: operator.ge,
        ast.Not: operator.not_,
        ast.USub: operator.neg,
        ast.UAdd: operator.pos,
        ast.In: lambda x, y: x in y,
        ast.NotIn: lambda x, y: x not in y,
        ast.Is: operator.is_,
        ast.IsNot: operator.is_not,
    }


def _functions(limits: Limits) -> dict[str, Callable[..., Any]]:
    def round_(number: Any, ndigits: Any = None) -> Any:
        if isinstance(ndigits, int) and abs(ndigits) > 100:
            # round(1, -10**9) computes 10 ** 10**9 first
            raise LimitExceeded(f"round() to {ndigits} digits")
        return round(number, ndigits)

    def sum_(values: Any, start: Any = 0) -> Any:
        items = list(values) if isinstance(values, list | tuple) else values
        for item in (start, *items):
            if isinstance(item, bool) or not isinstance(item, int | float):
                raise TypeError(f"sum() adds numbers only, got {type(item).__name__}")
        return sum(items, start)

    functions = dict(FUNCTIONS)
    functions["round"] = round_
    functions["sum"] = sum_
    return functions


def _check_result_size(value: Any, limits: Limits) -> None:
    sized = isinstance(value, str | list | tuple)
    if sized and _weight(value, limits.max_string_length) > limits.max_string_length:
        raise LimitExceeded("result too long")
    if isinstance(value, int) and value.bit_length() > limits.max_int_bits:
        raise LimitExceeded(f"result exceeds {limits.max_int_bits} bits")


class Sandbox(SimpleEval):  # type: ignore[misc]  # simpleeval ships no type information
    """A simpleeval evaluator with this project's operators, functions and limits."""

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        super().__init__(operators=_operators(limits), functions=_functions(limits), names={})
        self.limits = limits
        self.nodes[ast.List] = self._eval_sequence
        self.nodes[ast.Tuple] = self._eval_sequence
        # Our checker already flattened every attribute; refuse any that slipped through.
        self.nodes.pop(ast.Attribute, None)
        self.nodes.pop(ast.Subscript, None)

    def _eval_sequence(self, node: ast.List | ast.Tuple) -> tuple[Any, ...]:
        return tuple(self._eval(elt) for elt in node.elts)

    def _eval_call(self, node: ast.Call) -> Any:
        result = super()._eval_call(node)
        _check_result_size(result, self.limits)
        return result

    def run(self, expr: CompiledExpression, names: Mapping[str, Any]) -> Any:
        """Evaluate ``expr`` on ``names``; any failure is an :class:`EvaluationError`."""
        self.names = names
        self.expr = expr.text
        try:
            return self._eval(expr.tree)
        except Exception as exc:
            raise _evaluation_error(expr, names, exc) from None


def _evaluation_error(
    expr: CompiledExpression, names: Mapping[str, Any], exc: Exception
) -> EvaluationError:
    missing = [n for n in expr.names if names.get(n) is None]
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, TypeError) and missing:
        detail = f"{', '.join(missing)} has no value in this state ({detail})"
    elif isinstance(exc, LimitExceeded):
        detail = f"refused: {detail}"
    elif isinstance(exc, OverflowError):
        detail = f"refused: numeric overflow ({detail})"
    elif isinstance(exc, MemoryError | RecursionError):
        detail = "refused: too much memory or nesting"
    return EvaluationError(f"evaluating '{expr.text}' failed: {detail}", expr.location)


class SandboxPool(threading.local):
    """One :class:`Sandbox` per thread (an evaluator holds its names while it runs)."""

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.sandbox = Sandbox(limits)
