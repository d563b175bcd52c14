"""``clm-policy lint``: every problem of a policy file, each from one documented check.

Checks live one per module in :mod:`clm_policy.lint.checks` (ID, level, docstring with a
passing and a failing example); :mod:`clm_policy.lint.runner` finds the files, loads each
policy collecting every problem, runs the checks and applies disable comments.
"""
