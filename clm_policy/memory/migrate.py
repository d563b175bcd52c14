"""``clm-policy migrate``: a memory repository's documents rewritten in the current schema version,
in one commit.

The documents with a version (:mod:`clm_policy.models.versions`) are the handoff manifests
(``manifests/*.json``) and the sessions' ``state.json``. Each older one at HEAD is upgraded,
validated as the current version and written as a fresh one would be, all in one commit
``clm(migrate)``. Nothing is written when one cannot be read (every such file is named), or with
``dry_run``; a repository already current gets no commit, so it can run again. A document
larger than :data:`LIMITS` is refused by its size in git's tree, never read; the others are
parsed as strictly as ``--state``. Handoffs on their own branches (``clm/handoff/*``) keep
their manifests: their pull requests show them as written, and every reader upgrades them.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from clm_policy.base.errors import ClmError, InputError
from clm_policy.base.termsafe import one_line
from clm_policy.formats.jsonio import check_depth, parse_json
from clm_policy.formats.textio import STATE_LIMIT, MiB
from clm_policy.memory.change import Change, JsonDoc
from clm_policy.memory.git.write import MemoryRepo, NothingToCommit
from clm_policy.memory.layout import MANIFESTS, SESSIONS
from clm_policy.memory.trailers import CommitMessage
from clm_policy.models.versions import MANIFEST, STATE, current, upgrade

_STATE = re.compile(rf"{SESSIONS}/[A-Za-z0-9][A-Za-z0-9._-]{{0,127}}/state\.json")
_MANIFEST = re.compile(rf"{MANIFESTS}/[^/]+\.json")
LIMITS = {MANIFEST: 16 * MiB, STATE: STATE_LIMIT}  # a handoff is a page; a state has messages
NAMES = {MANIFEST: "manifest", STATE: "state"}


def kind_of(path: str) -> str | None:
    """Which versioned document ``path`` is (:data:`~clm_policy.models.versions.MANIFEST`,
    :data:`~clm_policy.models.versions.STATE`), or None."""
    if _MANIFEST.fullmatch(path):
        return MANIFEST
    if _STATE.fullmatch(path) and ".." not in path:
        return STATE
    return None


@dataclass(frozen=True)
class Migrated:
    """One document upgraded: its path, kind, the version it had and the one it has now."""

    path: str
    kind: str
    found: int
    now: int


@dataclass
class Migration:
    """What a migration did (or would do, ``dry_run``): the documents and the commit."""

    documents: list[Migrated] = field(default_factory=list)
    checked: int = 0
    commit: str | None = None


def migrate(repo: MemoryRepo, *, dry_run: bool = False) -> Migration:
    """Upgrade every older document at HEAD (see the module's doc)."""
    out = Migration()
    if repo.readable_head() is None:  # no commit yet: no document either
        return out
    change = Change()
    problems: list[str] = []
    for path, _, size in repo.blobs(MANIFESTS, SESSIONS):
        kind = kind_of(path)
        if kind is None or size < 0:
            continue
        out.checked += 1
        try:
            if size > LIMITS[kind]:
                raise InputError(
                    f"too large for a {NAMES[kind]} (more than {LIMITS[kind] // MiB} MiB): not read"
                )
            doc = _current(repo, path, kind)
        except (ValueError, ClmError) as exc:
            said, shown = one_line(str(exc)), one_line(path)
            problems.append(said if said.startswith(f"{shown}:") else f"{shown}: {said}")
            continue
        if doc is not None:
            change.files[path] = JsonDoc(doc[0])
            out.documents.append(Migrated(path, kind, doc[1], current(kind)))
    if problems:
        raise InputError(
            "cannot migrate; nothing was written:\n" + "\n".join(f"  {p}" for p in problems)
        )
    if dry_run or not out.documents:
        return out
    counts = Counter(d.kind for d in out.documents)
    said = ", ".join(
        f"{n} {NAMES[kind]}{'s' if n > 1 else ''} to version {current(kind)}"
        for kind in (MANIFEST, STATE)
        if (n := counts[kind])
    )
    body = "".join(f"{one_line(d.path)}: {d.found} -> {d.now}\n" for d in out.documents)
    message = CommitMessage(
        f"clm(migrate): {said}",
        body,
        {"Clm-Event": "migrate", "Clm-Migrated": str(len(out.documents))},
    )
    try:
        out.commit = repo.commit(message, change)
    except NothingToCommit:  # another migrate wrote the same documents meanwhile: current
        out.documents = []
    return out


def _current(repo: MemoryRepo, path: str, kind: str) -> tuple[dict[str, object], int] | None:
    """The document at ``path`` as the current version would write it, and the version it
    had; None when it is current already."""
    text = repo.show_file(path)
    if text is None:  # (it is in the tree: listed by its caller)
        raise InputError("an empty file, not a JSON object")
    data = parse_json(text, path)
    check_depth(data, text, path)
    if not isinstance(data, dict):
        raise InputError("not a JSON object")
    read = upgrade(kind, data, path)
    if not read.upgraded:
        return None
    if kind == MANIFEST:
        from clm_policy.models.shapes.manifest import validate_manifest

        manifest = validate_manifest(read.data, source=path)
        return manifest.as_dict(), read.found
    import json

    from clm_policy.models.state_io import parse_state

    state = parse_state(json.dumps(read.data), path)
    return state.as_dict(), read.found
