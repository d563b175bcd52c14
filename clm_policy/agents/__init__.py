"""Driving real agents: their hooks, the MCP server, the Claude Code status line and the log
of what they could not say. Nothing is imported here: the status line pays only for what it
uses."""
