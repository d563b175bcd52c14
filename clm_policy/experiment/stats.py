"""The figures of an experiment: each metric per arm, its difference to the baseline arm, and
bootstrap confidence intervals over the workloads.

Every metric is a ratio of sums over workloads (:class:`Metric`: a numerator and a
denominator per workload outcome), so the same definition serves the value, each resample and
every arm. The bootstrap is *paired*: each resample draws workloads with replacement (as many
as there are) with :class:`random.Random` seeded by the experiment's ``seed``, and every arm is
measured on the same draw, so a difference compares arms on the same workloads. An interval
is the percentile interval of the resampled figures (the ``(1 - confidence) / 2`` and
``(1 + confidence) / 2`` quantiles, nearest rank); a resample where a metric is undefined (no
completed task to divide by) is left out, and the count of those kept is reported.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from clm_policy.experiment.runner import ExperimentRun, Outcome
from clm_policy.report.html import money

Part = Callable[[Outcome], tuple[float, float] | None]
"""A workload's (numerator, denominator) of a metric; None: it does not count (no recall)."""


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    unit: str  # share | tokens | count | money
    better: str | None  # higher | lower | None (neither: a count to read, not a score)
    part: Part
    how: str


METRICS: tuple[Metric, ...] = (
    Metric(
        "completion",
        "task completion",
        "share",
        "higher",
        lambda o: (float(o.completed), 1.0),
        "completed tasks / tasks",
    ),
    Metric(
        "tokens_per_success",
        "tokens per successful task",
        "tokens",
        "lower",
        lambda o: (float(o.tokens), 1.0) if o.completed else (0.0, 0.0),
        "input + output tokens of the completed tasks / completed tasks",
    ),
    Metric(
        "recall",
        "recall",
        "share",
        "higher",
        lambda o: None if o.recall is None else (o.recall, 1.0),
        "mean over tasks of the mean recall of their verified compactions and handoffs",
    ),
    Metric(
        "needs_found",
        "needed facts found",
        "share",
        "higher",
        lambda o: (
            (float(o.needs_asked - o.needs_missing), float(o.needs_asked))
            if o.needs_asked
            else None
        ),
        "facts a later step needed that its context held / facts needed",
    ),
    Metric(
        "interventions",
        "human interventions per task",
        "count",
        "lower",
        lambda o: (float(o.interventions), 1.0),
        "a person said again what the agent lost, confirmed or signalled",
    ),
    Metric(
        "compactions",
        "compactions per task",
        "count",
        None,
        lambda o: (float(o.compactions), 1.0),
        "committed compactions",
    ),
    Metric(
        "handoffs",
        "handoffs per task",
        "count",
        None,
        lambda o: (float(o.handoffs), 1.0),
        "committed handoffs",
    ),
    Metric(
        "cost",
        "cost per task",
        "money",
        "lower",
        lambda o: None if o.cost is None else (o.cost, 1.0),
        "tokens x the policy's prices: per million (tasks without a price left out)",
    ),
)


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    kept: int
    """Resamples in which the figure was defined."""

    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


@dataclass(frozen=True)
class Figure:
    """One metric of one arm."""

    value: float | None
    interval: Interval | None
    diff: float | None
    """This arm's value minus the baseline's (None for the baseline itself)."""
    diff_interval: Interval | None
    counted: int
    """Workloads the metric counts (a workload without a recall does not count for recall)."""


@dataclass(frozen=True)
class Figures:
    arms: tuple[str, ...]
    baseline: str
    workloads: tuple[str, ...]
    confidence: float
    resamples: int
    seed: int
    by_metric: dict[str, dict[str, Figure]]


def _ratio(parts: Sequence[tuple[float, float] | None], draw: Sequence[int]) -> float | None:
    counted = [part for i in draw if (part := parts[i]) is not None]
    bottom = sum(part[1] for part in counted)
    return sum(part[0] for part in counted) / bottom if bottom else None


def _interval(values: list[float], confidence: float) -> Interval | None:
    if not values:
        return None
    values.sort()
    n = len(values)
    low = values[max(0, math.ceil((1 - confidence) / 2 * n) - 1)]
    high = values[min(n - 1, math.ceil((1 + confidence) / 2 * n) - 1)]
    return Interval(low, high, n)


def figures(run: ExperimentRun) -> Figures:
    """Every metric of every arm, with intervals (see the module's docstring)."""
    exp = run.experiment
    names = tuple(w.name for w in exp.workloads)
    outcomes = {
        a.arm: [next(o for o in a.outcomes if o.workload == w) for w in names] for a in run.arms
    }
    n = len(names)
    rng = random.Random(exp.seed)
    draws = [[rng.randrange(n) for _ in range(n)] for _ in range(exp.bootstrap)]
    everything = list(range(n))
    by_metric: dict[str, dict[str, Figure]] = {}
    for metric in METRICS:
        parts = {arm: [metric.part(o) for o in found] for arm, found in outcomes.items()}
        base = parts[exp.baseline]
        base_draws = [_ratio(base, d) for d in draws]
        base_value = _ratio(base, everything)
        row: dict[str, Figure] = {}
        for arm, mine in parts.items():
            own = [_ratio(mine, d) for d in draws]
            value = _ratio(mine, everything)
            diff = diffs = None
            if arm != exp.baseline:
                diff = None if value is None or base_value is None else value - base_value
                pairs = zip(own, base_draws, strict=True)
                deltas = [a - b for a, b in pairs if a is not None and b is not None]
                diffs = _interval(deltas, exp.confidence)
            row[arm] = Figure(
                value,
                _interval([v for v in own if v is not None], exp.confidence),
                diff,
                diffs,
                sum(p is not None and p[1] > 0 for p in mine),
            )
        by_metric[metric.key] = row
    return Figures(
        tuple(a.arm for a in run.arms),
        exp.baseline,
        names,
        exp.confidence,
        exp.bootstrap,
        exp.seed,
        by_metric,
    )


_SHOWN: dict[str, tuple[Callable[[float], str], Callable[[float], str]]] = {
    "share": (lambda v: f"{v:.1%}", lambda v: f"{v * 100:+.1f} pp"),
    "tokens": (lambda v: f"{v:,.0f}", lambda v: f"{v:+,.0f}"),
    "money": (money, lambda v: f"{v:+.4f}"),
}
_COUNT = (lambda v: f"{v:,.2f}", lambda v: f"{v:+,.2f}")
"""How a value, then a difference, of each unit is shown (a count's when not listed)."""


def shown(metric: Metric, value: float | None, *, diff: bool = False) -> str:
    """A value, or with ``diff`` a difference (a share's in percentage points), as shown."""
    return "-" if value is None else _SHOWN.get(metric.unit, _COUNT)[diff](value)


def span(
    metric: Metric, interval: Interval | None, *, diff: bool = False, form: str = "[{}, {}]"
) -> str:
    """An interval as the reports show it (``form`` joins its ends); empty when there is none."""
    if interval is None:
        return ""
    return form.format(
        shown(metric, interval.low, diff=diff), shown(metric, interval.high, diff=diff)
    )
