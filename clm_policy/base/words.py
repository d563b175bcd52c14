"""The words that carry no fact: what a recall check (:mod:`clm_policy.lifecycle.verify`) and
the offline Mem0 stand-in's embedder (:mod:`clm_policy.memory.mem0_offline`) leave out of a
text's words."""

from __future__ import annotations

STOP_WORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "for",
        "from",
        "has",
        "have",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "so",
        "than",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "this",
        "those",
        "to",
        "was",
        "were",
        "will",
        "with",
    }
)
"""Words that carry no fact ("not" and "no" are not among them: they do)."""
