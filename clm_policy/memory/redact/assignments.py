"""Key/value rules: a secret recognised by what it is assigned to.

``password=...``, ``Authorization: Token ...``, ``curl -u user:...``, ``--db-token X``, a
password in a URL: the key stays, only the value is replaced — and only when the value looks
like a secret (:mod:`.judge`), so ``password: changeme`` and ``api_key_env = "OPENAI_API_KEY"``
are left alone. They run after the token rules, which would also match some of these values.
docs/redaction.md lists the syntaxes each rule reads and what is not a secret.
"""

from __future__ import annotations

import re

from clm_policy.memory.redact.judge import looks_credential, looks_secret
from clm_policy.memory.redact.syntax import (
    ASSIGN,
    AWS_SECRET,
    AWS_SECRET_NAME,
    AWS_SECRET_VALUE,
    BLANK,
    ESCAPED,
    KEY_END,
    KEYWORD,
    KEYWORD_ANCHOR,
    VALUE,
    Rule,
    bare,
    not_placeholder,
    random_value,
    reference_key,
)

OPTION_CHARS = r"\w-"  # an option is not glued to a word: docker-u, x--user
FLAG = bare("--", OPTION_CHARS)
CURL_SHORT = f"(?:{bare('-u', OPTION_CHARS)}|{bare('-U', OPTION_CHARS)})"
CURL_LONG = f"(?:{bare('--user', OPTION_CHARS)}|{bare('--proxy-user', OPTION_CHARS)})"
QUOTE = r"""(?:\\?["'`]|%2[27]|%60)"""
# A key's name after its keyword: db_password_prod, apiKeyV2 (the key's end is where it ends).
KEY_TAIL = r"(?P<tail>[A-Za-z0-9_.-]{0,40}+)"
# Besides ASSIGN: a call's first two arguments, getenv("api_token", "...") or
# setProperty("API_KEY", "...") (the check makes sure that a "(" opens the key's string: not
# a list of names, {'NSURLCredential', 'PKPushCredentials'}), and an XML key attribute,
# <add key="ApiKey" value="..."/>; both only with a quoted value.
ARGUMENT = rf"""(?P<argument>\\?["']{BLANK}*+,{BLANK}*+)(?={BLANK}*+(?:[rRbBuUfF]{{1,2}}|@)?{QUOTE})
    |\\?["']\s++value{BLANK}*+=(?={BLANK}*+\\?["'])"""
# What comes before the keyword of a call's first argument: ( "X-Api-
CALL_BEFORE_KEY = re.compile(r"""\([ \t]*+[rRbBuUfF@]{0,2}\\?["'][A-Za-z0-9_.-]{0,40}+\Z""")
# An XML element, <password>...</password> or <entry key="password" type="x">...</entry>; the
# value must be followed by the closing tag (checked after VALUE).
ELEMENT = r"""(?P<element>(?:\\?["'])?(?:\s[^<>]{0,120}+)?>\s*+)"""
# The header's separator: JSON, Python, Ruby, a call's arguments, URL-encoded; quotes optional.
HEADER_SEPARATOR = rf"""{KEY_END}{BLANK}*+(?:=>|[:=,]|%3[AaDd]){BLANK}*+
    (?:[rRbBuUfF@]{{0,2}}\\?["']|%2[27])?"""
CURL_LOOKBACK = 500
"""How far back (on the same line) ``curl`` makes ``-u user:password`` a curl option."""


def _secret_value(m: re.Match[str]) -> bool:
    """A value that looks random, assigned to a key that does not name a reference
    (``credentialsId``, ``secretName``) and not a call (``password=get_token(request)``)."""
    return (
        looks_secret(m["secret"])
        and not is_code(m)
        and reference_key().match(m.string, m.end("tail")) is None
    )


def _generic_secret(m: re.Match[str]) -> bool:
    return _secret_value(m) and (m["argument"] is None or _first_argument(m))


def _first_argument(m: re.Match[str]) -> bool:
    start = m.start()  # the keyword's; the rest of the key, a quote and a "(" fit in 48
    return CALL_BEFORE_KEY.search(m.string, max(0, start - 48), start) is not None


def is_code(m: re.Match[str]) -> bool:
    """A bare value followed by ``(``, ``[`` or ``{``: a call or an index, not a literal."""
    if m["q"] is not None or m["e"] is not None:
        return False
    end = m.end("secret")
    return m.string[end : end + 1] in ("(", "[", "{")


def _curl_password(m: re.Match[str]) -> bool:
    """After ``curl`` on the same line, any credential (``mango2024!``); elsewhere ``-u`` is
    also ``docker run -u 1000:1000`` or ``-u app:staff``, so only a random-looking one."""
    text, start = m.string, m.start()
    window = max(0, start - CURL_LOOKBACK)
    line = max(window, text.rfind("\n", window, start) + 1)
    if text.rfind("curl", line, start) >= 0:
        return looks_credential(m["secret"])
    return looks_secret(m["secret"])


def _credential(m: re.Match[str]) -> bool:
    return looks_credential(m["secret"])


ASSIGNMENT_RULES: tuple[Rule, ...] = (
    Rule(
        "aws-secret-access-key",
        rf"""{AWS_SECRET_NAME}{ASSIGN}{BLANK}*+{QUOTE}?(?P<secret>{AWS_SECRET_VALUE})""",
        # not AWS's example, not a placeholder (X * 40), random enough
        check=lambda m: AWS_SECRET.fullmatch(m["secret"]) is not None and looks_secret(m["secret"]),
        anchor=re.compile("aws|secret"),
        flags=re.IGNORECASE | re.ASCII | re.VERBOSE,
    ),
    Rule(
        "url-password",
        r"""://(?<=[A-Za-z0-9]://)[^\s:/@"'<>]*+:(?P<secret>[^\s/@"'<>]++)@""",
        ("://",),
        not_placeholder,
    ),
    Rule(
        "bearer-token",
        rf"{bare('b', 'A-Za-z0-9_')}earer{BLANK}++(?P<secret>[A-Za-z0-9._~+/=-]++)",
        check=random_value,
        anchor=re.compile("bearer"),
        flags=re.I | re.ASCII,
    ),
    Rule(
        "basic-auth",
        rf"""authorization(?:\\?["']|%2[27])?{BLANK}*+(?:[:=]|%3[AaDd]){BLANK}*+"""
        rf"""(?:\\?["']|%2[27])?basic{BLANK}++(?P<secret>[A-Za-z0-9+/=]{{8,}}+)""",
        check=not_placeholder,
        anchor=re.compile("authorization"),
        flags=re.IGNORECASE | re.ASCII,
    ),
    Rule(  # Authorization: Token X, Api-Token X, Digest X, SSWS X, any scheme but Bearer, Basic
        "auth-header",
        rf"""(?:(?<![A-Za-z])|{ESCAPED})authorization{HEADER_SEPARATOR}
        (?!(?:bearer|basic)(?![A-Za-z0-9._-]))[A-Za-z][A-Za-z0-9._-]{{0,40}}+{BLANK}++
        (?P<secret>[A-Za-z0-9._~+/-]++=*+)""",
        check=_credential,
        anchor=re.compile("authorization"),
        flags=re.IGNORECASE | re.ASCII | re.VERBOSE,
    ),
    Rule(  # Authorization: Digest ..., response="<hash of the password>"
        "auth-header",
        r'(?<![\w-])response=\\?"(?P<secret>[0-9A-Fa-f]{32,128}+)\\?"',
        ("response=",),
        not_placeholder,
    ),
    Rule(  # curl -u user:password, --user user:password, -uuser:password, -U (proxy user)
        "curl-user-password",
        rf"""(?:{CURL_SHORT}[ \t]*+|{CURL_LONG}(?:[ \t]++|=))
        {QUOTE}?[^\s:"'`\\]*+:(?P<secret>[^\s"'`\\]++)""",
        ("-u", "-U", "--proxy-user"),
        _curl_password,
        flags=re.VERBOSE,
    ),
    Rule(
        "generic-secret",
        rf"""{KEYWORD}{KEY_TAIL}(?:{ARGUMENT}|{ELEMENT}|{ASSIGN}){VALUE}
        (?(element)\s*+</)""",
        check=_generic_secret,
        anchor=KEYWORD_ANCHOR,
        flags=re.I | re.X | re.A,
    ),
    Rule(  # PowerShell: ConvertTo-SecureString "..." -AsPlainText, a password in plain text
        "generic-secret",
        rf"""convertto-securestring(?:{BLANK}++-string)?{BLANK}++(?P<q>["'])
        (?P<secret>[^"'\r\n]{{1,200}}+)(?P=q){BLANK}++-asplaintext""",
        check=_credential,
        anchor=re.compile("convertto-securestring"),
        flags=re.IGNORECASE | re.VERBOSE,
    ),
    Rule(  # command-line flags: --password X, --db-token X
        "generic-secret",
        rf"{FLAG}[A-Za-z0-9_.-]{{0,40}}?{KEYWORD}{KEY_TAIL}{BLANK}{VALUE}",
        ("--",),
        _secret_value,
        flags=re.I | re.X | re.A,
    ),
)
"""Key/value rules, in the order they run."""
