"""Whether a value is a secret: entropy, placeholders, names, paths.

A key/value rule (``password=...``) finds a value where a secret may stand; these functions
decide whether what stands there is one: random enough (Shannon entropy), and not a
reference, placeholder, name, URL or path.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from clm_policy.base.lazypattern import LazyPattern

ENTROPY_THRESHOLD = 3.5
"""Bits per character from which a key/value secret counts as random."""
MIN_SECRET_LENGTH = 8
"""Shorter key/value secrets are left alone (``pwd=1234``)."""


_XLOGX = tuple(c * math.log2(c) if c else 0.0 for c in range(256))
"""``c * log2(c)`` for the counts of short values, computed once (the same floats)."""


def _xlogx(c: int) -> float:
    return c * math.log2(c)


def shannon_entropy(value: str) -> float:
    """Bits per character of ``value``'s character distribution (0.0 for ``""``)."""
    n = len(value)
    if not n:
        return 0.0
    # -sum(p * log2 p) with p = c / n, rearranged to one logarithm per distinct character
    term = _XLOGX.__getitem__ if n < len(_XLOGX) else _xlogx
    return math.log2(n) - sum(map(term, Counter(value).values())) / n


# One word of a name: OPENAI, Api, getToken, key2 (camel humps need two lower-case letters, so
# a random mixed-case string is not a name).
_WORD = r"(?:[A-Z]+|[A-Z]?[a-z]+(?:[A-Z][a-z]{2,})*)[0-9]*"
_NOT_A_SECRET = LazyPattern(
    rf"""
      .*(?:\$\{{|\{{\{{|\[REDACTED:|\.\.\.|…          # ${{VAR}}, {{{{ var }}}}, redacted, elided
        |\{{[\w.]*\}}                                # a format field: {{password}}, f"ab{{key}}"
        |(?i:example|xxxx)|\*\*\*|•••               # AWS's ...EXAMPLEKEY, sk-xxxx, masked ****
        |(?i:123456|abcdef|qwerty)                  # a sequence typed, not generated
        |<[A-Za-z][\w .-]{{0,40}}>)                  # ghp_<your-token>, glpat-<token>
    | [$%<]                                        # $VAR, $(cmd), %VAR%, <your-token>
    | (.)\1*$                                      # ********, xxxxxxxx
    | [A-Za-z][A-Za-z0-9+.-]*://                   # a URL (its password: url-password)
    | (?:~|\.{{1,2}})?/ | [A-Za-z]:[\\/]           # a path
    | [^@\s]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+$   # an e-mail address
    | (?:[a-z0-9-]+\.)*[a-z0-9-]+:[0-9]{{1,5}}$      # host:port
    | arn:aws[a-z-]*:|projects/                    # a resource name: AWS ARN, GCP secret
    | _*{_WORD}(?:[_.:/-]+{_WORD})+(?:-[a-z0-9]{{1,10}})?:?$  # a name: OPENAI_API_KEY, self._key
    | (?:[A-Z]*+[a-z]{{2,}}+){{2,}}+[A-Z]*+[0-9]*+$     # an identifier: getToken, NSURLCredential
    """,
    re.VERBOSE,
)
# Words that defaults, placeholders and examples are made of (changeme, changeit, my_secret_123,
# P@ssw0rd): a value spelt only with them is not a generated secret.
_PLACEHOLDER_WORDS = frozenset(
    (
        "change", "changeme", "changeit", "replace", "replaceme", "me", "it", "my", "your", "our",
        "the", "this", "here", "insert", "enter", "put", "set", "fill", "in", "not", "no", "none",
        "null", "nil", "undefined", "empty", "blank", "default", "dummy", "fake", "test", "testing",
        "sample", "example", "demo", "placeholder", "redacted", "hidden", "masked", "secret",
        "secrets", "password", "passwords", "passwd", "pass", "pwd", "pw", "passphrase", "token",
        "tokens", "key", "keys", "api", "apikey", "access", "private", "auth", "cred", "creds",
        "credential", "credentials", "admin", "administrator", "root", "user", "username", "guest",
        "login", "qwerty", "letmein", "welcome", "hunter", "iloveyou", "monkey", "dragon", "master",
        "super", "top", "very", "real", "value", "todo", "fixme", "tbd", "foo", "bar", "baz", "qux",
        "local", "dev", "development", "prod", "production", "stage", "staging", "db", "database",
        "app", "new", "old", "temp", "tmp", "string", "yes", "abc", "xyz", "random",
    )
)  # fmt: skip
_LONGEST_WORD = max(map(len, _PLACEHOLDER_WORDS))
_WORD_STARTS = frozenset(word[:2] for word in _PLACEHOLDER_WORDS)
_MIXED_CASE_AND_DIGITS = LazyPattern(r"(?=.*?[a-z])(?=.*?[A-Z])(?=.*?[0-9])", re.DOTALL)
_LEET = str.maketrans("01345@$", "oieasas")
# string.digits + string.punctuation (importing string compiles a regular expression)
_AROUND = "0123456789!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
_NOT_A_LETTER = LazyPattern("[^a-z]+")


def spelt_with_placeholder_words(value: str, *, leet: bool = True) -> bool:
    """Whether ``value`` without the digits and punctuation around it, read as l33t, is mostly
    letters that spell placeholder words only (changeme123, ChangeMe123!, P@ssw0rd1).
    ``leet=False``: as written (``P@ssw0rd`` is no word then)."""
    letters = _placeholder_letters(value, leet)
    return letters is not None and _spelt(letters)


def _placeholder_letters(value: str, leet: bool) -> str | None:
    """The letters of ``value`` that :func:`spelt_with_placeholder_words` reads, or ``None``
    when there are too few or too many of them to spell placeholder words."""
    core = value.strip(_AROUND).lower()
    if leet:
        core = core.translate(_LEET)
    letters = _NOT_A_LETTER.sub("", core)
    if not 4 <= len(letters) <= 40 or 2 * len(letters) < len(value):
        return None
    return letters


def _spelt(letters: str) -> bool:
    """Whether ``letters`` are placeholder words, one after another."""
    if letters[:2] not in _WORD_STARTS:  # most random values stop here
        return False
    starts, seen = [0], {0}  # ends of the runs of words found so far
    while starts:
        start = starts.pop()
        for end in range(start + 2, min(len(letters), start + _LONGEST_WORD) + 1):
            if end not in seen and letters[start:end] in _PLACEHOLDER_WORDS:
                if end == len(letters):
                    return True
                seen.add(end)
                starts.append(end)
    return False


def is_placeholder(value: str) -> bool:
    """Whether ``value`` is a reference, placeholder, example, name, URL or path rather than a
    secret."""
    return _NOT_A_SECRET.match(value) is not None or spelt_with_placeholder_words(value)


def _random_enough(value: str) -> bool:
    n = len(value)
    entropy = shannon_entropy(value)
    if entropy >= ENTROPY_THRESHOLD:
        return True
    # Entropy never exceeds log2(length), so a value under 12 characters cannot reach the
    # threshold: accept a short one whose characters are nearly all distinct and which mixes
    # lower case, upper case and digits, as generated passwords do and words do not.
    return entropy >= math.log2(n) - 0.3 and _MIXED_CASE_AND_DIGITS.match(value) is not None


def looks_secret(value: str) -> bool:
    """Whether a value assigned to a secret-sounding key is random enough to be a real secret."""
    # the cheaper tests first: most values a rule finds are not random
    return (
        len(value) >= MIN_SECRET_LENGTH
        and _random_enough(value)
        and _NOT_A_SECRET.match(value) is None
        and not spelt_with_placeholder_words(value)
        and not _base64_of_prose(value)
    )


_BASE64 = LazyPattern(r"(?:[A-Za-z0-9+/]{4})+(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")


def _base64_of_prose(value: str) -> bool:
    """Whether ``value`` is base64 of a sentence (``auth_banner: V2VsY29tZSB0byB0aGU…``): its
    characters look random, but what it encodes is words with spaces between them, which a
    generated secret never is. (Base64 of ``user:password`` has no spaces: it stays a secret.)"""
    if len(value) < 16 or _BASE64.fullmatch(value) is None:
        return False
    import base64  # here: few values get this far

    try:
        text = base64.b64decode(value, validate=True).decode("ascii")
    except (ValueError, UnicodeDecodeError):
        return False
    words = text.split()
    return len(words) >= 3 and text.isprintable() and sum(map(str.isalpha, words)) * 2 >= len(words)


def looks_credential(value: str) -> bool:
    """Whether a value where only a credential can stand (the password of ``curl -u``, what
    follows the scheme in an ``Authorization`` header) is one: random-looking, or at least 8
    characters that are not a placeholder and not a plain word (``mango2024!`` is; ``required``
    and ``changeme1`` are not). Base64 padding does not count."""
    core = value.rstrip("=")
    if len(core) < MIN_SECRET_LENGTH or is_placeholder(core):
        return False
    return not core.isalpha() or looks_secret(core)


# Shell expansions: $NAME, ${...}, $(...), $1, $@ — a value made only of them is a reference.
_EXPANSIONS = LazyPattern(r"(?:\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[^{}]*\}|\([^()]*\)|[0-9@*#?$!-]))+")


MIN_PASSWORD_LENGTH = 6
"""Shorter values where only a password can stand are left alone (``-p1234``, ``pw: abc``)."""
_NOT_A_PASSWORD = LazyPattern(
    r"""
      .*(?:\$\{|\{\{|\[REDACTED:|\.\.\.|…|(?i:example|xxxx)|\*\*\*|•••|(?i:123456|abcdef|qwerty)
        |(.)\1{7})                                 # 00000000: a mask, or a template's fill
    | [<\[].*[>\]]$                              # <password>, [PASSWORD], [value]
    | \{(?:[A-Za-z_][A-Za-z_.]*[0-9]*|[0-9]*)\}$  # {password}, {0}: a format field
    | (.)\2*$                                    # ********, xxxxxxxx
    | [A-Za-z][A-Za-z0-9+.-]*://                 # a URL
    | (?:~|\.{1,2})?/                            # a path
    | %[A-Za-z_]+%$                              # %PASSWORD%
    """,
    re.VERBOSE,
)


def looks_password(value: str) -> bool:
    """Whether a value where only a password can stand — a tool's password variable
    (``PGPASSWORD=``), option (``mysql -p…``, ``sshpass -p``) or a sentence that names it
    (``the password is …``) — is one. A person types these, so they need not look random:
    6 characters or more that are not a shell expansion or template (``$PW``, ``${{ x }}``),
    a placeholder (``<password>``, ``[value]``, ``********``, ``example``), a URL or a path, a
    plain word (``postgres``, ``required``: letters only count when random), a number under
    10 digits, or placeholder words as written (:func:`typed_default`: ``changeme``,
    ``Password1``; ``MyPass99`` and ``P@ssw0rd$1`` are passwords)."""
    if len(value) < MIN_PASSWORD_LENGTH or _EXPANSIONS.fullmatch(value) is not None:
        return False
    if _NOT_A_PASSWORD.match(value) is not None:
        return False
    if value.isalpha():
        return looks_secret(value)
    if value.isdigit():
        return len(value) >= 10
    return not typed_default(value)


# Words that make a value a template's or a document's, not a person's: your_password_here,
# changeme_123, test-pass-1, dummy_secret_99.
_TEMPLATE_WORDS = (
    "change", "replace", "your", "here", "insert", "enter", "fill", "default", "dummy", "fake",
    "test", "sample", "example", "demo", "placeholder", "redacted", "todo", "fixme", "none",
    "null", "empty", "blank", "value", "string", "random", "foo", "bar", "baz",
)  # fmt: skip


def typed_default(value: str) -> bool:
    """Whether ``value``, where only a password can stand, is a default or a template's, as
    written: placeholder words alone (``changeme``, ``mysecretpassword``: no digit), one such
    word and digits or symbols (``Password1``, ``changeme123``, ``hunter2``), or words one of
    which only templates use (``your_password_1``, ``test_pass_1``). Two or more words with a
    digit (``MyPass99``, ``hunter2secret``) are a person's password: people build them so."""
    letters = _placeholder_letters(value, False)
    if letters is None or not _spelt(letters):
        return False
    if letters in _PLACEHOLDER_WORDS or not any(c.isdigit() for c in value):
        return True
    return any(word in letters for word in _TEMPLATE_WORDS)


_ANGLE_PLACEHOLDER = LazyPattern(r"<[A-Za-z][\w .-]{0,40}>")


def glued_to_placeholder(text: str, end: int) -> bool:
    """Whether an ``<angle placeholder>`` follows at ``end``: the value before it is the fixed
    part of a template (``pypi-AgEIcHlwaS5vcmc<token>``, ``sk_live_<key>``), not a secret."""
    return _ANGLE_PLACEHOLDER.match(text, end) is not None
