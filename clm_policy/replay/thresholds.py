"""Writing a profile's two thresholds into a policy file in place (``calibrate --write``).

Only the bytes of the two values change: every other byte of the file — comments, key order,
alignment, quoting, the flow mappings of the bundled policies — stays as it was. The values are
found where the one YAML reading layer says they are written (their line and column), the
token there is checked to read back as the value the policy loaded, and it is replaced in the
same style (plain, or inside its quotes). A round-trip dump would not do: ruamel re-indents
sequences and drops the alignment after keys (``coding:      {soft_compact: ...}``), changing
lines nobody asked to change. The edited text must load as a policy with exactly the new
thresholds before it replaces the file, atomically.

A threshold written in another file of the ``extends`` chain, or under ``defaults`` (where it
is every profile's), is refused, with where it is written: the edit would change more than
this profile of this file.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from clm_policy.base.atomicfile import replace
from clm_policy.base.errors import ClmError, InputError, Location
from clm_policy.formats.yamlio import parse_yaml
from clm_policy.policy.compile import load_policy
from clm_policy.policy.engine import Threshold
from clm_policy.policy.load import Origin, load_resolved

KEYS = ("soft_compact", "hard_handoff")
_TOKEN = {
    "": re.compile(r"[^\s,\[\]{}#]+"),
    "'": re.compile(r"'(?:[^']|'')*'"),
    '"': re.compile(r'"(?:[^"\\]|\\.)*"'),
}


@dataclass(frozen=True)
class Edit:
    key: str
    location: Location
    old: str  # the text replaced (quotes included)
    new: str


def write_thresholds(path: str, profile: str, soft: Threshold, hard: Threshold) -> list[Edit]:
    """Set ``profile``'s thresholds in the policy file ``path``; the edits made (none when
    the file already says so)."""
    res = load_resolved(path)
    fields = res.profiles.get(profile)
    if fields is None:
        raise InputError(f"{path}: no profile named {profile!r}")
    target = Path(path).resolve()
    text = res.files[-1].text
    edits: list[tuple[int, int, Edit]] = []
    for key, value in zip(KEYS, (soft, hard), strict=True):
        written = fields.get(key) or res.defaults.get(key)
        if written is None:
            raise InputError(f"{path}: profile {profile!r} has no {key}")
        raw, origin = written
        where = origin.location
        written_in = (p for doc, p in zip(res.files, res.paths, strict=True) if doc is origin.doc)
        if next(written_in, None) != target:
            raise InputError(
                f"{key} of profile {profile!r} is written in another file of the extends "
                f"chain ({where}): give that file to --write, or set the profile's "
                f"thresholds in {path} first",
                Location(path),
            )
        if origin.path[0] == "defaults":
            raise InputError(
                f"{key} is written under defaults, for every profile: set it in profile "
                f"{profile!r} first to calibrate this profile alone",
                where,
            )
        start, end = _span(text, origin, raw)
        new = str(value)  # as a policy writes it: 250000 or 62%
        old = text[start:end]
        if old[:1] in ("'", '"'):
            new = f"{old[0]}{new}{old[0]}"
        if Threshold.parse(raw) != value:
            edits.append((start, end, Edit(key, where, old, new)))
    if not edits:
        return []
    for start, end, edit in sorted(edits, key=lambda e: -e[0]):
        text = text[:start] + edit.new + text[end:]
    _check(path, text, profile, soft, hard)
    try:
        # through a symbolic link, the policy it points to: the link stays a link
        replace(os.path.realpath(path), text.encode("utf-8"), mode=os.stat(path).st_mode & 0o777)
    except OSError as exc:
        raise InputError(f"cannot write the policy: {exc.strerror}", Location(path)) from None
    return [e for _, _, e in sorted(edits)]


def _span(text: str, origin: Origin, raw: object) -> tuple[int, int]:
    """Where the scalar ``origin`` names is written in ``text``: start and end offsets."""
    where = origin.location
    style = origin.doc.style(origin.path)
    refused = InputError("the value is written in a form calibrate cannot edit in place", where)
    start = 0
    for _ in range(where.line - 1):  # \n or \r\n end a line; other breaks are refused
        start = text.find("\n", start) + 1
        if start == 0:
            raise refused
    start += where.col - 1
    token = _TOKEN.get(style or "")
    match = token.match(text, start) if token is not None else None
    if match is None or not _reads_as(match.group(), raw, where.file):
        raise refused
    return start, match.end()


def _reads_as(token: str, raw: object, file: str) -> bool:
    try:
        value = parse_yaml(f"value: {token}\n", file).root["value"]
    except ClmError:
        return False
    return bool(value == raw and type(value) is type(raw))


def _check(path: str, text: str, profile: str, soft: Threshold, hard: Threshold) -> None:
    """Load the edited text, beside the file (its ``extends`` resolve the same), and check it
    says exactly the new thresholds."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, temp = tempfile.mkstemp(prefix=".calibrate-", suffix=".yaml", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
        try:
            loaded = load_policy(temp).profile(profile)
        except ClmError as exc:
            raise InputError(
                f"the new thresholds would not load ({exc.message})", Location(path)
            ) from None
    finally:
        os.unlink(temp)
    if (loaded.soft_compact, loaded.hard_handoff) != (soft, hard):  # pragma: no cover - a bug
        raise InputError("the edited policy does not read back as written", Location(path))
