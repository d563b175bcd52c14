"""A handoff as a pull request: its title and its body (``handoff --branch --pr-body FILE``).

Everything the body says is read back from the memory repository: the handoff commit's
trailers, its manifest (validated again), and the session's previous handoff (the highest
number below the new one, in the new branch's history or on the session's other
``clm/handoff/<session>-<n>`` branches), compared with the new one field by field.

A body goes to a forge, where everyone with access reads it, so what it is made of passes the
one redactor (:mod:`clm_policy.memory.redact`) as everything that reaches git does —
although it was redacted when it was committed, a previous manifest or a trailer may come
from a clone that pushed it unredacted — and then the one Markdown-safe printer
(:mod:`clm_policy.formats.markdown`): the agent's text shows as written, inside its section,
and notifies no one (an ``@name``, ``owner/repo#12`` or ``fixes #12`` gets an invisible word
joiner), with no image, HTML, comment, link, heading or code fence of its own. Redaction comes
first: an escape inside a token would hide it from the redactor. The finished body passes the
redactor once more, and the title (plain text on a forge) gets the printer's :func:`plain`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clm_policy.base.errors import InputError, Location, clipped_line, plural
from clm_policy.formats import markdown as md
from clm_policy.formats.textio import path_kind
from clm_policy.lifecycle.handoff import SHOWN, render_manifest_markdown
from clm_policy.memory.audit import AuditEntry, read_log
from clm_policy.memory.git.write import MemoryRepo
from clm_policy.memory.layout import session_dir
from clm_policy.memory.redact import redact_data, redact_text
from clm_policy.models.manifest import HandoffManifest
from clm_policy.models.shapes.manifest import read_manifest

BODY_LIMIT = 65_000
"""GitHub refuses a pull-request body over 65,536 characters; past this, the manifest's
sections give way to a pointer to the handoff's own file in the pull request's changes."""
TITLE_GOAL = 72
MAX_CHANGES = 40
"""Change lines listed at most; the rest are counted."""
ITEM_WIDTH = 200
TITLES = {
    field: title.removesuffix(" (word for word)")
    for field, title, *_ in SHOWN
    if field != "timestamp"
}
"""The manifest's fields in the order of its rendering for people, each with that rendering's
heading; ``timestamp`` is left out of the comparison (it always differs)."""
OPTIONAL = frozenset(HandoffManifest.FIELDS) - frozenset(HandoffManifest.REQUIRED)
"""The handoff's additions to the seed plan's fields: compared, but not listed as unchanged
while both manifests leave them empty (a manifest from before them has none)."""
_NUMBER = re.compile(r"([0-9]+)\.md")


@dataclass(frozen=True)
class PullRequest:
    """A handoff branch's pull request (``base``: None when HEAD was detached)."""

    title: str
    body: str
    head: str
    base: str | None
    commit: str


def gh_command(title: str, head: str, base: str | None, body_file: str) -> str:
    """The ``gh pr create`` command line that opens it, shell-quoted, ready to paste."""
    words = ["gh", "pr", "create"]
    if base is not None:
        words += ["--base", base]
    words += ["--head", head, "--title", title, "--body-file", body_file]
    return shlex.join(words)


def title(manifest: HandoffManifest, session: str, step: str | int) -> str:
    """``Handoff <session> step <n> (<status>): <goal, cut>``, redacted and made inert."""
    text = (
        f"Handoff {session} step {step} ({manifest.status.value}): "
        f"{clipped_line(manifest.goal, TITLE_GOAL)}"
    )
    return md.plain(_clean(text))


def _clean(text: str) -> str:
    """``text`` redacted (before it is printed: an escape inside a token would hide it)."""
    return redact_text(text).text


def _secrets(count: str) -> str:
    """How many secrets the commit's ``Clm-Redactions`` trailer counts, in words (``1 secret``,
    ``3 secrets``); a trailer that is not a number is shown as written."""
    return (
        plural(int(count), "secret")
        if count.isascii() and count.isdigit()
        else f"{md.inline(count)} secret(s)"
    )


def base_branch(repo: MemoryRepo) -> str | None:
    """The checked-out branch: the one a handoff branch is made from (None when detached)."""
    return repo.git("symbolic-ref", "-q", "--short", "HEAD", check=False) or None


def check_body_path(path: str) -> None:
    """Refuse a body file that cannot be written, before the handoff is committed."""
    where = Location(path)
    problem = {"folder": "Is a directory", "other": "not a regular file"}.get(path_kind(path))
    if problem:
        raise InputError(f"cannot write the pull-request body: {problem}", where)
    try:  # the same test as the write: a file made (unnamed, never seen) in the folder
        with tempfile.TemporaryFile(dir=os.path.dirname(path) or "."):
            pass
    except OSError as exc:
        raise InputError(f"cannot write the pull-request body: {exc.strerror}", where) from None


def write_pull_request(repo: MemoryRepo, path: str, ref: str) -> PullRequest:
    """Write the body of ``ref``'s pull request to ``path`` (atomically) and return it."""
    from clm_policy.base.atomicfile import replace

    request = pull_request(repo, ref)
    try:
        replace(path, request.body.encode("utf-8"))
    except OSError as exc:
        raise InputError(
            f"cannot write the pull-request body: {exc.strerror} (the handoff is committed: "
            f"{request.commit[:12]} on {request.head})",
            Location(path),
        ) from None
    return request


def pull_request(repo: MemoryRepo, ref: str) -> PullRequest:
    """The pull request of the handoff committed at the tip of ``ref``."""
    commit = repo.resolve_commit(ref)
    entry = _entry(repo, commit) if commit else None
    if commit is None or entry is None or entry.event != "handoff":
        raise InputError(f"{ref!r} is not a handoff committed by clm-policy")
    session, step = entry.session, entry.trailers.get("Clm-Step", "?")
    manifest, m_path = _manifest(repo, entry)
    handoffs = _handoffs(repo, session, commit)
    own = handoffs.get(commit)
    earlier = [
        (n, c) for c, (n, _) in handoffs.items() if c != commit and (own is None or n < own[0])
    ]
    head = ref.removeprefix("refs/heads/")
    base = base_branch(repo)
    rule = entry.trailers.get("Clm-Rule")
    lines = [
        f"Handoff of session {_code(session)} at step {md.inline(_clean(step))}"
        + (f" (rule {_code(rule)})" if rule else "")
        + ", committed by clm-policy.",
        "",
        f"- Branch: {_code(head)}" + (f" into {_code(base)}" if base else ""),
        f"- Commit: {_code(commit[:12])}",
        f"- Manifest: {_code(m_path)}",
    ]
    if own is not None:
        lines.append(f"- For people: {_code(own[1])}")
    recall = entry.trailers.get("Clm-Recall-Agent")
    if recall:
        shown = (
            f"holds {md.inline(clipped_line(_clean(recall), ITEM_WIDTH))} of the facts clm-policy "
            "recorded"
        )
    elif manifest.agent_words is not None:
        shown = "written by the agent (not measured)"
    else:
        shown = "none: the agent wrote no handoff, the record below is all there is"
    redactions = entry.trailers.get("Clm-Redactions", "0")
    lines += [
        f"- The agent's handoff: {shown}",
        f"- Redactions: {_secrets(_clean(redactions))} replaced before the commit",
        "",
        "## Since the previous handoff",
        "",
        *_since(repo, manifest, max(earlier, default=None), handoffs),
        "",
    ]
    number = int(step) if step.isdigit() else 0
    sections = render_manifest_markdown(manifest, session_id=session, step=number)
    sections = sections.split("\n", 2)[2]  # without its own "# Handoff: ..." heading
    body = "\n".join(lines) + "\n" + sections
    if len(body) > BODY_LIMIT:
        where = f"`{own[1]}`" if own else f"`{m_path}`"
        body = "\n".join(lines) + (
            f"\nThe manifest is too long for a pull-request body ({len(sections)} characters): "
            f"read {where} in this pull request's changes.\n"
        )
    body = _clean(body)  # once more, whole: nothing may pass unread
    return PullRequest(title(manifest, session, step), body, head, base, commit)


def _code(text: str) -> str:
    return md.code(_clean(text))


def _entry(repo: MemoryRepo, commit: str) -> AuditEntry | None:
    found = read_log(repo, rev=commit, limit=1)
    return found[0] if found and found[0].commit == commit else None


def _manifest(repo: MemoryRepo, entry: AuditEntry) -> tuple[HandoffManifest, str]:
    """The manifest the handoff commit names (``Clm-Manifest``), validated; and its path."""
    path = entry.trailers.get("Clm-Manifest", "")
    text = repo.show_file(path, entry.commit) if path else None
    if text is None:
        raise InputError(f"handoff {entry.commit[:12]}: its manifest {path!r} is not in it")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InputError(f"handoff manifest {path}: not JSON ({exc})") from None
    clean, _ = redact_data(data)  # a clone may have committed it unredacted
    return read_manifest(clean, source=path)[0], path


def _handoffs(repo: MemoryRepo, session: str, commit: str) -> dict[str, tuple[int, str]]:
    """Each handoff of ``session`` in ``commit``'s history or on the session's handoff
    branches: its commit -> its number and its file for people."""
    folder = f"{session_dir(session)}/handoffs/"  # the session id checked first
    pattern = f"refs/heads/clm/handoff/{session}-*"
    refs = repo.git("for-each-ref", "--format=%(refname)", pattern, check=False).split()
    log = ["log", "--format=%x00%H", "--name-only", "--diff-filter=A", "--full-history"]
    out = repo.git(*log, commit, *refs, "--", folder)
    found: dict[str, tuple[int, str]] = {}
    for record in out.split("\x00")[1:]:
        sha, *paths = [line for line in record.splitlines() if line]
        for path in paths:
            number = _NUMBER.fullmatch(path.removeprefix(folder))
            if number and path.startswith(folder):
                found[sha] = (int(number.group(1)), path)
    return found


def _since(
    repo: MemoryRepo,
    manifest: HandoffManifest,
    previous: tuple[int, str] | None,
    handoffs: Mapping[str, tuple[int, str]],
) -> list[str]:
    if previous is None:
        return ["This is the session's first handoff: there is nothing to compare it with."]
    _, commit = previous
    entry = _entry(repo, commit)
    said = _code(handoffs[commit][1])
    if entry is not None:
        said += f" at step {md.inline(_clean(entry.trailers.get('Clm-Step', '?')))}"
    said += f" (commit {_code(commit[:12])})"
    try:
        if entry is None:
            raise InputError("it is not a handoff committed by clm-policy")
        old, _ = _manifest(repo, entry)
    except InputError as exc:
        return [
            f"The previous handoff, {said}, cannot be compared: {md.inline(_clean(exc.message))}."
        ]
    changes, same = diff_manifests(old, manifest)
    lines = [f"Compared with the previous handoff, {said}:", ""]
    if not changes:
        return [*lines, "No field changed (the timestamp aside)."]
    lines += changes[:MAX_CHANGES]
    if len(changes) > MAX_CHANGES:
        lines.append(f"- … and {len(changes) - MAX_CHANGES} more change(s)")
    if same:
        lines += ["", "Unchanged: " + ", ".join(same) + "."]
    return lines


# -- what changed between two handoff manifests -------------------------------------------


def diff_manifests(old: HandoffManifest, new: HandoffManifest) -> tuple[list[str], list[str]]:
    """What changed from ``old`` to ``new`` as Markdown list lines, under the headings of the
    manifest's rendering for people, and the headings of the fields that did not change."""
    before, after = old.as_dict(), new.as_dict()
    changes: list[str] = []
    same: list[str] = []
    for field, heading in TITLES.items():
        if field in OPTIONAL and _empty(before[field]) and _empty(after[field]):
            continue
        found = _field_changes(f"**{heading}**", before[field], after[field], field)
        changes += found
        if not found:
            same.append(heading)
    return changes, same


def _field_changes(name: str, old: Any, new: Any, field: str) -> list[str]:
    if old == new:
        return []
    if isinstance(old, list) and isinstance(new, list):
        return _list_changes(name, old, new)
    if field == "agent_words":  # the words whole: was / now, never a JSON object
        return _field_changes(name, _words(old), _words(new), "text")
    if isinstance(old, dict) and isinstance(new, dict):
        lines: list[str] = []
        for key in dict.fromkeys([*new, *old]):
            a, b = old.get(key), new.get(key)
            if a == b:
                continue
            if isinstance(a, list) and isinstance(b, list):  # the record's lists
                lines += _list_changes(f"{name} {md.code(key)}", a, b)
            else:
                lines.append(f"- {name} {md.code(key)}: {_value(a)} → {_value(b)}")
        return lines
    if isinstance(old, str) and isinstance(new, str) and field != "status":  # one line
        return [f"- {name} changed:", f"  - was: {_text(old)}", f"  - now: {_text(new)}"]
    return [f"- {name}: {_value(old)} → {_value(new)}"]


def _empty(value: Any) -> bool:
    """Nothing in it: none, "", [], or an object whose every value is empty (the record)."""
    return all(_empty(v) for v in value.values()) if isinstance(value, dict) else not value


def _words(value: Any) -> str:
    return str(value.get("text") or "") if isinstance(value, dict) else "(none)"


def _list_changes(name: str, old: Sequence[Any], new: Sequence[Any]) -> list[str]:
    added = [x for x in new if x not in old]
    removed = [x for x in old if x not in new]
    lines = [f"- {name} added: {_text(x)}" for x in added]
    lines += [f"- {name} removed: {_text(x)}" for x in removed]
    return lines or [f"- {name}: the same items, in another order"]


def _text(value: Any) -> str:
    return md.inline(clipped_line(str(value), ITEM_WIDTH))


def _value(value: Any) -> str:
    if value is None:
        return "(none)"
    shown = value if isinstance(value, str) else json.dumps(value)
    return md.code(clipped_line(shown, ITEM_WIDTH))
