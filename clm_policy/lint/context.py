"""What a check sees of one policy file: its document, what loading it reported, the result."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from clm_policy.errors import ClmError, Location
from clm_policy.lint.problem import Problem
from clm_policy.policy.engine import Policy
from clm_policy.policy.load import ResolvedPolicy
from clm_policy.yamlio import YamlDocument

UNCLAIMED = "yaml-syntax"  # the check that reports loading errors no other check claims


@dataclass
class LintContext:
    """One policy file under lint.

    ``errors`` are the problems loading reported, each tagged with the check that owns it;
    ``resolved`` and ``policy`` are None when loading stopped before them (then only the
    loading checks have something to say).
    """

    file: str
    doc: YamlDocument | None
    errors: list[ClmError] = field(default_factory=list)
    resolved: ResolvedPolicy | None = None
    policy: Policy | None = None

    def loading_problems(self, check: str, level: str) -> Iterator[Problem]:
        """The problems loading reported for ``check``.

        An error no check claims (one without a ``check``) belongs to ``yaml-syntax``: a
        problem nobody claims is still reported. One located at a file only (``file: no such
        file``) is reported at its first line.
        """
        for error in self.errors:
            if error.check == check or (error.check is None and check == UNCLAIMED):
                where = error.location or Location(self.file)
                if where.line <= 0:
                    where = Location(where.file, 1, 1)
                yield Problem.at(where, check, level, error.message)
