"""Benchmark: handoff fidelity — what a fresh agent learns from clm-policy's seed, against
truth written by reading each session (benchmarks/handoff_scoring.py has the method).

Run: ``python benchmarks/bench_handoff.py [--corpus DIR] [--half tune|check|both] [--json]
[--verbose]``

Two kinds of sessions:

- **The real public corpus** — ``benchmarks/handoff_corpus/``: real Claude Code and Codex
  sessions from public repositories (``SOURCES.yaml``: repository, commit, path, licence,
  sha256, where each was cut, its half), the truth of each written by a reader who saw no seed
  (``truth/``), and the handoff reply an agent would write at the cut, written by a reader who
  saw only the transcript up to it (``replies/``). A transcript itself is in ``sessions/`` only
  where its licence allows; ``--corpus DIR`` names a folder holding the others
  (``DIR/sessions/<id>.jsonl``, e.g. fetched from the sources). Each session is scored three
  ways: **transcript only** (the seed a hook commits when the agent wrote nothing), **with the
  reply** (the seed when the agent wrote its handoff: the reply kept whole beside the record)
  and **the reply alone**. The halves: ``tune`` (what changes were tried on) and ``check``
  (scored only when a change is finished).
- **The project's own sessions** — ``benchmarks/fidelity/``: hand-written ones in the agents'
  shapes and ones recorded with the real agents, each exercising a rule of the record.

The seed is made as the hooks make it (``clm_policy.lifecycle.compose``; the hooks' budget of
9,400 as the session's agent counts it: characters for Claude Code, bytes of UTF-8 for Codex,
which cuts out the middle of a longer context). Targets, on the check half: with the reply
>= 95 % of the facts and every fact the reply alone carries; transcript only >= 85 %; 0 stale
or wrong statements in both; the next step right or close in >= 80 % of the sessions. Exit 0
whether or not they are met (the report says); exit 1 when the sanity check fails (a seed
saying a wrong thing must be caught).
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from handoff_scoring import (
    Candidate,
    Score,
    Session,
    Truth,
    found,
    median,
    read_truth,
    score,
    share,
)

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "handoff_corpus"
OWN = HERE / "fidelity"
RECORDED = OWN / "recorded"
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
BUDGET = 9400
READ_MORE = "`clm-policy show sessions/s/handoffs/001.md`."
TARGETS = {"with reply": 0.95, "transcript only": 0.85}
MODEL_ARM = "with a model"
"""The seed when a model wrote the handoff from the transcript (the agent wrote none)."""
NEXT_TARGET = 0.80


def _yaml() -> Any:
    from ruamel.yaml import YAML

    return YAML(typ="safe")


# -- the candidates --------------------------------------------------------------------------


def seed(
    path: Path, reply: str | None = None, model: str | None = None, agent: str | None = None
) -> str:
    """The seed the hooks give for the transcript at ``path``: with the agent's ``reply``
    when it wrote one, else with what the transcript itself holds of its words; or with the
    handoff a ``model`` wrote from the transcript (what :mod:`clm_policy.lifecycle.
    model_handoff` commits when the agent wrote none). ``agent``: measured as that agent
    measures a hook's text (Codex in bytes); without it, in characters (the model's record)."""
    from clm_policy.agents.hooks.reply import size_for
    from clm_policy.lifecycle.compose import (
        MODEL,
        Words,
        compose,
        words_of_reply,
        words_of_transcript,
    )
    from clm_policy.lifecycle.handoff import preview
    from clm_policy.transcripts.reading import read_transcript

    reading = read_transcript(path)
    if model is not None:
        words: Words | None = Words(MODEL, model.strip())
    else:
        words = words_of_reply(reply) if reply is not None else words_of_transcript(reading)
    composed = compose(reading, words, session_id="s")
    size = size_for(agent) if agent is not None else len
    _manifest, text = preview(composed, now=NOW, budget=BUDGET, read_more=READ_MORE, size=size)
    return text


def model_prompt(path: Path) -> str:
    """What the model is sent for the transcript at ``path`` (the system prompt, then the
    user's message: :func:`clm_policy.lifecycle.model_handoff.prompt` with the transcript-only
    seed as the record) — what ``model_replies/PROMPTS.sha256`` holds the digest of."""
    from clm_policy.lifecycle.model_handoff import SYSTEM_PROMPT, prompt
    from clm_policy.transcripts.reading import read_transcript

    return f"[system]\n{SYSTEM_PROMPT}\n\n[user]\n{prompt(read_transcript(path), seed(path))}"


def stale_model_replies(sessions: list[Session], folder: Path) -> list[str]:
    """The sessions whose model reply answered another prompt than the one made now (the
    prompt or the record changed since: the answers must be written again)."""
    import hashlib

    listed = folder / "model_replies" / "PROMPTS.sha256"
    if not listed.exists():
        return []
    digests = {}
    for line in listed.read_text(encoding="utf-8").splitlines():
        digest, _, name = line.partition("  ")
        digests[name.removesuffix(".md")] = digest
    return [
        s.name
        for s in sessions
        if s.model is not None
        and digests.get(s.name) != hashlib.sha256(model_prompt(s.path).encode()).hexdigest()
    ]


def own_summary(path: Path) -> str | None:
    """The agent's own summary in the transcript: its last reply when it is a handoff, else
    its latest compaction summary."""
    from clm_policy.lifecycle.compose import words_of_transcript
    from clm_policy.transcripts.reading import read_transcript

    words = words_of_transcript(read_transcript(path))
    return words.text if words is not None else None


def candidates(session: Session) -> list[Candidate]:
    if session.reply is not None:  # the corpus
        agent = session.agent
        return [
            Candidate("transcript only", seed(session.path, agent=agent)),
            Candidate("with reply", seed(session.path, session.reply, agent=agent)),
            Candidate("reply alone", session.reply),
        ] + (
            [Candidate(MODEL_ARM, seed(session.path, model=session.model, agent=agent))]
            if session.model
            else []
        )
    out = [Candidate("seed", seed(session.path, agent=session.agent))]
    own = own_summary(session.path)
    if own is not None:
        out.append(Candidate("agent's own summary", own))
    return out


# -- the sessions --------------------------------------------------------------------------------


def corpus_sessions(folder: Path, extra: Path | None = None) -> list[Session]:
    """The corpus's sessions whose transcript is present (in the corpus, or in ``extra``)."""
    sources = _yaml().load((folder / "SOURCES.yaml").read_text(encoding="utf-8")) or []
    out = []
    for source in sources:
        ident = str(source["id"])
        truth_path = folder / "truth" / f"{ident}.yaml"
        reply_path = folder / "replies" / f"{ident}.md"
        paths = [folder / "sessions" / f"{ident}.jsonl"]
        if extra is not None:
            paths.append(extra / "sessions" / f"{ident}.jsonl")
        path = next((p for p in paths if p.exists()), None)
        if path is None or not truth_path.exists():
            continue
        raw = _yaml().load(truth_path.read_text(encoding="utf-8"))
        reply = reply_path.read_text(encoding="utf-8") if reply_path.exists() else ""
        model_path = folder / "model_replies" / f"{ident}.md"
        model = model_path.read_text(encoding="utf-8") if model_path.exists() else None
        half = str(source.get("half"))
        agent = str(source.get("agent") or "claude-code")
        out.append(Session(ident, path, read_truth(raw), half, reply, raw, model, agent))
    return out


def own_sessions(folder: Path) -> list[Session]:
    """The project's own sessions: ``truth/<name>.yaml`` beside ``sessions/<name>.jsonl`` (or
    ``sessions/<name>/<file>.jsonl``), or ``<name>/truth.yaml`` beside its one ``.jsonl``."""
    pairs: list[tuple[str, Path, Path | None]] = []
    for truth_path in sorted((folder / "truth").glob("*.yaml")):
        name = truth_path.stem
        direct = folder / "sessions" / f"{name}.jsonl"
        nested = sorted((folder / "sessions" / name).glob("*.jsonl"))
        pairs.append((name, truth_path, direct if direct.exists() else next(iter(nested), None)))
    for truth_path in sorted(folder.glob("*/truth.yaml")):
        files = sorted(truth_path.parent.glob("*.jsonl"))
        pairs.append((truth_path.parent.name, truth_path, files[0] if len(files) == 1 else None))
    out = []
    for name, truth_path, path in pairs:
        if path is not None:
            raw = _yaml().load(truth_path.read_text(encoding="utf-8"))
            out.append(Session(name, path, read_truth(raw), raw=raw))
    return out


# -- running and reporting -----------------------------------------------------------------------


def run(sessions: list[Session]) -> tuple[dict[str, Score], list[dict[str, Any]]]:
    totals: dict[str, Score] = {}
    rows: list[dict[str, Any]] = []
    for session in sessions:
        row: dict[str, Any] = {"session": session.name, "half": session.half}
        scores = {}
        for candidate in candidates(session):
            result = score(candidate, session.truth)
            scores[candidate.name] = result
            totals.setdefault(candidate.name, Score()).add(result)
            f, a = result.total
            row[candidate.name] = {
                "found": f,
                "asked": a,
                "wrong": {k: v for k, v in result.wrong.items() if v},
                "next_step": next(iter(result.next_step), None),
                "chars": candidate.chars,
                "missing": result.missing,
            }
        if "with reply" in scores and "reply alone" in scores:
            lost = scores["reply alone"].covered - scores["with reply"].covered
            row["lost_from_reply"] = sorted(text for _kind, text in lost)
        rows.append(row)
    return totals, rows


def table(title: str, totals: dict[str, Score], rows: list[dict[str, Any]]) -> list[str]:
    names = list(totals)
    kinds: list[str] = []
    for s in totals.values():
        kinds += [k for k in s.asked if k not in kinds]
    lines = [f"## {title} ({len(rows)} sessions)", ""]
    lines += ["| kind | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for kind in kinds:
        cells = []
        for name in names:
            s = totals[name]
            f, a = s.found.get(kind, 0), s.asked.get(kind, 0)
            cells.append(f"{share(f, a)} ({f}/{a})")
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    cells = []
    for name in names:
        f, a = totals[name].total
        cells.append(f"**{share(f, a)}** ({f}/{a})")
    lines.append("| **all facts** | " + " | ".join(cells) + " |")
    cells = []
    for name in names:
        n = totals[name].next_step
        asked = sum(n.values())
        ok = n.get("right", 0) + n.get("close", 0)
        cells.append(f"{share(ok, asked)} ({n.get('right', 0)} right, {n.get('close', 0)} close)")
    lines.append("| next step right or close | " + " | ".join(cells) + " |")
    lines.append(
        "| stale or wrong | " + " | ".join(str(totals[name].wrong_count) for name in names) + " |"
    )
    lines.append(
        "| characters, median (max) | "
        + " | ".join(
            f"{median(totals[name].chars):,.0f} ({max(totals[name].chars, default=0):,})"
            for name in names
        )
        + " |"
    )
    lost = [r for r in rows if r.get("lost_from_reply")]
    if any("lost_from_reply" in r for r in rows):
        count = sum(len(r["lost_from_reply"]) for r in lost)
        lines += ["", f"Facts the reply alone carries that the seed with it lacks: {count}."]
    wrong = {k: v for s in totals.values() for k, v in s.wrong.items() if v}
    if wrong:
        lines += ["", "Stale or wrong statements:"]
        for name in names:
            for kind, items in totals[name].wrong.items():
                lines.append(f"- {name}: {kind}: {', '.join(items[:6])}")
    return lines


def verdict(totals: dict[str, Score], rows: list[dict[str, Any]]) -> str:
    parts = []
    met = True
    for name, target in TARGETS.items():
        if name not in totals:
            continue
        f, a = totals[name].total
        ok = a and f >= target * a
        met = met and bool(ok)
        parts.append(f"{name} {share(f, a)} (target {target:.0%})")
    if "with reply" in totals and "reply alone" in totals:
        lost = sum(len(r.get("lost_from_reply") or []) for r in rows)
        met = met and lost == 0
        parts.append(f"facts of the reply lost: {lost} (target 0)")
    wrong = sum(totals[n].wrong_count for n in TARGETS if n in totals)
    met = met and wrong == 0
    parts.append(f"stale or wrong in the seeds: {wrong} (target 0)")
    for name in TARGETS:
        if name in totals:
            n = totals[name].next_step
            asked = sum(n.values())
            ok = n.get("right", 0) + n.get("close", 0)
            met = met and asked > 0 and ok >= NEXT_TARGET * asked
            parts.append(f"next step {name} {share(ok, asked)} (target {NEXT_TARGET:.0%})")
    return "Targets: " + "; ".join(parts) + f" -> {'met' if met else 'MISSED'}"


def model_line(arm: Score, rows: list[dict[str, Any]], stale: list[str]) -> str:
    """What the ``with a model`` arm carries, on how many sessions, and whether its answers
    still match the prompt made now."""
    f, a = arm.total
    n = arm.next_step
    ok = n.get("right", 0) + n.get("close", 0)
    scored = sum(1 for r in rows if MODEL_ARM in r)
    line = (
        f"With a model writing the handoff when the agent wrote none (CLM_POLICY_SUMMARIZER="
        f"openai; {scored} of {len(rows)} sessions): {share(f, a)} of the facts ({f}/{a}), next "
        f"step right or close {share(ok, sum(n.values()))}, stale or wrong {arm.wrong_count}"
    )
    if stale:
        line += f". STALE: the prompt changed since these answers were written: {', '.join(stale)}"
    return line


def sanity() -> bool:
    """A seed showing a failing check as passing, a stale next step and a notification among
    the user's messages is caught; the same facts said right are covered."""
    truth = Truth(
        status="in_progress",
        facts=[],
        next_phrases=["parse.py"],
        wrong=[
            ("failing_as_passing", ["npm run build"]),
            ("stale_next_step", ["implement --json"]),
            ("not_a_request", ["ALL DONE"]),
        ],
    )
    bad = Candidate(
        "bad",
        "**Status (recorded):** completed\n\n**Next step:** Implement --json\n\n"
        "**The user's messages (word for word, oldest first):**\n1.\n> Monitor: ALL DONE\n\n"
        "**Checks (each with its latest result):**\n- `npm run build`: passed\n",
    )
    good = Candidate(
        "good",
        "**Status (recorded):** in progress\n\n**Next step:** fix parse.py\n\n"
        "**Open failures (latest run failed):**\n- `npm run build`: failed — exit 1 (an earlier "
        "run: passed)\n",
    )
    wrong = score(bad, truth).wrong
    right = score(good, truth)
    return (
        set(wrong) == {"failing_as_passing", "stale_next_step", "not_a_request", "status"}
        and not right.wrong
        and right.next_step == {"right": 1}
        and found(good.text, ["npm run build"])
    )


def fit_cost(sessions: list[Session], rounds: int = 5) -> str:
    """What measuring in bytes costs where a person waits (a SessionStart with a handoff): the
    seed with the agent's reply of each Codex session made as the hooks make it for Codex, and
    the same seed measured in characters (the same manifest, the same work but the refits),
    alternately, ``rounds`` times each; the medians of the per-session medians, and their
    ratio."""
    import statistics
    import time

    from clm_policy.agents.hooks.reply import size_for
    from clm_policy.lifecycle.compose import compose, words_of_reply
    from clm_policy.lifecycle.handoff import preview
    from clm_policy.transcripts.reading import read_transcript

    times: dict[str, list[float]] = {"bytes": [], "characters": []}
    refitted = 0
    for session in sessions:
        if session.agent != "codex" or session.reply is None:
            continue
        composed = compose(read_transcript(session.path), words_of_reply(session.reply))
        sizes = {"bytes": size_for("codex"), "characters": len}
        runs: dict[str, list[float]] = {name: [] for name in sizes}
        for _ in range(rounds):
            for name, size in sizes.items():
                start = time.perf_counter()
                _manifest, text = preview(composed, now=NOW, budget=BUDGET, size=size)
                runs[name].append(time.perf_counter() - start)
        refitted += len(text.encode("utf-8")) > BUDGET  # the seed in characters: over in bytes
        for name, values in runs.items():
            times[name].append(statistics.median(values) * 1000)
    if not times["bytes"]:
        return ""
    ours, base = statistics.median(times["bytes"]), statistics.median(times["characters"])
    return (
        f"Seeds of the {len(times['bytes'])} Codex sessions with the reply, measured in bytes "
        f"({refitted} made again to fit): median {ours:.1f} ms (max {max(times['bytes']):.1f}) "
        f"against {base:.1f} ms in characters, {ours / base:.2f}x (for information)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="a folder with the corpus's transcripts")
    parser.add_argument("--half", choices=("tune", "check", "both"), default="both")
    parser.add_argument("--own", action="store_true", help="the project's own sessions too")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--verbose", action="store_true", help="each session's misses")
    args = parser.parse_args(argv)
    if not sanity():
        print("sanity check failed: the scorer does not catch a wrong seed", file=sys.stderr)
        return 1
    sets: dict[str, list[Session]] = {}
    root = args.corpus if args.corpus and (args.corpus / "SOURCES.yaml").exists() else CORPUS
    corpus = corpus_sessions(root, args.corpus) if (root / "SOURCES.yaml").exists() else []
    for half in ("tune", "check"):
        if args.half in (half, "both"):
            chosen = [s for s in corpus if s.half == half]
            if chosen:
                sets[f"Real public sessions, {half} half"] = chosen
    if args.own or not corpus:
        sets["The project's own sessions, hand-written"] = own_sessions(OWN)
        sets["The project's own sessions, recorded with the real agents"] = own_sessions(RECORDED)
    results = {title: run(sessions) for title, sessions in sets.items()}
    if args.json:
        out = {
            title: {
                "rows": rows,
                "totals": {
                    name: {
                        "found": s.found,
                        "asked": s.asked,
                        "wrong": s.wrong,
                        "next_step": s.next_step,
                    }
                    for name, s in totals.items()
                },
            }
            for title, (totals, rows) in results.items()
        }
        print(json.dumps(out, indent=2, default=str))
        return 0
    present = len(corpus)
    print(
        f"Corpus: {present} sessions with their transcript present"
        + ("" if args.corpus else " (the others need --corpus DIR)")
    )
    print()
    for title, (totals, rows) in results.items():
        print("\n".join(table(title, totals, rows)))
        if title.startswith("Real"):
            print()
            print(verdict(totals, rows))
            if MODEL_ARM in totals:
                print()
                print(model_line(totals[MODEL_ARM], rows, stale_model_replies(sets[title], root)))
        print()
        if title.startswith("Real"):
            cost = fit_cost(sets[title])
            if cost:
                print(cost)
                print()
        if args.verbose:
            for row in rows:
                for name in totals:
                    cell = row.get(name) or {}
                    misses = "; ".join(f"{k}: {t}" for k, t in cell.get("missing", [])[:12])
                    print(f"- {row['session']} [{name}] next={cell.get('next_step')} {misses}")
                if row.get("lost_from_reply"):
                    print(f"  lost from the reply: {row['lost_from_reply']}")
            print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
