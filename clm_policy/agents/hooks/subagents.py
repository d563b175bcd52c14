"""SubagentStop: an agent the session started has stopped; what it did joins the session's
memory under its ``agent_id`` (:mod:`clm_policy.lifecycle.subagents`).

Both agents' tables name :func:`record_subagent`; their SubagentStop input has the same
fields: the agent's own transcript (``agent_transcript_path``), its ``agent_id`` and
``agent_type``, and its last reply (``last_assistant_message``).

- Claude Code 2.1.x: the transcript is ``<session>/subagents/agent-<id>.jsonl``. The agent
  that writes a compaction's summary stops too, with no ``agent_type`` and no transcript
  file: there is nothing of the task to record then.
- Codex 0.169 (``spawn_agent``, multi_agent_v2): the agent's own rollout, its ``agent_id``
  the agent's thread id, ``agent_type`` its role (``default``); the transcript may be null.
  A rollout of an agent spawned with its parent's history starts with a copy of it, which
  the reader leaves out of what the agent did (:mod:`clm_policy.transcripts.codex`).
"""

from __future__ import annotations

import os

from clm_policy.agents.hooks.reply import NOTHING, Reply
from clm_policy.agents.hooks.settling import wait_for_reply

TYPE_CHECKING = False
if TYPE_CHECKING:
    from clm_policy.agents.hooks.hook import Hook


def record_subagent(hook: Hook) -> Reply:
    """Commit what the stopped agent did (nothing when it has no transcript)."""
    from clm_policy.lifecycle.subagents import record_agent_run
    from clm_policy.transcripts.reading import read_transcript
    from clm_policy.transcripts.takeover import state_of

    path = hook.call.text("agent_transcript_path")
    agent_id = hook.call.text("agent_id")
    if path is None or agent_id is None:
        return NOTHING
    path = os.path.expanduser(path)
    if not os.path.isfile(path):
        return NOTHING  # a compaction's summary agent: it writes no transcript
    last = hook.call.text("last_assistant_message")
    wait_for_reply(path, last)
    reading = read_transcript(path)
    if not reading.cwd:
        reading.cwd = hook.call.text("cwd")
    session = hook.session_id()
    state = state_of(reading, session)
    with hook.repo() as repo:
        record_agent_run(
            repo,
            session,
            agent_id,
            state,
            agent_type=hook.call.text("agent_type"),
            last_message=last if last and last.strip() else None,
            extra_trailers={"Clm-Agent": hook.agent},
        )
    return NOTHING
