"""``clm-policy experiment FILE``: arms compared on the same workloads (docs/experiments.md)."""

from __future__ import annotations

import click

from clm_policy.base.termsafe import echo, echo_json
from clm_policy.cli.options import format_option
from clm_policy.cli.report_file import check_output, write_report


@click.command()
@click.argument("file", metavar="FILE")
@click.option(
    "--workdir",
    metavar="DIR",
    help="Keep the arms' memory repositories in DIR (new or empty) [default: a temporary "
    "folder, removed afterwards].",
)
@click.option(
    "--html", "html_path", metavar="FILE", help="Also write the results as one HTML page."
)
@click.option(
    "--seed", type=click.IntRange(0, 2**32), help="The bootstrap's seed [default: the file's]."
)
@click.option(
    "--bootstrap",
    type=click.IntRange(100, 100_000),
    metavar="N",
    help="Resamples per interval [default: the file's, else 2000].",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(1, 64),
    metavar="N",
    help="Arms played at once, each in its own process [default: the machine's cores].",
)
@format_option("text", "json")
def experiment(
    file: str,
    workdir: str | None,
    html_path: str | None,
    seed: int | None,
    bootstrap: int | None,
    jobs: int | None,
    fmt: str,
) -> int:
    """Compare arms — policy x profile x memory backend x summarizer — on the same workloads,
    each arm in its own memory repository: task completion, tokens per successful task,
    recall, needed facts found, human interventions, compactions and handoffs, cost, each with
    its difference to the baseline arm and a bootstrap interval over the workloads.

    FILE is an experiment file (schemas/experiment.schema.json). The same file and seed give
    the same figures. Progress shows on a terminal (never with --format json).

    \b
    Examples:
      clm-policy experiment examples/experiments/memory.yaml
      clm-policy experiment my.yaml --workdir runs/my --html my.html --format json

    Exit codes: 0 done, 2 bad input (a problem in FILE at file:line:col; nothing is run).
    """
    import dataclasses
    import os
    import shutil
    import tempfile

    from clm_policy.base.progress import Progress
    from clm_policy.experiment.load import load_experiment
    from clm_policy.experiment.render import render_json, render_text
    from clm_policy.experiment.runner import run_experiment
    from clm_policy.experiment.stats import figures

    check_output(html_path, "--html")
    exp = load_experiment(file)  # everything checked: nothing runs before this line
    if seed is not None:
        exp = dataclasses.replace(exp, seed=seed)
    if bootstrap is not None:
        exp = dataclasses.replace(exp, bootstrap=bootstrap)
    temporary = workdir is None
    folder = tempfile.mkdtemp(prefix="clm-experiment-") if workdir is None else workdir
    try:
        total = len(exp.arms) * len(exp.workloads)
        with Progress("experiment", total, enabled=False if fmt == "json" else None) as bar:
            done = run_experiment(
                exp, folder, advance=bar.advance, jobs=jobs or os.cpu_count() or 1
            )
        figs = figures(done)
        if html_path is not None:
            from clm_policy.experiment.html import render_html

            write_report(html_path, render_html(done, figs))
        if temporary:
            done.workdir = ""  # removed below
        if fmt == "json":
            echo_json(render_json(done, figs))
        else:
            echo(render_text(done, figs), nl=False)
            if html_path is not None:
                echo(f"wrote {html_path} (open it in a browser)")
    finally:
        if temporary:
            shutil.rmtree(folder, ignore_errors=True)
    return 0
