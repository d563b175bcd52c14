"""Token rules: secrets recognised by their own shape, wherever they stand.

A provider's token carries a prefix (``ghp_``, ``sk-ant-``, ``AKIA``) and a fixed alphabet and
length, so it is recognised bare — in prose, in a log line, after a JSON escape — and replaced
whole. Private keys come first: their body must not be cut up by the other rules.

The formats are the providers' own, as documented by gitleaks
(https://github.com/gitleaks/gitleaks, MIT License, Copyright (c) 2019 Zachary Rice); the
regular expressions here are our own.
"""

from __future__ import annotations

import re

from clm_policy.memory.redact.syntax import (
    Rule,
    bare,
    has_key_body,
    token,
)

PEM_LABEL = r"[ A-Z0-9]{0,40}PRIVATE[ ]KEY(?:[ ]BLOCK)?-----"  # [ ]: used in verbose regexes
LINE_BREAK = r"(?:\r?\n|(?:\\r)?\\n)"  # a line break, or its JSON escape \n or \r\n

TOKEN_RULES: tuple[Rule, ...] = (
    Rule(
        "private-key",
        re.compile(
            rf"""(?P<secret>-----BEGIN{PEM_LABEL}
            (?:[^-]*+(?:-(?!----)[^-]*+)*+-----END{PEM_LABEL}  # the whole block, or
            |(?:{LINE_BREAK}[ \t]*+[A-Za-z0-9+/=]++(?={LINE_BREAK}|["']|\Z))*))  # a cut one
            """,
            re.VERBOSE,
        ),
        ("PRIVATE KEY",),
        has_key_body,
    ),
    token(
        "aws-access-key-id",
        rf"{bare('A', 'A-Za-z0-9')}(?:KIA|SIA|BIA|CCA)[A-Z0-9]{{16}}(?![A-Za-z0-9])",
        *("AKIA", "ASIA", "ABIA", "ACCA"),
    ),
    token("github-pat", rf"{bare('ghp_')}[A-Za-z0-9]{{36,}}+", "ghp_"),
    token("github-oauth", rf"{bare('gho_')}[A-Za-z0-9]{{36,}}+", "gho_"),
    token(
        "github-app-token",
        rf"(?:{bare('ghu_')}|{bare('ghs_')})[A-Za-z0-9]{{36,}}+",
        "ghu_",
        "ghs_",
    ),
    token("github-refresh-token", rf"{bare('ghr_')}[A-Za-z0-9]{{36,}}+", "ghr_"),
    token("github-fine-grained-pat", rf"{bare('github_pat_')}[A-Za-z0-9_]{{82,}}+", "github_pat_"),
    # Anthropic before OpenAI: both start with "sk-".
    token("anthropic-admin-key", rf"{bare('sk-ant-admin')}\d\d-[A-Za-z0-9_-]{{20,}}+", "sk-ant-"),
    token(
        "anthropic-api-key",
        rf"{bare('sk-ant-')}[a-z]{{2,8}}\d\d-[A-Za-z0-9_-]{{20,}}+",
        "sk-ant-",
    ),
    token(
        "openai-api-key",
        rf"{bare('sk-')}(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{{20,}}+"
        rf"|[A-Za-z0-9]{{48}}(?![A-Za-z0-9_-]))",
        "sk-",
    ),
    token(
        "slack-webhook-url",
        r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_+-]{20,}+",
        "hooks.slack.com",
    ),
    token(
        "slack-token",
        rf"(?:{bare('xox', 'A-Za-z0-9')}[abprse]|{bare('xapp', 'A-Za-z0-9')})-[A-Za-z0-9-]{{10,}}+",
        *("xox", "xapp-"),
    ),
    token("gcp-api-key", rf"{bare('AIza')}[A-Za-z0-9_-]{{35}}(?![A-Za-z0-9_-])", "AIza"),
    token(
        "jwt",
        rf"{bare('eyJ')}[A-Za-z0-9_-]{{8,}}+\.eyJ[A-Za-z0-9_-]{{8,}}+\.[A-Za-z0-9_-]*+",
        "eyJ",
    ),
)
"""Token rules, in the order they run (private keys first; Anthropic before OpenAI)."""
