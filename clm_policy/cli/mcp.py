"""``clm-policy mcp``: the MCP server the agent calls (standard input and output), and
registering it with Claude Code."""

from __future__ import annotations

from pathlib import Path

import click

from clm_policy.base.errors import InputError
from clm_policy.base.termsafe import echo
from clm_policy.cli.options import scope_of, scope_options


@click.command()
@click.option(
    "--install",
    is_flag=True,
    help="Register the server with Claude Code (merged into its file, keeping the others).",
)
@click.option(
    "--uninstall",
    is_flag=True,
    help="Take the server out of Claude Code's file (the other servers stay).",
)
@scope_options(
    "With --install or --uninstall: ./.mcp.json, this project's servers (the default).",
    "With --install or --uninstall: ~/.claude.json ($CLAUDE_CONFIG_DIR/.claude.json), every "
    "project's.",
)
def mcp(install: bool, uninstall: bool, project_scope: bool, user_scope: bool) -> int:
    """Serve clm-policy's tools to the agent over MCP (standard input and output).

    The tools: handoff (the agent writes its own handoff; committed, and the next session
    starts from it), status, explain, memory_search, memory_read, memory_write. Claude Code
    starts the server itself once it is registered (--install). Needs the mcp package:
    pip install 'clm-policy[mcp]'. See docs/mcp.md.

    \b
    Examples:
      clm-policy mcp --install --project     # .mcp.json
      clm-policy mcp --uninstall --project   # the other servers stay
      clm-policy mcp                         # what Claude Code runs

    Exit codes: serving, 0 when the client ends, 130 interrupted; --install, --uninstall: 0
    done, 2 bad input (nothing written); 2 without the mcp extra.
    """
    if install and uninstall:
        raise click.UsageError("--install and --uninstall do not go together: give one")
    scope = scope_of(project_scope, user_scope, install or uninstall)
    if uninstall:
        from clm_policy.agents.mcp.install import uninstall as uninstall_server

        return _say(uninstall_server(scope, Path.cwd()))
    if install:
        from clm_policy.agents.mcp.install import install as install_server

        return _say(install_server(scope, Path.cwd()))
    from clm_policy.agents.mcp.install import sdk_installed

    if not sdk_installed():
        raise InputError(
            "the MCP server needs the mcp package (2.x): pip install 'clm-policy[mcp]'"
        )
    from clm_policy.cli.entry import note_if_terminal

    # (said before the SDK is imported: that alone takes a second or two)
    note_if_terminal("mcp", "", what="the JSON-RPC an MCP client (Claude Code) sends")
    from clm_policy.agents.mcp.server import serve

    serve()
    return 0


def _say(lines: list[str]) -> int:
    """Print what ``--install`` or ``--uninstall`` did; an output that cannot be written
    (``> /dev/full``, ``| head``) says that the file is written all the same."""
    from clm_policy.base.errors import OutputClosed, OutputFailed
    from clm_policy.cli.outcomes import said_committed

    try:
        echo("\n".join(lines))
    except (OutputClosed, OutputFailed) as exc:
        if not lines[0].startswith("wrote "):
            raise
        raise said_committed(exc, f"{lines[0]} all the same") from None
    return 0
