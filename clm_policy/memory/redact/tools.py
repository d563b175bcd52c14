"""Passwords where a tool's own format puts them, and passwords a sentence names.

Each rule reads a format as its tool documents it, and replaces the password only: the
**variables** a client reads its password from (``PGPASSWORD``, ``MYSQL_PWD``, ``DB_PASS``, in
an environment, ``.env``, YAML, a Dockerfile's ``ENV``, Kubernetes' ``name:``/``value:``),
**.npmrc**'s ``_authToken=``, the **options** that carry a password on a command line
(``mysql -p…``, ``redis-cli -a``, ``sshpass -p``, ``docker login -p``, ``htpasswd -b``),
**Azure Storage**'s account keys and SAS signatures, and **a sentence** that names a password
(``the password is …``, ``pw: …``). Each rule's comment in :data:`TOOL_RULES` names its syntaxes;
docs/redaction.md lists them all.

What stands in those places is typed by a person, so it need not look random; it must look
like a password (:func:`~.judge.looks_password`): not a shell expansion (``$PGPASSWORD``), a
template, a placeholder (``<password>``, ``[value]``), a plain word (``postgres``,
``required``) or placeholder words as written (``changeme``). An option counts only after its
tool on the same command line (``-p`` is also ``mkdir -p`` and ``ssh -p 2222``).
"""

from __future__ import annotations

import re

from clm_policy.memory.redact.judge import is_placeholder, looks_password, looks_secret
from clm_policy.memory.redact.syntax import ESCAPED, KEY_NAME, Rule, after_command, credential_value
from clm_policy.memory.redact.token_checks import is_random

TYPE_CHECKING = False
if TYPE_CHECKING:  # no typing at run time: the hooks import the redactor
    from clm_policy.memory.redact.token_checks import Check

# A value: in quotes (to the closing quote, spaces included: a passphrase), or bare (to a
# blank, a quote, a backslash — the end of a JSON string's text —, a bracket (code), or what
# ends a shell word or a list item: , ; | < >). An & stays: .env files keep it.
TYPED_VALUE = r"""(?P<q>\\?["'])?(?P<secret>(?(q)(?:(?!(?P=q))[^\n\\])++|[^\s"'`\\(),;|<>\[\]{}]++))
    (?(q)(?P=q))"""
OPTION_START = r"(?<![\w-])"  # an option is not glued to a word: mkdir-p, x--password


def _password(m: re.Match[str]) -> bool:
    return looks_password(m["secret"])


# -- variables ---------------------------------------------------------------------------------

VARIABLE_NAME = r"(?:(?:[A-Z][A-Z0-9_]{0,40}?)?(?:PASS(?:WORD|WD)?|PWD)|REDISCLI_AUTH)"
VARIABLE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def variable_start(text: str, at: int) -> int:
    """Where a variable name whose password word is at ``at`` begins: back over upper-case
    letters, digits and ``_`` (40 at most)."""
    i, lo = at, max(0, at - 40)
    while i > lo and text[i - 1] in VARIABLE_CHARS:
        i -= 1
    return i


# What ends a bare value for the generic rule: a random value without them, under a key that
# rule reads, is left to it (DB_PASSWORD=<random> is generic-secret).
_GENERIC_STOPS = frozenset(" \t,;&<>()[]{}%\\\"'`")


def _variable(m: re.Match[str]) -> bool:
    """A password, where the separator is one: a blank only after a Dockerfile's ``ENV``. A
    random value the generic rule would take whole is left to it."""
    blank = m["blank"] is not None
    if blank and not m.string[: m.start()].rstrip(" \t").endswith("ENV"):
        return False
    value = m["secret"]
    if not looks_password(value):
        return False
    generic = (
        not blank
        and m["pair"] is None
        and _GENERIC_STOPS.isdisjoint(value)
        and KEY_NAME.search(m["name"]) is not None
    )
    return not (generic and looks_secret(value))


# -- options -----------------------------------------------------------------------------------

MYSQL = ("mysql", "mariadb")
LOGIN_TOOLS = ("docker", "podman", "buildah", "skopeo", "helm", "oras", "nerdctl", "crane")


def _after(*words: str) -> Check:
    """A check: one of ``words`` stands before the option on its command line, and the value
    is a password."""

    def check(m: re.Match[str]) -> bool:
        return after_command(m.string, m.start(), words) and looks_password(m["secret"])

    return check


def _login(m: re.Match[str]) -> bool:
    """``login`` after a registry client (docker, podman, helm registry, …) on the line."""
    text, start = m.string, m.start()
    return (
        after_command(text, start, ("login",))
        and after_command(text, start, LOGIN_TOOLS)
        and looks_password(m["secret"])
    )


HTPASSWD_FLAGS = r"(?P<flags>(?:[ \t]++-[A-Za-z]++(?:[ \t]++[0-9]++)?)++)"
HTPASSWD_ARG = r"""[^\s"'`\\<>|;&]++"""


def _htpasswd(m: re.Match[str]) -> bool:
    """``-b`` among the flags (the password on the command line); ``-n`` (print, no file)
    decides whether two arguments come before the password or one."""
    letters = "".join(word[1:] for word in m["flags"].split() if word.startswith("-"))
    with_file = m["second"] is not None
    return "b" in letters and ("n" not in letters) == with_file and looks_password(m["secret"])


def _option(source: str, needles: tuple[str, ...], check: Check) -> Rule:
    """A password an option of a command line carries (``command-line-password``)."""
    return Rule("command-line-password", source, needles, check, flags=re.VERBOSE)


# -- Azure Storage -----------------------------------------------------------------------------

AZURE_KEY_NAME = (
    r"(?:account[_.-]?key|shared[_.-]?access[_.-]?key"
    r"|storage[_.-]?(?:account[_.-]?)?(?:access[_.-]?)?key)"
)
AZURE_KEY_MIN_ENTROPY = 3.5
"""A storage account key is 64 random bytes in base64 (88 characters, about 5.5 bits each), a
shared access key 32 (44): far above; a placeholder far below."""


def _azure_key(m: re.Match[str]) -> bool:
    return is_random(m["secret"].rstrip("="), AZURE_KEY_MIN_ENTROPY)


def _sas_signature(m: re.Match[str]) -> bool:
    """A SAS signature is an HMAC-SHA256 in base64: 43 characters and ``=`` (URL-encoded or
    not); a digest in hex (40 or 64) is not one."""
    raw = m["secret"]
    for encoded, plain in (("%2B", "+"), ("%2F", "/"), ("%3D", "=")):
        raw = raw.replace(encoded, plain).replace(encoded.lower(), plain)
    body = raw.rstrip("=")
    return len(body) == 43 and is_random(body, AZURE_KEY_MIN_ENTROPY)


# -- sentences ---------------------------------------------------------------------------------

# "password is …" for every keyword; "pw: …", "pass=…" for the short ones only ("password: …"
# is the generic rule's): the keyword decides at once which verbs may follow.
PROSE_LONG = r"(?:pass(?:word|wd|phrase)|pwd)s?(?![A-Za-z])"
PROSE_SHORT = r"(?:pwd|pw|pass)(?![A-Za-z])"
# "for the admin account", "of db-1", "to the vault" between the keyword and its verb
PROSE_QUALIFIER = r"(?:[ \t]++(?:for|of|on|to)(?:[ \t]++[\w.@:/-]{1,40}+){1,3}?)?"
PROSE_IS = r"""[ \t]++(?:is|was)[ \t]++(?:now[ \t]++|still[ \t]++|set[ \t]++to[ \t]++)?"""
PROSE_OPENING = rf"""(?:{PROSE_LONG}{PROSE_QUALIFIER}{PROSE_IS}
    |{PROSE_SHORT}(?:{PROSE_QUALIFIER}{PROSE_IS}|(?P<colon>[ \t]*+[:=][ \t]*+)))"""
# A bare value ends where a blank does (or a JSON escape, \n: "password is available\n" is no
# password), a sentence's punctuation before it left out; a call or an index is code
# (pw = getpass(), pw = cfg[...]).
PROSE_VALUE = r"""(?P<q>["'`])?(?P<secret>(?(q)[^"'`\n]{1,80}?|[^\s"'`()\[\]{}\\]{1,80}?))
    (?(q)(?P=q)|(?=[.,;:!?)]*+(?:\s|\Z|\\[nrt"])))"""


def _prose(m: re.Match[str]) -> bool:
    """``password is X``, ``password for root was X``, and with ``:`` or ``=`` the short
    words (``pw: X``, ``pass=X``; ``password: X`` is the generic rule's, a random value)."""
    secret = m["secret"]
    # "pw = self.password", "pass: P@ssw0rd1": code and placeholders, as the generic rule reads
    return looks_password(secret) and (m["colon"] is None or not is_placeholder(secret))


TOOL_RULES: tuple[Rule, ...] = (
    Rule(  # PGPASSWORD=…, DB_PASS: …, "MYSQL_PWD": "…", ENV PGPASSWORD …, name: X / value: …
        "password-variable",
        rf"""(?:(?<![A-Za-z0-9_])|{ESCAPED})(?P<name>{VARIABLE_NAME})(?![A-Za-z0-9_])
        (?:(?:\\?["'])?[ \t]*+(?::?=|:(?![:=]))[ \t]*+
        |(?P<pair>(?:\\?["'])?[ \t]*+(?:,|\r?\n)[ \t-]*+
            (?:\\?["'])?value(?:\\?["'])?[ \t]*+:[ \t]*+)
        |(?P<blank>[ \t]++))
        {TYPED_VALUE}""",
        ("PASS", "PWD", "REDISCLI_AUTH"),
        _variable,
        anchor="PASS|PWD|REDISCLI_AUTH",
        flags=re.VERBOSE | re.ASCII,
        start=variable_start,
        cased=True,
    ),
    _option(  # mysql -pPASSWORD, mysqldump -p'…', mariadb --password=…
        rf"{OPTION_START}(?:-p|--password=)(?=\S){TYPED_VALUE}",
        ("mysql", "mariadb"),
        _after(*MYSQL),
    ),
    _option(  # redis-cli -a …, --pass …
        rf"{OPTION_START}(?:-a|--pass)[ \t]++{TYPED_VALUE}", ("redis-cli",), _after("redis-cli")
    ),
    _option(  # redis.conf, redis-server --requirepass, CONFIG SET requirepass
        rf"(?:(?<![\w-])|(?<=\s--))(?:requirepass|masterauth)[ \t]++{TYPED_VALUE}",
        ("requirepass", "masterauth"),
        _password,
    ),
    # sshpass -p …, -p'…'
    _option(rf"{OPTION_START}-p[ \t]*+{TYPED_VALUE}", ("sshpass",), _after("sshpass")),
    _option(  # docker login -p …, --password …, --password=…
        rf"{OPTION_START}(?:-p[ \t]*+|--password(?:[ \t]++|=)){TYPED_VALUE}", ("login",), _login
    ),
    _option(  # htpasswd -b[c…] FILE USER PASSWORD, htpasswd -nb USER PASSWORD
        rf"""(?<![\w-])htpasswd{HTPASSWD_FLAGS}[ \t]++{HTPASSWD_ARG}[ \t]++
        (?:(?P<second>{HTPASSWD_ARG})[ \t]++)?{TYPED_VALUE}""",
        ("htpasswd",),
        _htpasswd,
    ),
    Rule(  # AccountKey=…;  SharedAccessKey=…;  AZURE_STORAGE_KEY=…  --account-key …
        "azure-storage-key",
        rf"""(?<![A-Za-z0-9]){AZURE_KEY_NAME}(?![A-Za-z0-9])
        (?:\\?["'])?(?:[ \t]*+[=:]|[ \t])[ \t]*+(?:\\?["'])?
        (?P<secret>[A-Za-z0-9+/]{{20,}}+={{0,2}}+)(?![A-Za-z0-9+/=])""",
        check=_azure_key,
        anchor=AZURE_KEY_NAME,
        flags=re.IGNORECASE | re.VERBOSE | re.ASCII,
    ),
    Rule(  # .npmrc: //registry.npmjs.org/:_authToken=…, _auth=…, _password=…
        "npm-token",
        rf"""(?<![\w-])_(?:authToken|auth|password)[ \t]*+=[ \t]*+{TYPED_VALUE}""",
        ("_auth", "_password"),
        # nothing but a credential stands there (a legacy token is a UUID; _auth and
        # _password base64)
        credential_value,
        flags=re.VERBOSE,
    ),
    Rule(  # …?sv=…&sig=<base64, URL-encoded>
        "azure-sas-signature",
        r"""(?:(?<=[?&;])|(?<=%26)|(?<=%3[Ff]))sig(?:=|%3[Dd])
        (?P<secret>(?:[A-Za-z0-9+/]|%2[BbFf])++(?:=|%3[Dd]){0,2}+)""",
        check=_sas_signature,
        anchor="sig(?:=|%3d)",
        flags=re.VERBOSE,
    ),
)
"""The rules for tools' formats, in the order they run (before the generic key/value rule)."""

PROSE_RULES: tuple[Rule, ...] = (
    Rule(  # the password is …, password for root was …, pw: …
        "prose-password",
        rf"(?<![A-Za-z0-9_$-]){PROSE_OPENING}{PROSE_VALUE}",
        check=_prose,
        # the keyword and what must follow it: only a real candidate leaves the regex engine
        anchor=r"(?:pass(?:word|wd|phrase)?|pwd|pw)s?[ \t]+(?:is|was|for|of|on|to)[ \t]"
        r"|(?:pwd|pw|pass)[ \t]*[:=]",
        flags=re.IGNORECASE | re.VERBOSE,
    ),
)
"""The rule for a password a sentence names (after the generic rule: ``pwd=…`` holding a
random value is that rule's)."""
