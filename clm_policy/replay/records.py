"""Recorded decisions as ``replay`` reads them: every ``sessions/<id>/decisions.jsonl`` of one
commit, each line turned into the state the decision read and what the policy decided then.

The files are read from git's objects, not the work tree, with one ``git grep`` over the commit
(one process however many sessions there are; ``git cat-file --batch`` would need a pipe
to git that the one place git runs does not offer). A memory repository is untrusted: it
arrives by pull, with foreign commits. So a file that is no regular file, or is larger than
:data:`FILE_LIMIT`, is skipped and listed; the files together may hold at most
:data:`TOTAL_LIMIT`; and a line that does not give what a decision needs — written before
decisions recorded their state, not JSON, a state that does not validate — is *not
replayable*, with its reason, and never guessed at.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clm_policy.base.errors import InputError
from clm_policy.formats.textio import MiB
from clm_policy.memory.git.write import MemoryRepo
from clm_policy.memory.layout import SESSIONS, is_session, log_kind
from clm_policy.models.enums import MAX_COUNT, Action
from clm_policy.models.state import COUNTED_FIELDS, read_state
from clm_policy.transcripts.reading import json_object

if TYPE_CHECKING:
    from clm_policy.models.state import StateLike

FILE_LIMIT = 256 * MiB  # a larger decisions.jsonl is skipped (100,000 decisions: about 90 MB)
TOTAL_LIMIT = 512 * MiB  # what all of the commit's decisions.jsonl may hold together
LINE_LIMIT = 1 * MiB  # a longer line is not replayable (a decision's line is about 1 KB)

NOT_JSON = "not a JSON object"
TOO_LONG = f"longer than {LINE_LIMIT // MiB} MiB"
NO_STATE = "no state recorded (the line was written before decisions recorded what they read)"
BAD_STATE = "the recorded state is not a valid session state"
BAD_LENGTHS = "no valid lengths of messages and blockers recorded"
BAD_DECISION = "no valid action, proposal, trigger or profile recorded"
CHANGED_AFTER = (
    "not the policy's decision: its action was changed after the policy decided (a "
    "compaction that failed verification became a handoff)"
)

GLOB = f":(glob){SESSIONS}/*/decisions*.jsonl"
_ENTRY = re.compile(r"(\d+) (\w+) ([0-9a-f]+) +(-|\d+)\t(.*)", re.S)
_ACTIONS = frozenset(a.value for a in Action)


@dataclass(frozen=True)
class SkippedFile:
    path: str
    reason: str


@dataclass(frozen=True)
class Line:
    """One line of a session's decisions.jsonl (``number`` is 1-based)."""

    session: str
    number: int
    text: str


@dataclass(frozen=True, slots=True)
class Recorded:
    """A recorded decision that can be decided again: the state it read (its lists that a
    decision only counts are ranges of their recorded lengths), the profile it was decided
    under, and what the policy said then (before any person's answer)."""

    session: str
    line: int
    state: StateLike
    profile: str
    action: str
    trigger: str | None
    rationale: str | None


def decision_files(repo: MemoryRepo, commit: str) -> tuple[list[str], list[SkippedFile]]:
    """The readable ``sessions/<id>/decisions.jsonl`` of ``commit`` (and the files a long
    session continues it in, :func:`~clm_policy.memory.layout.log_file`) and the ones
    skipped."""
    out = repo.git("ls-tree", "-r", "-l", "-z", commit, "--", f"{SESSIONS}/")
    found: list[str] = []
    skipped: list[SkippedFile] = []
    total = 0
    for entry in out.split("\0"):
        match = _ENTRY.fullmatch(entry)
        if match is None:
            continue
        mode, kind, size, path = match[1], match[2], match[4], match[5]
        parts = path.split("/")
        if len(parts) != 3 or log_kind(parts[2]) != "decisions" or not is_session(parts[1]):
            continue
        if kind != "blob" or mode not in ("100644", "100755"):
            skipped.append(SkippedFile(path, "not a regular file"))
        elif int(size) > FILE_LIMIT:
            skipped.append(SkippedFile(path, f"larger than {FILE_LIMIT // MiB} MiB"))
        else:
            total += int(size)
            found.append(path)
    if total > TOTAL_LIMIT:
        raise InputError(
            f"{repo.shown}: the decisions.jsonl files at {commit[:12]} hold {total / MiB:.0f} "
            f"MiB together, more than replay reads ({TOTAL_LIMIT // MiB} MiB)"
        )
    return found, skipped


def read_lines(
    repo: MemoryRepo, commit: str, paths: list[str], skipped: list[SkippedFile]
) -> Iterator[Line]:
    """Every line of ``paths`` at ``commit``, file by file, in order (one ``git grep``; the
    ``skipped`` files are left out); a line's number counts the session's decisions across its
    files (the names of a long session's files sort in the order of its steps)."""
    if not paths:
        return
    specs = [GLOB, *(f":(exclude,literal){s.path}" for s in skipped)]
    status, out, err = repo.run(
        *("grep", "--no-color", "--no-line-number", "--no-column", "--text", "-z", "-e", ""),
        *(commit, "--", *specs),
    )
    if status not in (0, 1):  # 1: no line at all (every file empty)
        raise InputError(f"{repo.shown}: cannot read the recorded decisions: {err.strip()}")
    wanted = set(paths)
    prefix = f"{commit}:"
    numbers: dict[str, int] = {}
    for raw in out.split("\n") if out else ():
        where, sep, text = raw.partition("\0")
        path = where[len(prefix) :]
        if not sep or not where.startswith(prefix) or path not in wanted:
            continue
        session = path.split("/")[1]
        number = numbers[session] = numbers.get(session, 0) + 1
        yield Line(session, number, text)


def recorded(line: Line) -> Recorded | str:
    """The decision on ``line``, or why it cannot be decided again."""
    text = line.text
    if len(text) > LINE_LIMIT:
        return TOO_LONG
    data = json_object(text)
    if data is None:
        return NOT_JSON
    seen = data.get("state")
    if seen is None:
        return NO_STATE
    state = read_state(seen)
    if state is None:
        return BAD_STATE
    lengths = data.get("lengths")
    if type(lengths) is not dict:
        return BAD_LENGTHS
    for name in COUNTED_FIELDS:
        length = lengths.get(name)
        if type(length) is not int or not 0 <= length <= MAX_COUNT:
            return BAD_LENGTHS
        setattr(state, name, range(length))  # a decision reads only how many there are
    action, trigger, profile = data.get("action"), data.get("trigger"), data.get("profile")
    proposed = data.get("proposed")
    if (
        action not in _ACTIONS
        or proposed not in _ACTIONS
        or not (trigger is None or type(trigger) is str)
        or type(profile) is not str
        or not profile
    ):
        return BAD_DECISION
    if data.get("confirmed") is False:  # a person turned the policy's action down
        action = proposed
    elif action != proposed and not (action == "continue" and data.get("blocked_by")):
        return CHANGED_AFTER  # a policy's outcome is its proposal, or continue when blocked
    rationale = data.get("rationale")
    said = rationale if type(rationale) is str else None
    return Recorded(line.session, line.number, state, profile, action, trigger, said)
