"""A regression catalogue of attempts to escape the expression sandbox.

The families follow the ideas of simpleeval's own security tests (dunder access, calls to
builtins, format-string tricks, resource exhaustion), applied to this project's two layers:
the load-time checker (:func:`compile_expression`, refusals are :class:`ExpressionError` with
the file:line:col of the offending part) and the evaluator (:class:`Sandbox`, refusals are
:class:`EvaluationError` at the expression's start).

Every row states which layer refuses it, the exact exception type, a message substring a
user would rely on and, for load refusals, the column. Rows that could exhaust memory or CPU
if the sandbox were wrong run in a child process with an address-space cap and a timeout:
those bounds only keep a regression from taking the test run (or the machine) down with it;
nothing here asserts how long anything takes.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clm_policy.base.errors import EvaluationError, ExpressionError, Location
from clm_policy.policy.expr import (
    DEFAULT_LIMITS,
    FUNCTIONS,
    CompiledExpression,
    Limits,
    SourceSpan,
    compile_expression,
)
from clm_policy.policy.names import known_names
from clm_policy.policy.sandbox import Sandbox
from clm_policy.policy.template import compile_template

from conftest import CliResult, invoke, message_of, run_process

FILE = "policy.yaml"
LINE, COL = 7, 11  # where the expression text starts in FILE
SPAN = SourceSpan(Location(FILE, LINE, COL))
NAMES = known_names({"flag": "bool"})

# A complete namespace of plain values, as the engine builds it from a state.
STATE: dict[str, Any] = {
    "tokens.context": 150,
    "tokens.input": 1000,
    "tokens.output": 200,
    "tokens.total": 1200,
    "tokens.window": 1000,
    "tokens.ratio": 0.123456,
    "tokens.estimated": False,
    "status": "running",
    "step": 3,
    "steps_since_compact": 3,
    "compacted_before": False,
    "compact_count": 0,
    "message_count": 10,
    "blocker_count": 0,
    "human_interventions": 0,
    "profile.name": "coding",
    "profile.soft_compact": 100,
    "profile.hard_handoff": 200,
    "profile.min_steps_between_compacts": 5,
    "profile.prefer_handoff_on_phase": True,
    "profile.retain_recent_messages": 6,
    "profile.context_window": None,
    "signals.flag": False,
}

ALLOWED_FUNCTIONS = "(allowed: abs, all, any, bool, float, int, len, max, min, round, str, sum)"

# Guards for the rows run in a child process (see module docstring).
CHILD_MEMORY_CAP = 512 << 20
CHILD_TIMEOUT = 60


def column(text: str, at: str | int) -> int:
    """The file column of ``at`` (a substring's first occurrence, or an offset) in ``text``."""
    offset = text.index(at) if isinstance(at, str) else at
    return COL + offset


def refused_at_load(text: str, limits: Limits = DEFAULT_LIMITS) -> ExpressionError:
    with pytest.raises(ExpressionError) as info:
        compile_expression(text, SPAN, NAMES, limits)
    assert type(info.value) is ExpressionError
    return info.value


def refused_at_evaluation(text: str, limits: Limits = DEFAULT_LIMITS) -> EvaluationError:
    """The evaluation error of ``text`` — the same from both evaluators: the tree walk
    (simpleeval, the reference) and the expression as code (what decisions run)."""
    compiled, sandbox = compile_expression(text, SPAN, NAMES, limits), Sandbox(limits)
    with pytest.raises(EvaluationError) as info:
        sandbox.run(compiled, STATE)
    assert type(info.value) is EvaluationError
    # An evaluation failure names the expression and points at its start.
    assert info.value.message.startswith(f"evaluating '{' '.join(text.split())}' failed: ")
    assert info.value.location == SPAN.start
    with pytest.raises(EvaluationError) as as_code:
        compiled.evaluate(STATE)
    assert type(as_code.value) is EvaluationError
    assert (as_code.value.message, as_code.value.location) == (
        info.value.message,
        info.value.location,
    )
    return info.value


def evaluate(text: str) -> Any:
    """The value of ``text`` — the same from both evaluators."""
    compiled = compile_expression(text, SPAN, NAMES)
    value = Sandbox().run(compiled, STATE)
    as_code = compiled.evaluate(STATE)
    assert (as_code, type(as_code)) == (value, type(value)), text
    return value


# --------------------------------------------------------------------------------------------
# Load-time refusals: (expression, message substring, where: substring or offset in the text)
# --------------------------------------------------------------------------------------------

UNDERSCORE = "names starting with '_' are not allowed: "
ATTRIBUTE = "attribute access is only allowed on names like tokens.context"
METHOD = "method calls are not allowed"

DUNDER_ROWS = [
    pytest.param("__class__", UNDERSCORE + "__class__", 0, id="bare-__class__"),
    pytest.param("_private", UNDERSCORE + "_private", 0, id="bare-_private"),
    pytest.param("__builtins__", UNDERSCORE + "__builtins__", 0, id="bare-__builtins__"),
    pytest.param("__import__", UNDERSCORE + "__import__", 0, id="bare-__import__"),
    pytest.param("tokens.__class__", UNDERSCORE + "tokens.__class__", 0, id="group-__class__"),
    pytest.param("tokens._private", UNDERSCORE + "tokens._private", 0, id="group-_private"),
    pytest.param(
        "tokens.context.__class__", UNDERSCORE + "tokens.context.__class__", 0, id="name-__class__"
    ),
    pytest.param(
        "status.__class__.__subclasses__",
        UNDERSCORE + "status.__class__.__subclasses__",
        0,
        id="name-__subclasses__",
    ),
    pytest.param(
        "tokens.context > 0 and status.__class__",
        UNDERSCORE + "status.__class__",
        "status",
        id="name-__class__-inside",
    ),
    pytest.param("min.__globals__", UNDERSCORE + "min.__globals__", 0, id="function-__globals__"),
    pytest.param(
        "min.__self__.__import__",
        UNDERSCORE + "min.__self__.__import__",
        0,
        id="function-__self__-__import__",
    ),
    pytest.param("tokens.context.__subclasses__()", METHOD, 0, id="name-__subclasses__-call"),
    pytest.param("min.func_globals", "unknown name 'min.func_globals'", 0, id="func_globals"),
    pytest.param("tokens.gi_frame", "unknown name 'tokens.gi_frame'", 0, id="gi_frame"),
    pytest.param(
        "tokens.context.f_locals", "unknown name 'tokens.context.f_locals'", 0, id="f_locals"
    ),
    pytest.param(
        "tokens.context.gi_code", "unknown name 'tokens.context.gi_code'", 0, id="gi_code"
    ),
    pytest.param(
        "tokens.context.real", "unknown name 'tokens.context.real'", 0, id="plain-attribute"
    ),
    pytest.param('"".__class__', ATTRIBUTE, 0, id="str-literal-__class__"),
    pytest.param("(1).__class__", ATTRIBUTE, 0, id="int-literal-__class__"),
    pytest.param("[].__class__", ATTRIBUTE, 0, id="list-literal-__class__"),
    pytest.param("().__class__.__bases__", ATTRIBUTE, 0, id="tuple-literal-__bases__"),
    pytest.param("True.__class__", ATTRIBUTE, 0, id="True-__class__"),
    pytest.param("None.__class__", ATTRIBUTE, 0, id="None-__class__"),
    pytest.param(
        "tokens.context > 0 and (1).__class__", ATTRIBUTE, "(1)", id="literal-__class__-inside"
    ),
    pytest.param(
        'True.__class__.__class__.__base__.__subclasses__()[-1].__init__.func_globals["sys"]',
        "not allowed in a policy expression: subscript ([...])",
        0,
        id="classic-subclasses-chain",
    ),
    pytest.param('"".__class__.__mro__[1].__subclasses__()', METHOD, 0, id="mro-subclasses"),
    pytest.param("min(1, 2).__class__", ATTRIBUTE, 0, id="call-result-__class__"),
    pytest.param("str(1).__class__.__mro__", ATTRIBUTE, 0, id="call-result-__mro__"),
    pytest.param("abs(-1).real", ATTRIBUTE, 0, id="call-result-plain-attribute"),
    pytest.param(
        'tokens.context if True else "".__class__', ATTRIBUTE, '""', id="dead-branch-__class__"
    ),
    # Identifiers are NFKC-normalised by the parser: the checker sees the normalised name.
    pytest.param(
        "tokens.__\U0001d41class__", UNDERSCORE + "tokens.__class__", 0, id="nfkc-__class__"
    ),
    pytest.param(
        "tokens.\uff3f\uff3fclass\uff3f\uff3f",
        "expression syntax error: invalid character",
        "\uff3f",
        id="fullwidth-underscore",
    ),
]

CALL_ROWS = [
    *(
        pytest.param(
            call, f"call to '{call.split('(')[0]}' is not allowed", 0, id=call.split("(")[0]
        )
        for call in (
            'open("/etc/passwd")',
            'eval("1")',
            'exec("1")',
            'compile("1", "f", "eval")',
            '__import__("os")',
            'getattr(tokens.context, "__class__")',
            'setattr(1, "a", 2)',
            "globals()",
            "locals()",
            "vars()",
            "type(1)",
            "help()",
            "input()",
            'print("x")',
            "breakpoint()",
            'format(1, "x")',
            "dir()",
            "id(1)",
            "hash(1)",
            "iter((1,))",
            "next(iter((1,)))",
            "sorted((2, 1))",
            'memoryview(b"")',
        )
    ),
    pytest.param(
        "tokens.context > 0 and open('x')",
        "call to 'open' is not allowed",
        "open",
        id="open-inside",
    ),
    pytest.param(
        'setattr(1, "a", 2)',
        "call to 'setattr' is not allowed; did you mean 'str'? " + ALLOWED_FUNCTIONS,
        0,
        id="setattr-full-message",
    ),
    pytest.param(
        'open("x")', "call to 'open' is not allowed " + ALLOWED_FUNCTIONS, 0, id="open-full-message"
    ),
    pytest.param(
        "\uff4f\uff50\uff45\uff4e('x')", "call to 'open' is not allowed", 0, id="nfkc-open"
    ),
    pytest.param(
        "__\U0001d4f2mport__('os')", "call to '__import__' is not allowed", 0, id="nfkc-__import__"
    ),
    pytest.param('__import__("os").system("id")', METHOD, 0, id="__import__-system"),
    pytest.param('"a".upper()', METHOD, 0, id="str-method"),
    pytest.param('"{0.__class__}".format(1)', METHOD, 0, id="str-format-dunder"),
    pytest.param('"{0}".format_map(1)', METHOD, 0, id="str-format_map"),
    pytest.param('str.format("{0.__class__}", 1)', METHOD, 0, id="unbound-str-format"),
    pytest.param('str.join("", "ab")', METHOD, 0, id="unbound-str-join"),
    pytest.param("status.upper()", METHOD, 0, id="name-method"),
    pytest.param("tokens.context.bit_length()", METHOD, 0, id="int-method"),
    pytest.param('len("a").bit_length()', METHOD, 0, id="call-result-method"),
    pytest.param(
        "min(1, 2)(3)",
        "only calls to allow-listed functions are allowed",
        0,
        id="call-a-call-result",
    ),
    pytest.param(
        "(min if True else open)(1)",
        "only calls to allow-listed functions are allowed",
        0,
        id="call-a-conditional",
    ),
    pytest.param(
        '[open][0]("x")',
        "not allowed in a policy expression: subscript ([...])",
        0,
        id="call-a-subscript",
    ),
    pytest.param(
        "(lambda: 1)()", "not allowed in a policy expression: lambda", "lambda", id="call-lambda"
    ),
    pytest.param("min", "'min' is a function: call it, e.g. min(...)", 0, id="bare-function"),
    pytest.param("str(min)", "'min' is a function: call it", "min", id="function-as-argument"),
    pytest.param("min(open, 1)", "unknown name 'open'", "open", id="builtin-as-argument"),
]

SYNTAX_ROWS = [
    pytest.param("lambda: 1", "not allowed in a policy expression: lambda", 0, id="lambda"),
    pytest.param(
        "tokens.context > (lambda: 0)()",
        "not allowed in a policy expression: lambda",
        "lambda",
        id="lambda-inside",
    ),
    pytest.param(
        "[x for x in (1, 2)]", "not allowed in a policy expression: comprehension", 0, id="listcomp"
    ),
    pytest.param(
        "{x for x in (1, 2)}", "not allowed in a policy expression: comprehension", 0, id="setcomp"
    ),
    pytest.param(
        "{x: 1 for x in (1, 2)}",
        "not allowed in a policy expression: comprehension",
        0,
        id="dictcomp",
    ),
    pytest.param(
        "(x for x in (1, 2))", "not allowed in a policy expression: comprehension", 0, id="genexp"
    ),
    pytest.param(
        "any(x for x in (1, 2))",
        "not allowed in a policy expression: comprehension",
        "(",
        id="genexp-argument",
    ),
    pytest.param(
        "(x := 1)", "not allowed in a policy expression: assignment (:=)", "x", id="walrus"
    ),
    pytest.param(
        "min((y := 5), y)",
        "not allowed in a policy expression: assignment (:=)",
        "y :=",
        id="walrus-argument",
    ),
    pytest.param('f"{1}"', "not allowed in a policy expression: f-string", 0, id="fstring"),
    pytest.param(
        'f"{().__class__}"', "not allowed in a policy expression: f-string", 0, id="fstring-dunder"
    ),
    pytest.param(
        'f"{tokens.context!r}"',
        "not allowed in a policy expression: f-string",
        0,
        id="fstring-conversion",
    ),
    pytest.param(
        'status == f"{status:{1}}"',
        "not allowed in a policy expression: f-string",
        "f",
        id="fstring-nested-spec",
    ),
    pytest.param(
        '"abc"[0]', "not allowed in a policy expression: subscript ([...])", 0, id="subscript"
    ),
    pytest.param(
        '"abc"[::-1]', "not allowed in a policy expression: subscript ([...])", 0, id="slice"
    ),
    pytest.param(
        "[1, 2][0:1]", "not allowed in a policy expression: subscript ([...])", 0, id="list-slice"
    ),
    pytest.param(
        "min(1, 2)[0]",
        "not allowed in a policy expression: subscript ([...])",
        0,
        id="call-result-subscript",
    ),
    pytest.param(
        "min(*(1, 2))", "not allowed in a policy expression: starred expression", "*", id="starred"
    ),
    pytest.param(
        "[*(1, 2)]", "not allowed in a policy expression: starred expression", "*", id="star-list"
    ),
    pytest.param('{"a": 1}', "not allowed in a policy expression: dict literal", 0, id="dict"),
    pytest.param("{1, 2}", "not allowed in a policy expression: set literal", 0, id="set"),
    pytest.param(
        'int("1", base=2)', "keyword arguments are not allowed", "base", id="keyword-argument"
    ),
    pytest.param(
        "max(1, key=abs)", "keyword arguments are not allowed", "key", id="keyword-function"
    ),
    pytest.param('min(**{"a": 1})', "keyword arguments are not allowed", "**", id="double-star"),
    pytest.param("await x", "not allowed in a policy expression: await", 0, id="await"),
    pytest.param("(yield)", "not allowed in a policy expression: yield", "yield", id="yield"),
    pytest.param(
        "(yield from x)", "not allowed in a policy expression: yield", "yield", id="yield-from"
    ),
    pytest.param("1 << 2", "operator not allowed: LShift", 0, id="lshift"),
    pytest.param("1 >> 2", "operator not allowed: RShift", 0, id="rshift"),
    pytest.param("1 & 2", "operator not allowed: BitAnd", 0, id="bitand"),
    pytest.param("1 | 2", "operator not allowed: BitOr", 0, id="bitor"),
    pytest.param("1 ^ 2", "operator not allowed: BitXor", 0, id="bitxor"),
    pytest.param("~1", "operator not allowed: Invert", 0, id="invert"),
    pytest.param("1 @ 2", "operator not allowed: MatMult", 0, id="matmult"),
    pytest.param('b"x"', "literal not allowed: bytes", 0, id="bytes-literal"),
    pytest.param("1j", "literal not allowed: complex", 0, id="complex-literal"),
    pytest.param("...", "literal not allowed: ellipsis", 0, id="ellipsis-literal"),
    # Statements cannot be parsed in an expression.
    pytest.param("import os", "expression syntax error: invalid syntax", 0, id="import"),
    pytest.param("from os import path", "expression syntax error: invalid syntax", 0, id="from"),
    pytest.param(
        "x = 1",
        "expression syntax error: invalid syntax",
        "=",
        id="assignment",
    ),
    pytest.param("x += 1", "expression syntax error: invalid syntax", "+=", id="augassign"),
    pytest.param("del x", "expression syntax error: invalid syntax", 0, id="del"),
    pytest.param("assert 1", "expression syntax error: invalid syntax", 0, id="assert"),
    pytest.param("raise x", "expression syntax error: invalid syntax", 0, id="raise"),
    pytest.param("global x", "expression syntax error: invalid syntax", 0, id="global"),
    pytest.param("if 1: 1", "expression syntax error: invalid syntax", 0, id="if-statement"),
    pytest.param("def f(): pass", "expression syntax error: invalid syntax", 0, id="def"),
    pytest.param("class A: pass", "expression syntax error: invalid syntax", 0, id="class"),
    pytest.param('with open("x") as f: 1', "expression syntax error: invalid syntax", 0, id="with"),
    pytest.param(
        'exec "x"',
        "expression syntax error: Missing parentheses in call to 'exec'",
        0,
        id="py2-exec",
    ),
    pytest.param("1; 2", "expression syntax error: invalid syntax", ";", id="semicolon"),
    pytest.param(
        'import os; os.system("id")', "expression syntax error: invalid syntax", 0, id="import-semi"
    ),
    pytest.param(
        "1\x00",
        "control character U+0000 not allowed in an expression",
        1,
        id="null-byte",
    ),
]

NAME_ROWS = [
    pytest.param("os", "unknown name 'os'", 0, id="os"),
    pytest.param("sys", "unknown name 'sys'", 0, id="sys"),
    pytest.param("print", "unknown name 'print'", 0, id="builtin-name"),
    pytest.param("self", "unknown name 'self'", 0, id="self"),
    pytest.param("__builtins__", UNDERSCORE + "__builtins__", 0, id="__builtins__"),
    pytest.param("__name__", UNDERSCORE + "__name__", 0, id="__name__"),
    pytest.param("True.__class__", ATTRIBUTE, 0, id="True-__class__"),
    pytest.param(
        "tokens",
        "'tokens' is a group of names, not a value: use tokens.context, tokens.estimated, "
        "tokens.input, tokens.output, …",
        0,
        id="group-tokens",
    ),
    pytest.param(
        "profile", "'profile' is a group of names, not a value: use profile.", 0, id="group-profile"
    ),
    pytest.param(
        "signals", "'signals' is a group of names, not a value: use signals.flag", 0, id="signals"
    ),
    pytest.param(
        "tokens.context > 0 and tokens", "'tokens' is a group of names", 23, id="group-inside"
    ),
    pytest.param("signals.nope", "unknown name 'signals.nope'", 0, id="undeclared-signal"),
    pytest.param("os.system", "unknown name 'os.system'", 0, id="dotted-module"),
]


@pytest.mark.parametrize(("text", "message", "at"), DUNDER_ROWS)
def test_dunder_and_underscore_access_is_refused_at_load(
    text: str, message: str, at: str | int
) -> None:
    err = refused_at_load(text)
    assert message in err.message
    assert err.location == Location(FILE, LINE, column(text, at))


@pytest.mark.parametrize(("text", "message", "at"), CALL_ROWS)
def test_calls_outside_the_allow_list_are_refused_at_load(
    text: str, message: str, at: str | int
) -> None:
    err = refused_at_load(text)
    assert message in err.message
    assert err.location == Location(FILE, LINE, column(text, at))


@pytest.mark.parametrize(("text", "message", "at"), SYNTAX_ROWS)
def test_syntax_outside_the_allow_list_is_refused_at_load(
    text: str, message: str, at: str | int
) -> None:
    err = refused_at_load(text)
    assert message in err.message
    assert err.location == Location(FILE, LINE, column(text, at))


@pytest.mark.parametrize(("text", "message", "at"), NAME_ROWS)
def test_names_outside_the_namespace_are_refused_at_load(
    text: str, message: str, at: str | int
) -> None:
    err = refused_at_load(text)
    assert message in err.message
    assert err.location == Location(FILE, LINE, column(text, at))


def test_refused_call_lists_every_allowed_function() -> None:
    """The allow-list printed in the message is the real one (no hidden extra functions)."""
    assert f"(allowed: {', '.join(sorted(FUNCTIONS))})" == ALLOWED_FUNCTIONS


@pytest.mark.parametrize(
    ("text", "message", "line", "col"),
    [
        pytest.param(
            "1)\nimport os\n(1", "expression syntax error: invalid syntax", 2, 1, id="close-paren"
        ),
        pytest.param(
            "tokens.context\n;import os",
            "expression syntax error: invalid syntax",
            2,
            1,
            id="newline-semicolon",
        ),
        pytest.param(
            "tokens.context > 1\nand open('x')",
            "call to 'open' is not allowed",
            2,
            5,
            id="call-on-second-line",
        ),
        pytest.param(
            "tokens.context > 1 and\n  lambda: 1",
            "expression syntax error: invalid syntax",
            2,
            3,
            id="lambda-on-second-line",
        ),
    ],
)
def test_multi_line_statement_tricks_are_refused_at_load(
    text: str, message: str, line: int, col: int
) -> None:
    """The text is parsed inside parentheses: closing them early cannot start a statement."""
    err = refused_at_load(text)
    assert message in err.message
    assert err.location == Location(FILE, LINE + line - 1, col)


# --------------------------------------------------------------------------------------------
# Resource exhaustion
# --------------------------------------------------------------------------------------------

LONG_SUM = "1 + " * 250 + "1"  # 1001 characters
HUGE_HEX = "0x" + "f" * 1100
HUGE_DECIMAL = "9" * 2000

RESOURCE_LOAD_ROWS = [
    pytest.param(
        LONG_SUM,
        "expression too long (1001 characters; at most 1000)",
        0,
        id="over-length-cap",
    ),
    pytest.param(
        HUGE_HEX, "expression too long (1102 characters; at most 1000)", 0, id="huge-hex-literal"
    ),
    pytest.param(
        HUGE_DECIMAL,
        "expression too long (2000 characters; at most 1000)",
        0,
        id="huge-decimal-literal",
    ),
    pytest.param(
        '"' + "x" * 20000 + '"',
        "expression too long (20002 characters; at most 1000)",
        0,
        id="huge-string-literal",
    ),
    pytest.param(
        "(" * 201 + "1" + ")" * 201,
        "expression syntax error: too many nested parentheses",
        200,
        id="nested-parentheses",
    ),
    # nesting is capped by the checker (Limits.max_depth, in syntax-tree levels), at the node
    # where the cap is crossed
    pytest.param(
        "[" * 200 + "1" + "]" * 200,
        "expression nested too deeply (more than 200 levels)",
        199,
        id="nested-lists",
    ),
    pytest.param("-" * 450 + "1", "expression nested too deeply", 0, id="nested-unary"),
    pytest.param("1+" * 450 + "1", "expression nested too deeply", 0, id="nested-additions"),
    pytest.param(
        "(1," * 199 + "1" + ")" * 199,
        "expression nested too deeply (more than 200 levels)",
        595,
        id="nested-tuples",
    ),
]


@pytest.mark.parametrize(("text", "message", "at"), RESOURCE_LOAD_ROWS)
def test_oversized_expressions_are_refused_at_load(text: str, message: str, at: int) -> None:
    err = refused_at_load(text)
    assert message in err.message
    assert err.location == Location(FILE, LINE, column(text, at))


def test_parser_overflow_is_explained() -> None:
    """Python's parser gives up on deep tuple nesting with an empty MemoryError; the user
    still needs to be told why (today the message ends in a bare "cannot be parsed: ")."""
    err = refused_at_load("(1," * 199 + "1" + ")" * 199)
    assert not err.message.rstrip().endswith(":"), err.message


REFUSED = "failed: refused: "

RESOURCE_EVAL_ROWS = [
    pytest.param("9 ** 9 ** 9", REFUSED + "9 ** 387420489 would exceed 4096 bits", id="9**9**9"),
    pytest.param(
        "9 ** 9 ** 9 ** 9", REFUSED + "9 ** 387420489 would exceed 4096 bits", id="9**9**9**9"
    ),
    pytest.param("10 ** 100000", REFUSED + "10 ** 100000 would exceed 4096 bits", id="10**100000"),
    pytest.param("2 ** 2049", REFUSED + "2 ** 2049 would exceed 4096 bits", id="2**2049"),
    pytest.param(
        "tokens.context ** 10000",
        REFUSED + "150 ** 10000 would exceed 4096 bits",
        id="power-of-a-name",
    ),
    pytest.param(
        "(2 ** 2048) * (2 ** 2048)", REFUSED + "product would exceed 4096 bits", id="big-product"
    ),
    pytest.param("10.0 ** 400", REFUSED, id="float-power-overflow"),
    pytest.param("10 ** 1e5", REFUSED, id="float-exponent-overflow"),
    pytest.param(
        'int(float("inf"))',
        REFUSED + "numeric overflow (cannot convert float infinity to integer)",
        id="int-of-infinity",
    ),
    pytest.param(
        '"x" * 10**9', REFUSED + "repeated string or list would be too long", id="str-repeat"
    ),
    pytest.param(
        '10**9 * "x"', REFUSED + "repeated string or list would be too long", id="repeat-str"
    ),
    pytest.param(
        "[1] * 10**9", REFUSED + "repeated string or list would be too long", id="list-repeat"
    ),
    pytest.param(
        "(1, 2) * 10**9", REFUSED + "repeated string or list would be too long", id="tuple-repeat"
    ),
    pytest.param(
        '"x" * tokens.context * 1000',
        REFUSED + "repeated string or list would be too long",
        id="repeat-by-a-name",
    ),
    pytest.param(
        '"x" * 10**9 * 10**9',
        REFUSED + "repeated string or list would be too long",
        id="repeat-twice",
    ),
    pytest.param(
        '("a" * 5000) + ("a" * 5000) + "a"',
        REFUSED + "concatenation would be too long",
        id="concatenation-chain",
    ),
    pytest.param(
        "([1] * 10000) + [1]", REFUSED + "concatenation would be too long", id="list-concat"
    ),
    pytest.param(
        "str(9 ** 4000)", REFUSED + "9 ** 4000 would exceed 4096 bits", id="str-of-huge-power"
    ),
    pytest.param(
        "str(2 ** 2048) * 20",
        REFUSED + "repeated string or list would be too long",
        id="str-growth-repeat",
    ),
    pytest.param('int("9" * 4000)', REFUSED + "result exceeds 4096 bits", id="int-of-long-digits"),
    pytest.param(
        'int("1" * 9000, 2)', REFUSED + "result exceeds 4096 bits", id="int-of-long-binary"
    ),
    pytest.param(
        'int("9" * 5000)',
        "failed: Exceeds the limit (4300 digits) for integer string conversion",
        id="int-digit-limit",
    ),
    pytest.param(
        "str(((1,) * 100,) * 200)",
        REFUSED + "repeated string or list would be too long",
        id="str-of-nested-tuples",
    ),
    # printf-style formatting builds a string of any width from a short literal: it must be
    # held to the same length limit as a repeat or a concatenation.
    pytest.param('"%020000d" % 1', REFUSED, id="percent-width"),
    pytest.param('"%s%s" % ("a" * 10000, "b")', REFUSED, id="percent-concatenation"),
]


@pytest.mark.parametrize(("text", "message"), RESOURCE_EVAL_ROWS)
def test_huge_constant_work_is_refused_at_evaluation(text: str, message: str) -> None:
    """Nothing is folded at load: huge-but-constant work compiles, and evaluating it is
    refused by the evaluator's limits before the work is done."""
    compile_expression(text, SPAN, NAMES)
    err = refused_at_evaluation(text)
    assert message in err.message


@pytest.mark.parametrize(
    ("limits", "text", "message", "at"),
    [
        pytest.param(
            Limits(max_int_bits=64),
            "tokens.context > 18446744073709551616",
            "integer literal too large",
            "18446744073709551616",
            id="int-literal",
        ),
        pytest.param(
            Limits(max_string_length=8),
            'status == "abcdefghi"',
            "string literal too long",
            '"abc',
            id="string-literal",
        ),
        pytest.param(
            Limits(max_collection_length=3),
            "status in [1, 2, 3, 4]",
            "list literal too long",
            "[",
            id="list-literal",
        ),
        pytest.param(
            Limits(max_collection_length=3),
            "status in (1, 2, 3, 4)",
            "list literal too long",
            "(",
            id="tuple-literal",
        ),
        pytest.param(
            Limits(max_expression_length=10),
            "tokens.context > 1",
            "expression too long (18 characters; at most 10)",
            0,
            id="expression-length",
        ),
    ],
)
def test_literal_limits_are_enforced_at_load(
    limits: Limits, text: str, message: str, at: str | int
) -> None:
    """With the default limits the length cap (1000) is hit before the literal limits; a
    stricter evaluator shows the literal checks themselves."""
    compile_expression(text, SPAN, NAMES)  # fine under the default limits
    err = refused_at_load(text, limits)
    assert message in err.message
    assert err.location == Location(FILE, LINE, column(text, at))


@pytest.mark.parametrize(
    ("limits", "text", "message"),
    [
        pytest.param(Limits(max_int_bits=64), "2 ** 64", "2 ** 64 would exceed 64 bits", id="pow"),
        pytest.param(
            Limits(max_string_length=8),
            '"ab" * 5',
            "repeated string or list would be too long",
            id="repeat",
        ),
        pytest.param(
            Limits(max_string_length=8),
            '"abcde" + "abcde"',
            "concatenation would be too long",
            id="concatenation",
        ),
    ],
)
def test_evaluation_limits_are_per_evaluator(limits: Limits, text: str, message: str) -> None:
    assert evaluate(text)  # the default evaluator accepts it...
    err = refused_at_evaluation(text, limits)  # ...a stricter one refuses it
    assert REFUSED + message in err.message


# Rows whose failure mode would be a hang or gigabytes of memory: each runs in a child process
# under CHILD_MEMORY_CAP and CHILD_TIMEOUT. "kind" is "when" (a when: expression) or "message"
# (a message template). All must be refused by the evaluator's limits ("refused: ...").
CHILD = textwrap.dedent(
    """
    import json, resource, sys
    cap = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    from clm_policy.base.errors import EvaluationError, ExpressionError, Location
    from clm_policy.policy.expr import SourceSpan, compile_expression
    from clm_policy.policy.names import known_names
    from clm_policy.policy.sandbox import Sandbox
    from clm_policy.policy.template import compile_template
    kind, text, evaluator = sys.argv[2], sys.argv[3], sys.argv[4]
    span = SourceSpan(Location("policy.yaml", 7, 11))
    names = known_names({})
    try:
        if kind == "message":
            value = compile_template(text, span, names).render({})
        elif evaluator == "code":
            value = compile_expression(text, span, names).evaluate({})
        else:
            value = Sandbox().run(compile_expression(text, span, names), {})
        size = len(value) if hasattr(value, "__len__") else None
        out = {"outcome": "value", "detail": f"{type(value).__name__} (len {size})"}
    except (ExpressionError, EvaluationError) as exc:
        out = {"outcome": type(exc).__name__, "detail": exc.message[:1000]}
    except BaseException as exc:
        out = {"outcome": "leaked", "detail": f"{type(exc).__name__}: {exc}"[:1000]}
    print(json.dumps(out))
    """
)


def run_contained(kind: str, text: str, cwd: Path, evaluator: str) -> dict[str, str]:
    proc: subprocess.CompletedProcess[str] | None
    try:
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(CHILD_MEMORY_CAP), kind, text, evaluator],
            capture_output=True,
            text=True,
            timeout=CHILD_TIMEOUT,
            cwd=cwd,
            check=False,
        )
    except subprocess.TimeoutExpired:
        proc = None
    if proc is None:
        pytest.fail(f"{text!r} did not terminate within the {CHILD_TIMEOUT}s guard (a hang)")
    assert proc.returncode == 0, message_of(proc.stderr)[-2000:]
    result: dict[str, str] = json.loads(proc.stdout)
    return result


CONTAINED_ROWS = [
    # Controls: refused today, so the harness itself is shown to work.
    pytest.param("when", "9 ** 9 ** 9 ** 9 ** 9", id="control-power-tower"),
    pytest.param("when", '"x" * 10**9 * 10**9', id="control-repeat"),
    pytest.param("when", "str(9 ** 9 ** 9)", id="control-str-growth"),
    pytest.param("message", "ctx {9 ** 9 ** 9}", id="control-message"),
    # round() with a huge negative ndigits computes 10 ** -ndigits first.
    pytest.param("when", "round(1, -10**7)", id="round-negative-ndigits"),
    # printf-style formatting: a gigabyte string from an 18-character literal.
    pytest.param("when", '"%0999999999d" % 1', id="percent-width-1G"),
    pytest.param("when", '"%.999999999f" % 1.0', id="percent-precision-1G"),
    pytest.param("when", '"%0*d" % (2**31 - 2, 1)', id="percent-star-width-2G"),
    pytest.param("when", '"%s" % (((1,) * 10000,) * 1000,)', id="percent-nested-tuples"),
    # A repeat of a repeat: every level is within the length limit, the whole is 10**8.
    pytest.param("when", "((1,) * 10000,) * 10000 == ((1,) * 10000,) * 10000", id="nested-compare"),
    pytest.param("when", "sum(((1,) * 10000,) * 10000, ())", id="nested-sum"),
    pytest.param("message", "ctx {((1,) * 10000,) * 10000}", id="message-nested-tuples"),
]


# each row as code (what decisions run) and, for a when: expression, as a tree walk (the
# reference evaluator; a message is rendered as code only)
CONTAINED_RUNS = [
    pytest.param(*row.values, evaluator, id=f"{row.id}-{evaluator}")
    for row in CONTAINED_ROWS
    for evaluator in (("code", "tree") if row.values[0] == "when" else ("code",))
]


@pytest.mark.parametrize(("kind", "text", "evaluator"), CONTAINED_RUNS)
def test_resource_bombs_are_refused_at_evaluation(
    kind: str, text: str, evaluator: str, tmp_path: Path
) -> None:
    result = run_contained(kind, text, tmp_path, evaluator)
    assert result["outcome"] == "EvaluationError", result
    assert REFUSED in result["detail"], result


# --------------------------------------------------------------------------------------------
# Evaluation failures of ordinary kinds are EvaluationErrors too, never raw exceptions
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("1 / 0", "failed: division by zero", id="zero-division"),
        pytest.param("1 % 0", "failed: integer modulo by zero", id="zero-modulo"),
        pytest.param('"a" < 1', "failed: '<' not supported", id="type-error"),
        pytest.param('int("x")', "failed: invalid literal for int()", id="value-error"),
        pytest.param("len(5)", "failed: object of type 'int' has no len()", id="len-of-int"),
        pytest.param("min()", "failed: min expected at least 1 argument", id="min-no-args"),
        pytest.param(
            'sum(("a", "b"))', "failed: sum() adds numbers only, got str", id="sum-of-strings"
        ),
        pytest.param(
            '"%(a)s" % (1,)',
            REFUSED + "string formatting with % is not allowed",
            id="percent-mapping",
        ),
        pytest.param(
            '"%s tokens" % tokens.context',
            REFUSED + "string formatting with % is not allowed (use a message)",
            id="percent-is-not-a-template",
        ),
        pytest.param('"%c" % 2**40', REFUSED, id="percent-char-overflow"),
        pytest.param(
            "profile.context_window + 1",
            "failed: profile.context_window has no value in this state",
            id="missing-value",
        ),
    ],
)
def test_runtime_failures_are_evaluation_errors(text: str, message: str) -> None:
    err = refused_at_evaluation(text)
    assert message in err.message


# --------------------------------------------------------------------------------------------
# Second line of defence: the evaluator refuses what the checker refuses, should a tree ever
# reach it unchecked
# --------------------------------------------------------------------------------------------


def unchecked(text: str) -> CompiledExpression:
    tree = ast.parse(text, mode="eval").body
    return CompiledExpression(text=text, tree=tree, names=(), location=SPAN.start)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param('"".__class__', "Attribute is not available", id="attribute"),
        pytest.param("min.__self__", "Attribute is not available", id="function-attribute"),
        pytest.param('str.format("{0.__class__}", 1)', "Attribute is not available", id="format"),
        pytest.param("f\"{''.__class__}\"", "Attribute is not available", id="fstring-attribute"),
        pytest.param('"abc"[0]', "Subscript is not available", id="subscript"),
        pytest.param("(lambda: 1)()", "Lambda Functions not implemented", id="lambda"),
        pytest.param("[x for x in (1,)]", "ListComp is not available", id="comprehension"),
        pytest.param("(x := 1)", "NamedExpr is not available", id="walrus"),
        pytest.param("{1: 2}", "Dict is not available", id="dict"),
        pytest.param("{1}", "Set is not available", id="set"),
        pytest.param("min(*(1, 2))", "Starred is not available", id="starred"),
        pytest.param('open("x")', "Function 'open' not defined", id="open"),
        pytest.param('__import__("os")', "Function '__import__' not defined", id="__import__"),
        pytest.param('exec("1")', "Function 'exec' not defined", id="exec"),
        pytest.param("os", "'os' is not defined", id="unknown-name"),
    ],
)
def test_evaluator_refuses_unchecked_trees(text: str, message: str) -> None:
    with pytest.raises(EvaluationError) as info:
        Sandbox().run(unchecked(text), {})
    assert type(info.value) is EvaluationError
    assert message in info.value.message
    # as code, the tree never becomes a function: lowering knows only checked nodes, and
    # the code reads no builtins (a call of a name not allow-listed finds nothing)
    with pytest.raises(EvaluationError) as as_code:
        unchecked(text).evaluate({})
    assert type(as_code.value) is EvaluationError


# --------------------------------------------------------------------------------------------
# Canary: attempts to create a file leave nothing behind
# --------------------------------------------------------------------------------------------


def canary_attempts(canary: Path) -> list[str]:
    target = str(canary)
    return [
        f'open("{target}", "w")',
        f'__import__("os").system("touch {target}")',
        f"exec(\"open('{target}', 'w')\")",
        f"eval(\"open('{target}', 'w')\")",
        f'getattr(__builtins__, "open")("{target}", "w")',
        f'[open][0]("{target}", "w")',
        f'(lambda: open("{target}", "w"))()',
        f"f\"{{open('{target}', 'w')}}\"",
        f'any(open("{target}", "w") for _ in (1,))',
        f'"{{0}}".format(open("{target}", "w"))',
        f'tokens.context > 0 and open("{target}", "w")',
    ]


def test_canary_file_attempts_create_nothing(tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    for text in canary_attempts(canary):
        refused_at_load(text)
        # ...and even unchecked, the evaluator has nothing that opens a file or runs a command.
        with pytest.raises(EvaluationError):
            Sandbox().run(unchecked(text), STATE)
        with pytest.raises(EvaluationError):
            unchecked(text).evaluate(STATE)
        assert not canary.exists(), text
    assert list(tmp_path.iterdir()) == []


def test_canary_through_the_cli_creates_nothing(
    tmp_path: Path, write: Callable[[str, str], Path]
) -> None:
    canary = tmp_path / "canary"
    for i, text in enumerate(canary_attempts(canary)):
        path = write(f"canary{i}.yaml", policy(text))
        result = invoke("decide", "-p", str(path), "--tokens", "150")
        assert result.exit_code == 2, (text, result)
        assert not canary.exists(), text
    template = write(
        "canary-message.yaml",
        policy("tokens.context > 100", because=f'ctx {{open("{canary}", "w")}}'),
    )
    assert invoke("decide", "-p", str(template), "--tokens", "150").exit_code == 2
    assert not canary.exists()


# --------------------------------------------------------------------------------------------
# Message templates: placeholders go through the same sandbox
# --------------------------------------------------------------------------------------------

TEMPLATE_SPAN = SourceSpan(Location(FILE, 3, 14))


@pytest.mark.parametrize(
    ("template", "message", "at"),
    [
        pytest.param("ctx {tokens.__class__}", UNDERSCORE + "tokens.__class__", "tokens", id="u"),
        pytest.param('ctx {"".__class__}', ATTRIBUTE, '""', id="literal-attribute"),
        pytest.param('ctx {open("x")}', "call to 'open' is not allowed", "open", id="open"),
        pytest.param(
            'a {__import__("os").system("id")}', METHOD, "__import__", id="__import__-system"
        ),
        pytest.param(
            'ctx {"{0.__class__}".format(1)}', METHOD, '"{0', id="str-format-in-placeholder"
        ),
        pytest.param('ctx {f"{1}"}', "not allowed in a policy expression: f-string", "f", id="f"),
        pytest.param(
            "a {tokens.context!r}", "expression syntax error: invalid syntax", "!", id="conversion"
        ),
        pytest.param(
            "ctx {tokens.context:>99999999}",
            "format spec ':>99999999' not allowed",
            "{",
            id="huge-width-spec",
        ),
        pytest.param("a {tokens}", "'tokens' is a group of names", "tokens", id="group"),
    ],
)
def test_message_placeholders_are_refused_at_load(template: str, message: str, at: str) -> None:
    with pytest.raises(ExpressionError) as info:
        compile_template(template, TEMPLATE_SPAN, NAMES)
    assert type(info.value) is ExpressionError
    assert message in info.value.message
    assert info.value.location == Location(FILE, 3, 14 + template.index(at))


@pytest.mark.parametrize(
    ("template", "message"),
    [
        pytest.param("a {9 ** 9 ** 9} b", REFUSED + "9 ** 387420489 would exceed", id="power"),
        pytest.param(
            'a {"x" * 10**9}', REFUSED + "repeated string or list would be too long", id="repeat"
        ),
        # A value that is fine in itself but cannot take the format spec: an EvaluationError
        # like any other formatting failure (today a raw OverflowError escapes the sandbox).
        pytest.param("a {2 ** 2048:.2f}", "cannot format", id="spec-float-overflow"),
        pytest.param("a {2 ** 2048:e}", "cannot format", id="spec-exponent-overflow"),
        pytest.param("a {tokens.context ** 200:.0%}", "cannot format", id="spec-percent-overflow"),
        pytest.param('a {"x":d}', "cannot format 'x' with ':d'", id="spec-type-mismatch"),
    ],
)
def test_message_placeholders_are_refused_at_evaluation(template: str, message: str) -> None:
    compiled = compile_template(template, TEMPLATE_SPAN, NAMES)
    with pytest.raises(EvaluationError) as info:
        compiled.render(STATE)
    assert type(info.value) is EvaluationError
    assert message in info.value.message
    # the placeholder's expression starts right after its "{"
    assert info.value.location == Location(FILE, 3, 14 + template.index("{") + 1)


# --------------------------------------------------------------------------------------------
# Allowed expressions still work, so the catalogue cannot pass vacuously
# --------------------------------------------------------------------------------------------


def test_state_covers_every_known_name() -> None:
    assert set(STATE) == set(NAMES)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("min(tokens.context, 5)", 5),
        ("max(tokens.context, 500)", 500),
        ('status in ("running", "waiting")', True),
        ('status not in ["completed", "failed"]', True),
        ("abs(-1) == 1", True),
        ("round(tokens.ratio, 2)", 0.12),
        ("round(tokens.context, -2)", 200),
        ("tokens.context > profile.soft_compact and step >= 0", True),
        ("tokens.context / tokens.window", 0.15),
        ("tokens.context // 7 + tokens.context % 7", 24),
        ("len(status)", 7),
        ('str(tokens.context) + "!"', "150!"),
        ('int("42") + float("0.5")', 42.5),
        ("bool(signals.flag)", False),
        ("sum((1, 2, 3))", 6),
        ("any((False, tokens.estimated, 1))", True),
        ("all([True, 1, status])", True),
        ("1 if tokens.context > 100 else 0", 1),
        ("not compacted_before and profile.prefer_handoff_on_phase", True),
        ("profile.context_window is None", True),
        ("-tokens.context", -150),
        ("9 ** 9", 387420489),
        ("2 ** 2048 > 0", True),
        ('"ab" * 3', "ababab"),
        ('len(("a" * 5000) + ("a" * 5000))', 10000),
        ("len([1] * 10000)", 10000),
        ("-" * 100 + "1", 1),
        ("(" * 100 + "1" + ")" * 100, 1),
        ("abs(" * 100 + "-1" + ")" * 100, 1),
        ("1 < 2 < 3 <= 3", True),
        ('"a" "b"', "ab"),
        ("tokens.context > 1 # a comment", True),
    ],
)
def test_allowed_expressions_evaluate(text: str, expected: object) -> None:
    assert evaluate(text) == expected


def test_allowed_message_renders() -> None:
    template = compile_template(
        "ctx {tokens.context:,} of {tokens.window} ({tokens.ratio:.0%}), {{literal}}",
        TEMPLATE_SPAN,
        NAMES,
    )
    assert template.render(STATE) == "ctx 150 of 1000 (12%), {literal}"


# --------------------------------------------------------------------------------------------
# End to end through the CLI
# --------------------------------------------------------------------------------------------

POLICY = """\
    version: 1
    profiles:
      coding: {soft_compact: 100, hard_handoff: 200}
    rules:
      - id: r
        when: 'WHEN'
        action: compact
    """
WHEN_LINE, WHEN_COL = 6, 12  # where WHEN's text starts in POLICY


def policy(when: str, because: str | None = None) -> str:
    text = POLICY.rstrip(" ").replace("WHEN", when.replace("'", "''"))
    if because is not None:
        text += "        because: '" + because.replace("'", "''") + "'\n"
    return text


def error_output(result: CliResult, extra: list[str]) -> str:
    """The error as one text line: from stderr, or (with --format json) the JSON object that
    replaces it on stdout."""
    if "json" not in extra:
        assert result.stdout == ""
        return result.stderr
    assert message_of(result.stderr) == ""
    error = json.loads(result.stdout)["error"]
    assert error["code"] == 2
    return f"{error['file']}:{error['line']}:{error['col']}: {error['message']}\n"


def assert_one_error_line(stderr: str, prefix: str, message: str) -> None:
    assert "Traceback" not in stderr
    lines = message_of(stderr).splitlines()  # (the file's line and a caret under it)
    assert len(lines) == 1, stderr
    assert lines[0].startswith(prefix), stderr
    assert message in lines[0], stderr


@pytest.mark.parametrize(
    ("when", "message", "at"),
    [
        pytest.param('"".__class__', ATTRIBUTE, 0, id="literal-__class__"),
        pytest.param(
            'tokens.context > 100 and __import__("os").system("id")',
            METHOD,
            "__import__",
            id="__import__-system",
        ),
        pytest.param(
            "tokens.context > 100 and (lambda: 1)()",
            "not allowed in a policy expression: lambda",
            "lambda",
            id="lambda",
        ),
        pytest.param(
            "status.__class__.__subclasses__",
            UNDERSCORE + "status.__class__.__subclasses__",
            0,
            id="dunder",
        ),
        pytest.param(
            'f"{().__class__}" == ""', "not allowed in a policy expression: f-string", 0, id="fstr"
        ),
        pytest.param("import os", "expression syntax error: invalid syntax", 0, id="statement"),
        pytest.param(LONG_SUM, "expression too long (1001 characters; at most 1000)", 0, id="long"),
    ],
)
@pytest.mark.parametrize("extra", [[], ["--explain", "--format", "json"]], ids=["plain", "explain"])
def test_cli_refuses_at_load(
    write: Callable[[str, str], Path], when: str, message: str, at: str | int, extra: list[str]
) -> None:
    path = write("policy.yaml", policy(when))
    result = invoke("decide", "-p", str(path), "--tokens", "150", *extra)
    assert result.exit_code == 2
    col = WHEN_COL + (when.index(at) if isinstance(at, str) else at)
    assert_one_error_line(error_output(result, extra), f"{path}:{WHEN_LINE}:{col}: ", message)


@pytest.mark.parametrize(
    ("when", "message"),
    [
        pytest.param(
            "tokens.context > 100 and 9 ** 9 ** 9 > 0",
            REFUSED + "9 ** 387420489 would exceed 4096 bits",
            id="power",
        ),
        pytest.param(
            'tokens.context > 100 and "x" * 10**9 == ""',
            REFUSED + "repeated string or list would be too long",
            id="repeat",
        ),
        pytest.param(
            'tokens.context > 100 and len(("a" * 5000) + ("a" * 5000) + "a") > 0',
            REFUSED + "concatenation would be too long",
            id="concatenation",
        ),
    ],
)
@pytest.mark.parametrize("extra", [[], ["--explain", "--format", "json"]], ids=["plain", "explain"])
def test_cli_refuses_at_evaluation(
    write: Callable[[str, str], Path], when: str, message: str, extra: list[str]
) -> None:
    path = write("policy.yaml", policy(when))
    result = invoke("decide", "-p", str(path), "--tokens", "150", *extra)
    assert result.exit_code == 2
    assert_one_error_line(error_output(result, extra), f"{path}:{WHEN_LINE}:{WHEN_COL}: ", message)


def test_cli_refuses_a_message_placeholder(write: Callable[[str, str], Path]) -> None:
    because = 'context {tokens.context:,} and {open("x").read()}'
    path = write("policy.yaml", policy("tokens.context > 100", because=because))
    result = invoke("decide", "-p", str(path), "--tokens", "150")
    assert result.exit_code == 2
    assert result.stdout == ""
    col = len("    because: '") + 1 + because.index("open")
    assert_one_error_line(result.stderr, f"{path}:{WHEN_LINE + 2}:{col}: ", METHOD)


def test_cli_refuses_an_unformattable_placeholder(write: Callable[[str, str], Path]) -> None:
    """A format spec that Python cannot apply is bad input (exit 2), not an internal error."""
    because = "context {tokens.context ** 200:.1f}"
    path = write("policy.yaml", policy("tokens.context > 100", because=because))
    result = invoke("decide", "-p", str(path), "--tokens", "150")
    assert result.stdout == ""
    col = len("    because: '") + 1 + because.index("tokens")
    assert_one_error_line(
        message_of(result.stderr), f"{path}:{WHEN_LINE + 2}:{col}: ", "cannot format"
    )
    assert result.exit_code == 2


def test_cli_refuses_a_statement_in_a_folded_block(write: Callable[[str, str], Path]) -> None:
    path = write(
        "policy.yaml",
        """
        version: 1
        profiles:
          coding: {soft_compact: 100, hard_handoff: 200}
        rules:
          - id: r
            when: >-
              tokens.context > 100)
              import os
              (1
            action: compact
        """,
    )
    result = invoke("decide", "-p", str(path), "--tokens", "150")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert_one_error_line(result.stderr, f"{path}:8:7: ", "expression syntax error: invalid syntax")


def test_cli_allowed_policy_decides(write: Callable[[str, str], Path]) -> None:
    """The end-to-end harness is not vacuous: a policy of allowed expressions decides."""
    path = write(
        "policy.yaml",
        policy(
            'min(tokens.context, 500) > 100 and status in ("running", "waiting") '
            "and abs(-1) == 1 and round(tokens.context / 1000, 2) == 0.15",
            because="ctx {tokens.context:,}",
        ),
    )
    result = invoke("decide", "-p", str(path), "--tokens", "150", "--format", "json")
    assert result.exit_code == 0, message_of(result.stderr)
    assert message_of(result.stderr) == ""
    decision = json.loads(result.stdout)
    assert decision["action"] == "compact"
    assert decision["rationale"] == "ctx 150"


# Termination guards through a real process (run_process has a 60s timeout): the command ends
# with exit 2 and one error line. Not a speed assertion.

NASTY_WHEN = (
    'tokens.context > 100 and 9 ** 9 ** 9 ** 9 ** 9 > len("x" * 10**9 * 10**9) '
    'and str(9 ** 9 ** 9) * 10**9 == ("a" * 5000) + ("a" * 5000) + "a"'
)


@pytest.mark.parametrize(
    "when",
    [
        pytest.param(NASTY_WHEN, id="power-tower-and-repeats"),
        pytest.param("tokens.context > 100 and round(1, -10**9) == 0", id="round-ndigits"),
    ],
)
def test_cli_process_terminates_on_resource_exhaustion(
    write: Callable[[str, str], Path], when: str
) -> None:
    path = write("nasty.yaml", policy(when, because="{9 ** 9 ** 9} {'x' * 10**9}"))
    try:
        proc: subprocess.CompletedProcess[str] | None = run_process(
            "decide", "-p", str(path), "--tokens", "150"
        )
    except subprocess.TimeoutExpired:
        proc = None
    if proc is None:
        pytest.fail(f"clm-policy decide did not terminate on {when!r} (a hang)")
    assert proc.returncode == 2, message_of(proc.stderr)
    assert proc.stdout == ""
    assert_one_error_line(proc.stderr, f"{path}:{WHEN_LINE}:{WHEN_COL}: ", REFUSED)


# --------------------------------------------------------------------------------------------
# `is` compares with None, True or False only: any other identity is the interpreter's accident
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["step is 3", "status is 'running'", "(1,) is not (1,)", "step is tokens.context"],
)
def test_identity_of_values_is_refused_at_load(text: str) -> None:
    err = refused_at_load(text)
    assert "compares with null, true or false only" in err.message
    assert err.location == Location(FILE, LINE, COL)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("tokens.window is not None", True),
        ("None is tokens.window", False),
        ("tokens.estimated is False", True),
        ("step > 1 is not False", True),
    ],
)
def test_identity_with_singletons_is_allowed(text: str, value: bool) -> None:
    assert evaluate(text) is value


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "tokens.context > 1 && signals.degradation",
            " at '& signals.degradation'; write `and` and `or`, not `&&` and `||`",
        ),
        ('status = "running"', " at '= \"running\"'; compare with `==`, not `=`"),
        ("!signals.degradation", " at '!signals.degradation'; write `not`, not `!`"),
        (
            "tokens.ratio > 80%",
            " at the end of the expression; a share like 80% is written in a profile: here "
            "compare tokens.ratio with 0.8",
        ),
        ('status == "a && b" and', " at the end of the expression"),  # a string's text: no hint
    ],
)
def test_a_syntax_error_another_language_would_accept_says_what_to_write(
    text: str, message: str
) -> None:
    assert refused_at_load(text).message == f"expression syntax error: invalid syntax{message}"


@pytest.mark.parametrize("name", ["true", "false", "null", "none"])
def test_a_lower_case_constant_says_how_python_writes_it(name: str) -> None:
    assert refused_at_load(f"tokens.context > 1 and {name}").message == (
        f"unknown name '{name}'; write True, False or None (capitalised, as in Python)"
    )
