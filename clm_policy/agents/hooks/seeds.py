"""A committed handoff made into the seed a session starts from, recorded in git as taken.

Imported only when there is a handoff to hand: the seed's modules are a session start's
heaviest.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from clm_policy.agents.hooks.reply import size_for
from clm_policy.base.errors import ClmError
from clm_policy.base.paths import home_as_tilde
from clm_policy.lifecycle.pipelines import Provenance, memory_hits, read_more, record_session_start
from clm_policy.lifecycle.seed import seed_text
from clm_policy.memory.layout import is_session
from clm_policy.models.enums import CHARS_PER_TOKEN
from clm_policy.models.shapes.manifest import read_manifest
from clm_policy.models.state import SessionState

if TYPE_CHECKING:
    from clm_policy.agents.hooks.hook import Hook
    from clm_policy.memory.audit import AuditEntry
    from clm_policy.memory.git.write import MemoryRepo
    from clm_policy.policy.engine import Profile

SEED_LIMIT = 9_400
"""The most a seed given at SessionStart may take, as its agent measures it (both read 10,000
of a hook's additional context; the hook's own notices need room)."""


def seed_budget(profile: Profile) -> int:
    """The profile's ``seed_tokens`` in characters, held to :data:`SEED_LIMIT`."""
    return min(profile.seed_tokens * CHARS_PER_TOKEN, SEED_LIMIT)


def seed_from(
    hook: Hook, repo: MemoryRepo, entry: AuditEntry, *, in_place: bool = False
) -> tuple[str, str] | None:
    """The seed of the handoff ``entry`` and its goal, recorded as taken by this session
    (``Clm-Seed``); None when its manifest is missing or does not validate. ``in_place``: the
    session that handed off continues from it (the plugin engine), with no parent."""
    from clm_policy.agents.hooks.shared import log

    path = entry.trailers.get("Clm-Manifest")
    text = repo.show_file(path, entry.commit) if path else None
    if path is None or text is None:
        return None
    try:
        manifest, read = read_manifest(json.loads(text), source=path)
    except (ValueError, ClmError):
        return None  # a manifest that does not validate is no seed
    if read.upgraded:
        log(read.note(path))
    constraints, decisions = _carried(repo, entry.session, entry.commit)
    profile = hook.policy().profile(hook.profile)
    handoff_file = entry.trailers.get("Clm-Handoff") or path
    seed = seed_text(
        manifest,
        memory=memory_hits(repo, manifest),
        budget=seed_budget(profile),
        size=size_for(hook.agent),
        read_more=read_more(handoff_file, home_as_tilde(hook.memory)),
        constraints=constraints,
        decisions=decisions,
    )
    parent = None if in_place else entry.session or None
    state = SessionState(session_id=hook.session_id(), goal=manifest.goal, parent_session=parent)
    record: dict[str, object] = {"agent": hook.agent, "seeded_from": path}
    if in_place:
        record["in_place"] = True
    record_session_start(
        repo,
        state,
        record=record,
        why=Provenance("seeded", extra_trailers={"Clm-Agent": hook.agent, "Clm-Seed": path}),
    )
    return seed, manifest.goal


def _carried(repo: MemoryRepo, session: str | None, commit: str) -> tuple[list[str], list[str]]:
    """The constraints and decisions of the handed-off session's state.json at ``commit``
    (the manifest has no field for them)."""

    if not session or not is_session(session):
        return [], []
    text = repo.show_file(f"sessions/{session}/state.json", commit)
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return [], []

    def strings(key: str) -> list[str]:
        items = data.get(key) if isinstance(data, dict) else None
        ok = isinstance(items, list) and all(isinstance(i, str) for i in items)
        return list(items) if ok and items is not None else []

    return strings("constraints"), strings("decisions")
