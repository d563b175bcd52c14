"""The expression sandbox: ``when:`` conditions and ``{...}`` placeholders in messages.

Two layers keep a hostile policy contained:

1. :func:`compile_expression` parses once at load and accepts only an allow-list of syntax
   (comparisons, boolean and arithmetic operators, conditionals, list/tuple literals, calls to
   a few pure functions). Dotted names such as ``tokens.context`` are resolved against the
   policy's known names and rewritten into single flat names, so there is no attribute access
   left at run time, no subscripts and no method calls. Anything else is a load error with the
   file:line:col of the offending part.
2. :meth:`CompiledExpression.evaluate` runs the checked tree, turned once into Python code
   (:mod:`clm_policy.policy.evaluate`) whose operators enforce this expression's
   :class:`Limits` (huge powers, repeats and concatenations are refused), on a dict of plain
   values. :class:`~clm_policy.policy.sandbox.Sandbox`, a ``simpleeval`` evaluator with the
   same bounded operators, walks the tree instead: it is the reference the code is tested
   equal to, and what lint uses on constant parts.
"""

from __future__ import annotations

import ast

from clm_policy.base.errors import EvaluationError, ExpressionError, LoadCheck, Location, quote
from clm_policy.base.record import Record
from clm_policy.base.suggest import suggest
from clm_policy.policy.evaluate import DEFAULT_LIMITS, FUNCTIONS, LimitExceeded, Limits, lower
from clm_policy.policy.names import GROUPS, WINDOW_NAMES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from clm_policy.policy.names import NameInfo

__all__ = [
    "DEFAULT_LIMITS",
    "FUNCTIONS",
    "OPERATORS",
    "CompiledExpression",
    "LimitExceeded",
    "Limits",
    "SourceSpan",
    "compile_expression",
]

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


_ALLOWED: tuple[type[ast.AST], ...] = (
    ast.Expression,
    ast.BoolOp,
    ast.BinOp,
    ast.UnaryOp,
    ast.Compare,
    ast.IfExp,
    ast.List,
    ast.Tuple,
    ast.Load,
    *OPERATORS,
)
"""The nodes the checker's generic visit lets through (names, constants and calls have their
own visits)."""


class SourceSpan(Record):
    """Where an expression's text starts in its file, to map columns inside it back.

    ``block_indent`` is the column later lines start at (block scalars); 0: as line 1.
    ``moves`` are for a quoted or plain scalar whose value is not its text as written
    (an escape, a doubled quote, lines folded into one, a character of several bytes before):
    ``(line, col, file_line, file_col)`` where a line of the value and the file's text start
    to run in step again, 1-based, in order (clm_policy.formats.yamlio.scalar_moves)."""

    start: Location
    block_indent: int = 0
    moves: tuple[tuple[int, int, int, int], ...] = ()

    def at(self, line: int, col: int) -> Location:
        """File location of (1-based) ``line``/``col`` inside the expression text."""
        col = max(col, 1)
        if self.moves:
            return self._moved(max(line, 1), col)
        if line <= 1:
            return self.start.shifted(cols=col - 1)
        base = self.block_indent or 1
        return Location(self.start.file, self.start.line + line - 1, base + col - 1)

    def _moved(self, line: int, col: int) -> Location:
        here = self.moves[0]
        for move in self.moves:
            if move[:2] > (line, col):
                break
            here = move
        if here[0] != line:  # past what the moves cover (a line the scalar does not have)
            return Location(self.start.file, here[2], here[3])
        return Location(self.start.file, here[2], here[3] + col - here[1])

    def tail(self, line: int, col: int) -> SourceSpan:
        """The span of the text from ``line``/``col`` of this one on (a message's part)."""
        start = self.at(line, col)
        if not self.moves:
            return SourceSpan(start, self.block_indent)
        later = tuple(
            (m[0] - line + 1, m[1] - col + 1 if m[0] == line else m[1], m[2], m[3])
            for m in self.moves
            if m[:2] > (line, col)
        )
        return SourceSpan(start, self.block_indent, ((1, 1, start.line, start.col), *later))


class CompiledExpression(Record):
    """An expression parsed, checked and rewritten at load; :meth:`evaluate` runs it.

    ``names`` are the flat names it reads, in order of first appearance; ``span`` places a
    node of ``tree`` in the file (lint); ``shift`` is the columns the parsed text's first line
    differs from the file's; ``source`` is the text as parsed (a folded scalar's lines as
    written), so that the policy cache can store source text and compile it again, checks
    included, instead of storing ``tree``. The code is made on the first evaluation.
    """

    FIELDS = ("text", "tree", "names", "location", "span", "shift", "source", "limits")
    __slots__ = (*FIELDS, "_run")
    COMPARED = ("text", "names", "location", "span", "shift", "source", "limits")

    def __init__(
        self,
        text: str,
        tree: ast.expr,
        names: tuple[str, ...],
        location: Location,
        span: SourceSpan | None = None,
        shift: int = 0,
        source: str = "",
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        self.text = text
        self.tree = tree
        self.names = names
        self.location = location
        self.span = span
        self.shift = shift
        self.source = source
        self.limits = limits
        self._run: Callable[[Mapping[str, Any]], Any] | None = None

    def evaluate(self, names: Mapping[str, Any]) -> Any:
        """The value on ``names``; any failure is an
        :class:`~clm_policy.base.errors.EvaluationError`."""
        run = self._run
        try:
            if run is None:
                run = self._run = lower(self.tree, self.limits)
            return run(names)
        except Exception as exc:
            raise self.failure(names, exc) from None

    def failure(self, names: Mapping[str, Any], exc: BaseException) -> EvaluationError:
        """The error a failure of this expression on ``names`` is reported as, whichever
        evaluator ran it (this one, or :class:`~clm_policy.policy.sandbox.Sandbox`)."""
        missing = [n for n in self.names if names.get(n) is None]
        detail = str(exc) or type(exc).__name__
        if isinstance(exc, TypeError) and missing:
            detail = f"{', '.join(missing)} has no value in this state ({detail})"
            if any(name in WINDOW_NAMES for name in missing):
                detail += (
                    "; no window is known: give the profile a context_window (or the state "
                    "one), or write 'tokens.window is not None and ...'"
                )
        elif isinstance(exc, LimitExceeded):
            detail = f"refused: {detail}"
        elif isinstance(exc, OverflowError):
            detail = f"refused: numeric overflow ({detail})"
        elif isinstance(exc, MemoryError | RecursionError):
            detail = "refused: too much memory or nesting"
        return EvaluationError(f"evaluating '{self.text}' failed: {detail}", self.location)

    def node_location(self, node: ast.AST) -> Location:
        """Where ``node`` (a part of ``tree``) starts in the file."""
        if self.span is None:
            return self.location
        return _at(self.span, self.shift, node, _parsed(self.source or self.text)[0])


def _parsed(body: str) -> tuple[str, int]:
    """The text ``ast`` parses for an expression written ``body``, and the columns its first
    line is off the body's: an expression spanning lines is parsed inside parentheses
    (Python's own rule for line continuation), so a column on its first line is one too far."""
    if "\n" in body.strip():
        return "(" + body + "\n)", 1
    return body.strip(), len(body.lstrip()) - len(body)


def _at(span: SourceSpan, shift: int, node: ast.AST, parsed: str) -> Location:
    """Where ``node`` starts in the file, of a tree parsed from ``parsed``, whose first line
    is ``shift`` columns off the file's (:func:`_parsed`)."""
    line = getattr(node, "lineno", 1)
    offset = getattr(node, "col_offset", 0)
    written = parsed.split("\n")[line - 1] if line <= parsed.count("\n") + 1 else ""
    if not written.isascii():  # ast counts UTF-8 bytes; a column counts characters
        offset = len(written.encode()[:offset].decode(errors="ignore"))
    col = offset + 1
    return span.at(line, col - shift if line == 1 else col)


def _singleton(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, bool))


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
        self,
        span: SourceSpan,
        shift: int,
        parsed: str,
        names: Mapping[str, NameInfo],
        limits: Limits,
    ) -> None:
        self.span = span
        self.shift = shift
        self.parsed = parsed
        self.known = names
        self.limits = limits
        self.read: dict[str, None] = {}
        self.depth = 0

    def fail(self, node: ast.AST, message: str, check: LoadCheck | None = None) -> ExpressionError:
        return ExpressionError(message, _at(self.span, self.shift, node, self.parsed), check=check)

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
        if not isinstance(node, _ALLOWED):
            raise self.fail(node, f"not allowed in a policy expression: {kind.__name__}")
        if (
            isinstance(node, ast.BinOp | ast.UnaryOp | ast.BoolOp)
            and type(node.op) not in OPERATORS
        ):
            raise self.fail(node, f"operator not allowed: {type(node.op).__name__}")
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for i, op in enumerate(node.ops):
                if type(op) not in OPERATORS:
                    raise self.fail(node, f"operator not allowed: {type(op).__name__}")
                if isinstance(op, ast.Is | ast.IsNot) and not (
                    _singleton(operands[i]) or _singleton(operands[i + 1])
                ):
                    # the identity of any other value (a number, a string, a list) is an
                    # accident of the interpreter: the same policy could decide differently
                    written = OPERATORS[type(op)]
                    raise self.fail(
                        node,
                        f"'{written}' compares with null, true or false only "
                        f"(use {'==' if written == 'is' else '!='} to compare values)",
                    )
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
                        LoadCheck.UNKNOWN_NAME,
                    )
                shown = ", ".join(members[:4]) + (", …" if len(members) > 4 else "")
                raise self.fail(
                    node,
                    f"'{dotted}' is a group of names, not a value: use {shown}",
                    LoadCheck.UNKNOWN_NAME,
                )
            hint = suggest(dotted, self.known)
            if dotted in ("true", "false", "null", "none"):
                hint = "; write True, False or None (capitalised, as in Python)"
            if not hint and dotted.startswith("signals."):
                hint = "; signals must be declared under 'signals:'"
            raise self.fail(node, f"unknown name '{dotted}'{hint}", LoadCheck.UNKNOWN_NAME)
        self.read.setdefault(dotted, None)
        flat = ast.Name(id=dotted, ctx=ast.Load())
        return ast.copy_location(flat, node)


_HINTS = (
    (r"&&|\|\|", "; write `and` and `or`, not `&&` and `||`"),
    (r"===|(?<![=!<>])=(?!=)", "; compare with `==`, not `=`"),
    (r"(^|[^=!])!(?!=)", "; write `not`, not `!`"),
    (r"\d%", "; a share like 80% is written in a profile: here compare tokens.ratio with 0.8"),
)
"""What a person writing another language's expression means, by what the text shows."""


def _syntax_hint(body: str) -> str:
    """The hint for a syntax error in ``body``, from the first of :data:`_HINTS` its text
    shows outside quotes; empty when none does."""
    import re

    bare = re.sub(r"'[^']*'|\"[^\"]*\"", "''", body)
    return next((hint for pattern, hint in _HINTS if re.search(pattern, bare)), "")


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
    parsed, shift = _parsed(body)
    multiline = shift == 1  # parsed inside parentheses (_parsed)
    try:
        tree = ast.parse(parsed, mode="eval")
    except SyntaxError as exc:
        msg = exc.msg or "invalid syntax"
        line, col = exc.lineno or 1, exc.offset or 0
        last = parsed.count("\n") + (0 if multiline else 1)
        if line > last or col < 1:  # at our closing parenthesis, or at the end: end of text
            line = min(line, last)
            col = len(parsed.split("\n")[line - 1]) + 1
        where = span.at(line, col - shift if line == 1 else col)
        if msg.startswith("invalid syntax"):  # Python's word for anything: say what is there
            rest = parsed.split("\n")[line - 1][col - 1 :].strip()
            msg += f" at {quote(rest, 30)}" if rest else " at the end of the expression"
        raise ExpressionError(
            f"expression syntax error: {msg}{_syntax_hint(body)}", where
        ) from None
    except (RecursionError, MemoryError):
        # CPython's parser reports deep nesting as an empty MemoryError
        raise ExpressionError("expression nested too deeply", span.start) from None
    except ValueError as exc:
        raise ExpressionError(f"expression cannot be parsed: {exc}", span.start) from None
    checker = _Checker(span, shift, parsed, names, limits)
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
        shift=shift,
        source=body,
        limits=limits,
    )
