"""Agents' transcripts: readers that turn an agent's own session file into a
SessionState-ready reading (figures, goal, files, commands, compactions).

:mod:`~clm_policy.transcripts.reading` holds the common result and the dispatch by format;
:mod:`~clm_policy.transcripts.claude_code`, :mod:`~clm_policy.transcripts.codex` and
:mod:`~clm_policy.transcripts.openai_chat` each read one format. None of them imports pydantic,
the YAML loader or click: :func:`~clm_policy.transcripts.reading.read_context` runs on every
prompt in a hook. Nothing is imported here until it is used.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from clm_policy.transcripts.reading import (
        FORMATS,
        TranscriptReading,
        detect_format,
        read_context,
        read_transcript,
    )

__all__ = ["FORMATS", "TranscriptReading", "detect_format", "read_context", "read_transcript"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        import importlib

        return getattr(importlib.import_module("clm_policy.transcripts.reading"), name)
    raise AttributeError(f"module 'clm_policy.transcripts' has no attribute {name!r}")
