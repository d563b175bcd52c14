"""The file must be well-formed YAML, without duplicate keys.

Reported where the parser stopped, with where the mapping, list or quoted string it was
reading starts when that is on another line, and what was likely meant: a key indented unlike
the ones above it, a value holding a colon and a space, or starting with ``{``, that needs
quotes, an expression that starts with a quote, a quote never closed, a tab. Nothing else can
be checked in a file that does not parse.
A file that cannot be read as a policy is reported here too: larger than 1 MiB, binary (a NUL
byte), not UTF-8, or nested more than 64 levels deep.

Passes::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}

Fails::

    version: 1
    profiles:
      coding: {soft_compact: 250000, hard_handoff: 350000}
      coding: {soft_compact: 200000, hard_handoff: 300000}
"""

from clm_policy.base.errors import LoadCheck
from clm_policy.lint.problem import ERROR

# Found while loading: formats.yamlio refuses such a file (nothing could be found past it)
ID = LoadCheck.YAML_SYNTAX
LEVEL = ERROR
