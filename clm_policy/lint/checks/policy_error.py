"""A problem found while loading that no other check names: reported here, never dropped.

Loading a policy (reading the YAML, the schema, ``extends``, the ids, the expressions, the
thresholds) finds most problems, and names the check each belongs to. A problem it finds
without naming a check listed here — none should, so treat one as a clm-policy bug worth
reporting — still fails the lint, at the place loading gave, with loading's own message. Like
every problem loading finds, it cannot be silenced (``decide`` refuses the file).
"""

from clm_policy.lint.problem import ERROR

ID = "policy-error"
LEVEL = ERROR
