"""Text reports of ``replay`` (a memory repository, or transcripts) and ``calibrate``.

The JSON forms are the results' ``as_dict``; these render the same results, and golden files
hold them (tests/golden/replay_*.txt).
"""

from __future__ import annotations

from clm_policy.base.errors import plural, shorten
from clm_policy.base.termsafe import one_line
from clm_policy.replay.calibrate import MARGIN, RECALL_FLOOR, Calibration
from clm_policy.replay.memory import Example, MemoryReplay, Problem
from clm_policy.replay.thresholds import Edit
from clm_policy.replay.transcripts import SessionWhatIf, TranscriptReplay


def memory_text(r: MemoryReplay) -> str:
    where = f"{r.memory} at {r.rev}"
    if r.commit is None:
        return f"{r.memory}: no history yet (no commit): nothing to replay\n"
    where += f" ({r.commit[:12]})"
    head = f"replay of {where} under policy {r.policy} ({r.policy_path})"
    if not r.decisions and not r.skipped_files:
        return (
            f"{head}\nno recorded decisions: nothing to replay (`clm-policy run --memory "
            f"{r.memory}` records them)\n"
        )
    counts = [f"{r.unchanged:,} unchanged", f"{r.changed:,} changed"]
    if r.refused:
        counts.append(f"{r.refused_count:,} refused")
    if r.not_replayable:
        counts.append(f"{r.not_replayable_count:,} not replayable")
    where = f"{plural(r.decisions, 'decision')} in {plural(r.sessions, 'session')}"
    out = [head, f"{where}: {', '.join(counts)}"]
    if r.given_thresholds:
        names = ", ".join(r.given_thresholds[:10]) + (", ..." if r.given_thresholds[10:] else "")
        out.append(f"decided with the thresholds their run was given (run.json): {names}")
    if r.changes:
        out += ["", "changed (old rule -> new rule: old action -> new action):"]
        width = len(f"{r.changes[0].count:,}")
        for c in r.changes:
            rules = f"{c.old_rule or 'otherwise'} -> {c.new_rule or 'otherwise'}"
            out.append(f"  {c.count:>{width},}  {rules}: {c.old_action} -> {c.new_action}")
            out += [
                f"  {'':>{width}}    {_where(e)}: was {e.old or '?'!r}, now {e.new!r}"
                for e in c.examples
            ]
    for title, problems in (
        ("refused by the new policy:", r.refused),
        ("not replayable:", r.not_replayable),
    ):
        if problems:
            out += ["", title, *_problems(problems)]
    if r.skipped_files:
        out += ["", "skipped files:"]
        out += [f"  {s.path}: {s.reason}" for s in r.skipped_files]
    if not r.changes and not r.refused:
        out += ["", f"no decision would change under policy {r.policy}"]
    return "\n".join(out) + "\n"


def _where(e: Example) -> str:
    text = f"{e.session} step {e.step}" if e.step is not None else e.session
    text += f" (line {e.line})"
    if e.context_tokens is not None:
        text += f", context {e.context_tokens:,}"
    return text


def _problems(problems: list[Problem]) -> list[str]:
    width = len(f"{max(p.count for p in problems):,}")
    out: list[str] = []
    for p in problems:
        out.append(f"  {p.count:>{width},}  {p.reason}")
        out.append(f"  {'':>{width}}    e.g. {'; '.join(_where(e) for e in p.examples)}")
    return out


def transcripts_text(r: TranscriptReplay) -> str:
    out = [
        f"replay of {plural(len(r.sessions), 'session')} ({r.pattern}) under policy {r.policy} "
        f"({r.policy_path}), profile {r.profile}"
    ]
    if r.sessions:
        out.append("")
        names = [_name(s) for s in r.sessions]
        width = max(len("session"), *(len(n) for n in names))
        head = f"{'session':<{width}} {'steps':>6}  {'the policy first':<44}  the agent compacted"
        out.append(head)
        out += [_session_row(s, n, width) for s, n in zip(r.sessions, names, strict=True)]
        v = r.verdicts()
        native = v["before"] + v["after"] + v["never"]
        out.append("")
        if native:
            out.append(
                f"of {plural(native, 'session')} where the agent compacted on its own, the "
                f"policy acts first in {v['before']}, later in {v['after']}, never in {v['never']}"
            )
        if v["instead"] + v["neither"]:
            out.append(
                f"of {plural(v['instead'] + v['neither'], 'session')} where the agent never "
                f"compacted, the policy acts in {v['instead']}"
            )
    if r.skipped:
        out += ["", f"skipped {plural(len(r.skipped), 'file')}:"]
        out += [f"  {s.error}" for s in r.skipped]
    return "\n".join(out) + "\n"


NAME_LIMIT = 40
"""The longest session name shown whole (a UUID is 36 characters; a name cut shorter could
show two sessions alike: every Codex rollout file's name starts ``rollout-2025-``)."""


def _name(s: SessionWhatIf) -> str:
    name = one_line(s.session_id or s.path.rsplit("/", 1)[-1])
    return name if len(name) <= NAME_LIMIT else shorten(name, NAME_LIMIT - 1)


def _session_row(s: SessionWhatIf, name: str, width: int) -> str:
    f = s.first
    acts = (
        f"{f.action} at step {f.step}, {f.context_tokens:,} ({f.rule or 'otherwise'})" if f else "-"
    )
    agent = "-"
    if s.native:
        n = s.native[0]
        before = f"{n.pre_tokens:,}" if n.pre_tokens is not None else "?"
        agent = f"step {n.step}, {before} ({n.trigger or 'trigger unknown'})"
        if len(s.native) > 1:
            agent += f"; {len(s.native) - 1} more"
    return f"{name:<{width}} {s.steps:>6}  {acts:<44}  {agent}"


def calibration_text(c: Calibration, written: list[Edit] | None, target: str | None) -> str:
    """The calibration; ``written``: the edits ``--write`` made to ``target`` (None: not
    asked to write)."""
    counts = c.counts()
    kinds = ", ".join(
        plural(counts[kind], noun) + rest
        for kind, noun, rest in (
            ("native", "automatic compaction", " by the agent"),
            ("degradation", "degradation report", ""),
            ("recall", "recall", f" under {RECALL_FLOOR:g}"),
        )
        if counts[kind]
    )
    points = plural(len(c.points), "trouble point") + (f" ({kinds})" if kinds else "")
    out = [
        f"calibrate profile {c.profile} of policy {c.policy} ({c.policy_path})",
        f"  from {plural(len(c.sessions), 'session')}: {points}",
    ]
    out += [f"  left out: {n} {reason}" for reason, n in c.left_out.items()]
    out += [f"  skipped: {s.error}" for s in c.skipped]
    out.append(f"  current:   soft_compact {c.current[0]}, hard_handoff {c.current[1]}")
    if c.proposed is None:
        out.append(f"  {c.reason}: nothing proposed" + (", nothing written" if target else ""))
        return "\n".join(out) + "\n"
    low = f"{c.lower_decile:.4g}%" if c.unit == "percent" else f"{c.lower_decile:,.0f} tokens"
    out.append(f"  lower decile of the trouble points: {low}; margin {MARGIN:.0%}")
    soft, hard = c.proposed
    out.append(f"  proposed:  soft_compact {soft}, hard_handoff {hard}")
    if target is None:
        out.append("  (--write POLICY writes them into the policy file)")
    elif written:
        out += [f"wrote {edit.location}: {edit.key} {edit.old} -> {edit.new}" for edit in written]
    else:
        out.append(f"{target} already has these thresholds: nothing written")
    return "\n".join(out) + "\n"
