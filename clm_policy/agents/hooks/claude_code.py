"""Claude Code's hooks, answered by the project's policy and committed to its memory.

Claude Code runs ``clm-policy hook claude-code`` with the hook's JSON on standard input
(``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name`` and the event's fields) and
reads the answer from standard output (exit 0) or standard error (exit 2, where blocking is the
point). A hook cannot run ``/compact`` or ``/clear`` itself: clm-policy decides, keeps the
memory, and tells the model (``additionalContext``) and the person (``systemMessage``) what to
do.

- **UserPromptSubmit**: decide from the transcript's tail. Continue: no output. Compact: the
  person is told to run ``/compact <focus>``, the model that the context is nearly full.
  Handoff: the model is told to finish its step and write a handoff; the person what follows.
- **PreCompact** (manual or auto): commit a compaction snapshot built from the transcript
  before Claude Code summarises it away. When the policy says hand off and the compaction is
  automatic: commit the handoff instead, block the compaction (exit 2) and tell the person to
  ``/clear`` — the next session starts from the handoff.
- **PostCompact**: commit Claude Code's own ``compact_summary``.
- **SessionStart**: ``startup``/``clear``: the latest handoff of this project that no session
  has picked up yet, as context (taken, in git); ``compact``: what must survive (goal,
  blockers, next safe action, the memory index) from the snapshot taken at PreCompact;
  ``resume``: nothing.
- **Stop**: when the policy says hand off and the session has no handoff yet, block once with
  what to write; on the stop after that (``stop_hook_active``), commit the handoff.

A hook never breaks the agent: :func:`run_hook` turns bad input, a missing transcript or an
internal error into exit 0 with no output and a line in the log.
"""

from __future__ import annotations

from clm_policy.agents.hooks.shared import (
    NOTHING,
    Hook,
    HookEvent,
    HookReply,
    Wording,
    agent_trailers,
    at_prompt,
    at_stop,
    commit_snapshot,
    handoff_options,
    last_step,
    run_hook,
    session_start,
)

AGENT = "claude-code"


def run_claude_hook(raw: bytes, **options: str | None) -> HookReply:
    """Answer one Claude Code hook call (its JSON in ``raw``); never raises."""
    return run_hook(raw, AGENT, EVENTS, **options)


# -- the events -----------------------------------------------------------------------------


WORDING = Wording(
    agent_name="Claude",
    compact_command=lambda focus: f"Run: /compact {focus}",
    compact_note=lambda _focus: (
        "Finish the current step without reading large files or long outputs."
    ),
    after_handoff="run /clear — the next session starts from it.",
)


def _pre_compact(hook: Hook) -> HookReply:
    from clm_policy.lifecycle.pipelines import run_handoff

    trigger = str(hook.event.get("trigger") or "manual")
    state, outcome = hook.full_state()
    with hook.repo() as repo:
        if outcome.action.value == "handoff" and trigger == "auto":
            native = agent_trailers(hook, trigger, state)
            done = run_handoff(
                repo, state, why=hook.provenance(outcome, **native), **handoff_options(hook, state)
            )
            return HookReply(
                2,
                stderr=(
                    f"clm-policy: the policy hands off here ({outcome.rationale}), so the "
                    f"automatic compaction is blocked. The handoff is committed "
                    f"({done.manifest_path}). Run /clear: the next session starts from it."
                ),
            )
        commit_snapshot(hook, repo, state, outcome, trigger, "Claude Code compacts")
    return NOTHING


def _post_compact(hook: Hook) -> HookReply:
    from clm_policy.lifecycle.pipelines import Provenance, record_agent_summary
    from clm_policy.models.state import SessionState

    summary = hook.event.get("compact_summary")
    if not isinstance(summary, str) or not summary.strip():
        return NOTHING
    trigger = str(hook.event.get("trigger") or "manual")
    step = last_step(hook)
    state = SessionState(session_id=hook.session_id(), step_index=step)
    why = Provenance(
        f"{AGENT}:{trigger}", extra_trailers={"Clm-Agent": AGENT, "Clm-Agent-Trigger": trigger}
    )
    with hook.repo() as repo:
        record_agent_summary(repo, state, summary, why=why)
    return NOTHING


EVENTS = {
    # the one table of Claude Code's events: the handler, and the timeout in seconds its
    # settings.json gives the hook (clm_policy.agents.hooks.claude_settings writes it from
    # here). UserPromptSubmit and SessionStart read the transcript's end and decide;
    # PreCompact and Stop may commit a compaction or a handoff (git); PostCompact records the
    # summary.
    "UserPromptSubmit": HookEvent(at_prompt(WORDING), 30),
    "PreCompact": HookEvent(_pre_compact, 60),
    "PostCompact": HookEvent(_post_compact, 30),
    "SessionStart": HookEvent(session_start, 30),
    "Stop": HookEvent(at_stop("Run /clear: the next session starts from it."), 60),
}
