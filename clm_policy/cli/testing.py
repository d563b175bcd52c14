"""``clm-policy test``: run policy test files (``*.test.yaml``), with coverage, for CI."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from clm_policy.base.errors import InputError, quote
from clm_policy.base.termsafe import echo
from clm_policy.cli.options import format_option, output_option
from clm_policy.cli.report_file import check_not_read, check_output, write_report

if TYPE_CHECKING:
    from clm_policy.tester.results import RunReport

FORMATS = ["text", "json", "junit", "github"]


class _Percent(click.FloatRange):
    """A percentage, with or without its ``%`` (``80`` or ``80%``)."""

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, str):
            value = value.strip().removesuffix("%")
        return super().convert(value, param, ctx)


@click.command("test")
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option(
    "-k",
    "keyword",
    metavar="SUBSTRING",
    help="Run only the cases whose name contains SUBSTRING (ignoring case).",
)
@click.option(
    "--coverage",
    is_flag=True,
    help="Report the rules and guards no case exercised (fired, blocked, warned, overridden).",
)
@click.option(
    "--fail-under",
    type=_Percent(0, 100),
    metavar="PCT",
    help="Fail (exit 1) when coverage is below PCT percent. Implies --coverage.",
)
@format_option(
    *FORMATS,
    help_text="junit: JUnit XML for CI test reports; github: the text report with an "
    "annotation on each failing case's line (GitHub Actions).",
)
@output_option("Write the report to FILE instead of standard output (the summary goes to stderr).")
@click.option("--verbose", "-v", is_flag=True, help="Text: list every case with its outcome.")
def test(
    paths: tuple[str, ...],
    keyword: str | None,
    coverage: bool,
    fail_under: float | None,
    fmt: str,
    output: str | None,
    verbose: bool,
) -> int:
    """Run policy test files: each case decides a state and checks the decision.

    PATH is a test file or a folder searched recursively for *.test.yaml and *.test.yml
    (default: the tests of the project's policy, from $CLM_POLICY_POLICY or .clm-policy.yaml;
    else policies/). A case gives a state (`given`) and what the decision must be
    (`expect`: action, trigger, proposed, blocked_by, warnings, ...). Outcomes: PASS, FAIL
    (with expected vs actual and the explain trace), ERROR (the case names a rule, guard,
    profile or signal the policy lacks, or cannot run), SKIP. See docs/testing.md.

    \b
    Examples:
      clm-policy test
      clm-policy test policies/tests/default.test.yaml -k phase -v
      clm-policy test --coverage --fail-under 100
      clm-policy test --format junit --output policy-tests.xml

    Exit codes: 0 every case passed (skips allowed), 1 a FAIL or an ERROR, or coverage under
    --fail-under, 2 usage error (no such path, no test files, bad option).
    """
    from clm_policy.report import results_text
    from clm_policy.tester.discover import discover
    from clm_policy.tester.runner import run_tests

    check_output(output)
    files = discover(list(paths)) if paths else _default_files()
    report = run_tests(files, keyword)
    if keyword is not None and not report.results and report.deselected:
        raise InputError(f"-k {quote(keyword)} matches none of the {report.deselected} cases")
    show_coverage = coverage or fail_under is not None
    if fmt == "junit":
        from clm_policy.report import junit

        rendered = junit.render(report)
    elif fmt == "json":
        from clm_policy.report import results_json

        rendered = results_json.render(report, coverage=show_coverage, fail_under=fail_under)
    else:  # github: the text report with annotations
        from clm_policy.report import results_github

        render = results_github.render if fmt == "github" else results_text.render
        rendered = render(report, verbose=verbose, coverage=show_coverage, fail_under=fail_under)
    below = fail_under is not None and report.coverage.below(fail_under)
    check_not_read(output, _read(report))
    write_report(output, rendered)
    if output is not None:
        lines = results_text.summary_lines(report)
        if below:
            lines.insert(0, results_text.coverage_lines(report.coverage, fail_under)[-1])
        echo("\n".join(lines), err=True)
    return 1 if report.failed or below else 0


def _read(report: RunReport) -> list[str]:
    """The files a test run read: its test files, the policies they test and the parents those
    extend (where their rules and guards are written)."""
    policies = [r.policy for r in report.results if r.policy]
    written = [i.location.file for p in report.coverage.policies for i in p.items]
    return [*report.files, *policies, *written]


def _default_files() -> list[tuple[Path, str]]:
    """Without a PATH: the tests of the project's policy (.clm-policy.yaml,
    $CLM_POLICY_POLICY), found beside it and said on standard error; else policies/."""
    from clm_policy.cli.lint import policies_folder
    from clm_policy.config.project import configured_policy, load_config
    from clm_policy.tester.discover import discover, tests_of

    config = load_config()
    configured = configured_policy(config)
    if configured is None:
        return discover([policies_folder()])
    path, where = configured
    files, looked = tests_of(path, config.root)
    if not files:
        raise InputError(
            f"no test file names the project's policy {path} as its policy: "
            f"(looked under {' and '.join(looked)})"
        )
    named = ", ".join(shown for _, shown in files)
    echo(f"clm-policy test: the project's policy {path} ({where}), tested by {named}", err=True)
    return files
