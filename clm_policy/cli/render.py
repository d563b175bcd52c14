"""What ``decide`` prints, on both of its paths (clm_policy.cli.decide and the quick
clm_policy.cli.fast.decide; no click here): :mod:`clm_policy.report.explain`'s text, and what a
decision read from a transcript adds.
"""

from __future__ import annotations

from clm_policy.report.explain import render_decision

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from clm_policy.lifecycle.sources import Resolved
    from clm_policy.models.decision import Decision
    from clm_policy.transcripts.reading import TranscriptReading


def render(decision: Decision, fmt: str, resolved: Resolved) -> str:
    """What ``decide`` prints for ``decision`` (without ``--explain``) of the state
    ``resolved``."""
    reading = resolved.reading
    if fmt == "json":
        import json

        return json.dumps({**decision.as_dict(), **from_transcript(reading)}, indent=2)
    return render_decision(decision, resolved.window_from) + transcript_note(reading)


def from_transcript(reading: TranscriptReading | None) -> dict[str, Any]:
    """The JSON keys a decision from a transcript adds."""
    if reading is None:
        return {}
    return {
        "context_estimated": reading.context_estimated,
        "transcript": {
            "format": reading.format,
            "path": reading.path,
            "model": reading.model,
            "warnings": list(reading.warnings),
        },
    }


def transcript_note(reading: TranscriptReading | None) -> str:
    """The text lines a decision from a transcript adds."""
    if reading is None:
        return ""
    note = f"\nread:      {reading.format} transcript {reading.path}"
    if reading.model:
        note += f" (model {reading.model})"
    if reading.context_estimated:
        why = "; ".join(reading.warnings or ["no usage"])
        # (the reader's own words say "context estimated" where they say why)
        note += "\n           " + (
            why if "context estimated" in why else f"context estimated: {why}"
        )
    return note
