"""Expressions and message templates must parse and use only what the sandbox allows.

Syntax errors, and constructs refused at load: lambdas, comprehensions, subscripts, method
calls, calls to functions outside the allow-list, names starting with ``_``, unclosed ``{``
in a message, format specs outside the allowed set. Reported at the offending column; Python's
bare "invalid syntax" quotes what stands there (``at '>= 3'``, ``at the end of the expression``).

Passes::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}
    rules:
      - {id: big, when: "max(tokens.context, 0) >= profile.hard_handoff", action: handoff}

Fails::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}
    rules:
      - {id: big, when: "tokens.context >= >= profile.hard_handoff", action: handoff}
"""

from clm_policy.base.errors import LoadCheck
from clm_policy.lint.problem import ERROR

# Found while loading: policy.expr and .template compile every expression and message
ID = LoadCheck.EXPRESSION_SYNTAX
LEVEL = ERROR
