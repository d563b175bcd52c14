"""``clm-policy decide`` as one quick process (see :mod:`clm_policy.cli.fast`): a hook or a
script asks for one decision per prompt.

What the options mean together is the resolver's (:mod:`clm_policy.lifecycle.sources`), which
both paths call; the output is :mod:`clm_policy.cli.render`'s. Handed back too: ``--explain``,
``--session`` and any error but one (standard input is read once:
:func:`clm_policy.base.stdin.read_stdin_kept`). A ``--state`` that cannot be read is raised,
and reported with click's path's function (:func:`clm_policy.cli.errors.report`): handing it
back would read and validate a large state twice. Nothing is written here but the policy
cache, so running twice is harmless.
"""

from __future__ import annotations

from clm_policy.cli.fast import args as quickargs
from clm_policy.lifecycle.sources import WITH_TOKENS
from clm_policy.models.enums import MAX_COUNT, TaskStatus

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# option -> (destination, kind), as in clm_policy.cli.fast.args. A test holds this table equal
# to the click command's parameters.
OPTIONS: dict[str, tuple[str, Any]] = {
    "--policy": ("policy_ref", "str"),
    "-p": ("policy_ref", "str"),
    "--profile": ("profile", "str"),
    "--state": ("state_src", "str"),
    "-s": ("state_src", "str"),
    "--tokens": ("tokens", (0, MAX_COUNT)),
    "-t": ("tokens", (0, MAX_COUNT)),
    "--window": ("window", (1, MAX_COUNT)),
    "--step": ("step", (0, MAX_COUNT)),
    "--last-compact-step": ("last_compact_step", (0, MAX_COUNT)),
    "--status": ("status", tuple(s.value for s in TaskStatus)),
    "--signal": ("signals", "multi"),
    "--transcript": ("transcript", "str"),
    "--transcript-format": ("transcript_format", ("auto", "claude-code", "codex", "openai")),
    "--force": ("force", "flag"),
    "--format": ("fmt", ("text", "json")),
}
DEFAULTS = quickargs.defaults(
    OPTIONS,
    **{name: unset for name, (_, unset) in WITH_TOKENS.items()},
    transcript_format="auto",
    fmt="text",
)


def answer(args: list[str]) -> str | None:
    """The output of ``clm-policy decide ARGS`` (without its final newline), or None when
    click should run the command instead; a ``--state`` that cannot be read raises."""
    try:
        values = quickargs.parse(args, OPTIONS, DEFAULTS)
    except quickargs.Declined:
        return None
    from clm_policy.base.errors import ClmError
    from clm_policy.cli.render import render
    from clm_policy.config.project import setting
    from clm_policy.lifecycle.sources import Request, check, resolve
    from clm_policy.policy.cache import load_policy_cached

    try:
        request = Request.of(values)
        check(request)
        policy = load_policy_cached(setting("policy", values["policy_ref"]) or "default")
    except ClmError:
        return None  # click reports it, with its position and in the chosen format
    try:
        resolved = resolve(request)
    except ClmError:
        if request.state is None:
            return None
        raise  # the state cannot be read: click's path would say exactly this
    try:
        profile = setting("profile", values["profile"])
        outcome = policy.decide(resolved.state, profile, force=values["force"])
    except ClmError:
        return None
    return render(outcome, values["fmt"], resolved)
