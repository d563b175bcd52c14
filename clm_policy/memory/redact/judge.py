"""Whether a value is a secret: entropy, placeholders, names, paths.

A key/value rule (``password=...``) finds a value where a secret may stand; these functions
decide whether what stands there is one: random enough (Shannon entropy), and not a
reference, placeholder, name, URL or path.
"""

from __future__ import annotations

import math
import re
from collections import Counter

ENTROPY_THRESHOLD = 3.5
"""Bits per character from which a key/value secret counts as random."""
MIN_SECRET_LENGTH = 8
"""Shorter key/value secrets are left alone (``pwd=1234``)."""


def shannon_entropy(value: str) -> float:
    """Bits per character of ``value``'s character distribution (0.0 for ``""``)."""
    n = len(value)
    if not n:
        return 0.0
    # -sum(p * log2 p) with p = c / n, rearranged to one logarithm per distinct character
    return math.log2(n) - sum(c * math.log2(c) for c in Counter(value).values()) / n


# One word of a name: OPENAI, Api, getToken, key2 (camel humps need two lower-case letters, so
# a random mixed-case string is not a name).
_WORD = r"(?:[A-Z]+|[A-Z]?[a-z]+(?:[A-Z][a-z]{2,})*)[0-9]*"
_NOT_A_SECRET = re.compile(
    rf"""
      .*(?:\$\{{|\{{\{{|\[REDACTED:|\.\.\.|…)       # ${{VAR}}, {{{{ var }}}}, redacted, elided
    | [$%<]                                        # $VAR, %VAR%, <your-token>
    | \{{[^{{}}\s]*\}}$                              # a format field: {{password}}
    | (.)\1*$                                      # ********, xxxxxxxx
    | [A-Za-z][A-Za-z0-9+.-]*://                   # a URL (its password: url-password)
    | (?:~|\.{{1,2}})?/ | [A-Za-z]:[\\/]           # a path
    | [^@\s]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+$   # an e-mail address
    | {_WORD}(?:[_.:/-]{_WORD})+$                  # a name: OPENAI_API_KEY, settings.SECRET_KEY
    """,
    re.VERBOSE,
)
_MIXED_CASE_AND_DIGITS = re.compile(r"(?=.*?[a-z])(?=.*?[A-Z])(?=.*?[0-9])", re.DOTALL)


def is_placeholder(value: str) -> bool:
    """Whether ``value`` is a reference, placeholder, name, URL or path rather than a secret."""
    return _NOT_A_SECRET.match(value) is not None


def looks_secret(value: str) -> bool:
    """Whether a value assigned to a secret-sounding key is random enough to be a real secret."""
    n = len(value)
    if n < MIN_SECRET_LENGTH or is_placeholder(value):
        return False
    entropy = shannon_entropy(value)
    if entropy >= ENTROPY_THRESHOLD:
        return True
    # Entropy never exceeds log2(length), so a value under 12 characters cannot reach the
    # threshold: accept a short one whose characters are nearly all distinct and which mixes
    # lower case, upper case and digits, as generated passwords do and words do not.
    return entropy >= math.log2(n) - 0.3 and _MIXED_CASE_AND_DIGITS.match(value) is not None
