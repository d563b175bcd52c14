"""``clm-policy report`` and ``clm-policy export``: a memory repository's history, as one
HTML page or as CSV / JSON data, with the CLM plan's metrics (docs/report.md, docs/metrics.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from clm_policy.base.errors import plural
from clm_policy.base.termsafe import echo
from clm_policy.cli.options import (
    format_option,
    memory_option,
    policy_option,
    session_option,
)
from clm_policy.cli.report_file import check_output, write_report

if TYPE_CHECKING:
    from collections.abc import Callable

    from clm_policy.report.metrics import ReportData

SKIPPED_SHOWN = 10
"""Problems of the repository's files printed at most (then how many more)."""


def _build(memory: str, session: str | None, policy_ref: str, quiet: bool) -> ReportData:
    from clm_policy.base.progress import Progress
    from clm_policy.policy.cache import load_policy_cached
    from clm_policy.report.metrics import build_report

    policy = load_policy_cached(policy_ref)
    with Progress("reading sessions", enabled=False if quiet else None) as bar:

        def start(total: int) -> Callable[[int], None]:
            bar.total = total
            return bar.advance

        data = build_report(memory, policy, session=session, progress=start)
    skipped = data.history.skipped
    for problem in skipped[:SKIPPED_SHOWN]:
        echo(f"clm-policy: skipped {problem}", err=True)
    if len(skipped) > SKIPPED_SHOWN:
        echo(f"clm-policy: skipped {len(skipped) - SKIPPED_SHOWN} more", err=True)
    return data


def _nothing(memory: str) -> str:
    return (
        f"{memory}: no sessions recorded yet; nothing to report "
        f"(clm-policy run --memory {memory} records one)"
    )


@click.command()
@memory_option()
@session_option("Only this session (exit 2 when the repository has no trace of it).")
@policy_option("The policy whose thresholds are drawn and whose prices cost the tokens.")
@click.option(
    "--output",
    "-o",
    default="clm-report.html",
    show_default=True,
    metavar="FILE",
    help="Where to write the page (- for standard output).",
)
def report(memory: str, session: str | None, policy_ref: str, output: str) -> int:
    """Write one self-contained HTML page of the memory repository's history: context over
    steps per session with compactions, handoffs and thresholds, the decision timeline, recall
    per compaction, and the CLM plan's metrics.

    The page loads nothing (no network, no script, no font): open it anywhere, attach it to a
    pull request or a CI run. A repository with no sessions has nothing to report (exit 0,
    nothing written).

    \b
    Examples:
      clm-policy report --memory clm-memory -o report.html
      clm-policy report --memory clm-memory --session demo -o demo.html

    Exit codes: 0 written (or nothing to report), 2 bad input (nothing written).
    """
    from clm_policy.report.html import render

    check_output(output)
    data = _build(memory, session, policy_ref, quiet=False)
    if not data.sessions:
        echo(_nothing(memory), err=True)
        return 0
    page = render(data)
    if output == "-":
        echo(page, nl=False)
        return 0
    write_report(output, page)
    size = len(page.encode("utf-8"))
    echo(
        f"wrote {output}: {plural(len(data.sessions), 'session')}, {size / 1024:,.0f} KiB "
        f"(open it in a browser)"
    )
    return 0


@click.command()
@memory_option()
@session_option("Only this session (exit 2 when the repository has no trace of it).")
@policy_option("The policy whose prices cost the tokens.")
@format_option("csv", "json")
@click.option(
    "--table",
    type=click.Choice(["steps", "sessions"]),
    help="CSV: the table to write (default steps: one row per step and decision; sessions: "
    "one row per session with its metrics). JSON holds both.",
)
@click.option(
    "--output",
    "-o",
    metavar="FILE",
    help="Write to FILE instead of standard output (- for standard output).",
    callback=lambda _ctx, _param, value: None if value == "-" else value,
)
def export(
    memory: str,
    session: str | None,
    policy_ref: str,
    fmt: str,
    table: str | None,
    output: str | None,
) -> int:
    """Export the memory repository's metrics and decisions as CSV or JSON.

    CSV holds one table: steps (one row per recorded step and the decision after it) or
    sessions (one row per session with its metrics). JSON holds both, the tasks, the summary
    metrics and the lines of the repository that were skipped. docs/report.md lists every
    column.

    \b
    Examples:
      clm-policy export --memory clm-memory --format csv -o steps.csv
      clm-policy export --memory clm-memory --format csv --table sessions
      clm-policy export --memory clm-memory --format json -o history.json

    Exit codes: 0 done (an empty table when nothing is recorded), 2 bad input (nothing written),
    141 output closed.
    """
    from clm_policy.report.export import as_csv, as_json

    if table is not None and fmt == "json":
        raise click.UsageError("--table applies to --format csv (JSON holds every table)")
    check_output(output)
    data = _build(memory, session, policy_ref, quiet=fmt == "json")
    if not data.sessions:
        echo(_nothing(memory), err=True)
    text = as_json(data) if fmt == "json" else as_csv(data, table or "steps")
    write_report(output, text)
    return 0
