"""``clm-policy log`` as one quick process (see :mod:`clm_policy.cli.fast`): the memory
repository is found and its one ``git log`` started before anything else is imported, and the
click command's parsing and rendering (:class:`~clm_policy.memory.audit.LogReader`,
:func:`~clm_policy.report.auditlog.render`) load while it runs. A folder that is not plainly a
memory repository is handed back too.
"""

from __future__ import annotations

import os

from clm_policy.cli.fast import args as quickargs
from clm_policy.memory.layout import EVENTS, MARKER

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

OPTIONS: dict[str, tuple[str, Any]] = {
    "--memory": ("memory", "str"),
    "-m": ("memory", "str"),
    "--session": ("session", "str"),
    "--event": ("event", EVENTS),
    "--agent": ("agent", "str"),
    "--all": ("all_refs", "flag"),
    "--limit": ("limit", (1, None)),
    "-n": ("limit", (1, None)),
    "--format": ("fmt", ("text", "json")),
}
DEFAULTS = quickargs.defaults(OPTIONS, fmt="text")


def answer(args: list[str]) -> tuple[int, str, str] | None:
    """``(status, stdout, stderr)`` of ``clm-policy log ARGS`` (each without its final
    newline; empty: nothing), or None when click should run the command instead."""
    try:
        values = quickargs.parse(args, OPTIONS, DEFAULTS)
    except quickargs.Declined:
        return None
    from clm_policy.base.errors import ClmError
    from clm_policy.config.project import memory_path
    from clm_policy.config.trust import take_ignored

    try:
        root = memory_path(values["memory"])
    except ClmError:
        return None
    if take_ignored() or not _plainly_a_memory_repository(root):
        return None  # click's path says what it ignored (an untrusted project file), or what it is
    from clm_policy.memory.audit import log_args, new_nonce
    from clm_policy.memory.git.run import start_git

    nonce = new_nonce()
    rev = "--all" if values["all_refs"] else "HEAD"
    filters = {name: values[name] for name in ("session", "event", "agent", "limit")}
    try:
        proc = start_git(root, log_args(nonce, rev=rev, **filters))
    except (ClmError, OSError):
        return None
    with proc:
        # while git reads the history: load what parses and renders its output, and parse
        # each record as git writes it
        from clm_policy.memory.audit import LogReader
        from clm_policy.report.auditlog import NOTHING, render

        reader = LogReader(nonce, **filters)
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        while chunk := os.read(fd, 1 << 16):
            reader.feed(chunk)
        reader.close()
        proc.communicate()
    if proc.returncode != 0:
        return None  # click's path says why (no commit yet: none; else git's words, exit 2)
    if not reader.entries and values["session"] is not None and not _known(root, values["session"]):
        return None  # click's path says so (exit 2), naming the sessions there are
    text = render(reader.entries, values["fmt"])
    return (0, "", NOTHING) if text is None else (0, text, "")


def _known(root: str, session: str) -> bool:
    """Whether the repository has any trace of ``session`` (read only when nothing matched)."""
    from clm_policy.base.errors import ClmError
    from clm_policy.memory.git.write import MemoryRepo
    from clm_policy.memory.history import check_session_known

    try:
        with MemoryRepo(root) as repo:
            check_session_known(repo, session, root)
    except ClmError:
        return False
    return True


def _plainly_a_memory_repository(root: str) -> bool:
    """A folder holding the marker and a ``.git`` (what MemoryRepo checks, more strictly)."""
    return (
        os.path.isdir(root)
        and os.path.isfile(os.path.join(root, MARKER))
        and os.path.isdir(os.path.join(root, ".git"))
    )
