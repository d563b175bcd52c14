"""Rule ids, and guard ids per action, must be unique within a file.

A second entry with the same id would silently replace the first; to override an inherited
entry, give its id in the extending file instead.

Passes::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}
    rules:
      - {id: big, when: tokens.context > 300000, action: handoff}
      - {id: busy, when: message_count > 500, action: compact}

Fails::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}
    rules:
      - {id: big, when: tokens.context > 300000, action: handoff}
      - {id: big, when: message_count > 500, action: compact}
"""

from clm_policy.base.errors import LoadCheck
from clm_policy.lint.problem import ERROR

# Found while loading: policy.load merges rules and guards by id
ID = LoadCheck.DUPLICATE_ID
LEVEL = ERROR
