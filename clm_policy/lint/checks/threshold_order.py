"""In every profile, after ``extends`` is merged, soft_compact must be below hard_handoff.

Otherwise the hard limit always fires first and the profile never compacts. Checked when both
are tokens, both are shares, or the profile declares its context window.

Passes::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}

Fails::

    version: 1
    extends: default
    profiles:
      coding: {soft_compact: 400000}
"""

from clm_policy.base.errors import LoadCheck
from clm_policy.lint.problem import ERROR

# Found while loading: policy.compile builds each profile
ID = LoadCheck.THRESHOLD_ORDER
LEVEL = ERROR
