"""Agents' hooks: what every agent's hooks share (:mod:`.shared`), Claude Code's
(:mod:`.claude_code`, installed by :mod:`.claude_settings`) and Codex CLI's (:mod:`.codex`).
"""
