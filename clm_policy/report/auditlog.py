"""``clm-policy log``'s output, text or JSON: click's command and the quick path both print
through :func:`render`."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from clm_policy.memory.audit import AuditEntry

NOTHING = "no matching commits"
"""What ``log`` says (on standard error) when no commit matches."""

_FACTS = (
    ("Clm-Rule", "rule"),
    ("Clm-Context-Tokens", "context-tokens"),
    ("Clm-Redactions", "redactions"),
)
"""The trailers ``log`` shows on an entry's second line, and their names there."""
_LINES = (
    ("Clm-Manifest", "manifest"),
    ("Clm-Recall", "recall"),
    ("Clm-Recall-Agent", "the agent's words hold of the record"),
    ("Clm-Contradictions", "lines where the record contradicts the agent:"),
    ("Clm-Seed-Kept", "seed kept of the record"),
    ("Clm-Summary-Kept", "summary kept"),
    ("Clm-Summarizer", "summarizer"),
)
"""The trailers ``log`` shows on a line of their own (when present), and their names there;
a ``-Missing`` trailer follows its figure, ``Clm-Summarizer`` only when it is not the
default (deterministic, no fallback). Only ``recall`` (a model's summary against facts it did
not pick) and the agent's words against the record are measurements of a summary; the
``kept`` figures say what a budget or the cleaning let through."""
BY_MODEL = "the model's handoff holds of the record"
"""``Clm-Recall-Agent``'s name when a model wrote the handoff (``Clm-Summarizer: openai:…``)."""


def render(entries: list[AuditEntry], fmt: str) -> str | None:
    """The whole output, in one piece (one write); None when there is nothing to list in
    text (say :data:`NOTHING` instead)."""
    if fmt == "json":
        import json

        return json.dumps([e.as_dict() for e in entries], indent=2)
    if not entries:
        return None
    return "\n".join(lines(entries))


def lines(entries: list[AuditEntry]) -> Iterator[str]:
    for e in entries:
        t = e.trailers
        yield f"{e.commit[:12]}  {e.date}  {e.subject}"
        facts = [f"{name}={t[key]}" for key, name in _FACTS if key in t]
        if facts:
            yield "              " + "  ".join(facts)
        for key, name in _LINES:
            value = t.get(key)
            if not value or (key == "Clm-Summarizer" and value == "deterministic"):
                continue
            if t.get(f"{key}-Missing"):
                value += f"; missing {t[f'{key}-Missing']}"
            if key == "Clm-Recall-Agent" and t.get("Clm-Summarizer", "").startswith("openai:"):
                name = BY_MODEL  # the agent wrote no handoff: a model wrote these words
            yield f"              {name} {value}"
