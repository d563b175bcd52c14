"""What every agent's hooks share: the event table's row (:class:`HookEvent`) and the settings
generated from a table, the call answered by its handler (:func:`run_hook`), and the rule
that a hook never breaks the agent — every failure is one line in the hook log and an answer
of nothing.
"""

from __future__ import annotations

import os

from clm_policy.agents.hooks.call import NoTranscriptYet, read_call
from clm_policy.agents.hooks.hook import Hook
from clm_policy.agents.hooks.reply import NOTHING, HookOutput, Reply, size_for
from clm_policy.base.errors import ClmError
from clm_policy.base.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:  # a hook runs on every prompt: no typing, pathlib or dataclasses at run time
    from collections.abc import Callable, Mapping
    from pathlib import Path
    from typing import Any

    from clm_policy.config.trust import IgnoredSettings

    Handler = Callable[[Hook], Reply]

LOG_LIMIT = 1024 * 1024
LOG_NAME = "hook.log"
NOTICES_NAME = "trust-notices.json"


class HookEvent(Record):
    """One event an agent's hook answers: its ``handler`` and the ``timeout`` (seconds) the
    agent's settings give the hook command."""

    handler: Handler
    timeout: int


def hook_settings(command: str, events: Mapping[str, HookEvent]) -> dict[str, Any]:
    """The ``hooks`` settings that run ``command`` on every event of ``events``, in groups
    without a ``matcher`` (the shape settings.json and Codex's hooks.json share)."""
    return {
        event: [{"hooks": [{"type": "command", "command": command, "timeout": spec.timeout}]}]
        for event, spec in events.items()
    }


def run_hook(
    raw: bytes, agent: str, events: Mapping[str, HookEvent], **options: str | None
) -> HookOutput:
    """Answer the hook input ``raw`` with its event's handler (``options``: the command's
    flags); any failure is logged and answered with nothing (exit 0)."""
    where = f"{agent}: "
    try:
        call = read_call(raw)
        where += f"{call.name}: " if call.name else ""
        hook = Hook(call, agent, **options)
        spec = events.get(call.name)
        reply = spec.handler(hook) if spec is not None else NOTHING
        return with_trust_notice(hook, reply).render(size_for(agent))
    except KeyboardInterrupt:
        raise
    except NoTranscriptYet:
        return HookOutput()  # a new session's first hooks: nothing to read yet, nothing wrong
    except Exception as exc:
        # one line per failure; the traceback of an unexpected one only when debugging
        debug = bool(os.environ.get("CLM_POLICY_DEBUG")) and not isinstance(exc, ClmError)
        log(f"{where}{type(exc).__name__}: {exc}", exc if debug else None)
        return HookOutput()


def with_trust_notice(hook: Hook, reply: Reply) -> Reply:
    """``reply``, telling the person what the project's configuration may not choose until
    they trust it — once per session and content of the file."""
    if not hook.ignored or reply.exit_code != 0:  # exit 2: Claude Code reads stderr only
        return reply
    try:
        fresh = not_said(hook.call.session, hook.ignored)
    except Exception as exc:  # the answer matters more than the notice
        log(f"trust notice: {type(exc).__name__}: {exc}")
        return reply
    return reply.with_message("\n".join(f"clm-policy: {found.notice}" for found in fresh))


def not_said(session: str, ignored: list[IgnoredSettings]) -> list[IgnoredSettings]:
    """Those of ``ignored`` this session has not been told of, marked as told."""
    import json

    from clm_policy.agents.logfile import log_path as path_of
    from clm_policy.base.digest import sha256_hex
    from clm_policy.base.privatefiles import read_private, write_private

    where = path_of(NOTICES_NAME)
    try:
        said = json.loads(read_private(where, 64 * 1024) or b"[]")
    except ValueError:
        said = []
    said = [k for k in said if isinstance(k, str)] if isinstance(said, list) else []
    fresh = []
    for found in ignored:
        key = sha256_hex(
            "\0".join((session, found.path, found.digest, *found.keys)).encode("utf-8")
        )[:32]
        if key not in said:
            fresh.append(found)
            said.append(key)
    if fresh:
        write_private(os.path.dirname(where), NOTICES_NAME, json.dumps(said[-500:]))
    return fresh


def log_path() -> Path:
    from pathlib import Path

    from clm_policy.agents.logfile import log_path as path_of

    return Path(path_of(LOG_NAME))


def log(line: str, exc: BaseException | None = None) -> None:
    """Append ``line`` to the hook log as one line (and the traceback of ``exc`` after it)."""

    from clm_policy.agents.logfile import append

    line = " ".join(line.split())  # a message of several lines is still one line of the log
    detail = ""
    if exc is not None:
        import traceback

        detail = "".join(traceback.format_exception(exc))
    append(LOG_NAME, line, LOG_LIMIT, detail)
