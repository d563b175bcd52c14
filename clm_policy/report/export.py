"""``clm-policy export``: a memory repository's metrics and decisions as CSV or JSON.

Two tables (docs/report.md lists their columns): ``steps``, a row per recorded step and
decision after it, and ``sessions``. CSV holds one table; JSON holds both, the tasks, the
summary metrics and what was skipped.

The repository is untrusted and CSV files are opened in spreadsheets, so a text cell that
starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'``: a
spreadsheet shows it as text instead of running it as a formula (OWASP's advice).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import asdict
from typing import Any

from clm_policy.base.termsafe import terminal_safe
from clm_policy.memory.history import DecisionRecord, Event, SessionHistory, StepRecord
from clm_policy.report.metrics import ReportData

STEP_COLUMNS = (
    "session",
    "step",
    "context_tokens",
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "estimated",
    "tool_calls",
    "messages",
    "status",
    "action",
    "trigger",
    "proposed",
    "rationale",
    "blocked_by",
    "warnings",
    "forced",
    "event",
    "commit",
    "recall",
)
SESSION_COLUMNS = (
    "session",
    "task",
    "parent",
    "status",
    "stopped",
    "profile",
    "model",
    "steps",
    "compactions",
    "handoffs",
    "input_tokens",
    "output_tokens",
    "tokens",
    "cost",
    "human_interventions",
    "recall_mean",
    "recalls",
    "steps_until_handoff",
    "tokens_until_handoff",
    "duration_s",
)
# the columns taken as they are from a step's metrics (context_tokens to status) and from
# the decision after it
_STEP_FIELDS = STEP_COLUMNS[2:10]
_DECISION_FIELDS = ("action", "trigger", "proposed", "rationale", "forced")
_FORMULA = ("=", "+", "-", "@", "\t", "\r")
_MARKED = ("compact", "handoff", "summary")


def step_rows(data: ReportData) -> Iterator[dict[str, Any]]:
    for s in data.history.sessions:
        yield from _session_steps(s)


def _session_steps(s: SessionHistory) -> Iterator[dict[str, Any]]:
    metrics: dict[int, StepRecord] = {r.step: r for r in s.steps}
    decisions: dict[int, list[DecisionRecord]] = {}
    for decision in s.decisions:
        decisions.setdefault(decision.step, []).append(decision)
    events: dict[int, list[Event]] = {}
    for e in s.events:
        if e.kind in _MARKED and e.step is not None:
            events.setdefault(e.step, []).append(e)
    for step in sorted(metrics.keys() | decisions.keys() | events.keys()):
        r = metrics.get(step)
        marked = events.get(step, [])
        recall = next((e.recall for e in marked if e.recall), r.recall if r else None)
        # no metrics for the step (an agent's hooks record none): the context its commits
        # record, the one before an agent's own compaction first (a summary's is after it)
        trailed = sorted(
            (e for e in marked if e.context_tokens is not None), key=lambda e: e.kind == "summary"
        )
        base: dict[str, Any] = {name: getattr(r, name) if r else None for name in _STEP_FIELDS}
        if r is None and trailed:
            base["context_tokens"] = trailed[0].context_tokens
        base.update(
            session=s.id,
            step=step,
            event="+".join(e.kind for e in marked) or None,
            commit=marked[-1].commit if marked else None,
            recall=round(recall.value, 4) if recall else None,
        )
        taken: list[DecisionRecord | None] = [*decisions.get(step, [])] or [None]
        for d in taken:
            row = {name: getattr(d, name) if d else None for name in _DECISION_FIELDS}
            row.update(
                base,
                blocked_by=list(d.blocked_by) if d else [],
                warnings=list(d.warnings) if d else [],
            )
            if d is not None and row["context_tokens"] is None:
                row["context_tokens"] = d.context_tokens
            yield {name: row[name] for name in STEP_COLUMNS}


def session_rows(data: ReportData) -> Iterator[dict[str, Any]]:
    for m in data.sessions:
        row = {name: getattr(m, name) for name in SESSION_COLUMNS}
        mean = m.recall_mean
        row.update(
            cost=None if m.cost is None else round(m.cost, 6),
            recall_mean=None if mean is None else round(mean, 4),
            recalls=len(m.recalls),
        )
        yield row


def as_json(data: ReportData) -> str:
    h = data.history
    doc = {
        "memory": h.root,
        "commit": h.head,
        "policy": data.policy,
        "metrics": asdict(data.summary),
        "tasks": [t.__dict__ for t in data.tasks],
        "sessions": list(session_rows(data)),
        "steps": list(step_rows(data)),
        "skipped": [str(s) for s in h.skipped],
    }
    # readable (ensure_ascii=False) and terminal-safe: what a terminal must not see is written
    # as a JSON escape, the same string for a JSON reader
    return terminal_safe(json.dumps(doc, indent=1, ensure_ascii=False), form="json") + "\n"


def _cell(value: Any) -> Any:
    if isinstance(value, list):
        value = ";".join(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, str):
        value = terminal_safe(value)  # CSV has no escapes: a control character is shown
        if value.startswith(_FORMULA):
            return "'" + value
    return value


def as_csv(data: ReportData, table: str = "steps") -> str:
    columns, rows = (
        (STEP_COLUMNS, step_rows(data))
        if table == "steps"
        else (SESSION_COLUMNS, session_rows(data))
    )
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row[c]) for c in columns])
    return out.getvalue()
