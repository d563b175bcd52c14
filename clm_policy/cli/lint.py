"""``clm-policy lint``: every problem of policy files, for people and for CI."""

from __future__ import annotations

from pathlib import Path

import click

from clm_policy.base.errors import InputError
from clm_policy.base.termsafe import echo
from clm_policy.cli.options import format_option, output_option
from clm_policy.cli.report_file import check_not_read, check_output, write_report

FORMATS = ["text", "json", "github", "sarif"]


@click.command()
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@format_option(
    *FORMATS,
    help_text="text: file:line:col: level [check] message; github: workflow annotations; "
    "sarif: SARIF 2.1.0 for code scanning.",
)
@click.option("--strict", is_flag=True, help="Fail (exit 1) on warnings too.")
@output_option("Write the report to FILE instead of standard output.", writable=True)
@click.option("--list-checks", is_flag=True, help="List the checks, one per line, and exit.")
@click.option(
    "--explain",
    "explain",
    metavar="CHECK",
    help="Show CHECK's documentation (what it finds, why, a passing and a failing example) "
    "and exit.",
)
def lint(
    paths: tuple[str, ...],
    fmt: str,
    strict: bool,
    output: str | None,
    list_checks: bool,
    explain: str | None,
) -> int:
    """Check policy files (the project's, else policies/) and report every problem.

    PATH is a policy file or a folder searched recursively for *.yaml and *.yml (test files,
    *.test.yaml, are left to `clm-policy test`; hidden folders and node_modules are skipped;
    any other YAML there is read as a policy, so name the policies' folder). Each problem is
    reported as `file:line:col: level [check] message`, sorted.

    \b
    Silence a check where you mean it:
      spare: {type: int, default: 0}   # clm-lint disable-line unused-signal
      # clm-lint disable-file unused-signal

    \b
    Examples:
      clm-policy lint
      clm-policy lint policies/examples/team.yaml --strict
      clm-policy lint --format sarif --output lint.sarif
      clm-policy lint --list-checks
      clm-policy lint --explain unreachable-rule

    Exit codes: 0 no problems (warnings allowed unless --strict), 1 problems, 2 usage error
    (no such path, bad option).
    """
    from clm_policy.lint.checks import CHECKS, summary

    if explain is not None:
        echo(_explained(explain))
        return 0
    if list_checks:
        width = max(len(m.ID) for m in CHECKS)
        for module in CHECKS:
            echo(f"{module.ID:<{width}}  {module.LEVEL:<7}  {summary(module)}")
        return 0
    from clm_policy import __version__
    from clm_policy.lint.runner import lint_paths
    from clm_policy.report import lint as formats
    from clm_policy.report.sarif import sarif

    check_output(output)
    targets = list(paths) or _default_targets()
    report = lint_paths(targets)
    renderers = {"text": formats.text, "json": formats.as_json, "github": formats.github}
    rendered = sarif(report, __version__) if fmt == "sarif" else renderers[fmt](report)
    check_not_read(output, [*report.files, *report.read])
    write_report(output, rendered)
    if fmt == "text" or output is not None:
        echo(formats.summary(report), err=True)
    return 1 if report.failed(strict) else 0


def _explained(check: str) -> str:
    """The documentation of the check named ``check`` (docs/lint.md has the same)."""
    from clm_policy.base.errors import UsageError, quote
    from clm_policy.base.suggest import suggest
    from clm_policy.lint.checks import CHECKS
    from clm_policy.lint.reference import section

    by_id = {str(module.ID): module for module in CHECKS}
    if check not in by_id:
        raise UsageError(
            f"no check named {quote(check)}{suggest(check, by_id)} "
            "(clm-policy lint --list-checks lists them)"
        )
    return section(by_id[check])


def _default_targets() -> list[str]:
    """Without a PATH: the project's policy (.clm-policy.yaml, $CLM_POLICY_POLICY), said on
    standard error; else policies/."""
    from clm_policy.config.project import configured_policy

    configured = configured_policy()
    if configured is None:
        return [policies_folder()]
    path, where = configured
    echo(f"clm-policy lint: the project's policy {path} ({where})", err=True)
    return [path]


def policies_folder() -> str:
    """``policies``, where ``lint`` and ``test`` look when given no PATH and no policy."""
    if not Path("policies").is_dir():
        raise InputError(
            "no PATH given, no policy in .clm-policy.yaml and no policies/ folder here"
        )
    return "policies"
