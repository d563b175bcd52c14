"""Persisted sessions in a memory repository: ``sessions/<id>/state.json`` and ``run.json``.

Both are read from git's objects and treated as untrusted (the repository is shared by push):
a file that does not parse or validate is an :class:`InputError` naming it, never a crash. A
``state.json`` of an older schema version is read as the current one
(:mod:`clm_policy.models.versions`); :attr:`PersistedSession.note` says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from clm_policy.base.errors import InputError, Location
from clm_policy.formats.textio import STATE_LIMIT
from clm_policy.memory import layout
from clm_policy.memory.git.write import MemoryRepo
from clm_policy.memory.layout import SESSIONS, is_session, log_file, session_dir
from clm_policy.models.state import SessionState
from clm_policy.models.state_io import parse_state
from clm_policy.models.versions import STATE, upgrade


@dataclass(frozen=True)
class PersistedSession:
    state: SessionState
    run: dict[str, Any]  # how `clm-policy run` left it (scenario, played, stopped, pending)
    note: str | None = None  # one line when state.json was of an older schema version

    @property
    def stopped(self) -> str | None:
        value = self.run.get("stopped")
        return str(value) if value is not None else None

    @property
    def pending(self) -> dict[str, Any] | None:
        """The decision awaiting a person's confirmation, if any."""
        value = self.run.get("pending")
        return value if isinstance(value, dict) else None


def session_ids(repo: MemoryRepo) -> list[str]:
    """The sessions persisted at HEAD (folders of sessions/ named like a session id)."""
    out = repo.git("ls-tree", "-z", "--name-only", "HEAD", f"{SESSIONS}/", check=False)
    prefix = f"{SESSIONS}/"
    names = (line.removeprefix(prefix) for line in out.split("\0") if line.startswith(prefix))
    return sorted(name for name in names if is_session(name))


def load_session(repo: MemoryRepo, session_id: str) -> PersistedSession:
    """The persisted state of ``session_id`` at HEAD; an unknown id is an InputError."""
    where = f"{session_dir(session_id)}/state.json"
    text = repo.show_file(where)
    if text is None:
        ids = session_ids(repo)
        if session_id in ids:  # its folder holds other records (a hook's), not its state
            raise InputError(f"{where}: no such file: the session's state was never committed")
        branch = _handoff_branch(repo, session_id)
        if branch is not None:  # handed off with --branch, never on the checked-out branch
            raise InputError(
                f"{repo.shown}: session '{session_id}' is persisted only on branch {branch} (a "
                "handoff made with --branch): merge it to see it here; clm-policy show --memory "
                f"{repo.shown} {branch} shows its handoff"
            )
        known = ", ".join(ids) or "none"
        raise InputError(f"{repo.shown}: no persisted session '{session_id}' (sessions: {known})")
    note = None
    shown = f"{repo.shown}/{where}"  # (a position a person can open)
    try:
        if len(text) > STATE_LIMIT:
            raise InputError(f"larger than {STATE_LIMIT // 1024 // 1024} MiB")
        try:
            data = json.loads(text)
        except ValueError:
            data = None  # parse_state says where it is broken
        read = upgrade(STATE, data, where) if isinstance(data, dict) else None
        if read is not None and read.upgraded:
            note = read.note(where)
            text = json.dumps(read.data)
        state = parse_state(text, shown)  # strict JSON, as for --state
    except InputError as exc:
        said = exc.message.removeprefix(f"{where}: ")  # (the version's words name the file)
        at = exc.location if exc.location and exc.location.file == shown else Location(shown)
        raise InputError(f"not a valid session state: {said}", at) from None
    run_text = repo.show_file(f"{session_dir(session_id)}/run.json")
    try:
        run = json.loads(run_text) if run_text else {}
    except ValueError:
        run = {}  # how the run left it is only a record: a broken one is no run record
    return PersistedSession(state, run if isinstance(run, dict) else {}, note)


def _handoff_branch(repo: MemoryRepo, session_id: str) -> str | None:
    """The newest of the session's handoff branches (``clm/handoff/<id>-<n>``), if any."""
    prefix = f"refs/heads/clm/handoff/{session_id}-"
    out = repo.git(
        "for-each-ref", "--sort=-committerdate", "--format=%(refname)", f"{prefix}*", check=False
    )
    names = [name for name in out.split() if name[len(prefix) :].isdigit()]
    return names[0].removeprefix("refs/heads/") if names else None


def last_decisions(
    repo: MemoryRepo, session_id: str, count: int, step: int
) -> list[dict[str, Any]]:
    """The session's last ``count`` decisions: the log file of its last ``step``
    (:func:`~clm_policy.memory.layout.log_file`), and the ones before it while they are
    too few (one file read, as a rule)."""
    folder = session_dir(session_id)
    lines: list[str] = []
    while True:
        text = repo.show_file(f"{folder}/{log_file('decisions', step)}") or ""
        lines = [line for line in text.splitlines() if line.strip()] + lines
        if len(lines) >= count or step < layout.LOG_STEPS:
            break
        step -= layout.LOG_STEPS
    out = []
    for line in lines[-count:]:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            out.append(record)
    return out
