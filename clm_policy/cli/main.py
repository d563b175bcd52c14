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

from clm_policy.cli.decide import decide
from clm_policy.cli.lint import lint
from clm_policy.cli.memory import init, log, show
from clm_policy.cli.pipelines import compact, handoff
from clm_policy.cli.resolve import resolve
from clm_policy.cli.run import run as run_command
from clm_policy.cli.schema import schema
from clm_policy.cli.sessions import signal, status
from clm_policy.cli.test_cmd import test
from clm_policy.errors import ClmError

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_INPUT = 2
EXIT_INTERNAL = 3


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
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


cli.add_command(compact)
cli.add_command(decide)
cli.add_command(handoff)
cli.add_command(init)
cli.add_command(log)
cli.add_command(show)
cli.add_command(lint)
cli.add_command(resolve)
cli.add_command(run_command)
cli.add_command(schema)
cli.add_command(signal)
cli.add_command(status)
cli.add_command(test)


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
