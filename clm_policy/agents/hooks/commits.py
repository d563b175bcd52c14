"""What the hooks commit to the memory repository — the snapshot before the agent compacts,
the agent's own summary after it, the session's handoff — each with the decision's provenance
and the agent's own trailers; and whether the session has handed off already.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from clm_policy.agents.hooks.hook import Hook
    from clm_policy.lifecycle.compose import Words
    from clm_policy.lifecycle.pipelines import CompactOutcome, HandoffOutcome, Provenance
    from clm_policy.memory.git.write import MemoryRepo
    from clm_policy.models.decision import Decision
    from clm_policy.models.state import SessionState


def agent_trailers(trigger: str, state: SessionState) -> dict[str, str]:
    return {"Clm-Agent-Trigger": trigger, "Clm-Agent-Tokens": str(state.tokens.context_tokens)}


def commit_snapshot(
    hook: Hook,
    repo: MemoryRepo,
    state: SessionState,
    outcome: Decision | None,
    trigger: str,
    compacts: str,
) -> CompactOutcome | None:
    """The snapshot committed before the agent compacts (rule ``<agent>:<trigger>``); None,
    and nothing committed, when one at the same transcript position is committed already."""
    from clm_policy.lifecycle.pipelines import committed_snapshot, run_compaction

    if committed_snapshot(repo, state) is not None:
        return None
    state = with_agents(repo, state)
    why = hook.provenance(outcome, **agent_trailers(trigger, state)).replace(
        rule=f"{hook.agent}:{trigger}",
        rationale=f"{compacts} ({trigger})",
    )
    retain = hook.policy().profile(hook.profile or state.profile).retain_recent_messages
    context = (
        f"Context: {state.tokens.context_tokens} tokens before the compaction; after it: "
        "unknown until the agent's next response"
    )
    return run_compaction(repo, state, retain=retain, why=why, context_line=context)


def commit_summary(
    hook: Hook,
    repo: MemoryRepo,
    sid: str,
    step: int,
    summary: str,
    context: tuple[int | None, int | None],
    **trailers: str,
) -> None:
    """Commit the agent's own summary of its compaction for the session ``sid`` at ``step``,
    with the context before and after it (None: unknown)."""
    from clm_policy.lifecycle.pipelines import Provenance, record_agent_summary
    from clm_policy.models.state import SessionState

    trigger = hook.call.text("trigger") or "manual"
    extra = {"Clm-Agent": hook.agent, "Clm-Agent-Trigger": trigger, **trailers}
    why = Provenance(f"{hook.agent}:{trigger}", extra_trailers=extra)
    state = SessionState(session_id=sid, step_index=step)
    record_agent_summary(repo, state, summary, why=why, context=context)


def hand_off(
    hook: Hook,
    words: Words | None = None,
    *,
    outcome: Decision | None = None,
    repo: MemoryRepo | None = None,
    via: str | None = None,
    **trailers: str,
) -> tuple[HandoffOutcome, Provenance]:
    """Commit this session's handoff by the one road (:mod:`clm_policy.lifecycle.compose`)
    and note it: the agent's ``words`` (else its latest compaction summary, if any) kept whole
    beside the transcript's record. ``outcome``: the decision that hands off; ``via`` names a
    road other than the hooks (``mcp``: whatever the policy says). A push that fails leaves
    the handoff committed (``push_failed``). Returns the outcome and its provenance."""
    import os

    from clm_policy.agents.hooks.context import fill_window
    from clm_policy.agents.hooks.reply import size_for
    from clm_policy.agents.hooks.seeds import seed_budget
    from clm_policy.agents.hooks.shared import log
    from clm_policy.base.paths import home_as_tilde
    from clm_policy.lifecycle.compose import compose, words_of_transcript
    from clm_policy.lifecycle.model_handoff import HOOK_TIMEOUT, with_model
    from clm_policy.lifecycle.pipelines import PushError, run_handoff
    from clm_policy.lifecycle.subagents import agent_keys
    from clm_policy.transcripts.reading import read_transcript

    if repo is None:
        with hook.repo() as opened:
            return hand_off(hook, words, outcome=outcome, repo=opened, via=via, **trailers)
    reading = read_transcript(hook.call.transcript())
    fill_window(hook, reading)
    if words is None:
        words = words_of_transcript(reading)
    words, by_model = with_model(reading, words, os.environ, timeout=HOOK_TIMEOUT)
    trailers.update(by_model)
    composed = compose(
        reading,
        words,
        session_id=hook.session_id(reading),
        profile=hook.profile,
        context_window=getattr(outcome, "context_window", None),
        memory_keys=agent_keys(repo, hook.session_id(reading)),
    )
    if via is not None:
        trailers["Clm-Via"] = via
        decided = hook.policy().decide(composed.base, hook.profile)
        why = hook.provenance(decided, **trailers)
        if decided.action.value != "handoff":
            said = decided.action.value + (f" ({decided.rationale})" if decided.rationale else "")
            why = why.replace(
                rule="agent", rationale=f"the agent handed off; the policy says {said}"
            )
    else:
        why = hook.provenance(outcome, **trailers)
    profile = hook.policy().profile(hook.profile or composed.state.profile)
    try:
        done = run_handoff(
            repo,
            composed,
            why=why,
            push=hook.remote,
            agent_id=MAIN_AGENT,
            seed_chars=seed_budget(profile),
            seed_size=size_for(hook.agent),
            memory_dir=home_as_tilde(hook.memory),
        )
    except PushError as exc:  # committed: the session hands off all the same, and says so
        if exc.outcome is None:
            raise
        log(f"{hook.agent}: {hook.call.name}: PushError: {exc}")
        done = exc.outcome.replace(push_failed=exc.message)
    # the session's hooks and status line know it has handed off; through the MCP tool the
    # model (and the person, seeing the call) are told by the tool's answer
    told = done.manifest_path if via == "mcp" else None
    hook.note(handoff=done.manifest_path, told=told, asked=None)
    return done, why


def commit_handoff(
    hook: Hook, outcome: Decision | None, repo: MemoryRepo | None = None, **trailers: str
) -> HandoffOutcome:
    """Commit this session's handoff at Stop or PreCompact, with the model's last reply (the
    hook is told it before the transcript holds it)."""
    from clm_policy.lifecycle.compose import words_of_reply

    words = words_of_reply(hook.call.text("last_assistant_message"))
    return hand_off(hook, words, outcome=outcome, repo=repo, **trailers)[0]


MAIN_AGENT = "main"  # the manifest's agent_id of a session's own agent


def with_agents(repo: MemoryRepo, state: SessionState) -> SessionState:
    """``state`` with the memory keys of the agents its session started among its own."""
    from clm_policy.lifecycle.subagents import agent_keys

    keys = agent_keys(repo, state.session_id)
    if not keys:
        return state
    return state.replace(memory_keys=list(dict.fromkeys([*state.memory_keys, *keys])))


def handed_off(hook: Hook, repo: MemoryRepo | None = None) -> str | None:
    """The manifest of this session's handoff (on any branch), else None."""
    from clm_policy.memory.audit import read_log

    if repo is None:
        with hook.repo() as opened:
            return handed_off(hook, opened)
    for entry in read_log(repo, session=hook.session_id(), event="handoff", rev="--all"):
        return entry.trailers.get("Clm-Manifest") or entry.commit
    return None


def push_note(done: HandoffOutcome) -> str:
    """What a person is told, after the handoff's line, when pushing it failed."""

    if done.push_failed is None:
        return ""
    from clm_policy.agents.hooks.shared import log_path
    from clm_policy.base.paths import home_as_tilde

    return f" Pushing it failed (the hook log says why: {home_as_tilde(str(log_path()))})."
