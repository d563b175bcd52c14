"""``clm-policy decide``: ask a policy what to do for one state, and why."""

from __future__ import annotations

import click

from clm_policy.base.errors import StateError
from clm_policy.base.termsafe import echo, echo_json
from clm_policy.cli.options import (
    count_option,
    format_option,
    memory_option,
    policy_option,
    profile_option,
    session_option,
    state_option,
    transcript_options,
)
from clm_policy.cli.render import from_transcript, render, transcript_note
from clm_policy.lifecycle.sources import WITH_TOKENS, Request, check, resolve
from clm_policy.models.enums import MAX_COUNT, TaskStatus
from clm_policy.policy.cache import load_policy_cached
from clm_policy.policy.engine import NO_WINDOW
from clm_policy.report.explain import render_explanation


@click.command()
@policy_option()
@profile_option("Task profile (default: the state's, else the policy's default_profile).")
@state_option()
@count_option(
    "--tokens", "-t", high=MAX_COUNT, help="Shortcut: a state whose context holds N tokens."
)
@count_option("--window", low=1, high=MAX_COUNT, help="With --tokens: the model's context window.")
@count_option(
    "--step",
    high=MAX_COUNT,
    default=WITH_TOKENS["step"][1],
    show_default=True,
    help="With --tokens: steps taken in the session.",
)
@count_option(
    "--last-compact-step",
    high=MAX_COUNT,
    help="With --tokens: step of the last compaction (default: never).",
)
@click.option(
    "--status",
    type=click.Choice([s.value for s in TaskStatus]),
    default=WITH_TOKENS["status"][1],
    show_default=True,
    help="With --tokens: the task status.",
)
@click.option(
    "--signal",
    "signals",
    multiple=True,
    metavar="NAME=VALUE",
    help="With --tokens: a declared signal's value (repeatable).",
)
@session_option("A session persisted in the memory repository (--memory).")
@memory_option("With --session: the memory repository.")
@transcript_options
@click.option("--force", is_flag=True, help="Bypass guards marked overridable (and no other).")
@click.option(
    "--explain",
    "-e",
    is_flag=True,
    help="Show every rule and guard, the values it read and its result.",
)
@format_option("text", "json")
def decide(
    policy_ref: str,
    profile: str | None,
    state_src: str | None,
    tokens: int | None,
    window: int | None,
    step: int,
    last_compact_step: int | None,
    status: str,
    signals: tuple[str, ...],
    session: str | None,
    memory: str,
    transcript: str | None,
    transcript_format: str,
    force: bool,
    explain: bool,
    fmt: str,
) -> int:
    """Decide CONTINUE, COMPACT or HANDOFF for a state under a policy.

    \b
    Examples:
      clm-policy decide --tokens 260000
      clm-policy decide --tokens 360000 --profile research --explain
      clm-policy decide --state session.json --format json
      cat session.json | clm-policy decide --state - --policy policies/examples/team.yaml
      clm-policy decide -p policies/examples/option_b.yaml --tokens 330000 \\
          --window 400000 --signal open_subagent_calls=2
      clm-policy decide --memory clm-memory --session demo --explain
      clm-policy decide --transcript ~/.claude/projects/-home-me-shop/<session>.jsonl

    A transcript (Claude Code session JSONL, Codex rollout, OpenAI chat JSON) is read from
    its end: the context the agent last reported, its model and window.

    The JSON output is one object: action, trigger (null when no rule fired), rationale,
    proposed, blocked_by, warnings, overridden, forced, policy, profile, context_tokens,
    context_window, window_source; with --transcript also context_estimated and transcript
    (format, path, warnings); with --explain also "explain" (rules and guards).

    Exit codes: 0 whatever the decision, 2 bad input (at file:line:col; with --format json, an
    error object on standard output), 130 interrupted.
    """
    request = Request.of(click.get_current_context().params)
    check(request)
    policy = load_policy_cached(policy_ref)
    resolved = resolve(request)
    state, reading = resolved.state, resolved.reading
    try:
        if not explain:
            echo(render(policy.decide(state, profile, force=force), fmt, resolved))
            return 0
        explanation = policy.explain(state, profile, force=force)
        if fmt != "json":
            echo(render_explanation(explanation, resolved.window_from) + transcript_note(reading))
            return 0
        explained = explanation.as_dict()
        del explained["decision"]
        payload = {**explanation.decision.as_dict(), **from_transcript(reading)}
        echo_json({**payload, "explain": explained})
        return 0
    except StateError as exc:
        if request.tokens is not None and exc.message.endswith(NO_WINDOW):
            raise StateError(f"{exc.message}; with --tokens: give --window N") from None
        raise resolved.locate(exc) from None
