"""The project configuration files this person trusts (``clm-policy trust``).

A project's committed ``.clm-policy.yaml`` is written by whoever wrote the project — a
stranger, for a cloned repository. It may choose the policy and the profile; a memory
repository other than the project's default, and a remote that handoffs are pushed to, it
chooses only once the person trusts the file, as Claude Code and Codex trust a project's
hooks: ``clm-policy trust PATH`` records the file's path and the SHA-256 of its content, and a
file whose content changed is untrusted again.

The record is ``$XDG_CONFIG_HOME/clm-policy/trusted.json`` (``~/.config`` when that is unset or
not an absolute path), the person's own configuration: a JSON object ``{"version": 1, "files":
{PATH: {"sha256": HEX, "trusted_at": UTC}}}``, in a folder ``0700`` and a file ``0600``, read
only when it is a regular file of this user's that no one else may write
(clm_policy.base.privatefiles) — otherwise nothing is trusted. A path is the file's, absolute,
its folder's symbolic links resolved (a config reached through a linked folder is the same
file; a config that is itself a link is trusted for the content it shows at that place).

:func:`may_choose` is the check (clm_policy.config.project.setting asks it) and notes what it
refused for :func:`take_ignored`; clm_policy.config.trusting is what ``clm-policy trust`` does.
Cheap to import: a hook whose project file names a memory or remote checks on every call.
"""

from __future__ import annotations

import json
import os

from clm_policy.base.errors import InputError, Location
from clm_policy.base.paths import xdg_home
from clm_policy.base.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    StrPath = str | os.PathLike[str]

STORE_NAME = "trusted.json"
STORE_LIMIT = 1024 * 1024
TRUSTED = "trusted"
CHANGED = "changed"
UNTRUSTED = "untrusted"


class TrustedFile(Record):
    """One record: the file, the SHA-256 of the content trusted, when (UTC, ISO 8601)."""

    path: str
    sha256: str
    trusted_at: str = ""


def store_dir() -> str:
    """``$XDG_CONFIG_HOME/clm-policy`` (see the module's docstring)."""
    return os.path.join(xdg_home("XDG_CONFIG_HOME"), "clm-policy")


def store_path() -> str:
    return os.path.join(store_dir(), STORE_NAME)


def key_of(path: StrPath) -> str:
    """The path a record names: absolute, the folder's links resolved, the name as it is."""
    absolute = os.path.abspath(path)
    return os.path.join(os.path.realpath(os.path.dirname(absolute)), os.path.basename(absolute))


def status(path: StrPath, digest: str) -> str:
    """:data:`TRUSTED` when the record holds ``path`` with ``digest``; :data:`CHANGED` when
    it holds ``path`` with another; :data:`UNTRUSTED` otherwise (no record, or one that is
    not this user's own)."""
    found = _files(strict=False).get(key_of(path))
    if found is None:
        return UNTRUSTED
    return TRUSTED if found.sha256 == digest else CHANGED


def trusted_files() -> list[TrustedFile]:
    """Every record, by path; a record that cannot be read is an :class:`InputError`."""
    return sorted(_files(strict=True).values(), key=lambda f: f.path)


def trust(path: StrPath, digest: str) -> TrustedFile:
    """Record ``path`` as trusted with the content whose SHA-256 is ``digest``."""
    import time

    files = _files(strict=True)
    record = TrustedFile(key_of(path), digest, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    files[record.path] = record
    _write(files)
    return record


def revoke(path: StrPath) -> TrustedFile | None:
    """Remove the record of ``path``; the record removed, or None when there was none."""
    files = _files(strict=True)
    removed = files.pop(key_of(path), None)
    if removed is not None:
        _write(files)
    return removed


def may_choose(path: str, digest: str, key: str) -> bool:
    """Whether the project file at ``path``, whose content has the SHA-256 ``digest``, may
    choose ``key`` (one of :data:`~clm_policy.config.project.NEEDS_TRUST`; the project's
    default memory is always allowed, which the caller knows): only when the person trusts
    the file as it is now. A refusal is noted for :func:`take_ignored`."""
    found = status(path, digest)
    if found == TRUSTED:
        return True
    noted = _IGNORED.setdefault(path, IgnoredSettings(path, digest, (), found == CHANGED))
    if key not in noted.keys:
        _IGNORED[path] = noted.replace(keys=tuple(sorted((*noted.keys, key))))
    return False


class IgnoredSettings(Record):
    """Settings of an untrusted file that were ignored: the file, the SHA-256 of its content,
    the keys (in ``NEEDS_TRUST`` order; :data:`WHOLE_FILE` for a file above the project, all of
    which was ignored), whether it changed since the person trusted it, and the project it is
    above."""

    path: str
    digest: str
    keys: tuple[str, ...]
    changed: bool
    project: str = ""

    @property
    def notice(self) -> str:
        """One line for the person: what was ignored, what is done instead, how to trust."""
        import shlex

        whole = self.keys == WHOLE_FILE
        why = "you have not trusted " + ("it" if whole else "this file")
        why = "it changed since you trusted it" if self.changed else why
        if whole:
            return (
                f"ignored {self.path}: it is above the project {self.project} and {why}. To "
                f"use it for the projects below it: clm-policy trust {shlex.quote(self.path)}"
            )
        instead = [INSTEAD[key] for key in self.keys if key in INSTEAD]
        them = "them" if len(self.keys) > 1 else "it"
        return (
            f"ignored {' and '.join(self.keys)} in {self.path}: {why} ({'; '.join(instead)}). "
            f"To use {them}: clm-policy trust {shlex.quote(self.path)}"
        )


WHOLE_FILE = ("file",)
"""The keys of a file above the project that was ignored whole."""
INSTEAD = {"memory": "the project's default memory is used", "remote": "nothing is pushed"}
"""What is done instead of what an untrusted file chose."""

# what this process ignored, by file: said once (a command warns, a hook tells the person)
_IGNORED: dict[str, IgnoredSettings] = {}


def note_above(path: str, digest: str, project: str, *, changed: bool) -> None:
    """Note that ``path``, above ``project``'s root and not trusted as it is, was ignored."""
    _IGNORED.setdefault(path, IgnoredSettings(path, digest, WHOLE_FILE, changed, project))


def take_ignored() -> list[IgnoredSettings]:
    """The settings ignored since the last call, one record per file (then forgotten)."""
    found = list(_IGNORED.values())
    _IGNORED.clear()
    return found


# the hooks and a command check a file or two: read the record once while it is unchanged
_READ: dict[tuple[str, int, int, int], dict[str, TrustedFile]] = {}


def _files(*, strict: bool) -> dict[str, TrustedFile]:
    """The records by path. ``strict``: a record file that is not this user's own or not
    valid is an :class:`InputError` (for the ``trust`` command); otherwise it trusts
    nothing."""
    from clm_policy.base.privatefiles import read_private

    path = store_path()
    try:
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read: {exc}", Location(path)) from None
        key = (path, info.st_ino, info.st_mtime_ns, info.st_size)
        cached = _READ.get(key)
        if cached is not None:
            return dict(cached)
        data = read_private(path, STORE_LIMIT)
        if data is None:
            raise InputError(
                "not a private file of yours (a folder, a symbolic link, another user's, or "
                "writable by others): nothing in it is trusted; remove it and trust again",
                Location(path),
            )
        files = _parse(data, path)
    except InputError:
        if strict:
            raise
        return {}
    _READ.clear()
    _READ[key] = files
    return dict(files)


def _parse(data: bytes, path: str) -> dict[str, TrustedFile]:
    broken = InputError(
        'not a trust record ({"version": 1, "files": {...}}); remove it and trust again',
        Location(path),
    )
    if len(data) > STORE_LIMIT:
        raise broken
    try:
        doc = json.loads(data.decode("utf-8"))
    except ValueError:
        raise broken from None
    files = doc.get("files") if isinstance(doc, dict) and doc.get("version") == 1 else None
    if not isinstance(files, dict):
        raise broken
    found = {}
    for name, entry in files.items():
        digest = entry.get("sha256") if isinstance(entry, dict) else None
        if isinstance(digest, str) and len(digest) == 64:
            when = entry.get("trusted_at")
            found[name] = TrustedFile(name, digest, when if isinstance(when, str) else "")
    return found


def _write(files: dict[str, TrustedFile]) -> None:
    from clm_policy.base.privatefiles import write_private

    doc = {
        "version": 1,
        "files": {
            f.path: {"sha256": f.sha256, "trusted_at": f.trusted_at}
            for f in sorted(files.values(), key=lambda f: f.path)
        },
    }
    if not write_private(store_dir(), STORE_NAME, json.dumps(doc, indent=2) + "\n"):
        raise InputError(
            "cannot write the trust record (its folder must be yours, and no one else's to write)",
            Location(store_path()),
        )
    _READ.clear()
