"""Key/value rules: a secret recognised by what it is assigned to.

``password=...``, ``Authorization: Token ...``, ``X-Api-Key: ...``, ``curl -u user:...``,
``--db-token X``, a password in a URL: the key stays, only the value is replaced, when it looks
like a secret (:mod:`.judge`) — or, where only a credential can stand (an ``Authorization``
scheme, a header named for a credential, curl's password), like a credential
(:func:`~.judge.looks_credential`). docs/redaction.md lists the syntaxes each rule reads.
"""

from __future__ import annotations

import re

from clm_policy.base.lazypattern import LazyPattern
from clm_policy.memory.redact.judge import (
    MIN_SECRET_LENGTH,
    glued_to_placeholder,
    looks_credential,
    looks_password,
    looks_secret,
)
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
    after_command,
    bare,
    credential_value,
    not_placeholder,
    reference_key,
)
from clm_policy.memory.redact.token_checks import placeholder_token

TYPE_CHECKING = False
if TYPE_CHECKING:  # no typing at run time: the hooks import the redactor
    from clm_policy.memory.redact.token_checks import Check

OPTION_CHARS = r"\w-"  # an option is not glued to a word: docker-u, x--user
FLAG = bare("--", OPTION_CHARS)
CURL_SHORT = f"(?:{bare('-u', OPTION_CHARS)}|{bare('-U', OPTION_CHARS)})"
CURL_LONG = f"(?:{bare('--user', OPTION_CHARS)}|{bare('--proxy-user', OPTION_CHARS)})"
CURL_OPTION = rf"(?:{CURL_SHORT}[ \t]*+|{CURL_LONG}(?:[ \t]++|=))"
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
CALL_BEFORE_KEY = LazyPattern(r"""\([ \t]*+[rRbBuUfF@]{0,2}\\?["'][A-Za-z0-9_.-]{0,40}+\Z""")
# An XML element, <password>...</password> or <entry key="password" type="x">...</entry>; the
# value must be followed by the closing tag (checked after VALUE).
ELEMENT = r"""(?P<element>(?:\\?["'])?(?:\s[^<>]{0,120}+)?>\s*+)"""
# The header's separator: JSON, Python, Ruby, a call's arguments, URL-encoded; quotes optional.
HEADER_SEPARATOR = rf"""{KEY_END}{BLANK}*+(?:=>|[:=,]|%3[AaDd]){BLANK}*+
    (?:[rRbBuUfF@]{{0,2}}\\?["']|%2[27])?"""
# A header that carries a credential by its name — Token, X-Api-Key, Api-Key, apikey,
# X-Auth-Token, PRIVATE-TOKEN, X-Vault-Token, X-Goog-Api-Key, Ocp-Apim-Subscription-Key — and
# Authorization without a scheme: words joined by "-", a header's spelling (API_KEY= is an
# assignment, read by generic-secret).
TOKEN_HEADER_WORD = r"token|(?:api|auth|access|subscription|secret|app|client)-?key|authorization"
TOKEN_HEADER = rf"(?:[a-z0-9]{{1,20}}-){{0,4}}(?:{TOKEN_HEADER_WORD})"
# Where that rule is tried: the last word of a header's name, then what separates it from its
# value (start= reads the rest of the name back from there).
TOKEN_HEADER_ANCHOR = (
    r"(?:token|key|authorization)"
    r"""(?=(?:\\?["']|%2[27])?(?:\]|\[[0-9]{0,4}\])?[ \t]*(?:[:=,]|%3[ad])|[ \t]+["'])"""
)
NAME_REACH = 84
"""How far before its last word a header's name may start (4 words of 20 and their "-")."""
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-")
_ESCAPE_LENGTH = {"u": 5, "n": 1, "r": 1, "t": 1, "b": 1, "f": 1}  # after a "\\": \u0022, \n
# Where a header stands whatever its case: in curl -H '…', --header "…", after "> " (curl -v).
HEADER_FLAG = (
    r"""(?<=-H[ \t]["'])|(?<=-H["'])|(?<=--header[ \t]["'])|(?<=--header=["'])|(?<=>[ \t])"""
)
# Words before "token" that make it no credential: an anti-forgery nonce, a page cursor.
NOT_CREDENTIAL_HEADER_WORDS = frozenset(
    {"csrf", "xsrf", "page", "next", "continuation", "cursor", "sync"}
)


def _secret_value(m: re.Match[str]) -> bool:
    """A value that looks random, assigned to a key that does not name a reference
    (``credentialsId``, ``secretName``), not a call (``password=get_token(request)``) and not
    the fixed part of a template (``password=pypi-AgEIcHlwaS5vcmc<token>``)."""
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
    """A bare value followed by ``(``, ``[`` or ``{`` (a call or an index, not a literal), or
    by an ``<angle placeholder>`` (the fixed part of a template: ``pypi-AgEIcHlwaS5vcmc<token>``,
    ``sk_live_<key>``)."""
    if m["q"] is not None or m["e"] is not None:
        return False
    end = m.end("secret")
    return m.string[end : end + 1] in ("(", "[", "{") or glued_to_placeholder(m.string, end)


def _url_password(m: re.Match[str]) -> bool:
    """A URL's password: not a placeholder, or one a person typed (``MyPass99``); not what a
    rule already replaced in the user (``https://[REDACTED:github-pat]@github.com``)."""
    secret = m["secret"]
    return "[REDACTED:" not in m[0] and (not_placeholder(m) or looks_password(secret))


# What stands right before "Bearer" in an Authorization header: "Authorization: ", a JSON or
# Python key ("Authorization": "), curl -H 'Authorization: .
BEARER_HEADER = LazyPattern(rf"authorization{HEADER_SEPARATOR}\Z", re.I | re.X | re.A)
# A name and its version, in prose about a scheme: "the Bearer OAuth2.0 flow", "Bearer JWT2.1".
VERSIONED_NAME = LazyPattern(r"[A-Za-z]++[0-9]++(?:\.[0-9]++)++")
HEADER_REACH = 48
"""How far before ``Bearer`` its header's name may start (the name, quotes and blanks)."""


def _bearer(m: re.Match[str]) -> bool:
    """The credential after ``Bearer``: a random one anywhere; in an ``Authorization`` header,
    where only a credential can stand, also one a person typed (``hunter2secret``: 8
    characters or more that look like a password, not shaped like a name or a placeholder —
    ``YOUR_TOKEN``, ``xxx``; ``$TOKEN`` and ``<token>`` are no candidates at all)."""
    secret = m["secret"]
    if VERSIONED_NAME.fullmatch(secret) is not None:
        return False
    if looks_secret(secret):
        return True
    core, start = secret.rstrip("="), m.start()
    return (
        len(core) >= MIN_SECRET_LENGTH
        and BEARER_HEADER.search(m.string, max(0, start - HEADER_REACH), start) is not None
        and not placeholder_token(core)
        and looks_password(core)
    )


def _curl_password(m: re.Match[str]) -> bool:
    """After ``curl`` on the same command line, any credential, ``$`` and ``!`` included
    (``mango2024!``, ``p@ss$!w0rd``) but shell expansions (``$PASSWORD``); elsewhere ``-u`` is
    also ``docker run -u 1000:1000`` or ``-u app:staff``, so only a random-looking one."""
    if "[REDACTED:" in m[0]:  # what a rule already replaced, read as the user: redacted text
        return False
    if after_command(m.string, m.start(), ("curl",)):
        # a template (${{ secrets.X }}, {{ .Values.x }}) is none; looks_password refuses a
        # value that is only shell expansions ($PASSWORD, ${pw}, $(cat pw), $1)
        return "{{" not in m["secret"] and looks_password(m["secret"])
    return looks_secret(m["secret"])


def _curl_key(m: re.Match[str]) -> bool:
    """``curl -u KEY:`` (an empty password: the user is the API key, as Stripe's and
    Mailgun's take it): after ``curl``, when the user looks random (a name does not)."""
    return (
        "[REDACTED:" not in m[0]
        and after_command(m.string, m.start(), ("curl",))
        and looks_secret(m["secret"])
    )


def _curl(source: str, check: Check) -> Rule:
    """A password given to curl's ``-u``/``--user`` (``curl-user-password``)."""
    return Rule("curl-user-password", source, ("-u", "-U", "--proxy-user"), check, flags=re.VERBOSE)


def header_name_start(text: str, at: int) -> int:
    """Where the name of a header whose last word starts at ``at`` begins: back over letters,
    digits and ``-`` (:data:`NAME_REACH` at most), then forward over an escape glued to it
    (``\\nToken``, ``%0AX-Api-Key``, ``\\u0022Token``: the escape is no part of the name)."""
    i, lo = at, max(0, at - NAME_REACH)
    while i > lo and text[i - 1] in _NAME_CHARS:
        i -= 1
    if i and text[i - 1] == "\\":
        i += _ESCAPE_LENGTH.get(text[i : i + 1], 0)
    elif i and text[i - 1] == "%":
        i += 2
    return min(i, at)


_HEADER_KEY = LazyPattern(rf"(?:(?=[A-Za-z0-9]++-)|(?-i:(?=[A-Z])))(?:{TOKEN_HEADER})", re.I)


def is_token_header(key: str) -> bool:
    """Whether a dict key is a header named for a credential (``X-Api-Key``, ``Token``; not
    ``token``, ``X-CSRF-Token``): its value is judged as a credential, as in text."""
    return _HEADER_KEY.fullmatch(key) is not None and NOT_CREDENTIAL_HEADER_WORDS.isdisjoint(
        key.lower().split("-")[:-1]
    )


def _header_credential(m: re.Match[str]) -> bool:
    """The value of a header named for a credential (not a CSRF or page token): a credential
    (:func:`~clm_policy.memory.redact.judge.looks_credential`), not code or a template. After a
    quoted name, a value without quotes is a variable (``{'Authorization': auth_header}``)."""
    words = m["name"].lower().split("-")[:-1]
    bare = m["q"] is None and m["e"] is None
    return (
        NOT_CREDENTIAL_HEADER_WORDS.isdisjoint(words)
        and not (bare and m["kq"] is not None)
        and looks_credential(m["secret"])
        and not is_code(m)
    )


ASSIGNMENT_RULES: tuple[Rule, ...] = (
    Rule(
        "aws-secret-access-key",
        rf"""{AWS_SECRET_NAME}{ASSIGN}{BLANK}*+{QUOTE}?(?P<secret>{AWS_SECRET_VALUE})""",
        # not AWS's example, not a placeholder (X * 40), random enough
        check=lambda m: AWS_SECRET.fullmatch(m["secret"]) is not None and looks_secret(m["secret"]),
        anchor="aws|secret",
        flags=re.IGNORECASE | re.ASCII | re.VERBOSE,
    ),
    Rule(
        "url-password",
        r"""://(?<=[A-Za-z0-9]://)[^\s:/@"'<>]*+:(?P<secret>[^\s/@"'<>]++)@""",
        ("://",),
        _url_password,
    ),
    Rule(
        "bearer-token",
        rf"{bare('b', 'A-Za-z0-9_')}earer{BLANK}++(?P<secret>[A-Za-z0-9._~+/=-]++)",
        check=_bearer,
        anchor="bearer",
        flags=re.I | re.ASCII,
    ),
    Rule(
        "basic-auth",
        rf"""authorization(?:\\?["']|%2[27])?{BLANK}*+(?:[:=]|%3[AaDd]){BLANK}*+"""
        rf"""(?:\\?["']|%2[27])?basic{BLANK}++(?P<secret>[A-Za-z0-9+/=]{{8,}}+)""",
        check=not_placeholder,
        anchor="authorization",
        flags=re.IGNORECASE | re.ASCII,
    ),
    Rule(  # Authorization: Token X, Api-Token X, Digest X, SSWS X, any scheme but Bearer, Basic
        "auth-header",
        rf"""(?:(?<![A-Za-z])|{ESCAPED})authorization{HEADER_SEPARATOR}
        (?!(?:bearer|basic)(?![A-Za-z0-9._-]))[A-Za-z][A-Za-z0-9._-]{{0,40}}+{BLANK}++
        (?P<secret>[A-Za-z0-9._~+/-]++=*+)""",
        check=credential_value,
        anchor="authorization",
        flags=re.IGNORECASE | re.ASCII | re.VERBOSE,
    ),
    Rule(  # Authorization: Digest ..., response="<hash of the password>"
        "auth-header",
        r'(?<![\w-])response=\\?"(?P<secret>[0-9A-Fa-f]{32,128}+)\\?"',
        ("response=",),
        not_placeholder,
    ),
    Rule(  # X-Api-Key: …, Token: …, PRIVATE-TOKEN: …, "Api-Key": "…", Header.Set("X-Token", "…")
        "auth-header",
        rf"""(?:(?<![A-Za-z0-9_/-])|{ESCAPED})  # not a URL's user: https://x-access-token:…@
        (?:(?<=["'])(?P<nq>))?(?:(?<=_header[ \t])(?P<ng>))?
        # a header's spelling: words joined by "-"; or one word, capitalised (Token:), after
        # curl -H ' or after curl -v's "> " (HTTP/2 writes headers in lower case)
        (?:(?=[A-Za-z0-9]++-)(?P<hy>)|(?-i:(?=[A-Z]))|{HEADER_FLAG})
        (?P<name>{TOKEN_HEADER})(?![A-Za-z0-9_-])
        # ":"; "=", "=>" or "," only after a quoted header name (headers["X-Api-Key"] = "…")
        (?(ng)[ \t]++|(?P<kq>\\?["']|%2[27])?(?:\]|\[[0-9]{{0,4}}\])?{BLANK}*+
        (?::|%3[Aa]|(?(hy)(?(nq)(?:=>|[=,]|%3[Dd])|(?!))|(?!))))
        {VALUE}""",
        check=_header_credential,
        anchor=TOKEN_HEADER_ANCHOR,
        flags=re.IGNORECASE | re.VERBOSE | re.ASCII,
        start=header_name_start,
    ),
    _curl(  # curl -u 'user:password', -u "user:pass word", --user=":token" (the whole in quotes)
        rf"""{CURL_OPTION}(?P<q>\\?["'])[^:"'\n]*+:(?P<secret>(?:(?!(?P=q))[^\n])++)(?P=q)""",
        _curl_password,
    ),
    _curl(  # curl -u user:password, -uuser:pw, -u :token, --user kevin:'pw', --user "u":"pw"
        rf"""{CURL_OPTION}(?:(?P<uq>\\?["'])[^:"'\n]*+(?P=uq)|[^\s:"'`\\]*+):
        (?P<q>\\?["'])?(?P<secret>(?(q)(?:(?!(?P=q))[^\n])++|[^\s"'`\\]++))(?(q)(?P=q))""",
        _curl_password,
    ),
    _curl(  # curl -u KEY: — the password empty, the user is the key
        rf"""{CURL_OPTION}(?P<q>\\?["'])?(?P<secret>[^\s:"'`\\$]{{8,}}+):
        (?(q)(?P=q)|(?=[\s"'`]|\Z))""",
        _curl_key,
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
        check=credential_value,
        anchor="convertto-securestring",
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
