"""Key/value rules: a secret recognised by what it is assigned to.

``password=...``, ``Authorization: Bearer ...``, ``--db-token X``, a password in a URL: the key
stays, only the value is replaced — and only when the value looks like a secret
(:mod:`.judge`), so ``password: changeme`` and ``api_key_env = "OPENAI_API_KEY"`` are left
alone. They run after the token rules, which would also match some of these values.
"""

from __future__ import annotations

import re

from clm_policy.memory.redact.syntax import (
    ASSIGN,
    AWS_SECRET_NAME,
    AWS_SECRET_VALUE,
    BLANK,
    KEYWORD,
    KEYWORD_ANCHOR,
    VALUE,
    Rule,
    bare,
    not_placeholder,
    random_value,
)

FLAG = bare("--", r"\w-")

ASSIGNMENT_RULES: tuple[Rule, ...] = (
    Rule(
        "aws-secret-access-key",
        re.compile(
            rf"""{AWS_SECRET_NAME}{ASSIGN}{BLANK}*+(?:\\?["'`]|%2[27]|%60)?
            (?P<secret>{AWS_SECRET_VALUE})""",
            re.IGNORECASE | re.ASCII | re.VERBOSE,
        ),
        anchor=re.compile("aws|secret"),
    ),
    Rule(
        "url-password",
        re.compile(r"""://(?<=[A-Za-z0-9]://)[^\s:/@"'<>]*+:(?P<secret>[^\s/@"'<>]++)@"""),
        ("://",),
        not_placeholder,
    ),
    Rule(
        "bearer-token",
        re.compile(
            rf"{bare('b', 'A-Za-z0-9_')}earer{BLANK}++(?P<secret>[A-Za-z0-9._~+/=-]++)",
            re.I | re.ASCII,
        ),
        check=random_value,
        anchor=re.compile("bearer"),
    ),
    Rule(
        "basic-auth",
        re.compile(
            rf"""authorization(?:\\?["']|%2[27])?{BLANK}*+(?:[:=]|%3[AaDd]){BLANK}*+"""
            rf"""(?:\\?["']|%2[27])?basic{BLANK}++(?P<secret>[A-Za-z0-9+/=]{{8,}}+)""",
            re.IGNORECASE | re.ASCII,
        ),
        check=not_placeholder,
        anchor=re.compile("authorization"),
    ),
    Rule(
        "generic-secret",
        re.compile(rf"{KEYWORD}[A-Za-z0-9_.-]{{0,40}}+{ASSIGN}{VALUE}", re.I | re.X | re.A),
        check=random_value,
        anchor=KEYWORD_ANCHOR,
    ),
    Rule(  # command-line flags: --password X, --db-token X
        "generic-secret",
        re.compile(
            rf"{FLAG}[A-Za-z0-9_.-]{{0,40}}?{KEYWORD}[A-Za-z0-9_.-]{{0,40}}+{BLANK}{VALUE}",
            re.I | re.X | re.A,
        ),
        ("--",),
        random_value,
    ),
)
"""Key/value rules, in the order they run."""
