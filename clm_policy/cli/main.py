"""``clm-policy``: the command group, and the one place errors become exit codes.

Exit codes (README, "Exit codes"): 0 success; 1 findings (lint, test); 2 bad input or usage
(a file:line:col message, no traceback); 3 an internal error (a bug: please report it;
CLM_POLICY_DEBUG=1 shows the traceback); 4 a decision awaits a person's confirmation (run).
"""

from __future__ import annotations

import os
import sys
import traceback

import click

from clm_policy.errors import ClmError

# Each command lives in its own module, imported only when that command runs (or when the
# group's --help lists them all): a one-shot `decide` does not pay for the others.
COMMANDS = {
    "compact": "clm_policy.cli.pipelines:compact",
    "decide": "clm_policy.cli.decide:decide",
    "handoff": "clm_policy.cli.pipelines:handoff",
    "init": "clm_policy.cli.memory:init",
    "lint": "clm_policy.cli.lint:lint",
    "log": "clm_policy.cli.memory:log",
    "resolve": "clm_policy.cli.resolve:resolve",
    "run": "clm_policy.cli.run:run",
    "schema": "clm_policy.cli.schema:schema",
    "show": "clm_policy.cli.memory:show",
    "signal": "clm_policy.cli.sessions:signal",
    "status": "clm_policy.cli.sessions:status",
    "test": "clm_policy.cli.test_cmd:test",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        import importlib

        module, _, attr = target.partition(":")
        command = getattr(importlib.import_module(module), attr)
        assert isinstance(command, click.Command)
        return command


EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_INPUT = 2
EXIT_INTERNAL = 3


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(package_name="clm-policy", prog_name="clm-policy")
def cli() -> None:
    """Context lifecycle management for LLM agents, driven by YAML policies.

    A policy reads how full an agent's context is and decides: CONTINUE, COMPACT (summary +
    hint) or HANDOFF (manifest + fresh session).

    \b
    Try:
      clm-policy run                               # the demo: a simulated session
      clm-policy decide --tokens 260000            # what the default policy says
      clm-policy decide --tokens 260000 --explain  # ...and why, rule by rule
      clm-policy resolve policies/default.yaml     # a policy with its extends merged
      clm-policy schema policy                     # the JSON schema of policy files
      clm-policy lint                              # check policies/ for problems
      clm-policy test                              # run policies/**/*.test.yaml
      clm-policy init clm-memory                   # a git repository for memory
      clm-policy compact -m clm-memory -s s.json   # commit a compaction of a session

    Exit codes: 0 ok, 1 problems found (lint, test), 2 bad input or usage, 3 internal error,
    4 a decision awaits confirmation (run).
    """


def main(argv: list[str] | None = None) -> None:
    """Run the CLI and exit with a documented code."""
    sys.exit(run(argv))


def run(argv: list[str] | None = None) -> int:
    try:
        result = cli.main(args=argv, prog_name="clm-policy", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("clm-policy: aborted", err=True)
        return EXIT_INPUT
    except click.ClickException as exc:
        exc.show()
        return EXIT_INPUT if exc.exit_code == 2 else exc.exit_code
    except ClmError as exc:
        text = str(exc) if exc.location is not None else f"clm-policy: {exc}"
        click.echo(text, err=True)
        return EXIT_INPUT
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:
        if os.environ.get("CLM_POLICY_DEBUG"):
            traceback.print_exc()
        click.echo(
            f"clm-policy: internal error: {type(exc).__name__}: {exc} (this is a bug; "
            "rerun with CLM_POLICY_DEBUG=1 for the traceback)",
            err=True,
        )
        return EXIT_INTERNAL
    return result if isinstance(result, int) else EXIT_OK
