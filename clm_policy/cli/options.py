"""Options several commands share, declared once so they read and behave the same."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_MEMORY = "clm-memory"
MEMORY_ENV = "CLM_POLICY_MEMORY"
EVENTS = ("init", "start", "compact", "handoff", "summary", "memory", "signal", "session")
"""Every ``Clm-Event`` a clm-policy commit can carry (docs/memory.md)."""


def _memory(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str:
    from clm_policy.config import memory_path

    return memory_path(value)


def _policy(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str:
    from clm_policy.config import setting

    return setting("policy", value) or "default"


def _profile(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    from clm_policy.config import setting

    return setting("profile", value)


def memory_option(
    help_text: str = "The memory repository (made by `clm-policy init`).",
) -> Callable[[F], F]:
    """``--memory/-m DIR``: the same name, default and environment variable everywhere."""
    return click.option(
        "--memory",
        "-m",
        "memory",
        envvar=MEMORY_ENV,
        show_envvar=True,
        callback=_memory,
        metavar="DIR",
        help=f"{help_text} [default: the project's (.clm-policy.yaml), else ./{DEFAULT_MEMORY}]",
    )


def policy_option(
    help_text: str = "Policy file, or the name of a bundled policy.",
) -> Callable[[F], F]:
    """``--policy/-p PATH|NAME``: the flag, $CLM_POLICY_POLICY, .clm-policy.yaml, ``default``."""
    return click.option(
        "--policy",
        "-p",
        "policy_ref",
        envvar="CLM_POLICY_POLICY",
        show_envvar=True,
        callback=_policy,
        metavar="PATH|NAME",
        help=f"{help_text} [default: the project's (.clm-policy.yaml), else default]",
    )


def profile_option(help_text: str) -> Callable[[F], F]:
    """``--profile NAME``: the flag, $CLM_POLICY_PROFILE, .clm-policy.yaml, else as described."""
    return click.option(
        "--profile",
        envvar="CLM_POLICY_PROFILE",
        show_envvar=True,
        callback=_profile,
        metavar="NAME",
        help=help_text,
    )


def format_option(*choices: str) -> Callable[[F], F]:
    """``--format``: text first (the default); with json, errors are JSON too (cli.main)."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(list(choices or ("text", "json"))),
        default=(choices or ("text",))[0],
        show_default=True,
        help="Output format; with json, an error is printed as a JSON object too.",
    )


TRANSCRIPT_FORMATS = ("auto", "claude-code", "codex", "openai")


def transcript_options(command: F) -> F:
    """``--transcript PATH`` and ``--transcript-format``: a real agent's session file."""
    command = click.option(
        "--transcript-format",
        type=click.Choice(TRANSCRIPT_FORMATS),
        default="auto",
        show_default=True,
        help="The transcript's format (auto: told from its lines).",
    )(command)
    return click.option(
        "--transcript",
        metavar="PATH",
        help="A Claude Code session JSONL, a Codex rollout or OpenAI chat JSON to read the "
        "session from.",
    )(command)
