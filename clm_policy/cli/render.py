"""Text rendering of decisions and explanations: it lives in :mod:`clm_policy.report.explain`
(the test report renders explanations too, and formatters never import the CLI)."""

from clm_policy.report.explain import render_decision, render_explanation

__all__ = ["render_decision", "render_explanation"]
