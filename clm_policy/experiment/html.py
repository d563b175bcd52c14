"""An experiment as one self-contained HTML page, in the style of ``clm-policy report``
(clm_policy.report.html): inline CSS and SVG, no script, a Content-Security-Policy that
loads nothing, every name from the experiment file or a scenario escaped.

One chart per metric, the arms side by side: a bar for each arm's value with its interval as a
whisker, the baseline's bar outlined; below it the differences to the baseline with their
intervals. Then the outcome of every workload under every arm.
"""

from __future__ import annotations

from collections.abc import Iterator
from html import escape

from clm_policy.experiment.runner import ExperimentRun
from clm_policy.experiment.stats import METRICS, Figure, Figures, Metric, shown, span
from clm_policy.report.html import STYLE, _short, figure, grid, head

WIDTH, BAR_AREA, LEFT, TOP, BOTTOM = 1000, 200, 56, 16, 40
EXTRA_STYLE = """
svg .bar { fill: var(--series); } svg .bar.base { fill: #fff; stroke: var(--series);
  stroke-width: 2; } svg .whisker { stroke: var(--ink); stroke-width: 1.5; }
td.good { color: #1a7f37; } td.bad { color: var(--hard); }
"""


def render_html(run: ExperimentRun, figs: Figures) -> str:
    return "".join(_page(run, figs))


def _page(run: ExperimentRun, figs: Figures) -> Iterator[str]:
    exp = run.experiment
    title = f"clm-policy experiment: {exp.name}"
    yield head(escape(title), STYLE + EXTRA_STYLE)
    yield (
        f'<header><h1>{escape(title)}</h1><p class="muted">{len(figs.arms)} arms &times; '
        f"{len(figs.workloads)} workloads · seed {figs.seed} · {figs.resamples:,} paired "
        f"resamples of the workloads · {figs.confidence:.0%} intervals · baseline "
        f"<strong>{escape(figs.baseline)}</strong></p>"
    )
    if exp.description:
        yield f"<p>{escape(exp.description)}</p>"
    yield "</header>\n"
    yield from _arms(run)
    for metric in METRICS:
        yield from _metric(metric, figs)
    yield from _workloads(run, figs)
    yield "</body>\n</html>\n"


def _arms(run: ExperimentRun) -> Iterator[str]:
    yield (
        '<section id="arms"><h2>Arms</h2>\n<table><tr><th>arm</th><th>policy</th>'
        "<th>profile</th><th>memory</th><th>summarizer</th>"
        '<th class="n">seconds</th><th class="n">memory failures</th></tr>\n'
    )
    for arm, done in zip(run.experiment.arms, run.arms, strict=True):
        yield (
            f"<tr><td>{escape(arm.name)}</td><td>{escape(arm.policy.name)} "
            f'<span class="muted">({escape(arm.policy_shown)})</span></td>'
            f"<td>{escape(arm.profile or '(per workload)')}</td>"
            f"<td>{escape(arm.memory)}</td>"
            f"<td>{escape(arm.summarizer_shown)}</td>"
            f'<td class="n">{done.seconds:.1f}</td><td class="n">{len(done.failures)}</td></tr>\n'
        )
    yield "</table></section>\n"


def _metric(metric: Metric, figs: Figures) -> Iterator[str]:
    row = figs.by_metric[metric.key]
    better = f" ({metric.better} is better)" if metric.better else ""
    yield (
        f'<section class="metric" id="m-{metric.key}"><h2>{escape(metric.label)}</h2>'
        f'<p class="muted">{escape(metric.how)}{better}</p>\n'
    )
    yield from _chart(metric, figs.arms, figs.baseline, row)
    yield (
        '<table class="narrow"><tr><th>arm</th><th class="n">value</th><th>interval</th>'
        f'<th class="n">vs {escape(figs.baseline)}</th><th>interval</th></tr>\n'
    )
    for arm in figs.arms:
        f = row[arm]
        tone = ""
        if f.diff_interval is not None and f.diff_interval.excludes_zero() and metric.better:
            up = f.diff_interval.low > 0
            tone = " good" if up == (metric.better == "higher") else " bad"
        within = span(metric, f.interval, form="{} to {}")
        dspan = span(metric, f.diff_interval, diff=True, form="{} to {}")
        diff = "baseline" if arm == figs.baseline else shown(metric, f.diff, diff=True)
        yield (
            f'<tr><td>{escape(arm)}</td><td class="n">{escape(shown(metric, f.value))}</td>'
            f'<td>{escape(within)}</td><td class="n{tone}">{escape(diff)}</td>'
            f"<td>{escape(dspan)}</td></tr>\n"
        )
    yield "</table></section>\n"


def _chart(
    metric: Metric, arms: tuple[str, ...], baseline: str, row: dict[str, Figure]
) -> Iterator[str]:
    tops = [
        v
        for f in row.values()
        for v in (f.value, f.interval.high if f.interval else None)
        if v is not None
    ]
    yield figure(TOP + BAR_AREA + BOTTOM, escape(f"{metric.label} per arm"))
    top = 1.0 if metric.unit == "share" else max([*tops, 0.0]) * 1.1 or 1.0
    slot = (WIDTH - LEFT - 20) / max(1, len(arms))
    bar = min(80.0, slot * 0.6)

    def y(value: float) -> float:
        return TOP + BAR_AREA - max(0.0, min(value, top)) / top * BAR_AREA

    for share in (0.0, 0.5, 1.0):
        yield grid(y(share * top), escape(_axis(metric, share * top)), x2=WIDTH - 20)
    for i, arm in enumerate(arms):
        f = row[arm]
        middle = LEFT + slot * i + slot / 2
        yield (
            f'<text x="{middle:.1f}" y="{TOP + BAR_AREA + 18}" text-anchor="middle">'
            f"{escape(arm)}</text>\n"
        )
        if f.value is None:
            continue
        kind = "bar base" if arm == baseline else "bar"
        tip = f"{arm}: {shown(metric, f.value)}"
        if f.interval is not None:
            tip += " " + span(metric, f.interval)
        yield (
            f'<rect class="{kind}" x="{middle - bar / 2:.1f}" y="{y(f.value):.1f}" '
            f'width="{bar:.1f}" height="{TOP + BAR_AREA - y(f.value):.1f}">'
            f"<title>{escape(tip)}</title></rect>\n"
        )
        if f.interval is not None:
            low, high = y(f.interval.low), y(f.interval.high)
            yield (
                f'<line class="whisker" x1="{middle:.1f}" x2="{middle:.1f}" y1="{low:.1f}" '
                f'y2="{high:.1f}"/><line class="whisker" x1="{middle - 8:.1f}" '
                f'x2="{middle + 8:.1f}" y1="{high:.1f}" y2="{high:.1f}"/><line class="whisker" '
                f'x1="{middle - 8:.1f}" x2="{middle + 8:.1f}" y1="{low:.1f}" y2="{low:.1f}"/>\n'
            )
        yield (
            f'<text x="{middle:.1f}" y="{y(f.value) - 6:.1f}" text-anchor="middle">'
            f"{escape(shown(metric, f.value))}</text>\n"
        )
    yield "</svg></figure>\n"


def _axis(metric: Metric, value: float) -> str:
    """A tick's label, short enough for the axis (``7.4M`` tokens)."""
    if metric.unit == "share":
        return f"{value:.0%}"
    if metric.unit == "tokens":
        return _short(round(value, -3) if value >= 1000 else value)
    return f"{value:.3g}"


def _workloads(run: ExperimentRun, figs: Figures) -> Iterator[str]:
    yield (
        '<section id="workloads"><h2>Workloads</h2><p class="muted">outcome · tokens · '
        "interventions · compactions / handoffs · needed facts missing</p>\n<table><tr>"
        "<th>workload</th><th>source</th>"
        + "".join(f"<th>{escape(a)}</th>" for a in figs.arms)
        + "</tr>\n"
    )
    sources = {w.name: w.shown for w in run.experiment.workloads}
    for w in figs.workloads:
        cells = []
        for arm in run.arms:
            o = next(o for o in arm.outcomes if o.workload == w)
            missing = f" · {o.needs_missing}/{o.needs_asked}" if o.needs_asked else ""
            cells.append(
                f"<td>{escape(o.outcome)} · {o.tokens:,} · {o.interventions} · "
                f"{o.compactions}/{o.handoffs}{missing}</td>"
            )
        yield (
            f'<tr><td>{escape(w)}</td><td class="muted">{escape(sources[w])}</td>'
            + "".join(cells)
            + "</tr>\n"
        )
    yield "</table></section>\n"
