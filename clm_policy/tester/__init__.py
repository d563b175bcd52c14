"""``clm-policy test``: policy test files run against their policies, as data.

:mod:`.discover` finds ``*.test.yaml`` files; :mod:`.cases` reads and validates a test file
(through :mod:`clm_policy.formats.yamlio`, like every YAML file); :mod:`.runner` decides
every case and compares; :mod:`.results` and :mod:`.coverage` hold what a run produced.
Formatters live in :mod:`clm_policy.report` (``results_text``, ``results_json``, ``junit``); the
command in :mod:`clm_policy.cli.testing`.
"""
