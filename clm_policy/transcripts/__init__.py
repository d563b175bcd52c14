"""Agents' transcripts: readers that turn an agent's own session file into a
SessionState-ready reading (figures, goal, files, commands, compactions).

:mod:`~clm_policy.transcripts.reading` holds the common result and the dispatch by format;
:mod:`~clm_policy.transcripts.claude_code`, :mod:`~clm_policy.transcripts.codex` and
:mod:`~clm_policy.transcripts.openai_chat` each read one format. None of them imports pydantic,
the YAML loader or click: :func:`~clm_policy.transcripts.reading.read_context` runs on every
prompt in a hook.
"""
