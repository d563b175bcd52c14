"""Driving real agents: their hooks (:mod:`.hooks`, one event table per agent), the Claude Code
status line (:mod:`.statusline`) and the log of what they could not say (:mod:`.logfile`).

Their transcripts are read by :mod:`clm_policy.transcripts`, a layer below. Nothing is imported
here: the status line runs on every refresh and pays only for what it uses.
"""
