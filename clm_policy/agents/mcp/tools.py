"""What each MCP tool does, without the MCP SDK: plain values in, JSON data out, the project's
errors raised (their message does not name the tool: the server does).

Every tool reads the project the way the hooks do (:class:`~clm_policy.agents.hooks.hook.Hook`);
the session ones find the calling session first (:mod:`.calling`). Writes go through the one
write path, redacted, confined and committed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from clm_policy.agents.hooks.call import HookCall
from clm_policy.agents.hooks.context import read_tail
from clm_policy.agents.hooks.focus import share
from clm_policy.agents.hooks.hook import Hook
from clm_policy.agents.hooks.reply import cut
from clm_policy.agents.mcp.calling import Caller, find_caller, project_dir
from clm_policy.base.errors import InputError
from clm_policy.lifecycle.agent_handoff import AgentHandoff

if TYPE_CHECKING:
    from clm_policy.models.decision import Decision

AGENT = "claude-code"
NEXT_SESSION = (
    "The next session of this project starts from this handoff: Claude Code's SessionStart "
    "hook gives it the seed (a new session, or after /clear)."
)


class Tools:
    """The tools of one server process, for the project Claude Code started it in."""

    def __init__(self, env: Mapping[str, str] | None = None, cwd: str | None = None) -> None:
        self.env = os.environ if env is None else env
        self.cwd = cwd or os.getcwd()

    # -- the session ---------------------------------------------------------------------

    def _session(self, tool: str, wait: float) -> tuple[Caller, Hook]:
        caller = find_caller(tool, self.env, self.cwd, wait)
        event = {
            "hook_event_name": f"mcp:{tool}",
            "session_id": caller.session_id,
            "transcript_path": caller.transcript,
            "cwd": caller.project,
        }
        return caller, Hook(HookCall(event), AGENT)

    def _project(self) -> Hook:
        call = HookCall({"hook_event_name": "mcp", "cwd": project_dir(self.env, self.cwd)})
        return Hook(call, AGENT)

    @staticmethod
    def _where(caller: Caller) -> dict[str, str]:
        return {
            "session": caller.session_id,
            "transcript": caller.transcript,
            "found_by": caller.found_by,
        }

    def status(self, wait: float = 0.0) -> dict[str, Any]:
        """The calling session's context, the policy's decision on it and what to do."""
        caller, hook = self._session("status", wait)
        reading, outcome = read_tail(hook)
        if outcome is None:  # shares of a window nobody knows decide nothing
            tokens, window, source = reading.context_tokens, None, None
            thresholds = decision = None
            said = (
                f"The context window of {reading.model or 'this model'} is unknown, so the "
                "policy's thresholds (shares of the window) decide nothing: carry on. "
                "docs/claude-code.md, 'The context window', says how to tell it."
            )
        else:
            tokens, window = outcome.context_tokens, outcome.context_window
            source = outcome.window_source
            prof = hook.policy().profile(outcome.profile)
            thresholds = {
                "compact_at": prof.soft_compact.resolve(window),
                "handoff_at": prof.hard_handoff.resolve(window),
            }
            decision, said = outcome.as_dict(), advice(outcome)
        return {
            **self._where(caller),
            "context": {
                "tokens": tokens,
                "window": window,
                "window_source": source,
                "share": round(tokens / window, 4) if window else None,
                "estimated": bool(reading.context_estimated),
                "model": reading.model,
            },
            "thresholds": thresholds,
            "decision": decision,
            "advice": said,
        }

    def explain(self, wait: float = 0.0) -> dict[str, Any]:
        """The decision of :meth:`status` explained (``decide --explain`` as data)."""
        caller, hook = self._session("explain", wait)
        reading, _ = read_tail(hook)
        explanation = hook.policy().explain(reading.to_figures(), hook.profile)
        return {**self._where(caller), "explanation": explanation.as_dict()}

    def handoff(self, fields: AgentHandoff, wait: float = 0.0) -> dict[str, Any]:
        """Commit the calling session's handoff: the agent's fields, kept whole, beside the
        transcript's record. At the step and context of the session's newest handoff nothing
        is committed, and the answer says so (``committed`` false, that handoff's commit)."""
        from clm_policy.agents.hooks.commits import hand_off
        from clm_policy.lifecycle.compose import words_of_fields
        from clm_policy.lifecycle.pipelines import HandedOffAlready

        caller, hook = self._session("handoff", wait)
        try:
            done, why = hand_off(hook, words_of_fields(fields), via="mcp")
        except HandedOffAlready as exc:
            return {
                **self._where(caller),
                "committed": False,
                "commit": exc.commit,
                "handoff": exc.handoff_file,
                "message": exc.message,
                "next": NEXT_SESSION,
            }
        return {
            "committed": True,
            **self._where(caller),
            "commit": done.commit,
            "manifest": done.manifest_path,
            "handoff": done.handoff_path,
            "rule": why.rule,
            "redactions": done.redactions,
            "recall_agent": done.agent_recall.trailer if done.agent_recall else None,
            "seed": cut("\n\n".join(m.content for m in done.seed)),
            "push_failed": done.push_failed,  # committed all the same; the hook log says why
            "next": NEXT_SESSION,
        }

    # -- memory topics -------------------------------------------------------------------

    def memory_search(self, query: str) -> dict[str, Any]:
        """Topics whose text holds ``query`` (case-insensitive), most hits first."""
        from clm_policy.memory.layout import is_memory_repo
        from clm_policy.memory.store import check_query, search_topics

        hook = self._project()
        check_query(query)
        if not is_memory_repo(hook.memory):
            return {"memory": hook.memory, "results": []}
        with hook.repo() as repo:
            return {"memory": hook.memory, "results": search_topics(repo, query)}

    def memory_read(self, key: str) -> dict[str, Any]:
        """The topic ``key``, or the handoff a seed names by it, whole."""
        from clm_policy.memory.layout import TOPICS, check_key, handoff_of_key, is_memory_repo
        from clm_policy.memory.store import GitMemoryStore

        check_key(key)
        hook = self._project()
        entry = None
        handoff = handoff_of_key(key)
        if handoff is not None:  # a handoff's file for people (a seed names it by this key)
            text = None
            if is_memory_repo(hook.memory):
                with hook.repo() as repo:
                    text = repo.show_file(handoff)
            if text is None:
                raise InputError(f"no handoff {key!r} in the memory repository")
            return {"key": key, "content": text, "tags": ["handoff"], "updated_at": None}
        meant = key.removeprefix(f"{TOPICS}/")  # (the folder named with the key)
        if is_memory_repo(hook.memory):
            with hook.repo() as repo:
                store = GitMemoryStore(repo)
                entry = store.entry(key)
                if entry is None and meant != key and store.entry(meant) is not None:
                    raise InputError(f"no memory topic {key!r} (did you mean {meant!r}?)")
        if entry is None:
            raise InputError(f"no memory topic {key!r} (memory_search finds topics)")
        return {
            "key": entry.key,
            "content": entry.content,
            "tags": list(entry.tags),
            "updated_at": entry.updated_at,
        }

    def memory_write(self, key: str, text: str) -> dict[str, Any]:
        from clm_policy.memory.layout import check_key, topic_path
        from clm_policy.memory.store import GitMemoryStore

        check_key(key)
        if not text.strip():
            raise InputError("the text is empty")
        hook = self._project()
        with hook.repo() as repo:
            store = GitMemoryStore(repo)
            commit = store.write(key, text)
        return {
            "key": key,
            "path": topic_path(key),
            "commit": commit,
            "redactions": sum(store.redactions.values()),
        }


def advice(outcome: Decision) -> str:

    action = outcome.action.value
    full = share(outcome)
    if action == "handoff":
        return (
            f"The policy says hand off ({outcome.rationale}): finish the step you are on, start "
            "no new work, and call the handoff tool with its fields (goal, tasks, decisions, "
            "verification, blockers, environment, next step and plan)."
        )
    if action == "compact":
        return (
            f"The context is {full} full and the policy says compact ({outcome.rationale}): "
            "finish the current step without reading large files or long outputs; the person "
            "runs /compact."
        )
    blocked = "; ".join(f"{f.guard}: {f.message}" for f in outcome.blocked_by)
    if blocked:
        return (
            f"Carry on: the context is {full} full; the policy would "
            f"{outcome.proposed.value} but a guard blocks it ({blocked})."
        )
    return f"Carry on: the context is {full} full; nothing to do yet."
