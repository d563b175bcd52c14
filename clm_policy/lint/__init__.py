"""``clm-policy lint``: every problem of a policy file, each from one documented check
(:mod:`clm_policy.lint.checks`); :mod:`clm_policy.lint.runner` runs them."""
