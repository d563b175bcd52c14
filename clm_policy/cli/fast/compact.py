"""``clm-policy compact --state FILE`` as one quick process (see :mod:`clm_policy.cli.fast`):
click would cost a person or a hook waiting on it more than the compaction itself.

The options' values are found as click's callbacks find them (:mod:`clm_policy.config.project`),
the library call is the click command's (:func:`clm_policy.lifecycle.byhand.compact`) and the
output :mod:`clm_policy.cli.outcomes`'s. Handed back too, before anything is written or
printed: ``--session``, ``--transcript``, a setting that cannot be read. Once the compaction is
asked for, a failure is told here by :func:`clm_policy.cli.errors.report`, as click's path does.
"""

from __future__ import annotations

import os

from clm_policy.cli.fast import args as quickargs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# option -> (destination, kind), as in clm_policy.cli.fast.args. A test holds this table equal
# to the click command's parameters (those this path takes).
OPTIONS: dict[str, tuple[str, Any]] = {
    "--memory": ("memory", "str"),
    "-m": ("memory", "str"),
    "--state": ("state_src", "str"),
    "-s": ("state_src", "str"),
    "--policy": ("policy_ref", "str"),
    "-p": ("policy_ref", "str"),
    "--profile": ("profile", "str"),
    "--format": ("fmt", ("text", "json")),
    "--summarizer": ("summarizer", ("deterministic", "openai")),
}
DEFAULTS = quickargs.defaults(OPTIONS, fmt="text")


def answer(args: list[str], note: Callable[[str], None] | None = None) -> int | None:
    """Run ``clm-policy compact ARGS`` and return its exit code, or None (nothing written,
    nothing printed) when click should run the command instead. ``note``: what says on a
    terminal that the state is read from standard input (``cli.entry``'s)."""
    try:
        values = quickargs.parse(args, OPTIONS, DEFAULTS)
    except quickargs.Declined:
        return None
    if values["state_src"] is None:
        return None  # a session, a transcript, or no source: click's path
    from clm_policy.base.errors import ClmError
    from clm_policy.config.project import memory_path, setting

    try:  # what click's callbacks give (clm_policy.cli.options); a problem: click says it
        flag = values["memory"]  # click's envvar (cli.options): taken as the flag, if none
        memory = memory_path(os.environ.get("CLM_POLICY_MEMORY") or None if flag is None else flag)
        policy_ref = setting("policy", values["policy_ref"]) or "default"
        profile = setting("profile", values["profile"])
    except ClmError:
        return None
    from clm_policy.cli import errors

    errors.warn_ignored()  # before the command says anything, as the --memory callback does
    try:
        from clm_policy.cli.outcomes import show_compact
        from clm_policy.lifecycle import byhand
        from clm_policy.lifecycle.sources import Request

        if values["state_src"] == "-" and note is not None:
            note("compact")  # (a person who typed the command waits for the state)
        source = Request(state=values["state_src"], memory=memory)
        hand, done = byhand.compact(
            policy_ref, memory, source, profile, summarizer=values["summarizer"]
        )
        code = show_compact(hand, done, values["fmt"], memory)
    except (Exception, KeyboardInterrupt) as exc:
        if isinstance(exc, KeyboardInterrupt):  # a line of its own after the ^C, as click's
            from clm_policy.base.termsafe import echo

            echo("", err=True)
        code = errors.report(["compact", *args], exc, ("compact",))
    errors.warn_ignored()
    return code
