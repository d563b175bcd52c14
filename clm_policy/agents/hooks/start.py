"""What a session starts with (SessionStart): at ``startup`` and ``clear`` the newest handoff
of the project that no session has taken yet, as a seed (:func:`take_handoff`); at
``compact`` what must survive, from the snapshot PreCompact committed (:func:`essentials`);
at ``resume`` nothing (the conversation is still there).

Nothing to hand is the common case — every start, every ``/clear`` — and a person waits for
it: it is found with one ``git log`` and nothing else (:func:`waiting_handoffs`), before the
modules that make a seed are imported (:mod:`.seeds`).
"""

from __future__ import annotations

from clm_policy.base.errors import InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from clm_policy.agents.hooks.hook import Hook
    from clm_policy.memory.audit import AuditEntry


def context_at_start(hook: Hook) -> str:
    source = hook.call.text("source")
    if source in ("startup", "clear"):
        return take_handoff(hook)
    if source == "compact":
        return essentials(hook)
    return ""


def take_handoff(hook: Hook) -> str:
    """The newest handoff no session has taken yet, as a seed; recorded as taken, and noted
    for the session's first prompt."""
    from clm_policy.memory.layout import is_memory_repo

    if not is_memory_repo(hook.memory):
        return ""  # no memory: nothing was ever handed off here (and none is made for it)
    waiting = waiting_handoffs(hook.memory, hook.session_id())
    if not waiting:
        return ""
    from clm_policy.agents.hooks.seeds import seed_from

    with hook.repo() as repo:
        for entry in waiting:
            seeded = seed_from(hook, repo, entry)
            if seeded is not None:
                text, goal = seeded
                hook.note(seeded=entry.trailers["Clm-Manifest"], seeded_goal=goal)
                return text
    return ""


def waiting_handoffs(memory: str, session: str) -> list[AuditEntry]:
    """The handoffs at ``memory`` that no session has taken and ``session`` did not make,
    newest first, read by one ``git log``: of each session its newest handoff only (an older
    one, a session handed off again since, would start a later session from what the newer
    one replaced)."""

    from clm_policy.memory.audit import read_log

    entries = read_log(memory, event=("start", "handoff"), rev="--all")
    taken = {e.trailers.get("Clm-Seed") for e in entries if e.event == "start"}
    handoffs = [e for e in entries if e.event == "handoff" and e.trailers.get("Clm-Manifest")]
    newest: dict[str, AuditEntry] = {}
    for entry in handoffs:  # (newest first)
        newest.setdefault(entry.session, entry)
    return [
        entry
        for entry in handoffs
        if newest[entry.session] is entry
        and entry.trailers["Clm-Manifest"] not in taken
        and entry.session != session
    ]


def essentials(hook: Hook) -> str:
    """After the agent compacted: what must survive, from the PreCompact snapshot."""
    from clm_policy.agents.hooks.shared import log
    from clm_policy.lifecycle.summary import next_safe_action
    from clm_policy.memory.sessions import load_session

    sid = hook.session_id()
    with hook.repo() as repo:
        try:
            persisted = load_session(repo, sid)
        except InputError:
            return ""
        state = persisted.state
        if persisted.note:
            log(persisted.note)
        index = repo.read_file("MEMORY.md") or ""
    lines = [
        "[clm-policy] Kept from before the compaction (the memory repository has the full "
        "snapshot):",
        f"Goal: {' '.join(state.goal.split()) or '(none)'}",
        f"Next safe action: {next_safe_action(state)}",
    ]
    lines += [f"Blocker: {b}" for b in state.blockers]
    lines += [f"Open failure: {x}" for x in state.open_failures if x not in state.blockers]
    lines += [f"Remaining: {x}" for x in state.remaining[:10]]
    lines += [f"Not verified: {x}" for x in state.not_verified]
    if state.changed_artifacts:
        lines.append("Changed files: " + ", ".join(state.changed_artifacts[-20:]))
    topics = [line for line in index.splitlines() if line.startswith("- [")]
    if topics:
        lines += ["Memory topics:", *topics[:30]]
    return "\n".join(lines)
