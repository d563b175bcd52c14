"""``clm-policy replay``: recorded decisions, or real past sessions, under another policy."""

from __future__ import annotations

import click

from clm_policy.base.termsafe import echo, echo_json
from clm_policy.cli.options import format_option, memory_option, policy_option, profile_option


@click.command()
@memory_option()
@click.option(
    "--transcripts",
    metavar="GLOB|DIR",
    help="Replay real past sessions instead: Claude Code transcripts or Codex rollouts "
    "(quote it; ~ and ** work), e.g. '~/.claude/projects/*/*.jsonl'; a folder: its *.jsonl "
    "at any depth (subagents' left out), e.g. ~/.codex/sessions.",
)
@policy_option("The policy to decide under: a file, or the name of a bundled policy.")
@profile_option(
    "With --transcripts: the task profile (default: the policy's default_profile).",
    configured=False,
)
@click.option(
    "--rev",
    default="HEAD",
    show_default=True,
    metavar="REV",
    help="The commit of the memory repository whose decisions are replayed.",
)
@click.option(
    "--fail-on-change",
    is_flag=True,
    help="Exit 1 when any decision would change or the policy refuses one (for CI).",
)
@format_option("text", "json")
@click.pass_context
def replay(
    ctx: click.Context,
    memory: str,
    transcripts: str | None,
    policy_ref: str,
    profile: str | None,
    rev: str,
    fail_on_change: bool,
    fmt: str,
) -> int:
    """Decide recorded decisions again under another policy and report what would change.

    Every decision in the memory repository's sessions (at HEAD) is decided again on the
    state it recorded; changes are counted per rule and action, with examples. With
    --transcripts, real past sessions of Claude Code or Codex are walked request by request:
    where would the policy first have compacted or handed off, beside where the agent compacted
    on its own. See docs/replay.md.

    \b
    Examples:
      clm-policy replay --memory clm-memory --policy policies/examples/team.yaml --fail-on-change
      clm-policy replay --transcripts '~/.claude/projects/*/*.jsonl' --policy claude-code

    Exit codes: 0 done, 1 with --fail-on-change when a decision would change or the policy
    refuses one, 2 bad input.
    """
    quiet = False if fmt == "json" else None
    if transcripts is not None:
        source = ctx.get_parameter_source("memory")
        if source is click.core.ParameterSource.COMMANDLINE:
            raise click.UsageError("give --memory or --transcripts, not both")
        if fail_on_change or rev != "HEAD":
            raise click.UsageError("--fail-on-change and --rev go with --memory")
        from clm_policy.replay.render import transcripts_text
        from clm_policy.replay.transcripts import replay_transcripts

        found = replay_transcripts(transcripts, policy_ref, profile, progress=quiet)
        if fmt == "json":  # the text report lists them; JSON lists them, and so does stderr
            for skipped in found.skipped:
                echo(f"clm-policy: skipping {skipped.error}", err=True)
            echo_json(found.as_dict())
        else:
            echo(transcripts_text(found), nl=False)
        return 0
    if profile is not None:
        raise click.UsageError(
            "--profile goes with --transcripts (a recorded decision keeps its own profile)"
        )
    from clm_policy.replay.memory import replay_memory
    from clm_policy.replay.render import memory_text

    result = replay_memory(memory, policy_ref, rev=rev, progress=quiet)
    if fmt == "json":
        echo_json(result.as_dict())
    else:
        echo(memory_text(result), nl=False)
    return 1 if fail_on_change and (result.changed or result.refused) else 0
