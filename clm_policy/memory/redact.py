"""Secrets out of text and plain data, before anything is hashed into git.

Agent memory (Markdown, JSON manifests, JSONL logs) is committed to git, and a secret that
reaches a git object stays in the history for good. So everything the memory store writes goes
through :func:`redact_text` or :func:`redact_data` first -- or through one :class:`Redactor` per
commit, whose total becomes the ``Clm-Redactions`` trailer. Each secret found is replaced by
``[REDACTED:<rule-id>]``; redacting redacted text changes nothing.

Token rules (AWS, GitHub, OpenAI, Anthropic, Slack, GCP, JWT, private keys) replace the whole
token. Key/value rules (``password=...``, ``Authorization: Bearer ...``, a password in a URL)
keep the key and replace only the value, and the generic rule redacts a value only when it looks
random (Shannon entropy), so ``password: changeme`` and ``api_key_env = "OPENAI_API_KEY"``
are left alone.

The rules are modelled on the token formats documented by gitleaks
(https://github.com/gitleaks/gitleaks, MIT License, Copyright (c) 2019 Zachary Rice); the
regular expressions here are our own. docs/redaction.md lists the rules, what is not redacted,
and the limits: no detector is complete, so a key that reached an agent is rotated anyway.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

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
_ESCAPE_BEFORE = r"(?<=\\[nrtbf]{0})|(?<=%[0-9A-Fa-f]{{2}}{0})|(?<=\\u[0-9A-Fa-f]{{4}}{0})"
_ESCAPED = _ESCAPE_BEFORE.format("")

# The keyword begins a word or a camelCase hump (db_password, dbPassword; not oauth) or follows
# an escape (\npassword, %0Apassword), and ends a word (not tokenizer, author).
_KEYWORD = (
    rf"(?:(?<![A-Za-z])|(?-i:(?<=[a-z])(?=[A-Z]))|{_ESCAPED})"
    r"(?P<kw>pass(?:word|wd|phrase)|pwd|secret|token|api[_.-]?key|access[_.-]?key"
    r"|private[_.-]?key|auth(?:orization)?|credential)s?(?-i:(?![a-z]))"
)
# A space or tab, also URL-encoded.
_BLANK = r"(?:[ \t]|%20|%09)"
# After the key: a closing quote (also %22, %27), then = : => := == or a Python annotation
# ": str =", or a URL-encoded = or : (%3D, %3A).
_ASSIGN = rf"""(?:\\?["']|%2[27])?{_BLANK}*+
    (?::[ \t]*[A-Za-z_][\w.|\[\], ]{{0,40}}?[ \t]*=(?!=)|==|=>|:=|=|:|%3[Dd]|%3[Aa])"""
# The hex digits of a URL-encoded delimiter: a bare value ends at one as it does at the
# character itself (%20 space, %26 &, %22 quote, %2C comma, %3B ;, %0A newline, %5C \, ...),
# and at %3D, the = of a query string encoded inside another.
_ENCODED_STOP = r"(?:0[9A-Da-d]|2[026-9Cc]|3[B-Eb-e]|5[B-Db-d]|60|7[BDbd])"
# The value: quoted (to the matching quote; %22, %27 and %60 quote too) or bare (to a space or
# a delimiter, plain or URL-encoded; not a call).
_VALUE = rf"""{_BLANK}*+(?:(?P<q>\\?["'`])|(?P<e>%2[27]|%60))?
    (?P<secret>(?(q)[^"'`\s\\]++|(?(e)(?:[^"'`\s\\%]|%(?!{_ENCODED_STOP}))++
    |(?:[^\s"'`,;&<>()\[\]{{}}\\%]|%(?!{_ENCODED_STOP}))++)))
    (?(q)(?P=q)|(?(e)(?P=e)|(?![(\[{{])))"""
_AWS_SECRET_NAME = r"(?:aws[_.-]?secret[_.-]?(?:access[_.-]?)?key|secret[_.-]?access[_.-]?key)"
_AWS_SECRET_VALUE = r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"
_KEYWORD_ANCHOR = re.compile("pass|pwd|secret|token|api|access|private|auth|credential")
_KEY_NAME = re.compile(_KEYWORD, re.IGNORECASE)
_AWS_KEY_NAME = re.compile(_AWS_SECRET_NAME, re.IGNORECASE)
_AWS_SECRET = re.compile(_AWS_SECRET_VALUE)
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{16}")


def _not_placeholder(m: re.Match[str]) -> bool:
    return not is_placeholder(m["secret"])


def _random(m: re.Match[str]) -> bool:
    return looks_secret(m["secret"])


def _has_key_body(m: re.Match[str]) -> bool:
    """A PEM header with base64 after it, not a header quoted in prose."""
    return _BASE64_RUN.search(m["secret"]) is not None


def _token(rule_id: str, pattern: str, *needles: str) -> Rule:
    return Rule(rule_id, re.compile(f"(?P<secret>{pattern})"), needles)


def _b(prefix: str, chars: str = r"A-Za-z0-9_-") -> str:
    """``prefix`` not preceded by a token character, unless that character ends an escape
    (``\\n``, ``%20``: see ``_ESCAPE_BEFORE``). Lookbehinds after the literal, so the regex
    engine can still search for the literal quickly."""
    p = re.escape(prefix)
    return f"{p}(?:(?<![{chars}]{p})|{_ESCAPE_BEFORE.format(p)})"


_FLAG = _b("--", r"\w-")
_PEM_LABEL = r"[ A-Z0-9]{0,40}PRIVATE[ ]KEY(?:[ ]BLOCK)?-----"  # [ ]: used in verbose regexes
_LINE_BREAK = r"(?:\r?\n|(?:\\r)?\\n)"  # a line break, or its JSON escape \n or \r\n

RULES: tuple[Rule, ...] = (
    Rule(
        "private-key",
        re.compile(
            rf"""(?P<secret>-----BEGIN{_PEM_LABEL}
            (?:[^-]*+(?:-(?!----)[^-]*+)*+-----END{_PEM_LABEL}  # the whole block, or
            |(?:{_LINE_BREAK}[ \t]*+[A-Za-z0-9+/=]++(?={_LINE_BREAK}|["']|\Z))*))  # a cut one
            """,
            re.VERBOSE,
        ),
        ("PRIVATE KEY",),
        _has_key_body,
    ),
    _token(
        "aws-access-key-id",
        rf"{_b('A', 'A-Za-z0-9')}(?:KIA|SIA|BIA|CCA)[A-Z0-9]{{16}}(?![A-Za-z0-9])",
        *("AKIA", "ASIA", "ABIA", "ACCA"),
    ),
    Rule(
        "aws-secret-access-key",
        re.compile(
            rf"""{_AWS_SECRET_NAME}{_ASSIGN}{_BLANK}*+(?:\\?["'`]|%2[27]|%60)?
            (?P<secret>{_AWS_SECRET_VALUE})""",
            re.IGNORECASE | re.ASCII | re.VERBOSE,
        ),
        anchor=re.compile("aws|secret"),
    ),
    _token("github-pat", rf"{_b('ghp_')}[A-Za-z0-9]{{36,}}+", "ghp_"),
    _token("github-oauth", rf"{_b('gho_')}[A-Za-z0-9]{{36,}}+", "gho_"),
    _token(
        "github-app-token", rf"(?:{_b('ghu_')}|{_b('ghs_')})[A-Za-z0-9]{{36,}}+", "ghu_", "ghs_"
    ),
    _token("github-refresh-token", rf"{_b('ghr_')}[A-Za-z0-9]{{36,}}+", "ghr_"),
    _token("github-fine-grained-pat", rf"{_b('github_pat_')}[A-Za-z0-9_]{{82,}}+", "github_pat_"),
    # Anthropic before OpenAI: both start with "sk-".
    _token("anthropic-admin-key", rf"{_b('sk-ant-admin')}\d\d-[A-Za-z0-9_-]{{20,}}+", "sk-ant-"),
    _token(
        "anthropic-api-key", rf"{_b('sk-ant-')}[a-z]{{2,8}}\d\d-[A-Za-z0-9_-]{{20,}}+", "sk-ant-"
    ),
    _token(
        "openai-api-key",
        rf"{_b('sk-')}(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{{20,}}+"
        rf"|[A-Za-z0-9]{{48}}(?![A-Za-z0-9_-]))",
        "sk-",
    ),
    _token(
        "slack-webhook-url",
        r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_+-]{20,}+",
        "hooks.slack.com",
    ),
    _token(
        "slack-token",
        rf"(?:{_b('xox', 'A-Za-z0-9')}[abprse]|{_b('xapp', 'A-Za-z0-9')})-[A-Za-z0-9-]{{10,}}+",
        *("xox", "xapp-"),
    ),
    _token("gcp-api-key", rf"{_b('AIza')}[A-Za-z0-9_-]{{35}}(?![A-Za-z0-9_-])", "AIza"),
    _token(
        "jwt", rf"{_b('eyJ')}[A-Za-z0-9_-]{{8,}}+\.eyJ[A-Za-z0-9_-]{{8,}}+\.[A-Za-z0-9_-]*+", "eyJ"
    ),
    Rule(
        "url-password",
        re.compile(r"""://(?<=[A-Za-z0-9]://)[^\s:/@"'<>]*+:(?P<secret>[^\s/@"'<>]++)@"""),
        ("://",),
        _not_placeholder,
    ),
    Rule(
        "bearer-token",
        re.compile(
            rf"{_b('b', 'A-Za-z0-9_')}earer{_BLANK}++(?P<secret>[A-Za-z0-9._~+/=-]++)",
            re.I | re.ASCII,
        ),
        check=_random,
        anchor=re.compile("bearer"),
    ),
    Rule(
        "basic-auth",
        re.compile(
            rf"""authorization(?:\\?["']|%2[27])?{_BLANK}*+(?:[:=]|%3[AaDd]){_BLANK}*+"""
            rf"""(?:\\?["']|%2[27])?basic{_BLANK}++(?P<secret>[A-Za-z0-9+/=]{{8,}}+)""",
            re.IGNORECASE | re.ASCII,
        ),
        check=_not_placeholder,
        anchor=re.compile("authorization"),
    ),
    Rule(
        "generic-secret",
        re.compile(rf"{_KEYWORD}[A-Za-z0-9_.-]{{0,40}}+{_ASSIGN}{_VALUE}", re.I | re.X | re.A),
        check=_random,
        anchor=_KEYWORD_ANCHOR,
    ),
    Rule(  # command-line flags: --password X, --db-token X
        "generic-secret",
        re.compile(
            rf"{_FLAG}[A-Za-z0-9_.-]{{0,40}}?{_KEYWORD}[A-Za-z0-9_.-]{{0,40}}+{_BLANK}{_VALUE}",
            re.I | re.X | re.A,
        ),
        ("--",),
        _random,
    ),
)
"""Every rule, in the order they run: private keys first (their body must not be cut up by the
token rules), specific tokens before the key/value rules that would also match them."""


class _Tally:
    """What a redaction replaced: occurrences per rule, and each distinct secret once.

    With ``tag``, each marker is preceded by a tag naming its secret (``\ue000<n>\ue001``,
    characters from Unicode's private use area that no rule matches), so that whoever cuts
    the text later can tell which secrets are still represented in what is kept
    (:meth:`Redactor.settle`)."""

    def __init__(self, tag: bool = False) -> None:
        self.tag = tag
        self.counts: dict[str, int] = {}
        self.secrets: dict[str, tuple[str, int]] = {}  # secret -> (rule, number)
        self.numbered: list[str] = []  # number -> secret

    def marker(self, rule_id: str, secret: str) -> str:
        self.counts[rule_id] = self.counts.get(rule_id, 0) + 1
        if secret not in self.secrets:
            self.secrets[secret] = (rule_id, len(self.numbered))
            self.numbered.append(secret)
        number = self.secrets[secret][1]
        marker = f"[REDACTED:{rule_id}]"
        return f"{_TAG_OPEN}{number}{_TAG_CLOSE}{marker}" if self.tag else marker


_TAG_OPEN, _TAG_CLOSE = "\ue000", "\ue001"
_TAG = re.compile("\ue000([0-9]*)\ue001?")  # a whole tag, or what a cut left of one


def untag(text: str) -> str:
    """``text`` without the tags a tagging :class:`Redactor` put before its markers."""
    return _TAG.sub("", text) if _TAG_OPEN in text else text


def _apply(rule: Rule, text: str, lowered: str, tally: _Tally) -> str:
    """``text`` with ``rule``'s secrets replaced (``text`` itself if it has none)."""
    if rule.needles and not any(needle in text for needle in rule.needles):
        return text
    pieces: list[str] = []
    done = pos = 0  # text[:done] is in pieces; the next match starts at pos or later
    while True:
        if rule.anchor is None:
            m = rule.pattern.search(text, pos)
        elif (anchor := rule.anchor.search(lowered, pos)) is None:
            break
        elif (m := rule.pattern.match(text, anchor.start())) is None:
            pos = anchor.start() + 1
            continue
        if m is None:
            break
        start, end = m.span("secret")
        if rule.check is None or rule.check(m):
            pieces += (text[done:start], tally.marker(rule.id, text[start:end]))
            done = end
        # Overlapping candidates are tried (the key of a rejected one may start a real one),
        # but none from inside a secret already judged: that keeps the time linear.
        pos = max(end, m.start() + 1)
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


def _redact(text: str, counts: _Tally) -> str:
    lowered = ""  # text lower-cased (same length: see below) while text is unchanged
    for rule in RULES:
        if rule.anchor is not None and not lowered:
            # "İ" is the one character whose lower() is two long; anchors need equal offsets.
            lowered = text.replace("\u0130", "i").lower()
        redacted = _apply(rule, text, lowered, counts)
        if redacted is not text:
            text, lowered = redacted, ""
    return text


def _value_rule(key: str, value: str) -> str | None:
    """The rule that a whole string value hits because of its dict key (``{"password": v}``)."""
    if _AWS_KEY_NAME.search(key) and _AWS_SECRET.fullmatch(value):
        return "aws-secret-access-key"
    return "generic-secret" if _KEY_NAME.search(key) and looks_secret(value) else None


def _walk(value: Any, counts: _Tally) -> Any:
    if isinstance(value, str):
        before = sum(counts.counts.values())
        redacted = _redact(value, counts)
        return value if sum(counts.counts.values()) == before else redacted
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            new_item = _walk(item, counts)
            # A string no text rule touched may still be a secret because of its key.
            if isinstance(key, str) and isinstance(item, str) and new_item is item:
                rule = _value_rule(key, item)
                if rule is not None:
                    new_item = counts.marker(rule, item)
            out[_walk(key, counts)] = new_item
        return out
    if isinstance(value, list):
        return [_walk(item, counts) for item in value]
    if isinstance(value, tuple):
        return tuple(_walk(item, counts) for item in value)
    if value is None or isinstance(value, int | float):
        return value
    raise TypeError(f"redact_data walks dict, list, tuple, str, numbers and None, not {value!r}")


@dataclass(frozen=True)
class Redaction:
    """Redacted text and how many secrets each rule replaced (rules that found none are absent)."""

    text: str
    counts: Mapping[str, int]

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def redact_text(text: str) -> Redaction:
    """Replace every secret in ``text`` by ``[REDACTED:<rule-id>]``."""
    tally = _Tally()
    return Redaction(_redact(text, tally), MappingProxyType(tally.counts))


def redact_data(value: Any) -> tuple[Any, dict[str, int]]:
    """A redacted copy of plain data, and the counts.

    Strings are redacted wherever they are, dict keys included; a string under a
    secret-sounding key (``{"password": "..."}``) is redacted whole when it looks random.
    Dicts, lists and tuples are copied (any mapping becomes a ``dict``); ``None``, bools and
    numbers are kept; anything else is a :class:`TypeError`, so nothing passes unread. Two keys
    that redact to the same text merge, the later value winning.
    """
    tally = _Tally()
    return _walk(value, tally), tally.counts


class Redactor:
    """Redacts many texts and values of one commit, counting each distinct secret once.

    With ``tag=True`` it is the first pass over raw input that a caller will cut or fold (see
    :class:`~clm_policy.memory.change.Change`): its markers carry tags, and :meth:`settle`
    removes them from what is finally kept, noting which secrets that still holds — so a
    secret that only sat in a message nobody keeps is not counted.
    """

    def __init__(self, *, tag: bool = False) -> None:
        self._tally = _Tally(tag)
        self._kept: dict[str, str] = {}

    def text(self, text: str) -> str:
        """``text`` redacted; its secrets are noted."""
        return _redact(text, self._tally)

    def data(self, value: Any) -> Any:
        """A redacted copy of ``value`` (see :func:`redact_data`); its secrets are noted."""
        return _walk(value, self._tally)

    def settle(self, value: Any) -> Any:
        """``value`` (a text or plain data) without this redactor's tags, noting the secrets
        whose tag it still holds as kept."""
        if isinstance(value, str):
            if _TAG_OPEN not in value:
                return value
            return _TAG.sub(self._keep, value)
        if isinstance(value, Mapping):
            return {self.settle(k): self.settle(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.settle(v) for v in value)
        return value

    def _keep(self, match: re.Match[str]) -> str:
        if match[0].endswith(_TAG_CLOSE) and match[1] and int(match[1]) < len(self._tally.numbered):
            secret = self._tally.numbered[int(match[1])]
            self._kept[secret] = self._tally.secrets[secret][0]
        return ""

    @property
    def secrets(self) -> Mapping[str, str]:
        """Each distinct secret replaced (kept, for a tagging redactor), with its rule."""
        if self._tally.tag:
            return MappingProxyType(dict(self._kept))
        return MappingProxyType({k: rule for k, (rule, _) in self._tally.secrets.items()})

    @property
    def counts(self) -> Mapping[str, int]:
        """Distinct secrets replaced so far, per rule id (a snapshot)."""
        return MappingProxyType(dict(Counter(self.secrets.values())))

    @property
    def total(self) -> int:
        return len(self.secrets)
