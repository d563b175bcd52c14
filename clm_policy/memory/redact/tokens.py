"""Token rules: secrets recognised by their own shape, wherever they stand.

A provider's token carries a prefix (``ghp_``, ``sk-ant-``, ``AKIA``) and a fixed alphabet and
length, so it is recognised bare — in prose, in a log line, after a JSON escape — and replaced
whole. Each pattern captures the random part after the prefix in the group ``body``, which
the rule's check (:mod:`.token_checks`) judges.

Where the prefix alone names the kind (``ghp_``, ``pypi-AgEIcHlwaS5vcmc``, ``sk_live_``), a body
written in hex or in lower case only is that token still — scanners' tests and some issuers
write them so — so the minimum entropy is set from random **hex** bodies of the format's
shortest length (:data:`HEX_FLOOR`), not from its full alphabet; the placeholder shapes keep
the examples out. Formats without such a prefix (an AWS key id, an Azure AD client secret, a
legacy OpenAI key, a Twilio ``SK`` id) keep the floor of their own alphabet.

One rule here is a key/value rule: an old Heroku API key is a bare UUID, which only a key
naming Heroku tells apart from any other UUID; the key stays and the UUID is replaced.

The formats are the providers' own, as documented by gitleaks
(https://github.com/gitleaks/gitleaks, MIT License, Copyright (c) 2019 Zachary Rice),
trufflehog and detect-secrets; the regular expressions here are our own.
"""

from __future__ import annotations

import re

from clm_policy.base.lazypattern import LazyPattern
from clm_policy.memory.redact.syntax import (
    ASSIGN,
    BLANK,
    ESCAPE_BEFORE,
    ESCAPED,
    Rule,
    bare,
    has_key_body,
)
from clm_policy.memory.redact.token_checks import (
    exact_body,
    is_random,
    jwt,
    random_body,
    slack_token,
    slack_webhook,
    uuid_body,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from clm_policy.memory.redact.token_checks import Check

PEM_LABEL = r"[ A-Z0-9]{0,40}PRIVATE[ ]KEY(?:[ ]BLOCK)?-----"  # [ ]: used in verbose regexes
LINE_BREAK = r"(?:\r?\n|(?:\\r)?\\n)"  # a line break, or its JSON escape \n or \r\n
PEM_LABEL_URL = r"(?:%20[A-Z0-9]{1,12}){0,3}%20PRIVATE%20KEY(?:%20BLOCK)?-----"  # URL-encoded

# The end of a token whose alphabet is letters, digits, _ and -: the next character is none.
END = r"(?![A-Za-z0-9_-])"
URLSAFE = r"[A-Za-z0-9_-]"
# GitLab tokens in the routable format end with ".<version>.<checksum>" (lower case, digits).
GITLAB_ROUTE = r"(?:\.[0-9a-z]{2,}+){0,2}+"
# GitLab lets an instance put its own prefix before the token type (SIE-glpat-…): a "-" before
# a GitLab prefix does not make it part of another word.
GITLAB_WORD = "A-Za-z0-9_"
# Azure AD client secrets: letters, digits and _ ~ . - ("-" last: a character class).
AZURE = r"A-Za-z0-9_~.-"
AZURE_HEAD = rf"[{AZURE}]{{3}}[0-9]Q~"
ANTHROPIC_LENGTH = 95
"""What follows ``sk-ant-api03-``/``sk-ant-admin01-`` (93 characters and ``AA``) or an OAuth
token's ``sk-ant-oat01-`` (95)."""
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


HEX_FLOOR = {
    10: 1.0,  # lowest of 10^6 random bodies: 1.30
    20: 2.0,  # 2.28
    27: 2.3,  # 2.63
    34: 2.5,  # 2.83
    35: 2.5,  # 2.82
    36: 2.5,  # 2.82
    39: 2.7,  # 3.00
    50: 2.8,  # 3.11
    60: 3.0,  # 3.31 (58)
    82: 3.1,  # 3.46
    100: 3.2,  # 3.58
}
"""Minimum entropy of a prefixed token's random part, by the format's shortest length: a few
tenths of a bit below the lowest of a million random hex bodies of that length."""


SHORT_SK_FLOOR = 2.8
"""Minimum entropy of a bare ``sk-`` key's body of 20 to 31 letters and digits (the lowest of
300,000 random bodies of 20: 3.14)."""
_OPENAI_BODY = random_body(2.6, "body", "legacy")
_CAPITALISED_WORDS = LazyPattern("(?:[A-Z][a-z]++)++")


def _openai_key(m: re.Match[str]) -> bool:
    """An OpenAI key; a bare ``sk-`` key under 32 characters (other OpenAI-compatible APIs')
    also needs both cases of letters, as a generated body of that alphabet has them (a name in
    one case, ``sk-learn-…``, has not)."""
    short = m["short"]
    if short is None:
        return _OPENAI_BODY(m)
    return (
        short.lower() != short != short.upper()
        and _CAPITALISED_WORDS.fullmatch(short) is None  # sk-ThisIsMyOwnKeyName
        and is_random(short, SHORT_SK_FLOOR)
    )


def token(rule_id: str, pattern: str, needles: tuple[str, ...], check: Check) -> Rule:
    """A rule replacing the whole of ``pattern``'s match."""
    return Rule(rule_id, f"(?P<secret>{pattern})", needles, check)


def prefixed(
    rule_id: str, prefix: str, body: str, floor: float, *, head: str = "", end: str = ""
) -> Rule:
    """A token: ``prefix`` standing bare, ``head``, its random part ``body`` (``floor``: the
    minimum entropy of that part), then ``end``."""
    source = rf"{bare(prefix)}{head}(?P<body>{body}){end}"
    return token(rule_id, source, (prefix,), random_body(floor))


def gitlab(rule_id: str, *prefixes: str) -> Rule:
    """A GitLab token: a prefix, 20 or more URL-safe characters, maybe a routable suffix."""
    starts = "|".join(bare(p, GITLAB_WORD) for p in prefixes)
    return token(
        rule_id,
        rf"(?:{starts})(?P<body>{URLSAFE}{{20,}}+){GITLAB_ROUTE}",
        prefixes,
        random_body(HEX_FLOOR[20]),
    )


TOKEN_RULES: tuple[Rule, ...] = (
    Rule(
        "private-key",
        rf"""(?P<secret>-----BEGIN{PEM_LABEL}
        (?:[^-]*+(?:-(?!----)[^-]*+)*+-----END{PEM_LABEL}  # the whole block, or
        |(?:{LINE_BREAK}[ \t]*+[A-Za-z0-9+/=]++(?={LINE_BREAK}|["']|\Z))*))  # a cut one
        """,
        ("PRIVATE KEY",),
        has_key_body,
        flags=re.VERBOSE,
    ),
    Rule(  # the same, URL-encoded: %20 for its spaces, %0A (%0D%0A) for its line breaks
        "private-key",
        rf"""(?P<secret>-----BEGIN{PEM_LABEL_URL}
        (?:[^-]*+(?:-(?!----)[^-]*+)*+-----END{PEM_LABEL_URL}  # the whole block, or
        |(?:(?:%0[Dd])?%0[Aa](?:[A-Za-z0-9/]|%2[BbFf]|%3[Dd])++)*))  # a cut one
        """,
        ("PRIVATE%20KEY",),
        has_key_body,
        flags=re.VERBOSE,
    ),
    token(
        "aws-access-key-id",
        rf"{bare('A', 'A-Za-z0-9')}(?:KIA|SIA|BIA|CCA)(?P<body>[A-Z0-9]{{16}})(?![A-Za-z0-9])",
        ("AKIA", "ASIA", "ABIA", "ACCA"),
        random_body(2.2),
    ),
    prefixed("github-pat", "ghp_", "[A-Za-z0-9]{36,}+", HEX_FLOOR[36]),
    prefixed("github-oauth", "gho_", "[A-Za-z0-9]{36,}+", HEX_FLOOR[36]),
    token(
        "github-app-token",
        rf"(?:{bare('ghu_')}|{bare('ghs_')})(?P<body>[A-Za-z0-9]{{36,}}+)",
        ("ghu_", "ghs_"),
        random_body(HEX_FLOOR[36]),
    ),
    prefixed("github-refresh-token", "ghr_", "[A-Za-z0-9]{36,}+", HEX_FLOOR[36]),
    prefixed("github-fine-grained-pat", "github_pat_", "[A-Za-z0-9_]{82,}+", HEX_FLOOR[82]),
    # Anthropic before OpenAI: both start with "sk-".
    token(
        "anthropic-admin-key",
        rf"{bare('sk-ant-admin')}\d\d-(?P<body>{URLSAFE}{{20,}}+)",
        ("sk-ant-",),
        exact_body(HEX_FLOOR[20], ANTHROPIC_LENGTH),
    ),
    token(
        "anthropic-api-key",
        rf"{bare('sk-ant-')}[a-z]{{2,8}}\d\d-(?P<body>{URLSAFE}{{20,}}+)",
        ("sk-ant-",),
        exact_body(HEX_FLOOR[20], ANTHROPIC_LENGTH),
    ),
    token(
        "openai-api-key",
        # sk-proj-, sk-svcacct-, sk-admin-, sk-None- (2024); sk- and 48 (legacy), or 32 or
        # more (the keys of OpenAI-compatible APIs: DeepSeek's sk- and 32 hex digits)
        rf"{bare('sk-')}(?:(?:proj|svcacct|admin|None)-(?P<body>{URLSAFE}{{20,}}+)"
        rf"|(?P<legacy>[A-Za-z0-9]{{32,}}+){END}|(?P<short>[A-Za-z0-9]{{20,31}}+){END})",
        ("sk-",),
        _openai_key,
    ),
    token(
        "slack-webhook-url",
        # with its scheme, or standing alone (hooks.slack.com/services/…, also after an escape)
        rf"(?:https?://|(?<![A-Za-z0-9_.-])|{ESCAPED})"
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_+-]{20,}+",
        ("hooks.slack.com",),
        slack_webhook,
    ),
    token(
        "slack-token",
        rf"(?:{bare('xox', 'A-Za-z0-9')}[abprse]|{bare('xapp', 'A-Za-z0-9')})-[A-Za-z0-9-]{{10,}}+",
        ("xox", "xapp-"),
        slack_token,
    ),
    prefixed("gcp-api-key", "AIza", rf"{URLSAFE}{{35}}", HEX_FLOOR[35], end=END),
    token(
        "jwt",
        rf"{bare('eyJ')}(?P<head>{URLSAFE}{{8,}}+)\.eyJ(?P<body>{URLSAFE}{{8,}}+)"
        rf"(?:\.(?P<sig>{URLSAFE}*+))?",
        ("eyJ",),
        jwt,
    ),
    prefixed("npm-token", "npm_", "[A-Za-z0-9]{36}", HEX_FLOOR[36], end=END),
    token(  # a macaroon: base64 of its location, pypi.org or test.pypi.org, then the rest
        "pypi-token",
        rf"{bare('pypi-')}AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)(?P<body>{URLSAFE}{{50,}}+)",
        ("pypi-AgE",),
        random_body(HEX_FLOOR[50]),
    ),
    # Stripe: 24 characters (older keys) to 99; scanners take 10 and more, and "prod" too
    *(
        token(
            f"stripe-{kind}-key",
            rf"{bare(head)}(?:live|test|prod)_(?P<body>[A-Za-z0-9]{{10,}}+)(?!_)",
            (f"{head}live_", f"{head}test_", f"{head}prod_"),
            random_body(HEX_FLOOR[10]),
        )
        for kind, head in (("secret", "sk_"), ("restricted", "rk_"))
    ),
    prefixed("huggingface-token", "hf_", "[A-Za-z0-9]{34}", HEX_FLOOR[34], end=END),
    prefixed("huggingface-org-token", "api_org_", "[A-Za-z0-9]{34}", HEX_FLOOR[34], end=END),
    gitlab("gitlab-pat", "glpat-"),
    gitlab("gitlab-pipeline-trigger-token", "glptt-"),
    gitlab("gitlab-runner-token", "GR1348941", "glrt-"),  # registration, authentication
    gitlab("gitlab-deploy-token", "gldt-"),
    prefixed("dockerhub-pat", "dckr_", rf"{URLSAFE}{{27,}}+", HEX_FLOOR[27], head="(?:pat|oat)_"),
    token(
        "digitalocean-token",
        rf"{bare('do')}[opr]_v1_(?P<body>[0-9a-f]{{64}}){END}",
        ("_v1_",),
        random_body(3.0),
    ),
    prefixed("twilio-api-key", "SK", "[0-9a-fA-F]{32}", 2.5, end=END),
    token(  # SG.<key id>.<secret>
        "sendgrid-api-key",
        rf"{bare('SG.', 'A-Za-z0-9_.-')}{URLSAFE}{{20,24}}+\.(?P<body>{URLSAFE}{{39,50}}+){END}",
        ("SG.",),
        random_body(HEX_FLOOR[39]),
    ),
    prefixed("shopify-token", "shp", "[0-9a-fA-F]{32}", 2.5, head="(?:at|ca|pa|ss)_", end=END),
    token(  # ATATT3<base64url>=<8-digit checksum>; the "=" may be URL-encoded
        "atlassian-api-token",
        rf"{bare('ATATT3')}(?P<body>{URLSAFE}{{100,}}+)(?:(?:=|%3[Dd])[A-Za-z0-9]{{8}}{END})?",
        ("ATATT3",),
        random_body(HEX_FLOOR[100]),
    ),
    # Azure Databricks adds "-<n>" to some
    prefixed("databricks-token", "dapi", "[a-h0-9]{32}", 2.5, end=rf"(?:-[0-9]++)?{END}"),
    prefixed("heroku-api-key", "HRKU-", rf"{URLSAFE}{{60,}}+", HEX_FLOOR[60]),
    # Three characters, a digit, "Q~", then 31 to 34 more: no prefix to search for, so the
    # token is told apart by standing alone on both sides (a "." that ends a sentence after it
    # does not count). The lookbehinds come after the head: they are tried only behind a
    # "Q~". After the prefixed tokens: its alphabet overlaps theirs.
    token(
        "azure-ad-client-secret",
        rf"{AZURE_HEAD}(?:(?<![{AZURE}]{AZURE_HEAD})|{ESCAPE_BEFORE.format(AZURE_HEAD)})"
        rf"(?P<body>[{AZURE}]{{31,34}}+)(?![A-Za-z0-9_~-])(?!\.[{AZURE}])",
        ("Q~",),
        random_body(3.3),
    ),
    Rule(  # the legacy Heroku API key, a UUID: only after a key naming Heroku; the key stays
        "heroku-api-key",
        rf"""(?:(?<![A-Za-z])|(?-i:(?<=[a-z])(?=[A-Z]))|{ESCAPED})
        heroku[A-Za-z0-9_.-]{{0,40}}+{ASSIGN}{BLANK}*+(?:\\?["'`]|%2[27]|%60)?
        (?P<secret>(?P<body>{UUID})){END}""",
        check=uuid_body(2.5),
        anchor="heroku",
        flags=re.IGNORECASE | re.VERBOSE | re.ASCII,
    ),
)
"""Token rules, in the order they run (private keys first; Anthropic before OpenAI)."""
