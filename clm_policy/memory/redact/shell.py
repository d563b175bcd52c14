"""Secrets a person types on a shell's command line, as a transcript records it word for word.

These rules run after the key/value rules (:mod:`.assignments`), which take a random value
under any key first and so keep their rule ids; what is left here is what a person typed:

- a password **piped or fed** to a command that reads it from standard input: ``echo PW |
  sudo -S …``, ``printf 'PW\\n' | sudo -S …``, ``sudo -S … <<< PW``, ``echo PW | docker login
  --password-stdin``, ``echo PW | passwd --stdin bob``, and a ``USER:PW`` line fed to
  ``chpasswd`` (``command-line-password``);
- openssl's ``-pass pass:PW`` and ``-k PW``, a ``USER:PW`` line of a here-document fed to
  ``chpasswd``, and Windows' ``net use \\\\srv\\share PW`` (``command-line-password``);
- ``--password X`` and ``--password=X`` after any command (``command-line-password``);
- an upper-case **variable named for a secret** (``…KEY``, ``…TOKEN``, ``…SECRET``,
  ``…CREDENTIALS``, ``…AUTH``) assigned in a shell: ``export NAME=…``, ``NAME=… cmd``,
  ``set NAME=…``, ``set "NAME=…"``, ``setx NAME …``, PowerShell's ``$env:NAME = "…"``, a YAML
  or ``.env`` map's ``NAME: …`` (``secret-variable``; ``…PASSWORD`` names are
  ``password-variable``'s);
- ``.netrc``'s ``password`` (``netrc-password``), ``Password=``/``Pwd=`` in a database
  connection string (``connection-string-password``), and a token alone as a URL's user
  (``https://<token>@github.com/…``) or as a query parameter named for one
  (``?access_token=…``, ``&api_key=…``: ``url-token``);
- the value of a header given on ``curl``'s or ``wget``'s command line whose name ends in
  ``Key`` (random) or ``Secret`` (``-H "X-Custom-Key: …"``, ``auth-header``), which the
  header rule of :mod:`.assignments` leaves to their words.

A value is judged by :func:`~.judge.looks_password` (a person types these) and, under a
``…KEY`` name that need not hold a secret (``SORT_KEY``, ``CACHE_KEY``), by
:func:`~.judge.looks_secret` (random).
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
from clm_policy.memory.redact.syntax import ESCAPED, Rule, after_command
from clm_policy.memory.redact.token_checks import placeholder_token
from clm_policy.memory.redact.tools import OPTION_START, TYPED_VALUE, variable_start

# -- a password fed to a command's standard input ----------------------------------------------

# What reads a password from standard input: sudo -S (also -kS, --stdin), --password-stdin
# (docker, podman, helm, … login), passwd --stdin.
STDIN_READER = LazyPattern(
    r"""(?<![\w-])sudo(?:[ \t]++-[A-Za-z]*+[ \t]++[^-\s]\S*+|[ \t]++-[A-Za-z]*+)*?
        [ \t]++(?:-[A-Za-z]*S[A-Za-z]*+|--stdin)(?![\w-])
    |--password-stdin(?![\w-])
    |(?<![\w-])passwd[ \t](?:[^\n|;&]*?[ \t])?--stdin(?![\w-])""",
    re.VERBOSE,
)
# echo PW, echo -n PW, printf PW, printf 'PW\n': quoted to the closing quote (a "\n" before
# it stays; in JSON text the quote may be \" and the \n \\n), or bare to a blank; then a pipe,
# and the command that reads it, to its end.
ECHO = r"""(?<![\w-])(?:echo(?:[ \t]++-[neE]++)*+|printf(?:[ \t]++--)?)[ \t]++"""
ECHOED = r"""(?P<secret>(?(q)[^\n\\"']++|[^\s"'`\\|;&<>()]++))(?(q)(?:\\{1,2}n)?(?P=q))"""
PIPE_TO = r"""[ \t]*+\|[ \t]*+(?P<reader>[^\n|;&]{1,300}+)"""
PIPED = rf"""{ECHO}(?P<q>\\?["'])?{ECHOED}{PIPE_TO}"""
HERE_STRING = rf"<<<[ \t]*+{TYPED_VALUE}"
# chpasswd reads USER:PASSWORD lines: echo 'bob:PW' | chpasswd, chpasswd <<< 'bob:PW'. The
# user stays.
CHPASSWD_USER = r"""[^\s:"'`\\|;&<>()]++:"""
CHPASSWD_PIPED = rf"""{ECHO}(?P<q>\\?["'])?{CHPASSWD_USER}{ECHOED}{PIPE_TO}"""
CHPASSWD_HERE = rf"""(?<![\w-])chpasswd(?![\w-])[^\n|;&<]{{0,200}}+<<<[ \t]*+
    (?P<q>\\?["'])?{CHPASSWD_USER}{ECHOED}"""
CHPASSWD = LazyPattern(r"(?<![\w-])chpasswd(?![\w-])")
# openssl's pass phrase arguments: -pass pass:PW, -passin pass:PW, -passout, -password (env:,
# file:, fd: and stdin name where the phrase is: no phrase).
OPENSSL_PASS = rf"""(?<![\w-])-pass(?:in|out|word)?[ \t]++(?:\\?["'])?pass:{TYPED_VALUE}"""
# openssl's older pass phrase option: openssl enc -aes-256-cbc -k PW (the command on the line)
OPENSSL_K = rf"""(?<![\w-])-k[ \t]++{TYPED_VALUE}"""
# A USER:PW line of a here-document chpasswd reads (chpasswd <<EOF ⏎ bob:PW ⏎ EOF); in JSON
# text the line breaks are "\n". The check finds the chpasswd <<TAG the line belongs to.
HERE_LINE = r"""(?:(?<=\n)|(?<=\\n))[ \t]*+[^\s:"'`\\|;&<>()]++:
    (?P<secret>[^\s"'`\\]++)(?=[ \t]*+(?:\n|\\n|\Z))"""
CHPASSWD_DOC = LazyPattern(
    r"""(?<![\w-])chpasswd(?![\w-])[^\n|;&<]{0,200}+<<-?[ \t]*+(?:\\?["'])?(?P<tag>\w{1,40}+)"""
)
HERE_REACH = 2000
"""How far before a ``USER:PW`` line its ``chpasswd <<TAG`` may stand."""
# Windows: net use [Z: | *] \\server\share [PASSWORD | *] [/user:NAME] [/options]; the
# password may come after the options too. In JSON text the backslashes are doubled.
NET_USE = rf"""(?<![\w-])net[ \t]++use[ \t]++(?:(?:[A-Za-z]:|\*)[ \t]++)?\\\\[^\s"']++
    (?:[ \t]++/[^\s"']++)*+[ \t]++{TYPED_VALUE}"""


def _piped(m: re.Match[str]) -> bool:
    """``echo PW | sudo -S …``: the command after the pipe reads a password from it."""
    return STDIN_READER.search(m["reader"]) is not None and looks_password(m["secret"])


def _here_string(m: re.Match[str]) -> bool:
    """``sudo -S … <<< PW``: the command before it, on its line, reads a password."""
    text, start = m.string, m.start()
    # its line, 300 characters at most (rfind gives -1 when no line break is that near)
    line = max(text.rfind("\n", max(0, start - 300), start) + 1, start - 300)
    return STDIN_READER.search(text, line, start) is not None and looks_password(m["secret"])


def _password_option(m: re.Match[str]) -> bool:
    return looks_password(m["secret"])


def _openssl_k(m: re.Match[str]) -> bool:
    """``-k PW`` after ``openssl`` on its command line (``curl -k`` takes no value)."""
    return after_command(m.string, m.start(), ("openssl",)) and looks_password(m["secret"])


def _chpasswd_line(m: re.Match[str]) -> bool:
    """A ``USER:PW`` line inside a here-document that ``chpasswd <<TAG`` opened before it and
    no ``TAG`` line closed."""
    text, start = m.string, m.start()
    at = text.rfind("chpasswd", max(0, start - HERE_REACH), start)
    opened = CHPASSWD_DOC.match(text, at) if at >= 0 else None
    if opened is None or not looks_password(m["secret"]):
        return False
    body = text[opened.end() : start].replace("\\n", "\n").split("\n")[1:]
    return opened["tag"] not in (line.strip().strip("\\\"'") for line in body)


def _chpasswd(m: re.Match[str]) -> bool:
    """``echo 'bob:PW' | chpasswd`` (``sudo chpasswd``): chpasswd is the command it feeds."""
    return CHPASSWD.search(m["reader"]) is not None and looks_password(m["secret"])


# -- variables named for a secret --------------------------------------------------------------

# An upper-case name ending in a secret's word. ...PASSWORD, PASSWD, PWD: password-variable's.
SECRET_NAME = r"(?:[A-Z][A-Z0-9_]{0,60}?)?(?:KEY|TOKEN|SECRET|CREDENTIALS?|AUTH)"
# A ...KEY that holds a secret whatever it looks like; other keys (SORT_KEY, CACHE_KEY, GPG_KEY,
# PRIMARY_KEY) must look random.
SECRET_KEY_NAME = LazyPattern(
    r"(?:API|APP|ACCESS|SECRET|PRIVATE|AUTH|CLIENT|SERVICE|ACCOUNT|MASTER|ENCRYPTION|SIGNING"
    r"|LICENSE|SUBSCRIPTION|WRITE|ADMIN|DEPLOY)_?KEY$"
)
# Words before TOKEN that make it no credential: a page cursor, an anti-forgery nonce.
NOT_CREDENTIAL = LazyPattern(r"(?:^|_)(?:CSRF|XSRF|PAGE|NEXT|CURSOR|CONTINUATION|SYNC)_?TOKEN$")
SECRET_VARIABLE = rf"""(?:(?<![^\s;&|(`"':])|{ESCAPED})
    (?:(?<=\$env:)(?P<ps>)|(?<=setx[ \t])(?P<setx>))?
    (?P<name>{SECRET_NAME})(?![A-Za-z0-9_])
    # =; PowerShell's " = "; setx's blank; a YAML or .env map's ": " (also "NAME": in JSON)
    (?(ps)[ \t]*+=[ \t]*+|(?(setx)[ \t]++|(?:=|(?:\\?["'])?:[ \t]++|\\?["']:[ \t]*+)))
    {TYPED_VALUE}"""


def _secret_variable(m: re.Match[str]) -> bool:
    """A value under a variable named for a secret: 8 characters or more that look like a
    password, not shaped like a name or a placeholder (``created_at``, ``abc123abc123…``, as a
    token's body is judged) nor a template's fixed part (``api_org_<token>``); under a ``…KEY``
    that need not hold a secret, random."""
    name, value = m["name"], m["secret"]
    if len(value) < MIN_SECRET_LENGTH or NOT_CREDENTIAL.search(name) is not None:
        return False
    if name.endswith("KEY") and SECRET_KEY_NAME.search(name) is None:
        return looks_secret(value)
    return (
        not placeholder_token(value)  # created_at, sk_test_abc123abc123…
        and "<" not in value  # ?sig=<signature>
        and not glued_to_placeholder(m.string, m.end("secret"))  # api_org_<token>
        and looks_password(value)
    )


# -- .netrc, connection strings ----------------------------------------------------------------

# machine HOST login USER password PW, on one line or several; default login … password …
NETRC = rf"""(?<![\w-])(?:login|machine)[ \t]++[^\s"']++\s++password[ \t]++{TYPED_VALUE}"""
# Another key of a database connection string on the line: the Password= is that string's.
CONNECTION_KEYS = LazyPattern(
    r"(?:server|data[ ]source|host|user[ ]?id|uid|database|initial[ ]catalog|driver|provider)"
    r"[ \t]*=",
    re.IGNORECASE,
)
# After ";" (and a blank), a quote, or at a line's start: not "user=app password=… host=db"
# in a log line. The value ends at ";", a quote or the line's end.
CONNECTION_PASSWORD = r"""(?:(?<=[;"'])|(?<=;[ \t])|(?<!.))(?:password|pwd)[ \t]*+=[ \t]*+
    (?P<secret>[^;"'\s]++)(?=[ \t]*+(?:;|["']|$))"""


CONNECTION_REACH = 300
"""How far before and after ``Password=`` the other keys of its connection string may stand."""


def _connection_password(m: re.Match[str]) -> bool:
    """``Password=…;`` where another key of a connection string (``Server=``, ``User Id=``)
    stands on the same line, within :data:`CONNECTION_REACH` characters."""
    if not looks_password(m["secret"]):
        return False
    text, start, end = m.string, m.start(), m.end()
    line = text.rfind("\n", max(0, start - CONNECTION_REACH), start) + 1
    stop = text.find("\n", end, end + CONNECTION_REACH)
    around = text[
        max(line, start - CONNECTION_REACH) : end + CONNECTION_REACH if stop < 0 else stop
    ]
    return CONNECTION_KEYS.search(around) is not None


# -- a token as a URL's user -------------------------------------------------------------------

URL_TOKEN = r"""://(?:(?<=https://)|(?<=http://)|(?<=git://)|(?<=ssh://)|(?<=ftp://))
    (?P<secret>[A-Za-z0-9_.~-]{8,200}+)@(?=[A-Za-z0-9])"""


def _url_token(m: re.Match[str]) -> bool:
    """A user that looks random is a token (``https://<token>@github.com/…``); a name is not."""
    return looks_secret(m["secret"])


# A query parameter named for a credential: only a credential stands there (?access_token=…).
URL_QUERY = r"""[?&](?:access|refresh|auth|api|private|id)?[_-]?(?:token|key)
    (?<![?&]key)(?<![?&]id_key)(?<![?&]refresh_key)=(?P<secret>[^\s&#"'`<>\\]++)"""
URL_QUERY_ANCHOR = r"[?&][a-z_-]{0,8}(?:token|key)="


def _url_query(m: re.Match[str]) -> bool:
    """The value of a URL's query parameter named for a credential: a credential
    (:func:`~.judge.looks_credential`), in a URL (``://`` before it, no blank between)."""
    text, start = m.string, m.start()
    word = max(text.rfind(c, max(0, start - 2000), start) for c in " \t\n\"'`")
    return (
        "[REDACTED:" not in m["secret"]
        and text.find("://", word + 1, start) >= 0
        and looks_credential(m["secret"])
    )


# A header given on curl's or wget's command line (-H '…', --header="…") named …Key or …Secret.
FLAG_HEADER = r"""(?:-H[ \t]?|--header[ \t=])\\?["']
    (?P<name>(?:[A-Za-z0-9]{1,20}+-){0,4}+(?:key|secret))[ \t]*+:[ \t]*+
    (?P<secret>[A-Za-z0-9._~+/=-]++)"""


def _flag_header(m: re.Match[str]) -> bool:
    """A header's value on curl's or wget's command line: random under a ``…Key`` name (not
    ``Idempotency-Key: <uuid>`` alone: random is the test), a credential under ``…Secret``."""
    if not after_command(m.string, m.start(), ("curl", "wget")):
        return False
    if m["name"].lower().endswith("secret"):
        return looks_credential(m["secret"])
    return looks_secret(m["secret"])


SHELL_RULES: tuple[Rule, ...] = (
    Rule(  # echo PW | sudo -S …, printf 'PW\n' | docker login --password-stdin
        "command-line-password", PIPED, check=_piped, anchor="echo|printf", flags=re.VERBOSE
    ),
    Rule(  # sudo -S … <<< PW
        "command-line-password", HERE_STRING, ("<<<",), _here_string, flags=re.VERBOSE
    ),
    Rule(  # --password X, --password=X, any command
        "command-line-password",
        rf"{OPTION_START}--password(?:[ \t]++|=){TYPED_VALUE}",
        check=_password_option,
        anchor="--password",
        flags=re.VERBOSE,
    ),
    Rule(  # echo 'bob:PW' | chpasswd
        "command-line-password",
        CHPASSWD_PIPED,
        ("chpasswd",),
        _chpasswd,
        flags=re.VERBOSE,
    ),
    Rule(  # chpasswd <<< 'bob:PW'
        "command-line-password", CHPASSWD_HERE, ("chpasswd",), _password_option, flags=re.VERBOSE
    ),
    Rule(  # openssl enc -pass pass:PW, -passin pass:PW, -passout pass:PW
        "command-line-password", OPENSSL_PASS, ("pass:",), _password_option, flags=re.VERBOSE
    ),
    Rule(  # openssl enc -aes-256-cbc -k PW
        "command-line-password", OPENSSL_K, ("openssl",), _openssl_k, flags=re.VERBOSE
    ),
    Rule(  # chpasswd <<EOF ⏎ bob:PW ⏎ EOF
        "command-line-password", HERE_LINE, ("chpasswd",), _chpasswd_line, flags=re.VERBOSE
    ),
    Rule(  # net use Z: \\srv\share PW /user:bob
        "command-line-password",
        NET_USE,
        check=_password_option,
        anchor=r"net[ \t]+use[ \t]",
        flags=re.VERBOSE | re.IGNORECASE,
    ),
    Rule(  # export API_TOKEN=…, NAME=… cmd, set NAME=…, setx NAME …, $env:NAME = "…", NAME: …
        "secret-variable",
        SECRET_VARIABLE,
        ("KEY", "TOKEN", "SECRET", "CREDENTIAL", "AUTH"),
        _secret_variable,
        anchor="KEY|TOKEN|SECRET|CREDENTIAL|AUTH",
        flags=re.VERBOSE,
        start=variable_start,
        cased=True,
    ),
    Rule(
        "netrc-password",
        NETRC,
        check=_password_option,
        anchor=r"(?:login|machine)[ \t]",
        flags=re.VERBOSE,
    ),
    Rule(  # Server=…;User Id=…;Password=…;  Pwd=…
        "connection-string-password",
        CONNECTION_PASSWORD,
        check=_connection_password,
        anchor=r"(?:password|pwd)[ \t]*=",
        flags=re.IGNORECASE | re.VERBOSE,
    ),
    Rule(  # https://<token>@github.com/…: the anchor wants a user, so a plain URL costs nothing
        "url-token",
        URL_TOKEN,
        check=_url_token,
        anchor=r"://[a-z0-9_.~-]{8,200}@",
        flags=re.VERBOSE,
    ),
    Rule(  # https://host/path?access_token=…, &api_key=…
        "url-token",
        URL_QUERY,
        check=_url_query,
        anchor=URL_QUERY_ANCHOR,
        flags=re.VERBOSE | re.IGNORECASE,
    ),
    Rule(  # curl -H "X-Custom-Key: …", wget --header="X-App-Secret: …"
        "auth-header",
        FLAG_HEADER,
        check=_flag_header,
        anchor=r"-h[ \t]?\\?[\"']|--header[ \t=]",
        flags=re.VERBOSE | re.IGNORECASE,
    ),
)
"""The rules for what a shell's command line holds, in the order they run (after the
key/value rules)."""
