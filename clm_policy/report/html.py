"""``clm-policy report``: one self-contained HTML page of a memory repository's history
(docs/report.md).

The page needs nothing but itself: inline CSS and SVG, no script, font or image, and a
Content-Security-Policy that forbids loading anything (so even markup that slipped through
could fetch nothing and run nothing). Everything from the repository is untrusted (a team
pulls it) and is escaped on the way into the page (:func:`escape`). A chart of a long session
draws at most a few points per pixel column, so its size does not grow with the session.
"""

from __future__ import annotations

import html
import itertools
from collections.abc import Iterator, Sequence

from clm_policy.base.errors import plural
from clm_policy.base.termsafe import terminal_safe
from clm_policy.memory.history import DecisionRecord, SessionHistory
from clm_policy.report.metrics import ReportData, SessionMetrics, Summary, Thresholds


def escape(text: str) -> str:
    """``text`` HTML-escaped, its control characters and bidi overrides shown as escapes (the
    page may be printed, ``-o -``)."""
    return html.escape(terminal_safe(text))


WIDTH, HEIGHT = 1000, 300
LEFT, RIGHT, TOP, BOTTOM = 56, 76, 16, 36
PLOT_W, PLOT_H = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
RECALL_ROWS = 30
"""Recalls of one session listed in full, at most; past it, a chart and the lowest few."""
RECALL_LOWEST = 10
TIMELINE_ROWS = 2000
"""Rows of one session's decision timeline, at most (``export`` has every decision)."""

DASH, TIMES = "\u2013", "\u00d7"
NONE = DASH
"""What a figure that is not known shows."""

CSP = "default-src 'none'; style-src 'unsafe-inline'"

_MARKED = {
    "compact": ("compaction", "\u25cf"),
    "handoff": ("handoff", "\u25c6"),
    "summary": ("agent summary", "\u25cb"),
}
"""The events a chart marks: each one's name and shape."""

STYLE = """
:root { --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --soft: #bf8700; --hard: #cf222e;
  --compact: #bc4c00; --handoff: #8250df; --summary: #0969da; --series: #0969da; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink);
  margin: 0 auto; padding: 24px; max-width: 1120px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 6px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.muted, figcaption, .note { color: var(--muted); }
table { border-collapse: collapse; width: 100%; margin: 6px 0 12px; }
table.narrow { width: auto; min-width: 320px; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--line);
  vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.why { word-break: break-word; }
section.session { border-top: 2px solid var(--line); margin-top: 28px; }
.facts span { margin-right: 16px; white-space: nowrap; }
.badge { display: inline-block; padding: 0 6px; border-radius: 10px; font-size: 12px;
  border: 1px solid var(--line); }
.a-compact { color: var(--compact); border-color: var(--compact); }
.a-handoff { color: var(--handoff); border-color: var(--handoff); }
.a-continue { color: var(--muted); }
.a-summary { color: var(--summary); }
svg { width: 100%; height: auto; display: block; }
svg text { font: 11px system-ui, sans-serif; fill: var(--muted); }
svg .grid { stroke: #eef1f4; } svg .axis { stroke: var(--line); }
svg .series { fill: none; stroke: var(--series); stroke-width: 1.5; }
svg line.soft { stroke: var(--soft); stroke-dasharray: 6 4; }
svg line.hard { stroke: var(--hard); stroke-dasharray: 6 4; }
svg line.window { stroke: var(--muted); stroke-dasharray: 2 4; }
svg .compact { fill: var(--compact); } svg .handoff { fill: var(--handoff); }
svg .recall { fill: var(--series); }
svg .summary { fill: #fff; stroke: var(--summary); stroke-width: 1.5; }
svg text.soft { fill: var(--soft); } svg text.hard { fill: var(--hard); }
.legend span { margin-right: 14px; white-space: nowrap; }
.key { display: inline-block; width: 18px; height: 0; border-top: 2px solid; margin-right: 4px;
  vertical-align: middle; }
"""


def render(data: ReportData) -> str:
    return "".join(_page(data))


def head(title: str, style: str) -> str:
    """A page's start, up to ``<body>``: ``title`` (escaped already), the CSP, ``style``."""
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{title}</title>\n<style>{style}</style>\n</head>\n<body>\n"
    )


def _page(data: ReportData) -> Iterator[str]:
    h = data.history
    yield head(escape(f"clm-policy report: {h.root}"), STYLE)
    commit = f" at commit <code>{escape(h.head[:12])}</code>" if h.head else ""
    yield (
        f'<header><h1>clm-policy report</h1><p class="muted">memory repository '
        f"<code>{escape(h.root)}</code>{commit} · thresholds and prices of policy "
        f"<code>{escape(data.policy)}</code> · {plural(len(data.sessions), 'session')}, "
        f"{plural(len(data.tasks), 'task')}</p></header>\n"
    )
    yield from _metrics(data.summary)
    yield from _overview(data)
    for s, m in zip(h.sessions, data.sessions, strict=True):
        yield from _session(s, m, data.thresholds[s.id])
    yield "</body>\n</html>\n"


# -- the metrics ----------------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return NONE if value is None else f"{value:.1%}"


def _num(value: float | None, digits: int = 0) -> str:
    return NONE if value is None else f"{value:,.{digits}f}"


def money(value: float | None) -> str:
    if value is None:
        return NONE
    return f"{value:,.2f}" if abs(value) >= 1 else f"{value:.4f}"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return NONE
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _metrics(m: Summary) -> Iterator[str]:
    measured = "compaction or handoff" if m.recall_count == 1 else "compactions and handoffs"
    recall = (
        f"{_pct(m.recall_mean)} mean, {_pct(m.recall_min)} lowest, over {m.recall_count:,} "
        f"measured {measured}"
        if m.recall_count
        else "none measured (a deterministic summary, or a handoff without the agent's "
        "words, measures nothing)"
    )
    unpriced = ""
    if m.unpriced_sessions:
        which = ", ".join(m.unpriced_models) or "none recorded"
        unpriced = (
            f"; {plural(m.unpriced_sessions, 'session')} not priced (models: {which}; "
            "add them, or a default, to the policy's prices:)"
        )
    rows = [
        (
            "task completion rate",
            f"{_pct(m.task_completion_rate)} ({m.completed} of {plural(m.tasks, 'task')}; "
            f"{m.failed} failed, {m.open} open)",
            "completed tasks / tasks started (a task: sessions chained by handoffs)",
        ),
        (
            "tokens per successful task",
            _num(m.tokens_per_successful_task),
            f"input + output tokens of all tasks ({m.tokens:,}) / completed tasks",
        ),
        (
            "human interventions per session",
            _num(m.human_interventions_per_session, 2),
            f"interventions ({m.human_interventions}: confirmations, signals, manual and forced "
            "actions) / sessions",
        ),
        (
            "recall",
            recall,
            "facts found / facts recorded, in a model's summary or the agent's handoff",
        ),
        (
            "session length until handoff",
            (
                f"{_num(m.steps_until_handoff, 1)} steps, {_num(m.tokens_until_handoff)} tokens"
                if m.handoffs_ended
                else "no session ended in a handoff"
            ),
            f"mean over the {plural(m.handoffs_ended, 'session')} that handed off",
        ),
        (
            "cost per task",
            money(m.cost_per_task),
            f"tokens {TIMES} the policy's price per million; total {money(m.cost_total)} over "
            f"{plural(m.priced_tasks, 'priced task')}{unpriced}",
        ),
        (
            "session duration",
            _duration(m.session_duration_s),
            "mean time from a session's first commit to its last",
        ),
    ]
    yield '<section id="metrics"><h2>Metrics</h2>\n<table class="metrics">'
    yield "<tr><th>metric</th><th>value</th><th>how</th></tr>\n"
    for name, value, how in rows:
        yield (
            f'<tr><td>{name}</td><td>{escape(value)}</td><td class="muted">{escape(how)}</td>'
            "</tr>\n"
        )
    yield "</table></section>\n"


def _overview(data: ReportData) -> Iterator[str]:
    yield (
        '<section id="sessions"><h2>Sessions</h2>\n<table><tr><th>session</th><th>task</th>'
        '<th>status</th><th class="n">steps</th><th class="n">compactions</th>'
        '<th class="n">handoffs</th><th class="n">tokens</th><th class="n">cost</th>'
        '<th class="n">interventions</th><th class="n">recall</th></tr>\n'
    )
    for m in data.sessions:
        yield (
            f'<tr><td><a href="#{_anchor(m.session)}">{escape(m.session)}</a></td>'
            f"<td>{escape(m.task)}</td><td>{escape(m.status)}</td>"
            f'<td class="n">{m.steps:,}</td><td class="n">{m.compactions:,}</td>'
            f'<td class="n">{m.handoffs:,}</td><td class="n">{m.tokens:,}</td>'
            f'<td class="n">{money(m.cost)}</td><td class="n">{m.human_interventions}</td>'
            f'<td class="n">{_pct(m.recall_mean)}</td></tr>\n'
        )
    yield "</table></section>\n"


def _anchor(session: str) -> str:
    return escape(f"s-{session}")  # session ids are [A-Za-z0-9._-]: valid in an id


# -- one session ----------------------------------------------------------------------------------


def _session(s: SessionHistory, m: SessionMetrics, t: Thresholds) -> Iterator[str]:
    yield f'<section class="session" id="{_anchor(s.id)}"><h2>Session {escape(s.id)}</h2>\n'
    facts = [
        f"status <strong>{escape(m.status)}</strong>"
        + (f" (run stopped: {escape(m.stopped)})" if m.stopped else ""),
        f"profile {escape(m.profile or NONE)}",
        f"{m.steps:,} steps",
        f"{plural(m.compactions, 'compaction')}, {plural(m.handoffs, 'handoff')}",
        f"{m.tokens:,} tokens",
    ]
    if m.model:
        facts.append(f"model {escape(m.model)}")
    if m.parent:
        facts.append(f'continued from <a href="#{_anchor(m.parent)}">{escape(m.parent)}</a>')
    yield '<p class="facts">' + "".join(f"<span>{f}</span>" for f in facts) + "</p>\n"
    points, marks = _series(s), _marks(s)
    span = _span(points, marks)
    yield from _chart(s, t, points, marks, span)
    yield from _recall(m, span)
    yield from _timeline(s.decisions)
    yield "</section>\n"


def _series(s: SessionHistory) -> list[tuple[int, int]]:
    """Context tokens by step: metrics.jsonl, else the decisions, else the commits' trailers."""
    points: dict[int, int] = {}
    # a compaction's or handoff's trailer is the context it acted on: it beats a later
    # commit of the same step (the session's end, after the compaction lowered it)
    for e in sorted(s.events, key=lambda e: e.kind in _MARKED):
        if e.step is not None and e.context_tokens is not None:
            points[e.step] = e.context_tokens
    for d in s.decisions:
        if d.context_tokens is not None:
            points[d.step] = d.context_tokens
    for r in s.steps:
        points[r.step] = r.context_tokens
    return sorted(points.items())


def _thin(points: list[tuple[int, int]], x: float, scale: float) -> list[tuple[int, int]]:
    """At most four points per pixel column: the first, lowest, highest and last."""
    if len(points) <= 2 * PLOT_W:
        return points
    out: list[tuple[int, int]] = []
    for _, run in itertools.groupby(points, key=lambda p: int((p[0] - x) * scale)):
        column = list(run)
        low, high = min(column, key=lambda p: p[1]), max(column, key=lambda p: p[1])
        out.extend(sorted({column[0], column[-1], low, high}))
    return out


def _short(tokens: float) -> str:
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:g}M"
    return f"{tokens / 1000:g}k" if tokens >= 1000 else f"{tokens:g}"


def _nice(top: float) -> tuple[float, float]:
    """A round axis maximum at or above ``top`` and its tick spacing (5 ticks or so)."""
    raw = max(top, 1) / 5
    magnitude = 10 ** (len(str(int(raw))) - 1)
    for factor in (1, 2, 2.5, 5, 10):
        tick = factor * magnitude
        if tick >= raw:
            break
    ticks = -(-top // tick)
    return max(ticks, 1) * tick, tick


def _marks(s: SessionHistory) -> list[tuple[int, str, str]]:
    found: dict[tuple[int, str], str] = {}
    for e in s.events:
        if e.kind in _MARKED and e.step is not None:
            tip = f"step {e.step}: {_MARKED[e.kind][0]}"
            if e.rule:
                tip += f" ({e.rule})"
            if e.context_tokens is not None:
                tip += f", {e.context_tokens:,} tokens"
            if e.recall is not None:
                tip += f", recall {e.recall}"
            found[(e.step, e.kind)] = f"{tip}; commit {e.commit[:12]}"
    for d in s.decisions:
        if d.action in ("compact", "handoff") and (d.step, d.action) not in found:
            found[(d.step, d.action)] = (
                f"step {d.step}: {d.action} ({d.trigger or '-'}) decided; no commit recorded"
            )
    return [(step, kind, tip) for (step, kind), tip in sorted(found.items())]


def _span(points: list[tuple[int, int]], marks: list[tuple[int, str, str]]) -> tuple[int, int]:
    steps = [p[0] for p in points] + [m[0] for m in marks]
    if not steps:
        return 0, 1
    return min(steps), max(max(steps), min(steps) + 1)


_LINES = {
    "soft": ("soft_compact", "--soft"),
    "hard": ("hard_handoff", "--hard"),
    "window": ("window", "--muted"),
}
"""The threshold lines a chart draws: each one's name and its colour."""


class _Scale:
    """Steps and values to a plot's coordinates (the context chart's, unless told)."""

    def __init__(self, x0: int, x1: int, top: float, y0: int = TOP, height: int = PLOT_H) -> None:
        self.x0 = x0
        self.sx = PLOT_W / (x1 - x0)
        self.top = top
        self.y0, self.height = y0, height

    def x(self, step: float) -> float:
        return LEFT + (step - self.x0) * self.sx

    def y(self, value: float) -> float:
        return self.y0 + self.height - value / self.top * self.height


def figure(height: int, label: str) -> str:
    """The start of a chart ``height`` high; ``label`` (escaped already) names it."""
    return (
        f'<figure><svg viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{label}" '
        'xmlns="http://www.w3.org/2000/svg">\n'
    )


def grid(y: float, label: str, x2: float = LEFT + PLOT_W) -> str:
    """A grid line at ``y``, ``label`` beside it on the left."""
    return (
        f'<line class="grid" x1="{LEFT}" x2="{x2}" y1="{y:.1f}" y2="{y:.1f}"/>'
        f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{label}</text>\n'
    )


def _chart(
    s: SessionHistory,
    t: Thresholds,
    points: list[tuple[int, int]],
    marks: list[tuple[int, str, str]],
    span: tuple[int, int],
) -> Iterator[str]:
    if not points:
        yield '<p class="note">No context recorded for this session.</p>\n'
        return
    x0, x1 = span
    high = max(p[1] for p in points)
    lines = [(v, k) for v, k in ((t.soft, "soft"), (t.hard, "hard")) if v is not None]
    top, tick = _nice(max([high, *(v for v, _ in lines)]) * 1.05)
    if t.window is not None and t.window <= top:
        lines.append((t.window, "window"))
    scale = _Scale(x0, x1, top)
    yield figure(HEIGHT, escape(f"context tokens over steps of session {s.id}"))
    yield from _axes(scale, tick, x1)
    for tokens, kind in lines:
        y = scale.y(tokens)
        yield (
            f'<line class="{kind}" x1="{LEFT}" x2="{LEFT + PLOT_W}" y1="{y:.1f}" '
            f'y2="{y:.1f}"><title>{_LINES[kind][0]} {tokens:,}</title></line>'
            f'<text class="{kind}" x="{LEFT + PLOT_W + 6}" y="{y + 4:.1f}">'
            f"{kind} {_short(tokens)}</text>\n"
        )
    drawn = _thin(points, x0, scale.sx)
    path = " ".join(f"{scale.x(step):.1f},{scale.y(tokens):.1f}" for step, tokens in drawn)
    yield f'<polyline class="series" points="{path}"/>\n'
    yield from _shapes(scale, points, marks)
    yield from _legend(lines, marks, t.notes)


def _axes(scale: _Scale, tick: float, x1: int) -> Iterator[str]:
    value = 0.0
    while value <= scale.top:
        yield grid(scale.y(value), _short(value))
        value += tick
    for step in _step_ticks(scale.x0, x1):
        x = scale.x(step)
        yield (
            f'<line class="axis" x1="{x:.1f}" x2="{x:.1f}" y1="{TOP + PLOT_H}" '
            f'y2="{TOP + PLOT_H + 4}"/><text x="{x:.1f}" y="{TOP + PLOT_H + 16}" '
            f'text-anchor="middle">{step:,}</text>\n'
        )
    yield (
        f'<text x="{LEFT + PLOT_W / 2}" y="{HEIGHT - 4}" text-anchor="middle">step</text>\n'
        f'<line class="axis" x1="{LEFT}" x2="{LEFT + PLOT_W}" y1="{TOP + PLOT_H}" '
        f'y2="{TOP + PLOT_H}"/>\n'
    )


def _shapes(
    scale: _Scale, points: list[tuple[int, int]], marks: list[tuple[int, str, str]]
) -> Iterator[str]:
    at = dict(points)
    radius = 4 if len(marks) <= PLOT_W / 10 else 2.5
    for step, kind, tip in marks:
        x, y, title = scale.x(step), scale.y(at.get(step, 0)), f"<title>{escape(tip)}</title>"
        if kind == "handoff":
            yield (
                f'<rect class="handoff" x="{x - 5:.1f}" y="{y - 5:.1f}" width="10" height="10" '
                f'transform="rotate(45 {x:.1f} {y:.1f})">{title}</rect>\n'
            )
        else:
            yield f'<circle class="{kind}" cx="{x:.1f}" cy="{y:.1f}" r="{radius}">{title}</circle>'
            yield "\n"


def _legend(
    lines: list[tuple[int, str]], marks: list[tuple[int, str, str]], notes: Sequence[str]
) -> Iterator[str]:
    yield '</svg>\n<figcaption class="legend">'
    yield '<span><span class="key" style="border-color: var(--series)"></span>context tokens</span>'
    for tokens, kind in lines:
        name, color = _LINES[kind]
        yield (
            f'<span><span class="key" style="border-color: var({color}); border-top-style: '
            f'dashed"></span>{name} {tokens:,}</span>'
        )
    kinds = {kind for _, kind, _ in marks}
    for kind, (text, shape) in _MARKED.items():
        if kind in kinds:
            yield f'<span class="a-{kind}">{shape} {text}</span>'
    for note in notes:
        yield f'<br><span class="note">{escape(note)}</span>'
    yield "</figcaption></figure>\n"


def _step_ticks(x0: int, x1: int) -> list[int]:
    tick = max(int(_nice(x1 - x0)[1]), 1)
    first = -(-x0 // tick) * tick
    return list(range(first, x1 + 1, tick))


def _recall(m: SessionMetrics, span: tuple[int, int]) -> Iterator[str]:
    yield "<h3>Recall per compaction</h3>\n"
    if not m.recalls:
        yield '<p class="note">no recall recorded</p>\n'
        return
    rows = m.recalls
    if len(rows) > RECALL_ROWS:
        yield from _recall_chart(m, span)
        rows = sorted(rows, key=lambda r: (r[2].value, r[0] or 0))[:RECALL_LOWEST]
        yield (
            f'<p class="note">{plural(len(m.recalls), "recall")} recorded, '
            f"mean {_pct(m.recall_mean)}; the {len(rows)} lowest:</p>\n"
        )
    yield (
        '<table class="narrow"><tr><th class="n">step</th><th>event</th>'
        '<th class="n">recall</th></tr>\n'
    )
    for step, kind, recall in rows:
        yield (
            f'<tr><td class="n">{NONE if step is None else f"{step:,}"}</td>'
            f'<td>{escape(kind)}</td><td class="n">{escape(str(recall))}</td></tr>\n'
        )
    yield "</table>\n"


def _recall_chart(m: SessionMetrics, span: tuple[int, int]) -> Iterator[str]:
    height = 110
    steps = [step for step, _, _ in m.recalls if step is not None]
    x0, x1 = min([span[0], *steps]), max([span[1], *steps])
    scale = _Scale(x0, x1, 1.0, y0=10, height=height - 10 - 24)
    yield figure(height, "recall per compaction over steps")
    for share in (0.0, 0.5, 1.0):
        yield grid(scale.y(share), f"{share:.0%}")
    for tick in _step_ticks(x0, x1):
        x = scale.x(tick)
        yield f'<text x="{x:.1f}" y="{height - 6}" text-anchor="middle">{tick:,}</text>\n'
    for at, kind, recall in m.recalls:
        if at is None:
            continue
        x, y = scale.x(at), scale.y(recall.value)
        tip = f"step {at}: {kind}, recall {recall}"
        yield (
            f'<circle class="recall" cx="{x:.1f}" cy="{y:.1f}" r="2.5">'
            f"<title>{escape(tip)}</title></circle>\n"
        )
    yield "</svg></figure>\n"


def _folded(decisions: list[DecisionRecord], exact: bool) -> list[tuple[int, int, DecisionRecord]]:
    """(first step, count, decision) runs of consecutive equal decisions; with ``exact``
    False, continue decisions fold by rule alone (their rationales may differ)."""

    def key(d: DecisionRecord) -> tuple[object, ...]:
        if exact or d.action != "continue":
            return (d.action, d.trigger, d.rationale, d.blocked_by, d.warnings, d.forced)
        return (d.action, d.trigger)

    runs = [list(run) for _, run in itertools.groupby(decisions, key)]
    return [(run[0].step, len(run), run[-1]) for run in runs]


def _timeline(decisions: list[DecisionRecord]) -> Iterator[str]:
    yield f"<h3>Decision timeline ({plural(len(decisions), 'decision')})</h3>\n"
    if not decisions:
        yield '<p class="note">no decisions recorded (decisions.jsonl)</p>\n'
        return
    runs = _folded(decisions, exact=True)
    loose = len(runs) > TIMELINE_ROWS
    if loose:
        runs = _folded(decisions, exact=False)
    yield (
        '<table><tr><th class="n">step</th><th>action</th><th>trigger</th><th>rationale</th>'
        '<th class="n">context</th></tr>\n'
    )
    for first, count, d in runs[:TIMELINE_ROWS]:
        steps = f"{first:,}" if count == 1 else f"{first:,}{DASH}{d.step:,} ({count:,}{TIMES})"
        why = escape(d.rationale)
        if loose and count > 1 and d.action == "continue":
            why += ' <span class="note">(rationales vary; the last shown)</span>'
        for kind, names in (("blocked by", d.blocked_by), ("warnings", d.warnings)):
            if names:
                why += f' <span class="note">{kind}: {escape(", ".join(names))}</span>'
        if d.forced:
            why += ' <span class="note">(forced)</span>'
        context = NONE if d.context_tokens is None else f"{d.context_tokens:,}"
        yield (
            f'<tr><td class="n">{steps}</td><td><span class="badge a-{d.action}">'
            f"{d.action}</span></td><td>{escape(d.trigger or NONE)}</td>"
            f'<td class="why">{why}</td><td class="n">{context}</td></tr>\n'
        )
    yield "</table>\n"
    if len(runs) > TIMELINE_ROWS:
        yield (
            f'<p class="note">{len(runs) - TIMELINE_ROWS:,} more rows not shown: '
            "<code>clm-policy export</code> writes every decision.</p>\n"
        )
