"""Claude Code's hooks, answered by the project's policy and committed to its memory.

Claude Code runs ``clm-policy hook claude-code`` with the hook's JSON on standard input and
reads the answer from standard output (exit 0) or standard error (exit 2, where blocking is the
point). A hook cannot run ``/compact`` or ``/clear`` itself: clm-policy decides, keeps the
memory, and tells the model (``additionalContext``) and the person (``systemMessage``).

- **UserPromptSubmit**: the policy's advice; the first prompt of a session seeded from a
  handoff says which, in one line.
- **PreCompact**: the snapshot; an automatic compaction where the policy hands off commits the
  handoff instead and is blocked (exit 2), once. Claude Code shows the person nothing of a
  blocked compaction, so the next Stop (or prompt) tells them; it adds standard output to the
  compaction's instructions, so nothing is printed there.
- **PostCompact**: commit Claude Code's own ``compact_summary``, with its figures before and
  after (``compactMetadata`` of the transcript's ``compact_boundary``).
- **Stop**: when the policy hands off, the request goes to the model with the next prompt
  (Claude Code shows every Stop answer that reaches the model) and that turn's stop commits
  the handoff. Where the plugin engine acts (:data:`ENGINE_ENV`), it asks right after the turn.
- **SessionStart**, **SubagentStop**: as :mod:`.events` answers them.

The window is the one Claude Code knows (:mod:`.windows`), never an assumed 200,000.
"""

from __future__ import annotations

import os

from clm_policy.agents.hooks.call import NoTranscriptYet
from clm_policy.agents.hooks.events import (
    Wording,
    pre_compact,
    prompt_advice,
    record_subagent,
    session_start,
    stop_for_handoff,
)
from clm_policy.agents.hooks.reply import NOTHING, HookOutput, Reply, tell
from clm_policy.agents.hooks.settling import settle
from clm_policy.agents.hooks.shared import HookEvent, run_hook

TYPE_CHECKING = False
if TYPE_CHECKING:
    from clm_policy.agents.hooks.hook import Hook

AGENT = "claude-code"
ENGINE_ENV = "CLM_POLICY_ENGINE"
"""Set by clm-policy's plugin engine where it acts, to what it does with a handoff; the
command hooks then know it compacts and applies handoffs itself. Without it (``claude -p``,
the settings-file install, an older Claude Code) they do everything."""
ENGINE_MODES = ("replace", "append", "clear")
ENGINE_PROMPT = "[clm-policy] The policy hands off: write your handoff for the next session now."
"""The prompt the engine submits when the policy hands off (the request comes with it,
unseen); its ``[clm-policy]`` start marks it a notice for transcript readers."""
STOP_LINE = (
    "clm-policy: the policy hands off here: Claude writes its handoff at your next prompt; "
    "then run /clear."
)


def run_claude_hook(raw: bytes, **options: str | None) -> HookOutput:
    """Answer one Claude Code hook call; never raises."""
    return run_hook(raw, AGENT, EVENTS, **options)


# -- the events -----------------------------------------------------------------------------


def engine_mode() -> str | None:
    """What the plugin engine does with a handoff here (None: no engine acts)."""
    mode = os.environ.get(ENGINE_ENV, "")
    return mode if mode in ENGINE_MODES else None


class _ClaudeWording(Wording):
    agent_name = "Claude"
    compact_command = staticmethod(lambda focus: f"Run: /compact {focus}")
    compact_note = staticmethod(
        lambda _focus: "Finish the current step without reading large files or long outputs."
    )
    compacts = "Claude Code compacts"
    stopped = "blocked"
    # exit 2 blocks a compaction; what it says reaches no one (Claude Code 2.1.328 shows
    # it neither in -p nor in the TUI), so the next Stop or prompt tells the person
    block_compaction = staticmethod(lambda text: Reply(exit_code=2, stderr=text))
    # PreCompact's standard output becomes the compaction's custom instructions: say nothing
    compaction_goes_ahead = staticmethod(lambda _text: NOTHING)
    block_is_seen = False

    @staticmethod
    def ask_at_stop(_request: str) -> Reply:
        # Claude Code 2.1.332 shows the person every Stop output that reaches the model
        # (additionalContext as "Stop hook says: ...", a block or exit 2 as "Stop hook reported
        # a problem"); UserPromptSubmit's additionalContext it shows no one. So the request
        # reaches the model with the next prompt (prompt_advice asks while the policy says hand
        # off; that turn's Stop commits the reply), and the person is told one short line now.
        # Where the plugin engine acts, it submits that prompt itself after the turn.
        if engine_mode() is not None:
            return NOTHING
        return tell(STOP_LINE)

    def __init__(self, mode: str | None) -> None:
        applied = mode in ("replace", "append")
        self.after_handoff = (
            "clm-policy continues this conversation from it."
            if applied
            else "run /clear — the next session starts from it."
        )
        self.next_session = (
            "The conversation continues from it."
            if applied
            else "Run /clear: the next session starts from it."
        )


WORDINGS = {mode: _ClaudeWording(mode) for mode in (None, *ENGINE_MODES)}


def wording() -> Wording:
    """The words for this session (where the engine applies handoffs, no /clear)."""
    return WORDINGS[engine_mode()]


def _user_prompt_submit(hook: Hook) -> Reply:
    """The prompt's advice, and once, in a session that started from a handoff, one line
    saying which. Where the plugin engine acts, it compacts by itself: no compaction is
    advised, and its own prompt gets no line (the person sees the prompt)."""
    from clm_policy.agents.hooks.context import read_tail

    seeded = _seed_notice(hook)
    mode = engine_mode()
    try:
        outcome = read_tail(hook)[1] if mode is not None else None
        if outcome is not None and outcome.action.value == "compact":
            reply = NOTHING
        else:
            reply = prompt_advice(hook, wording())
    except NoTranscriptYet:  # the new session's first prompt: nothing to read yet
        reply = NOTHING
    except Exception as exc:
        if not seeded:
            raise  # (run_hook logs it, and answers nothing)
        from clm_policy.agents.hooks.shared import log

        log(f"{AGENT}: {hook.call.name}: {type(exc).__name__}: {exc}")  # the line is said anyway
        reply = NOTHING
    if mode is not None and hook.call.event.get("prompt") == ENGINE_PROMPT:
        reply = reply.replace(message="")
    return reply.with_message(seeded)


def _seed_notice(hook: Hook) -> str:
    """The line, once, for a session SessionStart seeded from a handoff; "" otherwise."""

    facts = hook.facts()
    seeded = facts.get("seeded")
    if not isinstance(seeded, str) or facts.get("seed_told"):
        return ""
    hook.note(seed_told=True)
    from clm_policy.base.errors import clipped_line

    goal = facts.get("seeded_goal")
    about = f" (goal: {clipped_line(goal, 80)})" if isinstance(goal, str) and goal.strip() else ""
    return f"clm-policy: this session starts from the handoff {seeded}{about}."


def _post_compact(hook: Hook) -> Reply:
    from clm_policy.agents.hooks.commits import commit_summary
    from clm_policy.transcripts.reading import read_transcript

    summary = hook.call.text("compact_summary")
    if summary is None or not summary.strip():
        return NOTHING
    transcript = hook.call.transcript()
    settle(transcript)  # the compact_boundary line may not be written yet
    reading = read_transcript(transcript)
    sid = hook.session_id()
    context = (reading.compacted_at_tokens, reading.compacted_to_tokens)
    with hook.repo() as repo:
        commit_summary(hook, repo, sid, reading.step_index, summary, context)
    return NOTHING


def _stop(hook: Hook) -> Reply:
    reply = stop_for_handoff(hook, wording())
    if engine_mode() in ("replace", "append"):
        # the engine applies the committed handoff after the turn, and says so itself
        return reply.replace(message="")
    return reply


EVENTS = {
    # the one table of Claude Code's events: the handler, and the timeout in seconds its
    # settings.json gives the hook (60 where a snapshot, a handoff or an agent's record may be
    # committed)
    "UserPromptSubmit": HookEvent(_user_prompt_submit, 30),
    "PreCompact": HookEvent(lambda hook: pre_compact(hook, wording()), 60),
    "PostCompact": HookEvent(_post_compact, 30),
    "SessionStart": HookEvent(session_start, 30),
    "Stop": HookEvent(_stop, 60),
    "SubagentStop": HookEvent(record_subagent, 60),
}
