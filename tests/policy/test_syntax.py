"""The sandbox's syntax helpers (clm_policy.policy.syntax) do what :mod:`ast`'s do: the same
trees from ``parse``, the same positions from ``copy_location`` and
``fix_missing_locations``, the same rewrites from ``NodeTransformer`` — on the expressions of
the project's policies, on escape attempts and on generated expressions. And a hook's policy
load does not import :mod:`ast` (benchmarks/bench_hook.py)."""

from __future__ import annotations

import ast
import copy
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from clm_policy.policy import syntax
from clm_policy.policy.compile import load_policy

ROOT = Path(__file__).resolve().parents[2]
POLICIES = sorted(
    [*(ROOT / "policies").glob("*.yaml"), *(ROOT / "policies/examples").glob("*.yaml")]
)

ESCAPES = [
    "().__class__.__bases__[0].__subclasses__()",
    "[x for x in (1, 2) if x]",
    "{k: v for k, v in ()}",
    "(lambda: 1)()",
    "f'{tokens.context!r:>10}'",
    "a if b else (c := 3)",
    "x[1:2, ::3]",
    "*a, b",
    "await x",
    "not (a is None) and b is not True or -c ** 2 // 3 % 4",
    "max(1, 2)\n + min(3,\n 4)",
    "(\n tokens.context >= 100\n and steps_since_compact > 2\n)",
    "(\n a +\n (b *\n  c)\n if d\n else [e,\n f]\n)",
    "'é' + \"\\u00e9\" in ['é', 1.5e3, 0x1f, None]",
    "{1, 2} | {3}",
    "yield",
]


def expressions() -> list[str]:
    found = list(ESCAPES)
    for path in POLICIES:
        policy = load_policy(path)
        found += [rule.when.text for rule in policy.rules]
        found += [g.when.text for guards in policy.guards.values() for g in guards]
    rng = random.Random(17)
    atoms = ["a", "tokens.context", "1", "2.5", "'s'", "None", "True", "f(x)", "[1, a]", "(a, b)"]
    ops = [" + ", " - ", " * ", " / ", " // ", " % ", " ** ", " and ", " or ", " < ", " == "]
    for _ in range(300):
        text = rng.choice(atoms)
        for _ in range(rng.randrange(1, 6)):
            text = f"{text}{rng.choice(ops)}{rng.choice(atoms)}"
            if rng.random() < 0.3:
                text = f"not ({text})" if rng.random() < 0.5 else f"({text}) if a else b"
        found.append(text)
    return found


CORPUS = expressions()


def dump(tree: Any) -> str:
    """The tree with every node's position, told apart from a position that is absent (which
    ``ast.dump`` shows as it shows None)."""
    marks = [tuple(getattr(node, name, "absent") for name in POSITIONS) for node in ast.walk(tree)]
    return f"{ast.dump(tree, include_attributes=True)} {marks}"


POSITIONS = ("lineno", "col_offset", "end_lineno", "end_col_offset")


def test_the_corpus_holds_the_policies_expressions() -> None:
    assert len(CORPUS) > len(ESCAPES) + 300
    assert any("tokens." in text for text in CORPUS[len(ESCAPES) : -300])


def parsed(parse: Any, text: str, mode: str) -> str:
    """The tree's dump, or the syntax error's message and place."""
    try:
        return dump(parse(text, mode=mode))
    except SyntaxError as exc:
        return f"SyntaxError {exc.msg} {exc.lineno} {exc.offset}"


@pytest.mark.parametrize("mode", ["eval", "exec"])
def test_parse_gives_ast_s_tree(mode: str) -> None:
    for text in CORPUS:
        assert parsed(syntax.parse, text, mode) == parsed(ast.parse, text, mode), text


def test_the_node_classes_are_ast_s() -> None:
    classes = [n for n in syntax.__all__ if isinstance(getattr(syntax, n), type)]
    assert len(classes) > 50
    for name in classes:
        if name != "NodeTransformer":
            assert getattr(syntax, name) is getattr(ast, name), name


def stripped(tree: ast.AST, rng: random.Random) -> ast.AST:
    """``tree`` with some nodes' positions removed (and some ends set to None)."""
    for node in ast.walk(tree):
        for name in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            if hasattr(node, name) and rng.random() < 0.3:
                if name.startswith("end_") and rng.random() < 0.5:
                    setattr(node, name, None)
                else:
                    delattr(node, name)
    return tree


def test_fix_missing_locations_fills_positions_as_ast_does() -> None:
    rng = random.Random(5)
    for text in CORPUS:
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError:
            continue
        for _ in range(5):
            bare = stripped(copy.deepcopy(tree), rng)
            ours, theirs = copy.deepcopy(bare), copy.deepcopy(bare)
            assert dump(syntax.fix_missing_locations(ours)) == dump(
                ast.fix_missing_locations(theirs)
            )
    built = ast.Expression(
        body=ast.BinOp(
            left=ast.Name(id="a", ctx=ast.Load()), op=ast.Add(), right=ast.Constant(value=1)
        )
    )
    assert dump(syntax.fix_missing_locations(copy.deepcopy(built))) == dump(
        ast.fix_missing_locations(copy.deepcopy(built))
    )


def test_copy_location_copies_as_ast_does() -> None:
    rng = random.Random(9)
    olds = []
    for text in CORPUS[:200]:
        try:
            olds += list(ast.walk(stripped(ast.parse(text, mode="eval"), rng)))
        except SyntaxError:
            continue
    for old in olds:
        for new in (
            ast.Name(id="n", ctx=ast.Load()),
            ast.Load(),
            ast.Constant(value=1, lineno=9, end_lineno=9, end_col_offset=3),
        ):
            ours, theirs = copy.deepcopy(new), copy.deepcopy(new)
            assert dump(syntax.copy_location(ours, old)) == dump(ast.copy_location(theirs, old))


class Rewrite:
    """A transformer exercising every case of generic_visit: a node replaced, a list item
    removed, an item replaced by several, a single child removed."""

    def visit_Name(self, node: ast.Name) -> Any:
        if node.id == "a":
            return ast.copy_location(ast.Name(id="renamed", ctx=node.ctx), node)
        if node.id == "b":
            return None
        return self.generic_visit(node)  # type: ignore[attr-defined]

    def visit_Constant(self, node: ast.Constant) -> Any:
        if node.value == 1:
            return [ast.Constant(value=10), ast.Constant(value=11)]
        return node


class OurRewrite(Rewrite, syntax.NodeTransformer):
    pass


class AstRewrite(Rewrite, ast.NodeTransformer):
    pass


def outcome(transformer: Any, tree: ast.AST) -> str:
    try:
        return dump(transformer.visit(tree))
    except Exception as exc:  # (removing a required child can make a tree ast cannot dump)
        return f"{type(exc).__name__}: {exc}"


def test_node_transformer_rewrites_as_ast_s_does() -> None:
    seen = 0
    for text in CORPUS:
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError:
            continue
        ours = outcome(OurRewrite(), copy.deepcopy(tree))
        assert ours == outcome(AstRewrite(), copy.deepcopy(tree)), text
        seen += "renamed" in ours
    assert seen > 50


def test_a_policy_loads_without_ast() -> None:
    code = (
        "import sys\n"
        "from clm_policy.policy.cache import load_policy_cached\n"
        "policy = load_policy_cached('claude-code')\n"
        "assert policy.rules\n"
        "print('ast' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (0, "False\n", "")
