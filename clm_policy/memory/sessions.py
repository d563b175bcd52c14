"""Persisted sessions in a memory repository: ``sessions/<id>/state.json`` and ``run.json``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from clm_policy.errors import InputError
from clm_policy.memory.gitwrite import MemoryRepo
from clm_policy.memory.layout import SESSIONS, check_session, session_dir
from clm_policy.models.state import SessionState


@dataclass(frozen=True)
class PersistedSession:
    state: SessionState
    run: dict[str, Any]  # how `clm-policy run` left it (scenario, played, stopped, pending)

    @property
    def stopped(self) -> str | None:
        value = self.run.get("stopped")
        return str(value) if value is not None else None


def session_ids(repo: MemoryRepo) -> list[str]:
    out = repo.git("ls-tree", "--name-only", "HEAD", f"{SESSIONS}/", check=False)
    return sorted(
        line.removeprefix(f"{SESSIONS}/")
        for line in out.splitlines()
        if line.strip() and not line.endswith(".gitkeep")
    )


def load_session(repo: MemoryRepo, session_id: str) -> PersistedSession:
    """The persisted state of ``session_id`` at HEAD; an unknown id is an InputError."""
    check_session(session_id)
    text = repo.show_file(f"{session_dir(session_id)}/state.json")
    if text is None:
        known = ", ".join(session_ids(repo)) or "none"
        raise InputError(f"{repo.root}: no persisted session '{session_id}' (sessions: {known})")
    state = SessionState.model_validate_json(text)
    run_text = repo.show_file(f"{session_dir(session_id)}/run.json")
    run = json.loads(run_text) if run_text else {}
    return PersistedSession(state, run if isinstance(run, dict) else {})


def last_decisions(repo: MemoryRepo, session_id: str, count: int) -> list[dict[str, Any]]:
    text = repo.show_file(f"{session_dir(session_id)}/decisions.jsonl") or ""
    lines = [line for line in text.splitlines() if line.strip()]
    out = []
    for line in lines[-count:]:
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out
