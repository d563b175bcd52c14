"""What ``clm-policy trust`` does: trust a project's configuration file as it is now, list the
files trusted and how each is now, forget one (the record: clm_policy.config.trust)."""

from __future__ import annotations

import os

from clm_policy.base.errors import InputError, Location
from clm_policy.config.trust import (
    CHANGED,
    TRUSTED,
    TrustedFile,
    key_of,
    revoke,
    trust,
    trusted_files,
)


def config_file(target: str | None, *, existing: bool = True) -> str:
    """The configuration file ``target`` names (absolute): a ``.clm-policy.yaml``, or a folder
    — the nearest above it, wherever it is (above the project too: trusting it makes it count
    there); None: the working directory's. ``existing=False`` (to revoke): a file that is gone
    is named all the same."""
    from clm_policy.config.project import FILENAME, nearest_config
    from clm_policy.formats.textio import path_kind

    start = target if target is not None else os.getcwd()
    kind = path_kind(start)
    if kind == "folder":
        found = nearest_config(start)
        if found is None:
            raise InputError(f"no {FILENAME} in {start} or a folder above it")  # (as typed)
        return found
    if kind == "missing" and existing:
        raise InputError("no such file", Location(start))
    if os.path.basename(start) != FILENAME:
        raise InputError(
            f"not a {FILENAME} (clm-policy reads only files of that name)", Location(start)
        )
    return os.path.abspath(start)


def trust_config(target: str | None) -> tuple[TrustedFile, str | None, str | None]:
    """Trust the configuration ``target`` names (see :func:`config_file`) as it is now: it is
    read and checked first, its ``policy:`` included (a file that is not there or is out of
    the project's reach, a bundled name there is none of), and any problem is an
    :class:`InputError` at ``file:line:col`` with nothing recorded; else the SHA-256 of the
    bytes read is recorded. Returns its record and what it chooses now: the repository its
    ``memory:`` names, resolved, and its ``remote`` (None where it names none or names the
    project's default memory)."""
    from clm_policy.config.project import ProjectConfig, from_file, is_default_memory, read_config

    path = config_file(target)
    values, where, digest = read_config(_as_named(target, path))
    folder = os.path.dirname(path)
    config = ProjectConfig(path, folder, folder, values, where, digest)
    from_file("policy", config)  # a policy it cannot name is as broken as a bad key
    record = trust(path, digest)
    memory = from_file("memory", config)
    if memory is not None and is_default_memory(config, memory):
        memory = None
    return record, memory, from_file("remote", config)


def _as_named(target: str | None, path: str) -> str:
    """The configuration file ``path`` as its errors name it: as typed when ``target`` named
    it; found (a folder named, or none), from the working folder when it is in it."""
    from clm_policy.base.paths import shown_path

    if target is not None and os.path.abspath(target) == path:
        return target
    shown = shown_path(path)
    return shown if os.path.abspath(shown) == path else path  # (not ``~/…``: it is read)


def listing() -> list[tuple[TrustedFile, str]]:
    """Every record with how its file is now: :data:`TRUSTED`, :data:`CHANGED`, ``missing``
    (no such file) or ``unreadable`` (each file read, at most 64 KiB)."""
    from clm_policy.base.digest import sha256_hex
    from clm_policy.config.project import MAX_SIZE
    from clm_policy.formats.textio import path_kind, read_bytes

    found = []
    for record in trusted_files():
        if path_kind(record.path) == "missing":
            found.append((record, "missing"))
            continue
        try:
            data = read_bytes(record.path, limit=MAX_SIZE, what="configuration")
        except InputError:
            found.append((record, "unreadable"))
            continue
        found.append((record, TRUSTED if sha256_hex(data) == record.sha256 else CHANGED))
    return found


def revoke_config(target: str | None) -> tuple[str, bool]:
    """Forget the trust in the configuration ``target`` names (it need not exist any more):
    its path, and whether it was trusted."""
    path = config_file(target, existing=False)
    return key_of(path), revoke(path) is not None
