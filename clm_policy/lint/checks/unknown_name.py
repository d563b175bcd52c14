"""Every name an expression reads must exist, with a "did you mean" when one is close.

Names are the state's (``tokens.context``, ``status``, ...), the profile's
(``profile.soft_compact``, ...) and the declared signals (``signals.<name>``); see
docs/policy.md. An undeclared signal is reported with a reminder to declare it.

Passes::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}
    rules:
      - {id: big, when: tokens.context >= profile.hard_handoff, action: handoff}

Fails::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}
    rules:
      - {id: big, when: tokens.contxt >= profile.hard_handoff, action: handoff}
"""

from clm_policy.base.errors import LoadCheck
from clm_policy.lint.problem import ERROR

# Found while loading: policy.expr resolves every name at compile time
ID = LoadCheck.UNKNOWN_NAME
LEVEL = ERROR
