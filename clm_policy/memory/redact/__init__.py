"""Secrets out of text and plain data, before anything is hashed into git.

Agent memory (Markdown, JSON manifests, JSONL logs) is committed to git, and a secret that
reaches a git object stays in the history for good. So everything the memory store writes goes
through :func:`redact_text` or :func:`redact_data` first -- or through one :class:`Redactor` per
commit, whose total becomes the ``Clm-Redactions`` trailer. Each secret found is replaced by
``[REDACTED:<rule-id>]``; redacting redacted text changes nothing.

Token rules (:mod:`.tokens`: private keys and providers' tokens) replace the whole token, when
its random part is random enough and no placeholder (:mod:`.token_checks`). Key/value rules
(:mod:`.assignments`: ``password=...`` in the syntaxes of many languages, ``Authorization:
<scheme> ...``, token headers such as ``X-Api-Key:``, ``curl -u``, a password in a URL) keep the
key and replace only the value, and only when it looks like a secret (:mod:`.judge`), so
``password: changeme`` and ``api_key_env = "OPENAI_API_KEY"`` are left alone. :mod:`.engine`
applies them in linear time.
Importing the redactor compiles nothing (:mod:`clm_policy.base.lazypattern`): a pattern
compiles the first time a text may hold its secret.

The rules are modelled on the token formats documented by gitleaks
(https://github.com/gitleaks/gitleaks, MIT License, Copyright (c) 2019 Zachary Rice); the
regular expressions here are our own. docs/redaction.md lists the rules, what is not redacted,
and the limits: no detector is complete, so a key that reached an agent is rotated anyway.
"""

from __future__ import annotations

from clm_policy.memory.redact.engine import (
    RULES,
    Redaction,
    Redactor,
    redact_data,
    redact_text,
    untag,
)
from clm_policy.memory.redact.judge import is_placeholder, looks_secret, shannon_entropy
from clm_policy.memory.redact.syntax import Rule

__all__ = [
    "RULES",
    "Redaction",
    "Redactor",
    "Rule",
    "is_placeholder",
    "looks_secret",
    "redact_data",
    "redact_text",
    "shannon_entropy",
    "untag",
]
