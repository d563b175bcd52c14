"""``clm-policy calibrate``: a profile's thresholds proposed from recorded sessions."""

from __future__ import annotations

import click

from clm_policy.base.termsafe import echo, echo_json
from clm_policy.cli.options import format_option, memory_option, policy_option, profile_option


@click.command()
@memory_option()
@click.option(
    "--transcripts",
    metavar="GLOB|DIR",
    help="Also read real past sessions: Claude Code transcripts or Codex rollouts (quote it; "
    "~ and ** work; a folder: its *.jsonl at any depth, subagents' left out).",
)
@policy_option("The policy whose thresholds are calibrated: a file or a bundled name.")
@profile_option("The task profile to calibrate (default: the policy's default_profile).")
@click.option(
    "--write",
    "target",
    metavar="POLICY",
    help="Write the proposed thresholds into this policy file (only the two values change).",
)
@format_option("text", "json")
@click.pass_context
def calibrate(
    ctx: click.Context,
    memory: str,
    transcripts: str | None,
    policy_ref: str,
    profile: str | None,
    target: str | None,
    fmt: str,
) -> int:
    """Propose a profile's soft and hard thresholds from recorded sessions.

    Trouble points — where the agent compacted on its own, where degradation was reported,
    where a compaction's recall fell — come from the memory repository and, with
    --transcripts, from real past sessions; the hard limit goes just under their lower decile,
    the soft one keeps the profile's spacing. Too little history: nothing is proposed or
    written. See docs/replay.md.

    \b
    Examples:
      clm-policy calibrate --memory clm-memory --profile coding
      clm-policy calibrate --transcripts '~/.claude/projects/*/*.jsonl' \\
          --write policies/examples/team.yaml --profile coding

    Exit codes: 0 done (or too little history: nothing proposed), 2 bad input (a policy, profile
    or memory repository that is not there; nothing written).
    """
    from clm_policy.formats.textio import path_kind
    from clm_policy.replay.calibrate import calibrate as propose
    from clm_policy.replay.calibrate import memory_given
    from clm_policy.replay.render import calibration_text
    from clm_policy.replay.thresholds import write_thresholds

    explicit = (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT)
    if target is not None:
        # the file written is the one calibrated: a --policy naming it too is no conflict, and
        # $CLM_POLICY_POLICY is a default an explicit --write overrides
        given = ctx.get_parameter_source("policy_ref") is click.core.ParameterSource.COMMANDLINE
        if given and not _same_file(policy_ref, target):
            raise click.UsageError("--write POLICY is the policy calibrated: leave out --policy")
        kind = path_kind(target)
        if kind != "file":
            said = {"missing": "no such policy file", "folder": "a folder, not a policy file"}
            raise click.UsageError(f"--write {target}: {said.get(kind, 'not a policy file')}")
        policy_ref = target
    read = memory_given(memory, ctx.get_parameter_source("memory") in explicit, transcripts)
    found = propose(
        policy_ref,
        profile,
        memory=read,
        transcripts=transcripts,
        progress=False if fmt == "json" else None,
    )
    edits = None
    if target is not None and found.proposed is not None:
        edits = write_thresholds(target, found.profile, *found.proposed)
    if fmt == "json":
        data = found.as_dict()
        made = [e.__dict__ | {"location": str(e.location)} for e in edits or ()]
        data["written"] = made if target is not None else None
        echo_json(data)
    else:
        echo(calibration_text(found, edits, target), nl=False)
    return 0


def _same_file(one: str, other: str) -> bool:
    import os

    try:
        return os.path.samefile(one, other)
    except OSError:  # a bundled name, or a file not there
        return False
