"""Compaction and handoff: what gets written when a session is compacted or handed off."""
