"""``clm-policy test``: policy test files run against their policies, as data (formatted by
:mod:`clm_policy.report`, run by :mod:`clm_policy.cli.testing`)."""
