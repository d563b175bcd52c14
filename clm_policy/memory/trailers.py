"""Commit messages of the audit trail: subject, short body, and ``Clm-*`` trailers.

Built here as plain text — GitPython's ``trailers=`` drops the blank line before them and git
then sees no trailers — and parsed back by git itself (``git log --format=%(trailers...)``).
"""

from __future__ import annotations

from clm_policy.base.record import Record, field
from clm_policy.base.termsafe import terminal_safe

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

TRAILER_KEYS = (
    "Clm-Event",
    "Clm-Session",
    "Clm-Parent-Session",
    "Clm-Step",
    "Clm-Rule",
    "Clm-Context-Tokens",
    "Clm-Policy",
    "Clm-Manifest",
    "Clm-Handoff",
    "Clm-Key",
    "Clm-Seed",
    "Clm-Agent",
    "Clm-Agent-Trigger",
    "Clm-Agent-Tokens",
    "Clm-Via",
    "Clm-Recall",
    "Clm-Recall-Missing",
    "Clm-Recall-Agent",
    "Clm-Recall-Agent-Missing",
    "Clm-Recall-Agent-Kinds",
    "Clm-Contradictions",
    "Clm-Summary-Kept",
    "Clm-Summary-Kept-Missing",
    "Clm-Seed-Kept",
    "Clm-Summarizer",
    "Clm-Redactions",
    "Clm-Migrated",
)


def _git_text(text: str) -> str:
    """``text`` as git accepts it in a message: git refuses a NUL byte, so it becomes U+FFFD."""
    return str(text).replace("\x00", "\ufffd")


def _one_line(text: str, limit: int = 200) -> str:
    flat = terminal_safe(" ".join(_git_text(text).split()), lines=False)
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


class CommitMessage(Record):
    """A commit of the memory repository: what happened (subject), why (body), facts
    (trailers, in :data:`TRAILER_KEYS` order)."""

    subject: str
    body: str = ""
    trailers: Mapping[str, str] = field(default_factory=dict)
    HASHABLE = False

    def render(self) -> str:
        """The message as git takes it. Every part passes the printer's rule
        (:func:`~clm_policy.base.termsafe.terminal_safe`): ``git log`` shows it in a terminal
        or a CI log, and a handoff's fields or a file name may hold what a terminal obeys."""
        parts = [_one_line(self.subject, 120)]
        body = "\n".join(
            line.rstrip() for line in terminal_safe(_git_text(self.body)).strip().splitlines()
        )
        if body:
            parts.append(body)
        known = [k for k in TRAILER_KEYS if k in self.trailers]
        extra = [k for k in self.trailers if k not in TRAILER_KEYS]
        lines = [
            f"{k}: {_one_line(self.trailers[k])}"
            for k in [*known, *extra]
            if str(self.trailers[k]).strip()
        ]
        if lines:
            parts.append("\n".join(lines))
        return "\n\n".join(parts) + "\n"


def event_subject(event: str, session: str, step: int | None, rule: str | None) -> str:
    """``clm(<event>): <session> step <n>, <rule>`` (parts left out when unknown)."""
    text = f"clm({event}): {session}"
    if step is not None:
        text += f" step {step}"
    if rule:
        text += f", {rule}"
    return text
