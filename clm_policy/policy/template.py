"""Message templates: ``because:`` and guard ``message:`` text with ``{expression}`` parts.

A placeholder holds a sandboxed expression, optionally with a short format spec
(``{tokens.ratio:.0%}``, ``{tokens.context:,}``). ``{{`` and ``}}`` are literal braces.
Placeholders are compiled at load like ``when:`` expressions. A placeholder's value is cut at
``MAX_VALUE_LENGTH`` characters and the whole rendered text at ``MAX_RENDERED_LENGTH`` (both
ending in ``...``), so no template -- many placeholders, or long text around them -- makes a
rationale or a guard's message, and so a decision, of unbounded size.
"""

from __future__ import annotations

from clm_policy.base.errors import EvaluationError, ExpressionError, quote
from clm_policy.base.record import Record
from clm_policy.policy.expr import (
    DEFAULT_LIMITS,
    CompiledExpression,
    Limits,
    SourceSpan,
    compile_expression,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from clm_policy.base.errors import Location
    from clm_policy.policy.names import NameInfo

# A deliberately small format-spec language: no widths or fills that could blow up output.
_SPEC = r",?(\.\d{1,2})?[%dfegs]?"
MAX_VALUE_LENGTH = 1000
"""Characters of one placeholder's rendered value (then ``...``)."""
MAX_RENDERED_LENGTH = 2000
"""Characters of a whole rendered template, ``...`` included."""
_ELLIPSIS = "..."


class Template(Record):
    """A message with ``{expression}`` parts; ``span`` is where ``text`` starts (the policy
    cache compiles it again from there)."""

    text: str
    parts: tuple[str | tuple[CompiledExpression, str], ...]
    span: SourceSpan | None = None

    @property
    def names(self) -> tuple[str, ...]:
        expressions = (part[0] for part in self.parts if not isinstance(part, str))
        return tuple(dict.fromkeys(name for expr in expressions for name in expr.names))

    def render(self, names: Mapping[str, Any]) -> str:
        return capped("".join(_rendered(part, names) for part in self.parts))


def capped(text: str, limit: int = MAX_RENDERED_LENGTH) -> str:
    """``text`` cut to ``limit`` characters (ending in an ellipsis)."""
    if len(text) <= limit:
        return text
    return text[: max(limit - len(_ELLIPSIS), 0)] + _ELLIPSIS


def fitted(head: str, middle: str, tail: str) -> str:
    """``head + middle + tail`` within :data:`MAX_RENDERED_LENGTH`, cutting the middle first
    (a list of guard messages), so that the tail (why the rule fired) stays readable."""
    room = MAX_RENDERED_LENGTH - len(head) - len(tail)
    if len(middle) <= room:
        return capped(head + middle + tail)
    return capped(head + capped(middle, max(room, 40)) + tail)


def _rendered(part: str | tuple[CompiledExpression, str], names: Mapping[str, Any]) -> str:
    """A literal part as it is; a placeholder's value on ``names``, formatted and cut."""
    if isinstance(part, str):
        return part
    expr, spec = part
    value = expr.evaluate(names)
    if spec:
        try:
            text = format(value, spec)
        except (TypeError, ValueError, OverflowError) as exc:
            raise EvaluationError(
                f"cannot format {quote(value)} with ':{spec}': {exc}", expr.location
            ) from None
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif value is None:
        text = "null"
    elif isinstance(value, tuple):
        text = "[" + ", ".join(str(v) for v in value) + "]"
    else:
        text = str(value)
    return text if len(text) <= MAX_VALUE_LENGTH else text[:MAX_VALUE_LENGTH] + _ELLIPSIS


def compile_template(
    text: str, span: SourceSpan, names: Mapping[str, NameInfo], limits: Limits = DEFAULT_LIMITS
) -> Template:
    parts: list[str | tuple[CompiledExpression, str]] = []
    literal: list[str] = []
    i = 0

    def position(offset: int) -> tuple[int, int]:
        """The line and column of ``text[offset]`` in ``text``."""
        return text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)

    def at(offset: int) -> Location:
        """Where ``text[offset]`` is in the file."""
        return span.at(*position(offset))

    while i < len(text):
        ch = text[i]
        if text.startswith(("{{", "}}"), i):
            literal.append(ch)
            i += 2
            continue
        if ch == "}":
            raise ExpressionError("single '}' in message (write '}}' for a brace)", at(i))
        if ch != "{":
            literal.append(ch)
            i += 1
            continue
        end = _unquoted(text, i + 1, "{}")
        if end < 0 or text[end] != "}":
            raise ExpressionError("unclosed '{' in message", at(i))
        inner = text[i + 1 : end]
        colon = _unquoted(inner, 0, ":")
        expr_text, spec = (inner[:colon], inner[colon + 1 :]) if colon >= 0 else (inner, "")
        if spec and not _spec_allowed(spec):
            raise ExpressionError(
                f"format spec ':{spec}' not allowed (use e.g. ':,' ':.1f' ':.0%')",
                at(i),
            )
        inner_span = span.tail(*position(i + 1))
        expr = compile_expression(expr_text, inner_span, names, limits)
        if literal:
            parts.append("".join(literal))
            literal = []
        parts.append((expr, spec))
        i = end + 1
    if literal:
        parts.append("".join(literal))
    return Template(text=text, parts=tuple(parts), span=span)


def _spec_allowed(spec: str) -> bool:
    import re  # compiled when a message has a format spec (re caches the pattern)

    return re.fullmatch(_SPEC, spec) is not None


def _unquoted(text: str, start: int, stops: str) -> int:
    """Where the first character of ``stops`` outside quotes is, from ``start`` (-1: none)."""
    quote = ""
    for j in range(start, len(text)):
        c = text[j]
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in stops:
            return j
    return -1
