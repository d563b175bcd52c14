"""Subagents are agents: what each one did joins its session's memory.

When an agent a session started (Claude Code's ``Agent`` tool) stops, :func:`record_agent_run`
commits what it did: the facts as ``sessions/<session>/agents/<agent_id>.json``, the same for a
reader as the memory topic ``agents/<session>/<agent_id>`` (a handoff of the session lists
these keys, :func:`agent_keys`, so the next session reads them first), in a commit with
``Clm-Agent-Id`` and ``Clm-Agent-Type``. An agent that stops again with nothing new commits
nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from clm_policy.base.errors import InputError
from clm_policy.lifecycle.summary import last_reply
from clm_policy.memory.change import Change, JsonDoc
from clm_policy.memory.layout import TOPICS, check_key, check_session, session_dir
from clm_policy.memory.trailers import CommitMessage, event_subject

if TYPE_CHECKING:
    from clm_policy.memory.git.write import MemoryRepo
    from clm_policy.models.state import SessionState

NAMESPACE = "agents"
_AGENT_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
LIST_LIMIT = 50


def agent_key(session_id: str, agent_id: str) -> str:
    """``agents/<session>/<agent_id>`` (a session id's dots become ``-``: keys have none)."""
    if not _AGENT_ID.fullmatch(agent_id):
        raise InputError(f"invalid agent id {agent_id[:40]!r}: letters, digits, '_' and '-'")
    return check_key(f"{NAMESPACE}/{_segment(session_id)}/{agent_id}")


def _segment(session_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", check_session(session_id))


def agent_keys(repo: MemoryRepo, session_id: str) -> list[str]:
    """The memory keys of the agents recorded for ``session_id`` (at HEAD), sorted."""
    folder = f"{TOPICS}/{NAMESPACE}/{_segment(session_id)}/"
    names = repo.git("ls-files", "-z", "--", folder, check=False).split("\0")
    return sorted(
        n[len(TOPICS) + 1 : -3] for n in names if n.startswith(folder) and n.endswith(".md")
    )


def record_agent_run(
    repo: MemoryRepo,
    session_id: str,
    agent_id: str,
    state: SessionState,
    *,
    agent_type: str | None = None,
    last_message: str | None = None,
    extra_trailers: dict[str, str] | None = None,
) -> str | None:
    """Commit what agent ``agent_id`` of session ``session_id`` did (``state``: its own
    transcript read as a state); None, and no commit, when that is recorded already."""
    from clm_policy.memory.store import GitMemoryStore

    key = agent_key(session_id, agent_id)
    facts_path = f"{session_dir(session_id)}/agents/{agent_id}.json"
    last = last_message if last_message is not None else last_reply(state)
    facts = {
        "agent_id": agent_id,
        "agent_type": agent_type or None,
        "session": session_id,
        "asked": state.goal,
        "changed_artifacts": list(state.changed_artifacts),
        "commands_and_results": list(state.commands_and_results),
        "last_message": last,
        "steps": state.step_index,
        "context_tokens": state.tokens.context_tokens,
        "model": state.tokens.model,
        "memory_key": key,
    }
    known = repo.show_file(facts_path)
    if known is not None and _same(known, facts):
        return None
    change = Change()
    change.files[facts_path] = JsonDoc(facts)
    GitMemoryStore(repo).stage(
        change, key, render_agent(facts), tags=["agent", agent_type or "agent"]
    )
    kind = f" ({agent_type})" if agent_type else ""
    message = CommitMessage(
        event_subject("agent", session_id, state.step_index, agent_id),
        f"Agent {agent_id}{kind} of session {session_id} stopped; its record is "
        f"{facts_path} and the memory topic {key}.",
        {
            "Clm-Event": "agent",
            "Clm-Session": session_id,
            "Clm-Step": str(state.step_index),
            "Clm-Context-Tokens": str(state.tokens.context_tokens),
            "Clm-Agent-Id": agent_id,
            **({"Clm-Agent-Type": agent_type} if agent_type else {}),
            "Clm-Key": key,
            **(extra_trailers or {}),
        },
    )
    return repo.commit(message, change)


def _same(known: str, facts: object) -> bool:
    try:
        return bool(json.loads(known) == json.loads(json.dumps(facts)))
    except ValueError:
        return False


def render_agent(facts: Mapping[str, object]) -> str:

    def items(name: str) -> list[str]:
        values = facts.get(name)
        found = [str(v) for v in values] if isinstance(values, list) else []
        cut = [f"- {v}" for v in found[:LIST_LIMIT]]
        if len(found) > LIST_LIMIT:
            cut.append(f"- ... {len(found) - LIST_LIMIT} more")
        return cut or ["- (none)"]

    kind = f" ({facts['agent_type']})" if facts.get("agent_type") else ""
    lines = [
        f"# Agent {facts['agent_id']}{kind} of session {facts['session']}",
        "",
        f"Asked: {facts.get('asked') or '(not recorded)'}",
        "",
        "Files it changed:",
        *items("changed_artifacts"),
        "",
        "Commands and results:",
        *items("commands_and_results"),
        "",
        "Its last reply:",
        "",
        *(f"> {line}" for line in str(facts.get("last_message") or "(none)").splitlines()),
        "",
        f"Context: {facts.get('context_tokens')} tokens"
        + (f" ({facts['model']})" if facts.get("model") else "")
        + f", {facts.get('steps')} model responses.",
    ]
    return "\n".join(lines) + "\n"
