"""An experiment's results as text (a table per metric, then per workload) and as JSON.

Names that come from the experiment file or a scenario (arms, workloads) are shown as
written; the CLI passes the text through its terminal printer.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from clm_policy.experiment.runner import ExperimentRun
from clm_policy.experiment.stats import METRICS, Figures, Interval, shown, span


def render_text(run: ExperimentRun, figs: Figures) -> str:
    exp = run.experiment
    lines = [
        f"experiment {exp.name}: {len(figs.arms)} arms x {len(figs.workloads)} workloads "
        f"(seed {figs.seed}; {figs.resamples:,} paired resamples of the workloads; "
        f"{figs.confidence:.0%} intervals)",
    ]
    if exp.description:  # the file's words, made safe for a terminal
        lines.append(
            "".join(c if c.isprintable() else "?" for c in " ".join(exp.description.split()))
        )
    lines.append("")
    width = max(len(a) for a in figs.arms) + len(" (baseline)")
    lines.append("arms:")
    for spec in exp.arms:
        run_of = next(a for a in run.arms if a.arm == spec.name)
        failed = f"; mem0 failures: {len(run_of.failures)}" if spec.memory != "file" else ""
        lines.append(
            f"  {spec.name:<{width}} policy {spec.policy.name} ({spec.policy_shown}), memory "
            f"{spec.memory}, summarizer {spec.summarizer_shown}"
            + (f", profile {spec.profile}" if spec.profile else "")
            + f"; {run_of.seconds:.1f} s{failed}"
        )
    for metric in METRICS:
        row = figs.by_metric[metric.key]
        better = f"; {metric.better} is better" if metric.better else ""
        lines += ["", f"{metric.label} ({metric.how}{better})"]
        lines.append(
            f"  {'arm':<{width}} {'value':>12} {'interval':<26} {'vs ' + figs.baseline:>12} "
            "interval"
        )
        for arm in figs.arms:
            f = row[arm]
            name = f"{arm} (baseline)" if arm == figs.baseline else arm
            if f.value is None:
                lines.append(f"  {name:<{width}} {'-':>12}  (no workload counts)")
                continue
            diff = "" if arm == figs.baseline else shown(metric, f.diff, diff=True)
            mark = " *" if f.diff_interval is not None and f.diff_interval.excludes_zero() else ""
            lines.append(
                f"  {name:<{width}} {shown(metric, f.value):>12} {span(metric, f.interval):<26} "
                f"{diff:>12} {span(metric, f.diff_interval, diff=True)}{mark}".rstrip()
            )
    lines += [
        "",
        "* the interval of the difference excludes 0",
        "",
        "per workload (outcome, tokens, interventions, compactions/handoffs, needed facts "
        "missing):",
    ]
    name_width = max(len(w) for w in figs.workloads)
    for w in figs.workloads:
        cells = []
        for done in run.arms:
            o = next(o for o in done.outcomes if o.workload == w)
            cells.append(
                f"{done.arm}: {o.outcome} {o.tokens:,} i{o.interventions} "
                f"c{o.compactions}/h{o.handoffs}"
                + (f" m{o.needs_missing}/{o.needs_asked}" if o.needs_asked else "")
            )
        lines.append(f"  {w:<{name_width}}  " + "  |  ".join(cells))
    if run.workdir:
        lines += ["", f"memory repositories: {run.workdir}/arms/<arm>/memory"]
    else:
        lines += ["", "memory repositories: not kept (--workdir DIR keeps them)"]
    return "\n".join(lines) + "\n"


def render_json(run: ExperimentRun, figs: Figures) -> dict[str, Any]:
    exp = run.experiment

    def interval(i: Interval | None) -> dict[str, float | int] | None:
        return None if i is None else {"low": i.low, "high": i.high, "resamples": i.kept}

    return {
        "experiment": exp.name,
        "file": exp.path,
        "description": exp.description,
        "seed": exp.seed,
        "resamples": exp.bootstrap,
        "confidence": exp.confidence,
        "baseline": exp.baseline,
        "workdir": run.workdir or None,
        "arms": [
            {
                "name": a.name,
                "policy": a.policy.name,
                "policy_ref": a.policy_shown,
                "profile": a.profile,
                "memory": a.memory,
                "summarizer": a.summarizer_shown,
                "memory_repository": r.memory if run.workdir else None,
                "seconds": round(r.seconds, 3),
                "memory_failures": [f.__dict__ for f in r.failures],
            }
            for a, r in zip(exp.arms, run.arms, strict=True)
        ],
        "workloads": [
            {"name": w.name, "kind": w.kind, "source": w.shown, "goal": w.spec.goal}
            for w in exp.workloads
        ],
        "metrics": {
            m.key: {
                "label": m.label,
                "how": m.how,
                "better": m.better,
                "arms": {
                    arm: {
                        "value": f.value,
                        "interval": interval(f.interval),
                        "diff": f.diff,
                        "diff_interval": interval(f.diff_interval),
                        "workloads_counted": f.counted,
                    }
                    for arm, f in figs.by_metric[m.key].items()
                },
            }
            for m in METRICS
        },
        "outcomes": [asdict(o) for r in run.arms for o in r.outcomes],
    }
