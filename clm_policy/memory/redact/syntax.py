"""The pieces rules are built of: the Rule type, boundaries, keywords, assignments, values.

Every rule is a regular expression whose group ``secret`` is what gets replaced. The pieces
here are shared by the token rules (:mod:`.tokens`) and the key/value rules
(:mod:`.assignments`), so that a boundary — a JSON escape, an URL-encoded separator — means
the same in all of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from clm_policy.memory.redact.judge import is_placeholder, looks_secret


@dataclass(frozen=True)
class Rule:
    """One kind of secret.

    ``pattern`` finds a candidate; its group ``secret`` is what gets replaced, the rest of the
    match (a key name, quotes) stays. ``check``, if set, must accept the match. ``needles``: the
    rule can only match text containing one of them (a cheap pre-test). ``anchor``: for a
    case-insensitive pattern, a lower-case regex whose matches in the lower-cased text are the
    only places ``pattern`` can start (``re`` searches case-insensitively ~6x slower).
    """

    id: str
    pattern: re.Pattern[str]
    needles: tuple[str, ...] = ()
    check: Callable[[re.Match[str]], bool] | None = None
    anchor: re.Pattern[str] | None = None


# Escapes that end right before a token or key in JSON text (\n, \t, \u0022) or a URL (%20,
# %3D, %0A): their last character is a letter or digit, but the token after them stands alone.
# Each is its own fixed-width lookbehind (``re`` needs that), checked only where the lookbehind
# of an ordinary boundary failed. ``{0}`` is the text the lookbehinds end with.
ESCAPE_BEFORE = r"(?<=\\[nrtbf]{0})|(?<=%[0-9A-Fa-f]{{2}}{0})|(?<=\\u[0-9A-Fa-f]{{4}}{0})"
ESCAPED = ESCAPE_BEFORE.format("")

# The keyword begins a word or a camelCase hump (db_password, dbPassword; not oauth) or follows
# an escape (\npassword, %0Apassword), and ends a word (not tokenizer, author).
KEYWORD = (
    rf"(?:(?<![A-Za-z])|(?-i:(?<=[a-z])(?=[A-Z]))|{ESCAPED})"
    r"(?P<kw>pass(?:word|wd|phrase)|pwd|secret|token|api[_.-]?key|access[_.-]?key"
    r"|private[_.-]?key|auth(?:orization)?|credential)s?(?-i:(?![a-z]))"
)
# A space or tab, also URL-encoded.
BLANK = r"(?:[ \t]|%20|%09)"
# After the key: a closing quote (also %22, %27), then = : => := == or a Python annotation
# ": str =", or a URL-encoded = or : (%3D, %3A).
ASSIGN = rf"""(?:\\?["']|%2[27])?{BLANK}*+
    (?::[ \t]*[A-Za-z_][\w.|\[\], ]{{0,40}}?[ \t]*=(?!=)|==|=>|:=|=|:|%3[Dd]|%3[Aa])"""
# The hex digits of a URL-encoded delimiter: a bare value ends at one as it does at the
# character itself (%20 space, %26 &, %22 quote, %2C comma, %3B ;, %0A newline, %5C \, ...),
# and at %3D, the = of a query string encoded inside another.
ENCODED_STOP = r"(?:0[9A-Da-d]|2[026-9Cc]|3[B-Eb-e]|5[B-Db-d]|60|7[BDbd])"
# The value: quoted (to the matching quote; %22, %27 and %60 quote too) or bare (to a space or
# a delimiter, plain or URL-encoded; not a call).
VALUE = rf"""{BLANK}*+(?:(?P<q>\\?["'`])|(?P<e>%2[27]|%60))?
    (?P<secret>(?(q)[^"'`\s\\]++|(?(e)(?:[^"'`\s\\%]|%(?!{ENCODED_STOP}))++
    |(?:[^\s"'`,;&<>()\[\]{{}}\\%]|%(?!{ENCODED_STOP}))++)))
    (?(q)(?P=q)|(?(e)(?P=e)|(?![(\[{{])))"""
AWS_SECRET_NAME = r"(?:aws[_.-]?secret[_.-]?(?:access[_.-]?)?key|secret[_.-]?access[_.-]?key)"
AWS_SECRET_VALUE = r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"
KEYWORD_ANCHOR = re.compile("pass|pwd|secret|token|api|access|private|auth|credential")
KEY_NAME = re.compile(KEYWORD, re.IGNORECASE)
AWS_KEY_NAME = re.compile(AWS_SECRET_NAME, re.IGNORECASE)
AWS_SECRET = re.compile(AWS_SECRET_VALUE)
BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{16}")


def not_placeholder(m: re.Match[str]) -> bool:
    return not is_placeholder(m["secret"])


def random_value(m: re.Match[str]) -> bool:
    return looks_secret(m["secret"])


def has_key_body(m: re.Match[str]) -> bool:
    """A PEM header with base64 after it, not a header quoted in prose."""
    return BASE64_RUN.search(m["secret"]) is not None


def token(rule_id: str, pattern: str, *needles: str) -> Rule:
    return Rule(rule_id, re.compile(f"(?P<secret>{pattern})"), needles)


def bare(prefix: str, chars: str = r"A-Za-z0-9_-") -> str:
    """``prefix`` not preceded by a token character, unless that character ends an escape
    (``\\n``, ``%20``: see ``ESCAPE_BEFORE``). Lookbehinds after the literal, so the regex
    engine can still search for the literal quickly."""
    p = re.escape(prefix)
    return f"{p}(?:(?<![{chars}]{p})|{ESCAPE_BEFORE.format(p)})"
