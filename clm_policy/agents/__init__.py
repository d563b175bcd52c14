"""Real agents: readers that turn an agent's own transcript into a SessionState-ready reading.

:mod:`~clm_policy.agents.transcript` holds the common result and the dispatch by format;
:mod:`~clm_policy.agents.claude_code`, :mod:`~clm_policy.agents.codex` and
:mod:`~clm_policy.agents.openai_chat` each read one format. None of them imports pydantic,
the YAML loader or click: :func:`~clm_policy.agents.transcript.read_context` runs on every
prompt in a hook.
"""

from __future__ import annotations

from clm_policy.agents.transcript import (
    FORMATS,
    TranscriptReading,
    detect_format,
    read_context,
    read_transcript,
)

__all__ = ["FORMATS", "TranscriptReading", "detect_format", "read_context", "read_transcript"]
