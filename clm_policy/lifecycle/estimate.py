"""A rough token count where no provider figure exists (the simulated agent, the context
right after a compaction): characters / 4, the usual rule of thumb for English and code with
the common BPE tokenizers. A state built from it says ``estimated: true``.
"""

from __future__ import annotations

from clm_policy.models.enums import CHARS_PER_TOKEN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from clm_policy.models.state import Message


def estimate_tokens(text: str) -> int:
    """``len(text) / 4``, rounded up, so any non-empty text counts at least one token."""
    return -(-len(text) // CHARS_PER_TOKEN)


def estimate_message_tokens(messages: Iterable[Message]) -> int:
    """The messages' size: a message's own ``tokens`` when it has one, else its characters / 4
    (roles and framing not counted)."""
    listed = list(messages)
    known = sum(m.tokens for m in listed if m.tokens is not None)
    chars = sum(len(m.content) for m in listed if m.tokens is None)
    return known - (-chars // CHARS_PER_TOKEN)
