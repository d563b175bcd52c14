"""End-to-end conformance tests against the real Claude Code and Codex CLI binaries.

The binaries are installed at pinned versions (versions.json, install.sh) and run offline
against scripted model servers on 127.0.0.1 (anthropic.py, responses.py); every test runs in
its own temporary home (sandbox.py). See docs/agents-e2e.md.
"""
