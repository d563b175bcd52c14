"""``clm-policy``: the command group, and the one place errors become exit codes.

Exit codes (README, "Exit codes"): 0 success; 1 findings (lint, test); 2 bad input or usage
(a file:line:col message, no traceback); 3 an internal error (a bug: please report it;
CLM_POLICY_DEBUG=1 shows the traceback); 4 a decision awaits a person's confirmation (run);
130 interrupted (Ctrl-C). With ``--format json`` an error is a JSON object on standard output
(``{"error": {...}}``), so a program reading the output always gets JSON.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Sequence

import click

from clm_policy.errors import ClmError

# Each command lives in its own module, imported only when that command runs (or when the
# group's --help lists them all): a one-shot `decide` does not pay for the others.
COMMANDS = {
    "compact": "clm_policy.cli.pipelines:compact",
    "decide": "clm_policy.cli.decide:decide",
    "handoff": "clm_policy.cli.pipelines:handoff",
    "hook": "clm_policy.cli.hook:hook",
    "init": "clm_policy.cli.memory:init",
    "lint": "clm_policy.cli.lint:lint",
    "log": "clm_policy.cli.memory:log",
    "resolve": "clm_policy.cli.resolve:resolve",
    "run": "clm_policy.cli.run:run",
    "schema": "clm_policy.cli.schema:schema",
    "show": "clm_policy.cli.memory:show",
    "signal": "clm_policy.cli.sessions:signal",
    "status": "clm_policy.cli.sessions:status",
    "statusline": "clm_policy.cli.statusline:statusline",
    "test": "clm_policy.cli.testing:test",
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
EXIT_INTERRUPTED = 130


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
    4 a decision awaits confirmation (run), 130 interrupted.
    """


def main(argv: list[str] | None = None) -> None:
    """Run the CLI and exit with a documented code."""
    sys.exit(run(argv))


def run(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        result = cli.main(args=args, prog_name="clm-policy", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except (KeyboardInterrupt, click.exceptions.Abort) as exc:
        if isinstance(exc, KeyboardInterrupt) or isinstance(exc.__context__, KeyboardInterrupt):
            click.echo("clm-policy: interrupted", err=True)
            return EXIT_INTERRUPTED
        return _fail(args, EXIT_INPUT, "clm-policy: aborted")
    except click.ClickException as exc:
        code = EXIT_INPUT if exc.exit_code == 2 else exc.exit_code
        if _wants_json(args):
            return _fail(args, code, exc.format_message())
        exc.show()
        return code
    except ClmError as exc:
        text = str(exc) if exc.location is not None else f"clm-policy: {exc}"
        return _fail(args, EXIT_INPUT, text, exc)
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:
        if os.environ.get("CLM_POLICY_DEBUG"):
            traceback.print_exc()
        return _fail(
            args,
            EXIT_INTERNAL,
            f"clm-policy: internal error: {type(exc).__name__}: {_short(str(exc))} (this is a "
            "bug; rerun with CLM_POLICY_DEBUG=1 for the traceback)",
        )
    return result if isinstance(result, int) else EXIT_OK


def _wants_json(args: Sequence[str]) -> bool:
    """Whether the command line asks for ``--format json`` (parsed or not)."""
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg == "--format=json" or (arg == "--format" and args[i + 1 : i + 2] == ["json"]):
            return True
    return False


def _fail(args: Sequence[str], code: int, text: str, error: ClmError | None = None) -> int:
    """Report an error: one line on standard error, or a JSON object with ``--format json``."""
    if not _wants_json(args):
        click.echo(text, err=True)
        return code
    body: dict[str, object] = {"code": code, "message": text}
    if error is not None:
        body["message"] = error.message
        if error.location is not None:
            where = error.location
            body.update(file=where.file, line=where.line or None, col=where.col or None)
    click.echo(json.dumps({"error": body}, indent=2))
    return code


def _short(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
