"""``clm-policy``: the command group, and where its errors become exit codes (README, "Exit
codes"): click's own are told here, the library's and any other by :mod:`clm_policy.cli.errors`
(which the quick paths use too).
"""

from __future__ import annotations

import sys

import click

from clm_policy.base.termsafe import echo
from clm_policy.cli import errors
from clm_policy.cli.errors import EXIT_INPUT, EXIT_OK, warn_ignored

# Each command lives in its own module, imported only when that command runs: a one-shot
# `decide` does not pay for the others, and `clm-policy --help` lists them from SUMMARIES.
COMMANDS = {
    "calibrate": "clm_policy.cli.calibrate:calibrate",
    "compact": "clm_policy.cli.pipelines:compact",
    "decide": "clm_policy.cli.decide:decide",
    "experiment": "clm_policy.cli.experiment:experiment",
    "export": "clm_policy.cli.report:export",
    "handoff": "clm_policy.cli.pipelines:handoff",
    "hook": "clm_policy.cli.hook:hook",
    "init": "clm_policy.cli.memory:init",
    "lint": "clm_policy.cli.lint:lint",
    "log": "clm_policy.cli.memory:log",
    "mcp": "clm_policy.cli.mcp:mcp",
    "migrate": "clm_policy.cli.memory:migrate",
    "replay": "clm_policy.cli.replay:replay",
    "report": "clm_policy.cli.report:report",
    "resolve": "clm_policy.cli.resolve:resolve",
    "run": "clm_policy.cli.run:run",
    "schema": "clm_policy.cli.schema:schema",
    "show": "clm_policy.cli.memory:show",
    "signal": "clm_policy.cli.sessions:signal",
    "status": "clm_policy.cli.sessions:status",
    "statusline": "clm_policy.cli.statusline:statusline",
    "test": "clm_policy.cli.testing:test",
    "trust": "clm_policy.cli.trust:trust",
}


# The first paragraph of each command's help, which `clm-policy --help` shortens as click
# would, without importing the command (a test holds these equal to the commands' help).
SUMMARIES = {
    "calibrate": "Propose a profile's soft and hard thresholds from recorded sessions.",
    "compact": (
        "Compact a session now: commit its structured summary and hint, keep the last messages "
        "(the profile's retain_recent_messages), lower its context."
    ),
    "decide": "Decide CONTINUE, COMPACT or HANDOFF for a state under a policy.",
    "experiment": (
        "Compare arms — policy x profile x memory backend x summarizer — on the same workloads, "
        "each arm in its own memory repository: task completion, tokens per successful task, "
        "recall, needed facts found, human interventions, compactions and handoffs, cost, each "
        "with its difference to the baseline arm and a bootstrap interval over the workloads."
    ),
    "export": "Export the memory repository's metrics and decisions as CSV or JSON.",
    "handoff": (
        "Hand a session off: commit a schema-valid manifest and its rendering for people, and "
        "make the seed the next session starts from (no transcript; its size is printed, the "
        "seed itself with --format json): the agent's own handoff (--reply) word for word, and "
        "what clm-policy recorded from the session."
    ),
    "hook": "Answer an agent's hooks with the project's policy and memory.",
    "init": "Create a memory repository, or set a project up for Claude Code or Codex CLI.",
    "lint": "Check policy files (the project's, else policies/) and report every problem.",
    "log": "The audit trail: every compaction and handoff, newest first, with why it happened.",
    "mcp": "Serve clm-policy's tools to the agent over MCP (standard input and output).",
    "migrate": (
        "Rewrite the memory repository's manifests and session states in the current schema "
        "version, in one commit."
    ),
    "replay": "Decide recorded decisions again under another policy and report what would change.",
    "report": (
        "Write one self-contained HTML page of the memory repository's history: context over "
        "steps per session with compactions, handoffs and thresholds, the decision timeline, "
        "recall per compaction, and the CLM plan's metrics."
    ),
    "resolve": (
        "Print POLICY (a file, or a bundled name) resolved: extends merged, profiles expanded."
    ),
    "run": (
        "Run an agent under a policy, committing every compaction and handoff to the memory "
        "repository."
    ),
    "schema": "Print the JSON schema NAME (policy, session-state, ...).",
    "show": (
        "Show one commit's record: REF is a commit or branch (from `clm-policy log`) or a path"
        " in the repository (sessions/ID/handoffs/001.md, manifests/....json); or, with"
        " --search, find the memory topics that hold a text."
    ),
    "signal": (
        "Tell a persisted session something only you know: a phase is done, or a signal's value"
        " (NAME=VALUE, checked against the session's policy). Committed; the next decision "
        "(`clm-policy run --resume ID`, `clm-policy decide --session ID`) sees it."
    ),
    "status": (
        "The persisted sessions: status, step, context fill, compactions and handoffs, the last"
        " decisions; with --session, one in detail."
    ),
    "statusline": "Print one status line for Claude Code: context, next threshold, action.",
    "test": "Run policy test files: each case decides a state and checks the decision.",
    "trust": "Trust a project's .clm-policy.yaml to choose a memory repository and a remote.",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their summaries, without importing them."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, shorten_help(SUMMARIES[name], limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """click's, with the command a misspelt name most likely meant."""
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            from clm_policy.base.suggest import closest

            if not args or not exc.message.startswith("No such command"):
                raise
            meant = closest(args[0], COMMANDS)
            if meant is None:
                raise
            raise click.UsageError(f"{exc.message} Did you mean '{meant}'?", exc.ctx) from None

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        import importlib

        module, _, attr = target.partition(":")
        command = getattr(importlib.import_module(module), attr)
        assert isinstance(command, click.Command)
        _help_through_printer(command, ctx)
        return command

    def get_help_option(self, ctx: click.Context) -> click.Option | None:
        option = super().get_help_option(ctx)
        if option is not None:  # (`clm-policy --help`: the same printer as its commands')
            option.callback = _print_help
        return option


def _help_through_printer(command: click.Command, ctx: click.Context) -> None:
    """``--help`` of ``command`` (and of a group's commands) printed by the one printer, as
    every other output is: a full disk is exit 2 and a closed pipe 141, not click's own
    write (an "internal error", exit 3, or a silent exit 1)."""
    option = command.get_help_option(ctx)
    if option is not None:
        option.callback = _print_help
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _help_through_printer(sub, ctx)


def _print_help(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        echo(ctx.get_help())
        ctx.exit()


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        from importlib.metadata import version

        echo(f"clm-policy, version {version('clm-policy')}")
        ctx.exit()


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
def cli() -> None:
    """Context lifecycle management for LLM agents, driven by YAML policies.

    A policy reads how full an agent's context is and decides: CONTINUE, COMPACT (summary +
    hint) or HANDOFF (manifest + fresh session).

    \b
    Set up a project (docs/claude-code.md, docs/codex.md):
      clm-policy init --claude-code                    # Claude Code: .clm-policy.yaml, memory
      clm-policy hook claude-code --install --project  # ... its hooks and status line
      clm-policy init --codex                          # Codex CLI: .clm-policy.yaml, memory
      clm-policy hook codex --install --project        # ... its hooks, .codex/hooks.json

    \b
    Try:
      clm-policy run                               # the demo: a simulated session
      clm-policy decide --tokens 260000            # what the default policy says
      clm-policy decide --tokens 260000 --explain  # ...and why, rule by rule
      clm-policy resolve claude-code               # a policy with its extends merged
      clm-policy schema policy                     # the JSON schema of policy files
      clm-policy lint                              # check the project's policy (or policies/)
      clm-policy test                              # run policies/**/*.test.yaml
      clm-policy init clm-memory                   # a git repository for memory
      clm-policy compact -m clm-memory -s s.json   # commit a compaction of a session

    Exit codes: 0 ok, 1 problems found (lint, test, replay --fail-on-change), 2 bad input or
    usage, 3 internal error, 4 a decision awaits confirmation (run), 130 interrupted, 141
    output closed (| head). Each command's --help says which it gives.
    """


def shorten_help(text: str, limit: int) -> str:
    """``text`` as click shortens a command's help for a listing (by its own code)."""
    return click.Command(None, help=text).get_short_help_str(limit)


def run(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        result = cli.main(args=args, prog_name="clm-policy", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except (KeyboardInterrupt, click.exceptions.Abort) as exc:
        interrupt = exc if isinstance(exc, KeyboardInterrupt) else exc.__context__
        if isinstance(interrupt, KeyboardInterrupt):
            return errors.report(args, interrupt, tuple(COMMANDS))
        return errors.fail(args, EXIT_INPUT, "clm-policy: aborted")
    except click.exceptions.NoArgsIsHelpError as exc:
        return _show(exc, EXIT_INPUT)  # `clm-policy` alone: the help, as a usage error
    except click.UsageError as exc:
        message = exc.format_message()
        asked = args if _has_format(exc.ctx) else []  # (JSON only from a command that has it)
        if errors.wants_json(asked):
            return errors.fail(asked, EXIT_INPUT, message)
        path = exc.ctx.command_path if exc.ctx else errors.command_path(args, tuple(COMMANDS))
        return errors.fail(asked, EXIT_INPUT, errors.usage_line(path, message))
    except click.ClickException as exc:
        code = EXIT_INPUT if exc.exit_code == 2 else exc.exit_code
        if errors.wants_json(args):
            return errors.fail(args, code, exc.format_message())
        return _show(exc, code)
    except Exception as exc:  # the library's errors and any other: clm_policy.cli.errors
        return errors.report(args, exc, tuple(COMMANDS))
    finally:
        warn_ignored()  # what no option callback reported (init --claude-code's memory)
    return result if isinstance(result, int) else EXIT_OK


def _has_format(ctx: click.Context | None) -> bool:
    """Whether the command a usage error is about takes ``--format`` (then ``--format json``
    asks for the error as JSON). ``report --format json`` asks for an option the command does
    not have: that is the usage error, told as one line with the pointer to its help."""
    if ctx is None:
        return True  # (no command resolved: the words are taken as they were meant)
    return any("--format" in param.opts for param in ctx.command.params)


def _show(exc: click.ClickException, code: int) -> int:
    """Print click's words for ``exc`` (usage, hint, error) through the one printer."""
    import io

    shown = io.StringIO()
    exc.show(file=shown)
    echo(shown.getvalue(), err=True, nl=False)
    return code
