"""The file must match the policy schema (schemas/policy.schema.json).

Unknown keys (with a "did you mean"), wrong types, values out of range, a missing
``version``, a profile without thresholds, a rule without ``when`` or ``action`` after
``extends`` is merged, a ``default_profile`` naming no profile. Every such problem of the file
is reported, not only the first.

Passes::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}

Fails::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handof: 350000}
"""

from clm_policy.base.errors import LoadCheck
from clm_policy.lint.problem import ERROR

# Found while loading: formats.validate, then policy.load and .compile once `extends` is merged
ID = LoadCheck.SCHEMA
LEVEL = ERROR
