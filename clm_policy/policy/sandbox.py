"""The reference evaluator: simpleeval's tree walk with this project's bounded operators.

Decisions run expressions as code (:mod:`clm_policy.policy.evaluate`); :class:`Sandbox` walks
the same tree, defining what each allowed node means. Differential tests hold the two equal on
the escape catalogue and the bundled policies; lint evaluates constant parts with it.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from simpleeval import SimpleEval

from clm_policy.policy.evaluate import DEFAULT_LIMITS, Bounded, Limits, operator_table

if TYPE_CHECKING:
    from collections.abc import Mapping

    from clm_policy.policy.expr import CompiledExpression


class Sandbox(SimpleEval):  # type: ignore[misc]  # simpleeval ships no type information
    """A simpleeval evaluator with this project's operators, functions and limits."""

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        bounded = Bounded(limits)
        super().__init__(operators=operator_table(limits), functions=bounded.functions(), names={})
        self.limits = limits
        self._bounded = bounded
        self.nodes[ast.List] = self._eval_sequence
        self.nodes[ast.Tuple] = self._eval_sequence
        # Our checker already flattened every attribute; refuse any that slipped through.
        self.nodes.pop(ast.Attribute, None)
        self.nodes.pop(ast.Subscript, None)

    def _eval_sequence(self, node: ast.List | ast.Tuple) -> tuple[Any, ...]:
        return tuple(self._eval(elt) for elt in node.elts)

    def _eval_call(self, node: ast.Call) -> Any:
        return self._bounded.check_result(super()._eval_call(node))

    def run(self, expr: CompiledExpression, names: Mapping[str, Any]) -> Any:
        """Evaluate ``expr`` on ``names``; any failure is an :class:`EvaluationError`."""
        self.names = names
        self.expr = expr.text
        try:
            return self._eval(expr.tree)
        except Exception as exc:
            raise expr.failure(names, exc) from None
