"""``clm-policy hook``: answer an agent's hook calls (Claude Code, Codex CLI), and install or
print the hooks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from clm_policy.agents.hooks import claude_code as claude_hooks
from clm_policy.agents.hooks import codex as codex_hooks
from clm_policy.base.termsafe import echo, echo_json
from clm_policy.cli.options import (
    memory_option,
    policy_option,
    profile_option,
    scope_of,
    scope_options,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from clm_policy.agents.hooks.reply import HookOutput
    from clm_policy.cli.options import F

OVERRIDE = "Override the project's."


def events_named(events: Iterable[str]) -> Callable[[F], F]:
    """The command's help with ``{events}`` in it replaced by the names of ``events`` ("A, B
    and C"): the help names what is installed, from the one table of an agent's events."""
    names = list(events)
    listed = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)

    def name(command: F) -> F:
        command.__doc__ = (command.__doc__ or "").replace("{events}", listed)
        return command

    return name


def check_flags(
    modes: dict[str, bool], with_install: dict[str, bool], call: dict[str, str | None]
) -> None:
    """A usage error for a command line that asks for two things, or half of one: two of
    ``modes`` (what the command does instead of answering a hook call), a flag of
    ``with_install`` without ``--install``, or an option of the hook ``call`` with a mode."""
    given = [flag for flag, on in modes.items() if on]
    if len(given) > 1:
        raise click.UsageError(f"{' and '.join(given[:2])} do not go together: give one")
    needing = [flag for flag, on in with_install.items() if on]
    if needing and given != ["--install"]:
        raise click.UsageError(f"{needing[0]} goes with --install")
    options = [flag for flag, value in call.items() if value is not None]
    if options and given:
        raise click.UsageError(
            f"{options[0]} is for answering a hook call: it does not go with {given[0]}"
        )


@click.group()
def hook() -> None:
    """Answer an agent's hooks with the project's policy and memory.

    \b
    Set up a project for Claude Code:
      clm-policy init --claude-code                      # .clm-policy.yaml + memory
      clm-policy hook claude-code --install --project    # .claude/settings.json
      clm-policy hook claude-code --install --plugin     # or: the plugin (acts by itself)

    \b
    For Codex CLI:
      clm-policy init --codex                            # .clm-policy.yaml + memory
      clm-policy hook codex --install --project          # .codex/hooks.json

    See docs/claude-code.md and docs/codex.md.

    Exit codes (both agents): answering a call, 0 whatever happens, so that a hook never
    breaks the agent's session (130 interrupted); --install, --uninstall, --print-settings: 0
    done, 2 bad input (a settings or hooks file that is not JSON: nothing written).
    """


@hook.command("claude-code")
@events_named(claude_hooks.EVENTS)
@click.option("--print-settings", is_flag=True, help="Print the settings.json snippet and exit.")
@click.option(
    "--install",
    is_flag=True,
    help="Merge the hooks and the status line into a settings.json, keeping everything else.",
)
@click.option(
    "--uninstall",
    is_flag=True,
    help="Take clm-policy's hooks and status line out of a settings.json, keeping everything else.",
)
@scope_options(
    "With --install or --uninstall: ./.claude/settings.json (the default).",
    "With --install or --uninstall: ~/.claude/settings.json ($CLAUDE_CONFIG_DIR/settings.json "
    "when that is set: the one Claude Code reads).",
)
@click.option("--force", is_flag=True, help="With --install: replace another tool's status line.")
@click.option(
    "--plugin",
    is_flag=True,
    help="With --install or --uninstall: install (uninstall) clm-policy's Claude Code plugin "
    "instead (claude plugin ...).",
)
@click.option(
    "--engine",
    is_flag=True,
    help="Answer a call of clm-policy's Claude Code plugin engine module: JSON in, JSON out.",
)
@policy_option(OVERRIDE, configured=False)
@profile_option(OVERRIDE, configured=False)
@memory_option(OVERRIDE, configured=False)
def claude_code(
    print_settings: bool,
    install: bool,
    uninstall: bool,
    project_scope: bool,
    user_scope: bool,
    force: bool,
    plugin: bool,
    engine: bool,
    policy_ref: str | None,
    profile: str | None,
    memory: str | None,
) -> int:
    """Answer one Claude Code hook call: the hook's JSON on standard input.

    Claude Code runs this for {events} (installed with --install, or by clm-policy's Claude
    Code plugin). It never stands in the agent's way: bad input, an unreadable transcript or
    an error is exit 0 with no output, and a line in ~/.local/state/clm-policy/hook.log (a
    transcript not written yet is no problem). With --engine it answers the plugin's engine
    module instead (docs/claude-code.md): a JSON object, always, exit 0.

    \b
    Examples:
      clm-policy hook claude-code --print-settings
      clm-policy hook claude-code --install --project
      clm-policy hook claude-code --uninstall --project       # yours stay
      clm-policy hook claude-code --install --plugin --user   # the plugin, offline
      clm-policy hook claude-code --uninstall --plugin --user
      echo '{"hook_event_name": "UserPromptSubmit", ...}' | clm-policy hook claude-code

    Exit codes: answering a call, 0 whatever happens (130 interrupted); --install,
    --uninstall, --print-settings: 0 done, 2 bad input (a settings file that is not JSON:
    nothing written).
    """
    modes = {
        "--print-settings": print_settings,
        "--install": install,
        "--uninstall": uninstall,
        "--engine": engine,
    }
    call = {"--policy": policy_ref, "--profile": profile, "--memory": memory}
    check_flags(modes, {"--force": force}, call)
    if plugin and not (install or uninstall):
        raise click.UsageError("--plugin goes with --install or --uninstall")
    scope = scope_of(project_scope, user_scope, install or uninstall)
    if uninstall and not plugin:
        from clm_policy.agents.hooks.claude_settings import uninstall_command

        echo("\n".join(uninstall_command("claude-code", scope, Path.cwd())))
        return 0
    if plugin:
        if force:
            raise click.UsageError(
                "--force replaces a settings file's status line: not with --plugin"
            )
        from clm_policy.agents.hooks.claude_plugin import plugin_command

        code, text = plugin_command(scope, Path.cwd(), uninstall=uninstall)
        echo(text)
        return code
    if print_settings or install:
        from clm_policy.agents.hooks.claude_settings import settings_command

        code, text = settings_command(print_settings, install, scope, force, Path.cwd())
        echo(text)
        return code
    if engine:
        from clm_policy.agents.hooks.engine import engine_main
        from clm_policy.cli.entry import note_if_terminal

        note_if_terminal("hook claude-code --engine", "Claude Code's plugin engine")
        echo(engine_main(), lines=False)
        return 0
    return _answer(
        "claude-code",
        claude_hooks.run_claude_hook,
        policy_ref=policy_ref,
        profile=profile,
        memory=memory,
    )


@hook.command("codex")
@events_named(codex_hooks.EVENTS)
@click.option("--print-settings", is_flag=True, help="Print the hooks.json Codex reads, and exit.")
@click.option(
    "--install",
    is_flag=True,
    help="Merge the hooks into Codex's hooks.json, keeping everything else.",
)
@click.option(
    "--uninstall",
    is_flag=True,
    help="Take clm-policy's hooks out of Codex's hooks.json, keeping everything else.",
)
@scope_options(
    "With --install or --uninstall: ./.codex/hooks.json (the default).",
    "With --install or --uninstall: ~/.codex/hooks.json ($CODEX_HOME/hooks.json when that is set).",
)
@policy_option(OVERRIDE, configured=False)
@profile_option(OVERRIDE, configured=False)
@memory_option(OVERRIDE, configured=False)
def codex(
    print_settings: bool,
    install: bool,
    uninstall: bool,
    project_scope: bool,
    user_scope: bool,
    policy_ref: str | None,
    profile: str | None,
    memory: str | None,
) -> int:
    """Answer one Codex CLI hook call: the hook's JSON on standard input.

    Codex runs this for {events} (installed with --install into the project's
    .codex/hooks.json, or ~/.codex/hooks.json). It never stands in the agent's way: bad
    input, a missing rollout or an error is exit 0 with no output, and a line in
    ~/.local/state/clm-policy/hook.log.

    \b
    Examples:
      clm-policy hook codex --install --project     # .codex/hooks.json, your hooks kept
      clm-policy hook codex --uninstall --project   # ours out, yours stay
      clm-policy hook codex --print-settings        # the entries, to merge by hand
      echo '{"hook_event_name": "PreCompact", ...}' | clm-policy hook codex

    Exit codes: answering a call, 0 whatever happens (130 interrupted); --install,
    --uninstall, --print-settings: 0 done, 2 bad input (a hooks file that is not JSON:
    nothing written).
    """
    call = {"--policy": policy_ref, "--profile": profile, "--memory": memory}
    modes = {"--print-settings": print_settings, "--install": install, "--uninstall": uninstall}
    check_flags(modes, {}, call)
    scope = scope_of(project_scope, user_scope, install or uninstall)
    if uninstall:
        from clm_policy.agents.hooks.claude_settings import uninstall_command

        echo("\n".join(uninstall_command("codex", scope, Path.cwd())))
        return 0
    if install:
        from clm_policy.agents.hooks.claude_settings import codex_install

        echo("\n".join(codex_install(scope, Path.cwd())))
        return 0
    if print_settings:
        from clm_policy.agents.hooks.claude_settings import executable
        from clm_policy.agents.hooks.hook import warm_policy

        echo_json(codex_hooks.settings_snippet(executable()))
        warm_policy(os.getcwd())  # how Codex's hooks are set up: its first hook finds it compiled
        return 0
    return _answer(
        "codex", codex_hooks.run_codex_hook, policy_ref=policy_ref, profile=profile, memory=memory
    )


def _answer(agent: str, run_hook: Callable[..., HookOutput], **options: str | None) -> int:
    """Answer ``agent``'s hook call on standard input with ``run_hook``: print its reply,
    return its exit code."""
    from clm_policy.agents.hooks.call import MAX_INPUT
    from clm_policy.base.stdin import read_stdin
    from clm_policy.cli.entry import note_if_terminal

    note_if_terminal(f"hook {agent}", "Claude Code" if agent == "claude-code" else "Codex")

    reply = run_hook(read_stdin(MAX_INPUT), **options)
    if reply.stdout:
        echo(reply.stdout)
    if reply.stderr:
        echo(reply.stderr, err=True)
    return reply.exit_code
