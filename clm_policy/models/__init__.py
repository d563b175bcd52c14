"""The documents clm-policy reads and writes: the state a decision reads, the decision and its
explain trace, the handoff manifest (plain classes generated from their declarations in
:mod:`clm_policy.models.shapes`), and the files people write (policy, policy tests,
scenarios, experiments: pydantic, read at the edge).

Importing this package loads nothing else, so that :mod:`clm_policy.models.enums` (which the
fast ``decide`` path needs) comes alone; the public names are :mod:`clm_policy`'s.
"""
