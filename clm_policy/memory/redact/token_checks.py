"""Whether a token's random part is random: entropy per format, and no placeholder shape.

The rules in :mod:`.tokens` capture the random part after a provider's prefix in the group
``body``; the checks here judge it: it must look generated, or the match is a placeholder from
documentation or a masked token (``ghp_xxxxxxxx…``, ``AKIAIOSFODNN7EXAMPLE``,
``0123456789abcdef…``) and is left alone. The thresholds are per format
(:data:`~clm_policy.memory.redact.tokens.HEX_FLOOR`; docs/redaction.md, "Token rules: what
counts").

Every check reads each character a bounded number of times: the scan stays linear.
"""

from __future__ import annotations

import re
from operator import eq

from clm_policy.base.lazypattern import LazyPattern
from clm_policy.memory.redact.judge import shannon_entropy, spelt_with_placeholder_words

TYPE_CHECKING = False
if TYPE_CHECKING:  # no typing at run time: the hooks import the redactor
    from collections.abc import Callable

    Check = Callable[[re.Match[str]], bool]

# The shapes below are rare enough in random text to cost next to nothing: the chance that a
# random 36-character alphanumeric body has any of them is below one in ten million.
MAX_PERIOD = 32
"""A body that repeats a pattern of up to this many characters (and at most half its length)
is a placeholder: ``deadbeef…``, or a prefix pasted over and over (``pypi-AgEIcHlwaS5vcmc`` is
20 long)."""
_RUN = LazyPattern(r"(.)\1{7}", re.DOTALL)  # one character 8 times: a mask, 00000000
_MASK = LazyPattern("x{5}|X{5}")  # xxxxx: docs mask a token with x (4 x's: 1 in 220,000 real)
# Words joined by - _ . ~ (your-token-here, YOUR_API_KEY): each word lower case, upper case or
# capitalised, so that random text, which mixes cases inside a word, does not qualify; and at
# most 16 long, so that a body in lower case only, in parts (github_pat_<22>_<59>), does not.
_WORD = r"(?:[a-z]{2,16}+|[A-Z]{2,16}+|[A-Z][a-z]{1,15}+|[0-9]{1,16}+)"
_NAME = LazyPattern(rf"[-_.~]*+{_WORD}(?:[-_.~]++{_WORD})++[-_.~]*+")
_LETTER = LazyPattern("[A-Za-z]")
# Three or more capitalised words run together (SlackAppConfigurationAccessTokenHere): a name
# someone wrote where the token goes; random text almost never capitalises so.
_CAMEL_WORDS = LazyPattern("(?:[A-Z][a-z]{2,}){3,}")


def _periodic(part: str) -> bool:
    """``abcabcabc…``, ``deadbeefdeadbeef…``: a short pattern repeated over the whole part."""
    n = len(part)
    if n < 8:
        return any(part[p:] == part[:-p] for p in range(1, n // 2 + 1))
    # A period p puts the first 4 characters again at p: only those places are tried.
    head, last = part[:4], min(MAX_PERIOD, n // 2)
    p = part.find(head, 1, last + 4)
    while 0 < p <= last:
        if part[p:] == part[:-p]:
            return True
        p = part.find(head, p + 1, last + 4)
    return False


# str.translate tables: each ASCII character to the next one, or to the one before (the parts
# judged here are ASCII: the patterns' alphabets).
_NEXT = {c: c + 1 for c in range(127)}
_PREVIOUS = {c: c - 1 for c in range(1, 128)}


def _sequential(part: str) -> bool:
    """``123456789…``, ``abcdefgh…``, ``zyxw…``: at least half the steps go up, or down, by one."""
    low = part.lower()
    steps = len(low) - 1
    if steps < 1:
        return False
    ups: int = sum(map(eq, low[:-1].translate(_NEXT), low[1:]))
    downs: int = sum(map(eq, low[:-1].translate(_PREVIOUS), low[1:]))
    return 2 * max(ups, downs) >= steps


def _stuttering(part: str) -> bool:
    """``aaaaabbbbbccccc…``: half its steps or more (and 8 or more) repeat the character before."""
    repeats: int = sum(map(eq, part[:-1], part[1:]))
    return repeats >= 8 and 2 * repeats >= len(part) - 1


def placeholder_shape(part: str, *, counting: bool = True) -> bool:
    """Whether ``part`` is shaped like a placeholder rather than generated (the tests below, in
    order; letters only spelt with placeholder words, ``yoursecretkeyhere``, read as l33t: a
    random 10-digit hex body spells ``db`` + ``abc`` once in 100,000). ``counting=False``
    leaves out counting up or down (:func:`exact_body`)."""
    return (
        "example" in part.lower()
        or _RUN.search(part) is not None
        or _MASK.search(part) is not None
        or _periodic(part)
        or (counting and _sequential(part))
        or _stuttering(part)
        or _NAME.fullmatch(part) is not None
        or _CAMEL_WORDS.fullmatch(part) is not None
        or (part.isalpha() and spelt_with_placeholder_words(part))
    )


# A token's prefix (npm_, sk_test_, sk-): what follows it is judged as a token's body is.
TOKEN_PREFIX = LazyPattern(r"(?:[a-z]{2,8}[_-])+")


def placeholder_token(value: str) -> bool:
    """Whether a value a person may have typed is shaped like a name or a placeholder, whole
    or after a token's prefix (``npm_deadbeefdeadbeef…``, ``sk_test_yoursecretkeyhere``: a
    token rule left it alone)."""
    prefix = TOKEN_PREFIX.match(value)
    body = value if prefix is None else value[prefix.end() :]
    return placeholder_shape(value) or (body != value and placeholder_shape(body))


def is_random(part: str, min_entropy: float) -> bool:
    """Whether ``part`` has at least ``min_entropy`` bits per character and no placeholder
    shape."""
    return shannon_entropy(part) >= min_entropy and not placeholder_shape(part)


def random_body(min_entropy: float, *groups: str) -> Check:
    """A check accepting a match whose random part — the first of ``groups`` (default
    ``body``) that took part in the match — is random (:func:`is_random`)."""
    names = groups or ("body",)

    def check(m: re.Match[str]) -> bool:
        part = next((m[g] for g in names if m[g] is not None), "")
        return is_random(part, min_entropy)

    return check


def exact_body(min_entropy: float, length: int) -> Check:
    """A check for a format whose whole shape is fixed (Anthropic's keys: a prefix, exactly
    93 characters and ``AA``, or an OAuth token's 95): a body of that shape is judged without the
    counting test — a scanner's own example keys count up (``abc123xyz-456def789ghij-…``),
    and nothing but a key or a test of one is written in that exact shape. Any other length
    is judged as :func:`random_body` judges it."""

    def check(m: re.Match[str]) -> bool:
        body = m["body"]
        # the whole shape: "AA" closes an API or admin key; an OAuth token (oat) has none
        whole = len(body) == length and (body.endswith("AA") or "-oat" in m["secret"][:12])
        return shannon_entropy(body) >= min_entropy and not placeholder_shape(
            body, counting=not whole
        )

    return check


SLACK_MIN_ENTROPY = 2.5
"""The secret part of a Slack token or webhook URL: 24 letters and digits or 32+ hex digits."""


def slack_token(m: re.Match[str]) -> bool:
    """A Slack token's secret is its last ``-`` part (``xoxb-<team>-<bot>-<secret>``): the
    numeric ids before it may be anything but one id written again and again
    (``xoxp-1234-1234-1234-…``, a placeholder); the secret must hold a letter and be random."""
    parts = m["secret"].split("-")
    ids = [part for part in parts[1:-1] if part.isdigit()]
    if len(ids) >= 2 and len(set(ids)) == 1:
        return False
    secret = parts[-1]
    return _LETTER.search(secret) is not None and is_random(secret, SLACK_MIN_ENTROPY)


def slack_webhook(m: re.Match[str]) -> bool:
    """A webhook URL's secret is its last path segment (``…/T…/B…/<secret>``)."""
    secret = m["secret"].rstrip("/").rsplit("/", 1)[-1]
    return _LETTER.search(secret) is not None and is_random(secret, SLACK_MIN_ENTROPY)


JWT_MIN_ENTROPY = 2.5
"""Claims and signature together: base64 of JSON and of a digest, 4.5 bits or more when
signed; an unsigned token with short claims (``{"sub":"1"}``) has about 3."""


def jwt(m: re.Match[str]) -> bool:
    """No part of the token is a placeholder shape, and its claims and signature, together,
    are random enough (an unsigned token, with no signature or without its last dot, still
    counts)."""
    sig = m["sig"] or ""
    parts = [m["head"], m["body"], sig]
    if any(placeholder_shape(p) for p in parts if p):
        return False
    return shannon_entropy(m["body"] + sig) >= JWT_MIN_ENTROPY


def uuid_body(min_entropy: float) -> Check:
    """A check accepting a UUID (group ``body``) whose hex digits are random."""

    def check(m: re.Match[str]) -> bool:
        return is_random(m["body"].replace("-", ""), min_entropy)

    return check
