"""The pieces rules are built of: the Rule type, boundaries, keywords, key names, assignments,
values.

Every rule is a regular expression whose group ``secret`` is what gets replaced. The pieces
here are shared by the token rules (:mod:`.tokens`) and the key/value rules
(:mod:`.assignments`), so that a boundary — a JSON escape, an URL-encoded separator — means
the same in all of them.
"""

from __future__ import annotations

import re
from functools import cache

from clm_policy.base.lazypattern import LazyPattern
from clm_policy.memory.redact.judge import is_placeholder, looks_credential

TYPE_CHECKING = False
if TYPE_CHECKING:  # no typing at run time: the hooks import the redactor
    from collections.abc import Callable


class Rule:
    """One kind of secret.

    ``pattern`` (``source`` compiled with ``flags``) finds a candidate; its group ``secret`` is
    what gets replaced, the rest of the match (a key name, quotes) stays. ``check``, if set,
    must accept the match. ``needles``: the rule can only match text containing one of them (a
    cheap pre-test). ``anchor``: for a case-insensitive pattern, a lower-case regex whose
    matches in the lower-cased text are the only places ``pattern`` can start (``re`` searches
    case-insensitively several times slower) — or, with ``start``, the places from which
    ``start(text, at)`` finds where it can start, a few characters before (a keyword found
    fast, the words of the name it ends read back). ``cased``: the anchor is searched in the
    text as it is (upper-case variable names: ``PGPASSWORD``, not every ``password``); such a
    rule's pre-test is its needles, which it must have.

    ``pattern`` and ``anchor`` are compiled the first time they are needed (``pattern``: when a
    text passes the pre-test or the anchor): a commit's texts meet few of them. A plain class,
    not a dataclass: the hooks import the redactor (docs/architecture.md, the hot path).
    """

    __slots__ = (
        "_pattern",
        "anchor",
        "cased",
        "check",
        "id",
        "needles",
        "source",
        "start",
    )

    def __init__(
        self,
        rule_id: str,
        source: str,
        needles: tuple[str, ...] = (),
        check: Callable[[re.Match[str]], bool] | None = None,
        anchor: str | None = None,
        flags: int = 0,
        start: Callable[[str, int], int] | None = None,
        cased: bool = False,
    ) -> None:
        if cased and not needles:
            raise ValueError(f"{rule_id}: an anchor searched as written needs needles")
        self.id = rule_id
        self.source = source
        self.needles = needles
        self.check = check
        self.anchor = None if anchor is None else LazyPattern(anchor)
        self.start = start
        self.cased = cased
        self._pattern = LazyPattern(source, flags)

    @property
    def pattern(self) -> re.Pattern[str]:
        return self._pattern.compiled

    @property
    def compiled(self) -> bool:
        """Whether ``pattern`` has been compiled yet."""
        return self._pattern.ready

    def __repr__(self) -> str:
        return f"Rule({self.id!r}, {self.source[:40]!r}…)"


# Escapes that end right before a token or key in JSON text (\n, \t, \u0022) or a URL (%20,
# %3D, %0A): their last character is a letter or digit, but the token after them stands alone.
# Each is its own fixed-width lookbehind (``re`` needs that), checked only where the lookbehind
# of an ordinary boundary failed. ``{0}`` is the text the lookbehinds end with.
ESCAPE_BEFORE = r"(?<=\\[nrtbf]{0})|(?<=%[0-9A-Fa-f]{{2}}{0})|(?<=\\u[0-9A-Fa-f]{{4}}{0})"
ESCAPED = ESCAPE_BEFORE.format("")

# The keyword begins a word or a camelCase hump (db_password, dbPassword; not oauth) or follows
# an escape (\npassword, %0Apassword), and ends a word (not tokenizer, author). An anti-forgery
# token (csrf_token, X-XSRF-TOKEN, authenticity_token, __RequestVerificationToken) is no
# credential: it is worthless without the session it belongs to, and forms show it to everyone.
# Nor is a page cursor (NextToken, next_page_token, pageToken): it only says where a list goes on,
# nor a token a key calls public (publicToken: what a client may show). "pass" alone is a
# password's key too (db_pass, --pass).
KEYWORD = (
    rf"(?:(?<![A-Za-z])|(?-i:(?<=[a-z])(?=[A-Z]))|{ESCAPED})"
    r"(?P<kw>pass(?:word|wd|phrase)?|pwd|secret"
    r"|(?<![cx]srf)(?<![cx]srf[_.-])(?<!authenticity[_.-])(?<!verification)"
    r"(?<!page)(?<!page[_.-])(?<!next)(?<!next[_.-])(?<!public)(?<!public[_.-])token"
    r"|api[_.-]?key|access[_.-]?key|private[_.-]?key|auth(?:orization)?|cred(?:ential)?)"
    r"s?(?-i:(?![a-z]))"
)
# A space or tab, also URL-encoded.
BLANK = r"(?:[ \t]|%20|%09)"
# The end of a key: its closing quote (also %22, %27) and the bracket of a subscript or an array
# (os.environ["API_KEY"], ENV['TOKEN'], $cfg['password'], char password[]).
KEY_END = r"""(?:\\?["']|%2[27])?(?:\]|\[[0-9]{0,4}\])?"""
# After the key: = : => == or an update (:= ::= :::= ?= += .= ||= ??=, shell, Go, Makefiles,
# PHP, Ruby, JS), a type annotation (password: str = ..., apiKey: string = ...) or a Go type
# (var apiToken string = ...), or a URL-encoded = or : (%3D, %3A). An annotation's = has a
# blank or a quote beside it, so a YAML value holding "=" (password: abc=def) stays whole.
ASSIGN = rf"""{KEY_END}{BLANK}*+
    (?::[ \t]*[&*A-Za-z_][\w.|\[\], ]{{0,40}}?(?:[ \t]+=(?!=)|=(?=[ \t]|\\?["'`]))
    |(?<=[ \t])(?:\[\]|\*){{0,4}}+[A-Za-z_][\w.]{{0,40}}+[ \t]++=(?!=)
    |:::?=|::=|:=|[?+.]=|\|\|=|\?\?=|==|=>|=|:|%3[Dd]|%3[Aa])"""
# The hex digits of a URL-encoded delimiter: a bare value ends at one as it does at the
# character itself (%20 space, %26 &, %22 quote, %2C comma, %3B ;, %0A newline, %5C \, ...),
# and at %3D, the = of a query string encoded inside another.
ENCODED_STOP = r"(?:0[9A-Da-d]|2[026-9Cc]|3[B-Eb-e]|5[B-Db-d]|60|7[BDbd])"
# The value: quoted (to the matching quote; %22, %27 and %60 quote too; a string prefix r"", b"",
# f"" or C#'s @"" is allowed) or bare (to a space or a delimiter, plain or URL-encoded). Whether
# a bare value is a call (get_token(request)) is the check's to decide (assignments.is_code): a
# regex that refused it here would fail only after reading it, and the next key inside it
# would read it again (``password=`` * n + ``(`` took quadratic time).
VALUE = rf"""{BLANK}*+(?:(?:[rRbBuUfF]{{1,2}}|@)?(?P<q>\\?["'`])|(?P<e>%2[27]|%60))?
    (?P<secret>(?(q)[^"'`\s\\]++|(?(e)(?:[^"'`\s\\%]|%(?!{ENCODED_STOP}))++
    |(?:[^\s"'`,;&<>()\[\]{{}}\\%]|%(?!{ENCODED_STOP}))++)))
    (?(q)(?P=q)|(?(e)(?P=e)))"""
AWS_SECRET_NAME = r"(?:aws[_.-]?secret[_.-]?(?:access[_.-]?)?key|secret[_.-]?access[_.-]?key)"
AWS_SECRET_VALUE = r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"
KEYWORD_ANCHOR = "pass|pwd|secret|token|api|access|private|auth|cred"

# A key whose last word is one of these names, locates or describes a secret rather than holding
# it: credentialsId (a Jenkins credential's id), secretName, secret_arn, password_file,
# api_key_env, token_url, token_type, password_min_length. Vault's secret_id is a secret.
REFERENCE_WORDS = (
    "id", "ids", "name", "names", "arn", "ref", "path", "file", "filename", "dir", "env",
    "var", "variable", "url", "uri", "endpoint", "host", "server", "port", "domain", "issuer",
    "audience", "realm", "user", "username", "email", "type", "kind", "mode", "method",
    "format", "algorithm", "scheme", "scope", "scopes", "provider", "store", "helper",
    "command", "cmd", "length", "len", "min", "max", "size", "count", "expiry", "expires",
    "expiration", "ttl", "timeout", "version", "field", "header", "param", "prefix", "suffix",
    "label", "description", "hint", "help", "placeholder", "policy", "required", "enabled",
    "keyword", "keywords", "pattern", "regex", "regexp", "re",
)  # fmt: skip


def _ends_in(words: tuple[str, ...]) -> str:
    """Lookbehinds (one per word length: ``re`` needs a fixed width) true where a key ends in
    one of ``words`` as a word of its own: after ``_``, ``.`` or ``-``, or as a camelCase hump."""
    by_length: dict[int, list[str]] = {}
    for word in words:
        by_length.setdefault(len(word), []).append(word)
    ends = []
    for group in by_length.values():
        lower = "|".join(group)
        humps = "|".join(f"{w.capitalize()}|{w.upper()}" for w in group)
        ends.append(f"(?<=[_.-](?:{lower}))|(?-i:(?<=[a-z0-9](?:{humps})))")
    return "|".join(ends)


# Where a key ends in a reference word (see REFERENCE_WORDS), secret_id excepted.
REFERENCE_END = rf"(?:(?!(?<=secret[_.-]id)|(?<=secretid))(?:{_ends_in(REFERENCE_WORDS)}))"


@cache
def reference_key() -> re.Pattern[str]:
    """Matches (``.match(text, pos)``) where a key ending at ``pos`` names a reference.
    Compiled when a key/value candidate is first judged (most commits have none)."""
    return re.compile(REFERENCE_END, re.IGNORECASE)


KEY_NAME = LazyPattern(
    rf"{KEYWORD}[A-Za-z0-9_.-]{{0,40}}+(?!{REFERENCE_END}(?![A-Za-z0-9_.-]))", re.IGNORECASE
)
"""A dict key naming a secret: ``dbPassword``, ``X-Api-Key``; not ``credentialsId``."""
AWS_KEY_NAME = LazyPattern(AWS_SECRET_NAME, re.IGNORECASE)
# AWS's documentation uses one example secret (wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY).
AWS_SECRET = LazyPattern(rf"(?!.*EXAMPLE){AWS_SECRET_VALUE}", re.DOTALL)
BASE64_RUN = LazyPattern(r"[A-Za-z0-9+/]{16}")


COMMAND_LOOKBACK = 500
"""How far back (on the same command line) a command makes an option its own."""


def after_command(text: str, start: int, words: tuple[str, ...]) -> bool:
    """Whether one of ``words`` (a command: ``curl``, ``mysql``) stands before ``start`` on
    the same command line: on its line, or on the lines before it that end in a backslash
    (``curl … \\`` ⏎ ``  -u user:…``), within :data:`COMMAND_LOOKBACK` characters."""
    window = max(0, start - COMMAND_LOOKBACK)
    line = text.rfind("\n", window, start) + 1
    while line > window and text[max(window, line - 3) : line - 1].rstrip("\r").endswith("\\"):
        line = text.rfind("\n", window, line - 1) + 1
    begin = max(line, window)
    return any(text.rfind(word, begin, start) >= 0 for word in words)


def not_placeholder(m: re.Match[str]) -> bool:
    return not is_placeholder(m["secret"])


def credential_value(m: re.Match[str]) -> bool:
    return looks_credential(m["secret"])


def has_key_body(m: re.Match[str]) -> bool:
    """A PEM header with base64 after it, not a header quoted in prose."""
    return BASE64_RUN.search(m["secret"]) is not None


def bare(prefix: str, chars: str = r"A-Za-z0-9_-") -> str:
    """``prefix`` not preceded by a token character, unless that character ends an escape
    (``\\n``, ``%20``: see ``ESCAPE_BEFORE``). Lookbehinds after the literal, so the regex
    engine can still search for the literal quickly."""
    p = re.escape(prefix)
    return f"{p}(?:(?<![{chars}]{p})|{ESCAPE_BEFORE.format(p)})"
