"""Real agents: readers that turn an agent's own transcript into a SessionState-ready reading,
and the hooks and status line that drive an agent through them.

:mod:`~clm_policy.agents.transcript` holds the common result and the dispatch by format;
:mod:`~clm_policy.agents.claude_code`, :mod:`~clm_policy.agents.codex` and
:mod:`~clm_policy.agents.openai_chat` each read one format. None of them imports pydantic,
the YAML loader or click: :func:`~clm_policy.agents.transcript.read_context` runs on every
prompt in a hook. Nothing is imported here until it is used: the status line, which runs on
every refresh, needs none of it on its fast path.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from clm_policy.agents.transcript import (
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

        return getattr(importlib.import_module("clm_policy.agents.transcript"), name)
    raise AttributeError(f"module 'clm_policy.agents' has no attribute {name!r}")
