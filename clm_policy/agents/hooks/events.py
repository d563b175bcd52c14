"""The answers Claude Code's and Codex's hooks share, one per event where their protocols
agree; what differs between the agents — the words, and the shape of an answer that asks or
blocks — is their :class:`Wording`. Three rules hold for each:

- **Exactly once.** A session hands off once: a handoff committed at PreCompact or Stop ends
  the asking (the prompt hook stops asking for one; a later automatic compaction goes ahead),
  and a snapshot at a transcript position already committed is not committed again.
- **The agent's figures.** The window is the one the agent knows (a Codex rollout names it;
  for Claude Code, :mod:`.windows`); with none known, shares of it decide nothing. The
  transcript may lag behind the agent (:mod:`.settling`).
- **Said once.** What the person must know and the agent shows nowhere (a handoff committed
  at a blocked automatic compaction; an unknown window) is said once, by the next hook whose
  ``systemMessage`` the agent shows; what was said is kept among the session's facts.
"""

from __future__ import annotations

import os

from clm_policy.agents.hooks.commits import (
    agent_trailers,
    commit_handoff,
    commit_snapshot,
    handed_off,
    push_note,
)
from clm_policy.agents.hooks.context import read_tail, read_whole
from clm_policy.agents.hooks.focus import session_focus, share
from clm_policy.agents.hooks.reply import NOTHING, Reply, tell
from clm_policy.agents.hooks.settling import settle, size, wait_for_reply
from clm_policy.lifecycle.request import handoff_request, stop_request

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from clm_policy.agents.hooks.hook import Hook
    from clm_policy.models.decision import Decision
    from clm_policy.policy.engine import Policy
    from clm_policy.transcripts.reading import TranscriptReading


class Wording:
    """What differs between the agents' answers: the words (``compact_command`` and
    ``compact_note`` take the focus; ``after_handoff`` ends a sentence) and the answers'
    shapes, each given the text: ``ask_at_stop`` keeps the agent going with a request to the
    model, ``block_compaction`` stops an automatic compaction, ``compaction_goes_ahead`` lets
    one proceed after a handoff. ``block_is_seen``: whether the person sees the blocking
    answer's text (else the next hook that can show a message tells them)."""

    agent_name: str
    compact_command: Callable[[str], str]
    compact_note: Callable[[str], str]
    after_handoff: str
    next_session: str
    compacts: str
    stopped: str
    ask_at_stop: Callable[[str], Reply]
    block_compaction: Callable[[str], Reply]
    compaction_goes_ahead: Callable[[str], Reply]
    block_is_seen: bool


def told_of_handoff(hook: Hook, wording: Wording, facts: Mapping[str, Any]) -> Reply | None:
    """The message, once, for a handoff committed where the person saw nothing (Claude Code
    shows no output of a blocked compaction); None when there is none to tell."""
    manifest = facts.get("handoff")
    if not isinstance(manifest, str) or facts.get("told") == manifest:
        return None
    hook.note(told=manifest)
    return tell(
        f"clm-policy: this session has handed off: the handoff is committed ({manifest}). "
        f"{wording.next_session}"
    )


def stop_for_handoff(hook: Hook, wording: Wording) -> Reply:
    """A Stop hook's answer. When the policy says hand off and the session has no handoff
    yet: ask the model once for a handoff (``wording.ask_at_stop``); at the stop after that —
    or at this turn's stop when the prompt hook asked already — commit the handoff from the
    transcript and the model's last reply.

    The reply the hook is told of may not be in the transcript yet: it is waited for, a moment
    at most, unless it cannot reach the handoff point (:func:`far_from_handoff`); an estimated
    figure decides no handoff (the next prompt's hook has the real one)."""
    facts = hook.facts()
    told = told_of_handoff(hook, wording, facts)
    if told is not None:
        return told
    if facts.get("handoff"):
        return NOTHING  # handed off and told: nothing more to ask
    turn = hook.call.turn
    asked = bool(turn) and facts.get("asked") == turn
    active = hook.call.event.get("stop_hook_active") is True
    transcript = hook.call.transcript()
    before = size(transcript)
    reading, outcome = read_tail(hook)
    last = hook.call.text("last_assistant_message")
    if not (asked or active) and far_from_handoff(hook.policy(), reading, outcome, last):
        return NOTHING  # the reply not written yet cannot reach the handoff point
    wait_for_reply(transcript, last)
    if size(transcript) != before:  # written since: the figure of the reply itself
        reading, outcome = read_tail(hook)
    if outcome is None or (outcome.action.value != "handoff" and not asked):
        return NOTHING
    if reading.context_estimated and not asked:
        return NOTHING
    if handed_off(hook) is not None:
        return NOTHING
    if asked or active:
        # the reply that was asked for holds the handoff: commit it now
        _, full = read_whole(hook)
        done = commit_handoff(hook, full if full is not None else outcome)
        hook.note(told=done.manifest_path)
        return tell(
            f"clm-policy: handoff committed ({done.manifest_path}). {wording.next_session}"
            + push_note(done)
        )
    if turn:
        hook.note(asked=turn)
    return wording.ask_at_stop(stop_request(outcome.rationale, share(outcome, hook.agent)))


def pre_compact(hook: Hook, wording: Wording) -> Reply:
    """A PreCompact answer: commit a snapshot of the transcript before the agent summarises it
    away. An automatic compaction where the policy hands off commits the handoff instead and
    is stopped — once per session: a later one goes ahead, with a snapshot. A position already
    committed is not committed again (the agent retries a blocked compaction before every
    request)."""
    trigger = hook.call.text("trigger") or "manual"
    settle(hook.call.transcript())
    state, outcome = read_whole(hook)
    hands_off = outcome is not None and outcome.action.value == "handoff" and trigger == "auto"
    with hook.repo() as repo:
        already = handed_off(hook, repo) if hands_off else None
        if hands_off and already is None and outcome is not None:
            native = agent_trailers(trigger, state)
            done = commit_handoff(hook, outcome, repo, **native)
            if wording.block_is_seen:
                hook.note(told=done.manifest_path)
            return wording.block_compaction(
                f"clm-policy: the policy hands off here ({outcome.rationale}), so the "
                f"automatic compaction is {wording.stopped}. The handoff is committed "
                f"({done.manifest_path}). {wording.next_session}{push_note(done)}"
            )
        snapshot = commit_snapshot(hook, repo, state, outcome, trigger, wording.compacts)
    if already is None:
        return NOTHING
    kept = f" (snapshot {snapshot.path})" if snapshot is not None else ""
    return wording.compaction_goes_ahead(
        f"clm-policy: this session has handed off already; {wording.compacts} it as "
        f"asked{kept}. {wording.next_session}"
    )


def prompt_advice(hook: Hook, wording: Wording) -> Reply:
    """A UserPromptSubmit answer: nothing while the policy says continue; the person told
    to compact (with a focus) or that a handoff follows, and the model why. A session that
    has handed off is not asked again; an unknown window is said once."""
    reading, outcome = read_tail(hook)
    if outcome is None:
        return window_notice(hook, reading)
    action = outcome.action.value
    if action == "continue":
        return NOTHING
    facts = hook.facts()
    told = told_of_handoff(hook, wording, facts)
    if told is not None:
        return told
    if facts.get("handoff") or handed_off(hook) is not None:
        return NOTHING  # handed off, by any road (Stop, PreCompact, MCP): nothing to advise
    full = share(outcome, hook.agent)
    if action == "compact":
        focus = session_focus(hook)
        person = (
            f"clm-policy: context {full} ({outcome.rationale}). {wording.compact_command(focus)}"
        )
        model = (
            f"[clm-policy] The context window is {full} full ({outcome.rationale}); the user "
            f"was advised to compact it. {wording.compact_note(focus)}"
        )
    else:
        person = (
            f"clm-policy: context {full}, the policy hands off ({outcome.rationale}). "
            f"{wording.agent_name} will finish its step and write a handoff; then "
            f"{wording.after_handoff}"
        )
        model = (
            f"[clm-policy] The context window is {full} full and the policy says hand off "
            f"({outcome.rationale}). {handoff_request()}"
        )
        if hook.call.turn:
            hook.note(asked=hook.call.turn)  # this turn's Stop commits the reply
    return Reply(message=person, context=model, event="UserPromptSubmit")


def window_notice(hook: Hook, reading: TranscriptReading) -> Reply:
    """Once per session, from the first response on: the window is unknown, so the policy's
    thresholds decide nothing; how to tell it."""
    if not reading.model or hook.facts().get("window_told"):
        return NOTHING
    hook.note(window_told=True)
    model = reading.model
    unknown = (
        f"clm-policy: the context window of {model} is unknown, so the policy's thresholds "
        "(shares of the window) decide nothing in this session"
    )
    if hook.agent != "claude-code":
        return tell(f"{unknown}. Add the model to the policy's models: table ({model}: <tokens>).")
    return tell(
        f"{unknown}: no compaction or handoff is advised. Tell it the window: run Claude Code "
        "with clm-policy's status line (clm-policy hook claude-code --install), set "
        "CLAUDE_CODE_AUTO_COMPACT_WINDOW, or add the model to the policy's models: table "
        f"({model}: <tokens>)."
    )


def far_from_handoff(
    policy: Policy, reading: TranscriptReading, outcome: Decision | None, reply: str | None
) -> bool:
    """Whether ``reply``, if Claude Code has not written it yet, cannot bring the session to
    the handoff point: the last figure, with every byte after its line and of ``reply``
    counted as a token, is under half the hard limit (the other half is more than one response
    adds besides). Then Stop need not wait for the reply (most of a Stop hook's time)."""
    if outcome is None:
        return True  # nothing decides a handoff (the window is unknown)
    if reading.context_estimated or reading.bytes_after is None:
        return False
    if outcome.action.value == "handoff":
        return False
    hard = policy.profile(outcome.profile).hard_handoff.resolve(outcome.context_window)
    if hard is None:
        return False
    pending = reading.bytes_after + len((reply or "").encode("utf-8"))
    return bool(reading.context_tokens + pending < hard // 2)


def session_start(hook: Hook) -> Reply:
    """SessionStart: the context a session starts with as ``additionalContext``; a ``model``
    it names is kept for the window (:mod:`.windows`)."""
    from clm_policy.agents.hooks.start import context_at_start

    model = hook.call.text("model")
    if model:
        hook.note(model=model)
    if hook.call.text("source") == "compact" and hook.facts().get("fresh_start"):
        # the compaction that put a handoff's seed in place of the conversation (clm-policy's
        # Claude Code plugin engine): the seed holds what the snapshot's essentials would
        hook.note(fresh_start=None)
        return NOTHING
    text = context_at_start(hook)
    return Reply(context=text, event="SessionStart") if text else NOTHING


def record_subagent(hook: Hook) -> Reply:
    """SubagentStop: what an agent the session started did, from its own transcript, joins
    the session's memory under its ``agent_id``. Claude Code 2.1.x: the agent that writes a
    compaction's summary stops too, with no transcript file. Codex 0.171: the agent's own
    rollout (its parent's history left out by :mod:`clm_policy.transcripts.codex`), its
    ``agent_id`` the thread id; the transcript may be null."""

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
