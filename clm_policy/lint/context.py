"""What a check sees of one policy file: its document, what loading it reported, the result."""

from __future__ import annotations

from dataclasses import dataclass, field

from clm_policy.base.errors import ClmError
from clm_policy.formats.yamlio import YamlDocument
from clm_policy.policy.engine import Policy
from clm_policy.policy.load import ResolvedPolicy


@dataclass
class LintContext:
    """One policy file under lint.

    ``errors`` are the problems loading reported, each named with the ID of the check that
    reports it (checks.LOADING); ``resolved`` and ``policy`` are None when loading stopped
    before them (then the analyses, checks.ANALYSES, have nothing to look at).
    """

    file: str
    doc: YamlDocument | None
    errors: list[ClmError] = field(default_factory=list)
    resolved: ResolvedPolicy | None = None
    policy: Policy | None = None
