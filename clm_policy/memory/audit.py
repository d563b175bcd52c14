"""The audit trail: the memory repository's commits, read with one ``git log`` call.

Each clm-policy commit carries ``Clm-*`` trailers; git formats them itself
(``%(trailers:only,unfold)``), so reading 10,000 commits is one process and no per-commit
object access. Commit messages are untrusted (anyone who can push writes them), so the fields
and records of the output are separated by markers that carry a random nonce, made anew for
every call: no message can contain them, and a record that does not split cleanly is skipped.
"""

from __future__ import annotations

import os
import re

from clm_policy.base.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:  # `log` reads here without the write path (clm_policy.cli.fast.log)
    from collections.abc import Iterable
    from typing import TypedDict, Unpack

    from clm_policy.memory.git.write import MemoryRepo

    Events = str | tuple[str, ...] | None  # one Clm-Event, or several (a commit of any)

    class Filters(TypedDict, total=False):
        """Which commits are read: of ``session``, of ``event`` (one or any of several), of
        the agent id ``agent``, the newest ``limit``, walking back from ``rev`` (HEAD)."""

        session: str | None
        event: Events
        limit: int | None
        rev: str
        agent: str | None


class AuditEntry(Record):
    """One clm-policy commit: its hash, author date, subject and ``Clm-*`` trailers."""

    commit: str
    date: str
    subject: str
    trailers: dict[str, str]
    HASHABLE = False

    @property
    def event(self) -> str:
        return self.trailers.get("Clm-Event", "")

    @property
    def session(self) -> str:
        return self.trailers.get("Clm-Session", "")

    @property
    def agent_id(self) -> str:
        """The agent of the session the commit is about (``Clm-Agent-Id``; "" for none)."""
        return self.trailers.get("Clm-Agent-Id", "")

    def as_dict(self) -> dict[str, object]:
        return {
            "commit": self.commit,
            "date": self.date,
            "subject": self.subject,
            "event": self.event,
            "session": self.session,
            "trailers": dict(self.trailers),
        }


def read_log(repo: MemoryRepo | str, **filters: Unpack[Filters]) -> list[AuditEntry]:
    """clm-policy commits, newest first, filtered by session, event and agent id. ``repo``:
    an open repository, or the folder of one (a caller that only reads: no write path)."""
    return PendingLog(repo, **filters).entries()


def committed_at(newest: list[AuditEntry], step: int, context_tokens: int | None) -> str | None:
    """The commit of the compaction or handoff ``newest`` holds (a session's newest:
    ``read_log`` with ``event="compact"`` or ``"handoff"``, ``limit=1``) when it was taken at
    this position, the same step and context (None: at this step, whatever the context);
    else None."""
    if not newest:
        return None
    trailers = newest[0].trailers
    tokens = trailers.get("Clm-Context-Tokens") if context_tokens is None else str(context_tokens)
    at = (trailers.get("Clm-Step"), trailers.get("Clm-Context-Tokens"))
    return newest[0].commit if at == (str(step), tokens) else None


class PendingLog:
    """:func:`read_log`'s ``git log`` (the same command and parsing), started when this is
    made and read by :meth:`entries`: a caller imports or works meanwhile (``compact`` loads
    the compaction while git looks for the session's last one). Call :meth:`entries` in any
    case: it waits for git."""

    def __init__(self, repo: MemoryRepo | str, **filters: Unpack[Filters]) -> None:
        from clm_policy.memory.git.run import start_git

        nonce = new_nonce()
        self._reader = LogReader(nonce, **filters)
        self._root = repo if isinstance(repo, str) else repo.root
        self._rev = filters.get("rev", "HEAD")
        self._proc = start_git(self._root, log_args(nonce, **filters))

    def entries(self) -> list[AuditEntry]:
        """The entries, once git is done: none when the branch has no commit yet. Raises
        :class:`~clm_policy.memory.git.run.GitError` when git cannot read the history (a
        damaged repository is not an empty one)."""
        with self._proc as proc:
            out, err = proc.communicate()
        if proc.returncode != 0:
            check_log_status(self._root, self._rev, err.decode("utf-8", "replace"))
        reader = self._reader
        reader.feed_records(out.decode("utf-8", "replace").split(reader.record_sep))
        return reader.entries


def check_log_status(root: str, rev: str, err: str) -> None:
    """After a ``git log`` from ``rev`` that failed (``err``: git's words): nothing when
    ``rev`` is HEAD on a branch with no commit yet (an empty history), else a
    :class:`~clm_policy.memory.git.run.GitError`."""
    from clm_policy.memory.git.run import damaged, unborn

    if rev != "HEAD" or not unborn(root):
        raise damaged(root, err)


def new_nonce() -> str:
    """The random part of a call's separators (what secrets.token_hex does, without it)."""
    return os.urandom(8).hex()


class LogReader:
    """Entries taken from ``git log``'s output as it arrives (``log`` parses while git still
    writes): :meth:`feed` bytes, then :meth:`close`; the entries are in :attr:`entries`."""

    def __init__(self, nonce: str, **filters: Unpack[Filters]) -> None:
        self.field_sep, self.record_sep = f"\x1f{nonce}\x1f", f"\x1e{nonce}\x1e"
        self._record_bytes = self.record_sep.encode()
        self.session, self.events = filters.get("session"), _events(filters.get("event"))
        self.limit, self.agent = filters.get("limit"), filters.get("agent")
        self.entries: list[AuditEntry] = []
        self._rest = b""

    @property
    def full(self) -> bool:
        return self.limit is not None and len(self.entries) >= self.limit

    def feed(self, chunk: bytes) -> None:
        """Parse the records ``chunk`` completes (the separators are ASCII, so a record's
        bytes decode as they would within the whole output)."""
        *complete, self._rest = (self._rest + chunk).split(self._record_bytes)
        self.feed_records(r.decode("utf-8", "replace") for r in complete)

    def close(self) -> None:
        """The end of the output: parse what is left."""
        rest, self._rest = self._rest, b""
        self.feed_records([rest.decode("utf-8", "replace")])

    def feed_records(self, records: Iterable[str]) -> None:
        field_sep, session, events = self.field_sep, self.session, self.events
        for record in records:
            if self.full:
                return
            parts = record.strip("\n").split(field_sep)
            if len(parts) != 4:
                continue  # empty (the end), or not a record git formatted for us
            commit, date, subject, block = parts
            trailers: dict[str, str] = {}
            for line in block.splitlines():
                key, sep, value = line.partition(": ")
                if sep and key.startswith("Clm-"):
                    trailers[key] = value.strip()
            if "Clm-Event" not in trailers:
                continue  # not written by clm-policy
            if session is not None and trailers.get("Clm-Session") != session:
                continue
            if events and trailers.get("Clm-Event") not in events:
                continue
            if self.agent is not None and trailers.get("Clm-Agent-Id") != self.agent:
                continue
            self.entries.append(AuditEntry(commit, date, subject, trailers))


def log_args(nonce: str, **filters: Unpack[Filters]) -> list[str]:
    """The ``git log`` arguments :func:`read_log` runs (benchmarks/bench_memory.py times the
    same command bare, as the baseline of ``clm-policy log``). Several events are looked for
    by git only when nothing else filters (git's ``--grep``s match all or any, not both);
    otherwise the entries are filtered by event as they are read."""
    field, end = f"%x1f{nonce}%x1f", f"%x1e{nonce}%x1e"
    fmt = field.join(["%H", "%aI", "%s", "%(trailers:only,unfold)"]) + end
    args = ["log", f"--format={fmt}"]
    session, agent, limit = filters.get("session"), filters.get("agent"), filters.get("limit")
    events = _events(filters.get("event"))
    greps = [] if session is None else [f"^Clm-Session: {_literal(session)}$"]
    if len(events) == 1 or (session is None and agent is None):
        greps += [f"^Clm-Event: {_literal(e)}$" for e in events]
    if agent is not None:
        greps.append(f"^Clm-Agent-Id: {_literal(agent)}$")
    args += [f"--grep={grep}" for grep in greps]
    if len(greps) > 1 and not (len(events) > 1 and len(greps) == len(events)):
        args.append("--all-match")
    if limit is not None:
        # a commit git's --grep lets through may still be no clm commit (skipped below): a
        # margin, so that the walk stops near the newest entries instead of at the root
        args.append(f"--max-count={limit * 2 + 10}")
    return [*args, filters.get("rev", "HEAD"), "--"]


def _events(event: Events) -> tuple[str, ...]:
    return () if event is None else (event,) if isinstance(event, str) else event


def _literal(value: str) -> str:
    """``value`` matched literally in git's basic regular expression (``--grep``)."""
    return re.sub(r"([.\[\]\\*^$])", r"\\\1", value)
