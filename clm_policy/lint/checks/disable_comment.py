"""A disable comment names a check that does not exist, or one that cannot be silenced.

A name no check has (``unused-signl``) silences nothing: the comment looks like it works
while the problem it was meant for is still reported, or is about to be. So does a comment
that starts like a disable comment but is not one (``# clm-lint disable unused-signal``,
``# clm-lint: disable-line ...``, ``# clm-policy: disable=...``, no check named). A problem found
while loading (``yaml-syntax``, ``schema``, ``extends``, ``duplicate-id``,
``expression-syntax``, ``unknown-name``, ``threshold-order``, ``policy-error``) cannot be
silenced: ``decide`` refuses such a file whatever a comment says, so the lint fails it too.

Passes::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}
    signals:
      spare: {type: int, default: 0}  # clm-lint disable-line unused-signal

Fails::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}
    signals:
      busy: {type: bool, default: false}  # clm-lint disable-line unused-signl
    rules:
      - {id: busy, when: signals.busy, action: compact}
"""

from clm_policy.lint.problem import WARNING

ID = "disable-comment"
LEVEL = WARNING
