"""``extends`` and the placement keys must resolve.

A missing or cyclic ``extends`` target; ``disable``, ``before`` or ``after`` naming an id no
inherited rule or guard has; ``before`` and ``after`` together; a disabled entry with other keys.

Passes::

    version: 1
    extends: default
    rules:
      - id: degradation
        before: soft_compact

Fails::

    version: 1
    extends: default
    rules:
      - id: degradaton
        disable: true
"""

from clm_policy.base.errors import LoadCheck
from clm_policy.lint.problem import ERROR

# Found while loading: policy.load resolves `extends` and the placement keys
ID = LoadCheck.EXTENDS
LEVEL = ERROR
