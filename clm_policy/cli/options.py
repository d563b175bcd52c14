"""Options several commands share, declared once so they read and behave the same."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from clm_policy.config.project import DEFAULT_MEMORY

F = TypeVar("F", bound=Callable[..., Any])


def _memory(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str:
    from clm_policy.cli.errors import warn_ignored
    from clm_policy.config.project import memory_path

    chosen = memory_path(_given(value, "a memory repository's folder"))
    warn_ignored()  # before the command says anything: it explains which memory is used
    return chosen


def _policy(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str:
    from clm_policy.config.project import setting

    return setting("policy", _given(value, "a policy file or a bundled name")) or "default"


def _profile(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    from clm_policy.config.project import setting

    return setting("profile", _given(value, "a profile's name"))


def _given(value: str | None, what: str) -> str | None:
    """``value``, refused when given empty: ``-p "$POLICY"`` with the variable unset must not
    quietly mean the default (an empty environment variable is unset, as click reads it)."""
    if value is not None and not value.strip():
        raise click.BadParameter(f"empty: give {what}, or leave the option out")
    return value


def _option(
    decls: tuple[str, ...],
    configured: bool,
    envvar: str,
    callback: Callable[..., Any],
    **attrs: Any,
) -> Callable[[F], F]:
    """``click.option``; when ``configured``, also read from ``envvar``, then ``callback``."""
    if configured:
        attrs.update(envvar=envvar, show_envvar=True, callback=callback)
    return click.option(*decls, **attrs)


def memory_option(
    help_text: str = "The memory repository (made by `clm-policy init`).",
    *,
    configured: bool = True,
    default: str | None = None,
) -> Callable[[F], F]:
    """``--memory/-m DIR``: the same name, default and environment variable everywhere.

    ``configured=False`` for a command that resolves the repository itself (``run``: its own
    ``default``; the hooks: the project's): no environment variable, no project file."""
    if configured:
        help_text += f" [default: the project's (.clm-policy.yaml), else ./{DEFAULT_MEMORY}]"
    shown = {} if configured else {"default": default, "show_default": default is not None}
    decls = ("--memory", "-m", "memory")
    return _option(
        decls, configured, "CLM_POLICY_MEMORY", _memory, metavar="DIR", help=help_text, **shown
    )


def policy_option(
    help_text: str = "Policy file, or the name of a bundled policy.", *, configured: bool = True
) -> Callable[[F], F]:
    """``--policy/-p PATH|NAME``: the flag, $CLM_POLICY_POLICY, .clm-policy.yaml, ``default``.

    ``configured=False``: the flag alone (None when not given), for a command that picks the
    policy itself (``run --resume`` takes the session's)."""
    if configured:
        help_text += " [default: the project's (.clm-policy.yaml), else default]"
    decls = ("--policy", "-p", "policy_ref")
    return _option(
        decls, configured, "CLM_POLICY_POLICY", _policy, metavar="PATH|NAME", help=help_text
    )


def profile_option(help_text: str, *, configured: bool = True) -> Callable[[F], F]:
    """``--profile NAME``: the flag, $CLM_POLICY_PROFILE, .clm-policy.yaml, else as described
    (``configured=False``: the flag alone, None when not given)."""
    return _option(
        ("--profile",), configured, "CLM_POLICY_PROFILE", _profile, metavar="NAME", help=help_text
    )


def count_option(
    *decls: str, low: int = 0, high: int | None = None, metavar: str | None = "N", **attrs: Any
) -> Callable[[F], F]:
    """An option whose value is a whole number from ``low`` to ``high`` (None: unbounded)."""
    return click.option(*decls, type=_Count(min=low, max=high), metavar=metavar, **attrs)


class _Count(click.IntRange):
    """click's whole-number range, saying "not a whole number" of a value that is none (click
    says "is not a valid integer range")."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            try:
                int(value.strip())
            except ValueError:
                self.fail(f"{value!r} is not a whole number", param, ctx)
        return super().convert(value, param, ctx)


def session_option(help_text: str, *, required: bool = False) -> Callable[[F], F]:
    """``--session ID``: a session persisted in the memory repository."""
    return click.option("--session", required=required, metavar="ID", help=help_text)


def state_option() -> Callable[[F], F]:
    """``--state/-s FILE|-``: a SessionState read from a file or standard input."""
    return click.option(
        "--state",
        "-s",
        "state_src",
        metavar="FILE|-",
        help="SessionState JSON file, or - for standard input.",
        callback=lambda _ctx, _param, value: _given(
            value, "a SessionState JSON file, or - for standard input"
        ),
    )


def format_option(*choices: str, help_text: str | None = None) -> Callable[[F], F]:
    """``--format``: text first (the default); with json, errors are JSON too (cli.main)."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(choices),
        default=choices[0],
        show_default=True,
        help=help_text or "Output format; with json, an error is printed as a JSON object too.",
    )


def output_option(help_text: str, *, writable: bool = False) -> Callable[[F], F]:
    """``--output/-o FILE``: a report written to FILE instead of standard output (``-``:
    standard output, as when it is not given: the command gets None).

    ``writable``: click checks the file can be written before the command runs. A folder is
    the command's to refuse (:func:`clm_policy.cli.report_file.check_output`), in the words
    every ``--output`` uses."""
    return click.option(
        "--output",
        "-o",
        type=click.Path(writable=writable, allow_dash=True),
        metavar="FILE",
        help=help_text + " (- for standard output)",
        callback=lambda _ctx, _param, value: (
            None if value == "-" else _given(value, "a file's path, or - for standard output")
        ),
    )


def scope_options(project: str, user: str) -> Callable[[F], F]:
    """``--project`` (the default) or ``--user``: with ``--install``, whose settings file. Two
    flags of their own (``project_scope``, ``user_scope``; :func:`scope_of` makes them one):
    a shared ``scope`` would keep the last one given and say nothing of the other."""

    def add(command: F) -> F:
        command = click.option("--user", "user_scope", is_flag=True, help=user)(command)
        return click.option("--project", "project_scope", is_flag=True, help=project)(command)

    return add


def scope_of(project: bool, user: bool, install: bool) -> str:
    """The scope :func:`scope_options`' flags name: ``user`` or ``project`` (also when neither
    is given). A usage error for both, or for either without ``install`` (``--install`` or
    ``--uninstall``)."""
    if project and user:
        raise click.UsageError("--project and --user do not go together: give one")
    if (project or user) and not install:
        flag = "--user" if user else "--project"
        raise click.UsageError(f"{flag} goes with --install or --uninstall")
    return "user" if user else "project"


def transcript_options(command: F) -> F:
    """``--transcript PATH`` and ``--transcript-format``: a real agent's session file."""
    command = click.option(
        "--transcript-format",
        type=click.Choice(["auto", "claude-code", "codex", "openai"]),
        default="auto",
        show_default=True,
        help="The transcript's format (auto: told from its lines).",
    )(command)
    return click.option(
        "--transcript",
        metavar="PATH",
        help="A Claude Code session JSONL, a Codex rollout or OpenAI chat JSON to read the "
        "session from.",
        callback=lambda _ctx, _param, value: _given(value, "a transcript file's path"),
    )(command)
