"""Options several commands share, declared once so they read and behave the same."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_MEMORY = "clm-memory"
MEMORY_ENV = "CLM_POLICY_MEMORY"
EVENTS = ("init", "start", "compact", "handoff", "memory", "signal", "session")
"""Every ``Clm-Event`` a clm-policy commit can carry (docs/memory.md)."""


def memory_option(
    help_text: str = "The memory repository (made by `clm-policy init`).",
) -> Callable[[F], F]:
    """``--memory/-m DIR``: the same name, default and environment variable everywhere."""
    return click.option(
        "--memory",
        "-m",
        "memory",
        default=DEFAULT_MEMORY,
        envvar=MEMORY_ENV,
        show_default=True,
        show_envvar=True,
        metavar="DIR",
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
