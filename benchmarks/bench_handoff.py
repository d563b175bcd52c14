"""Benchmark: handoff fidelity — what a fresh agent learns from clm-policy's seed, from the last
assistant message alone, and from the agent's own summary, against truth written by reading
each session.

Run: ``.venv/bin/python benchmarks/bench_handoff.py [--public DIR] [--json] [--verbose]``

The project's own sessions, each exercising every rule (a plan with statuses, a failing then
passing test run, a pipeline hiding a failure, a queued prompt, a slash command, a subagent's
edit, a moved and a deleted file, a handoff reply, a compaction), come in two sets:

- **hand-written** — ``benchmarks/fidelity/sessions/`` and ``truth/``, written by
  ``fidelity/make_sessions.py`` in the real agents' shapes;
- **recorded with the real agents** — ``benchmarks/fidelity/recorded/<name>/``: the pinned
  Claude Code and Codex CLI driven through scripted turns against a scripted model server
  (``fidelity/record.py``), each session's ``truth.yaml`` written by reading it.

``--public DIR`` adds real public sessions laid out like the hand-written ones
(``DIR/sessions``, ``DIR/truth``; never copied into the project). The method — covered, wrong,
precision — is in ``handoff_fidelity.py`` and docs/verification.md.

**Targets, on each of the project's own sets: every kind of fact >= 95 % recall, 0 stale or
wrong facts, the seed <= 2,500 tokens, and the seed covering at least as many facts as the
agent's own summary of the same moment.** Exit 0 whether or not they are met (the report says);
exit 1 when the sanity check fails: a seed that lists a deliberately wrong fact must be caught.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from handoff_fidelity import (
    KINDS,
    Candidate,
    Score,
    evaluate,
    median_tokens,
    precision_lines,
    score,
    sessions_in,
    share,
    table,
)

HERE = Path(__file__).resolve().parent
OWN = HERE / "fidelity"
RECORDED = OWN / "recorded"
TITLES = {
    "own": "The project's own sessions, hand-written",
    "recorded": "The project's own sessions, recorded with the real agents "
    "(Claude Code 2.1.332, Codex CLI 0.169.0)",
}
TARGET_RECALL = 0.95
TARGET_TOKENS = 2500


def run(folder: Path) -> tuple[dict[str, Score], list[dict[str, object]]]:
    totals: dict[str, Score] = {}
    rows: list[dict[str, object]] = []
    for session in sessions_in(folder):
        results = evaluate(session)
        row: dict[str, object] = {"session": session.name}
        for name, (candidate, result) in results.items():
            totals.setdefault(name, Score()).add(result)
            found, asked = sum(result.found.values()), sum(result.asked.values())
            row[name] = {
                "found": found,
                "asked": asked,
                "wrong": {k: v for k, v in result.wrong.items() if v},
                "tokens": candidate.tokens,
                "missing": result.missing,
            }
        seeds = [results["clm seed"][0].tokens]
        row["seed_tokens"] = seeds[0]
        rows.append(row)
    return totals, rows


def sanity() -> bool:
    """A seed listing a stale next step, a moved file as changed and a passing failure is
    caught; the same facts said right are covered."""
    truth = {
        "open_failures": [{"command": "mix test | tail -30"}],
        "stale_next_steps": [{"text": "Run the migration", "phrases": ["run the migration"]}],
        "files": {"changed": ["lib/b.ex"], "moved": [{"from": "lib/a.ex", "to": "lib/b.ex"}]},
    }
    bad = Candidate(
        "bad",
        "**Next safe action:** Run the migration\n**Changed files:**\n- lib/a.ex\n"
        "mix test: passed (297 tests)\n",
        next_step="**Next safe action:** Run the migration",
        sections={"Changed files": ["lib/a.ex"]},
    )
    good = Candidate(
        "good",
        "**Open failures:**\n- mix test | tail -30: failed (297 tests, 11 failures)\n"
        "**Changed files:**\n- lib/b.ex\n**Moved files:**\n- lib/a.ex -> lib/b.ex\n",
        next_step="**Next safe action:** Fix the failing check",
        sections={"Changed files": ["lib/b.ex"]},
    )
    wrong = score(bad, truth).wrong
    right = score(good, truth)
    return (
        set(wrong) == {"stale_next_step", "moved_as_changed", "failing_as_passed"}
        and not right.wrong
        and right.found == {"open_failures": 1, "files_changed": 1, "files_moved": 1}
    )


def report(title: str, totals: dict[str, Score], rows: list[dict[str, object]]) -> list[str]:
    lines = table(totals, title)
    seed_tokens = [int(r["seed_tokens"]) for r in rows]  # type: ignore[call-overload]
    if seed_tokens:
        lines += [
            "",
            f"Seed length: median {median_tokens(seed_tokens):.0f} tokens, max {max(seed_tokens)} "
            f"(characters / 4; limit {TARGET_TOKENS}).",
        ]
    both = [r for r in rows if "agent summary" in r]
    if both:
        seed_found = sum(r["clm seed"]["found"] for r in both)  # type: ignore[index]
        agent_found = sum(r["agent summary"]["found"] for r in both)  # type: ignore[index]
        asked = sum(r["clm seed"]["asked"] for r in both)  # type: ignore[index]
        lines += [
            "",
            f"On the {len(both)} sessions where the agent wrote a summary of its own: the seed "
            f"covers {seed_found}/{asked} facts, the agent's summary {agent_found}/{asked}.",
        ]
    seed = totals.get("clm seed")
    if seed is not None:
        lines += ["", "Precision of the seed's sections:", "", *precision_lines(seed)]
        wrong = {k: v for k, v in seed.wrong.items() if v}
        if wrong:
            lines += ["", f"Stale or wrong facts in the seed: {wrong}"]
    return lines


def verdict(
    totals: dict[str, Score], rows: list[dict[str, object]], which: str = "own sessions"
) -> list[str]:
    seed = totals["clm seed"]
    lines = []
    low = [
        k
        for k in KINDS
        if seed.asked.get(k) and seed.found.get(k, 0) < TARGET_RECALL * seed.asked[k]
    ]
    wrong = sum(len(v) for v in seed.wrong.values())
    longest = max(int(r["seed_tokens"]) for r in rows)  # type: ignore[call-overload]
    agent_sessions = [r for r in rows if "agent summary" in r]
    behind = [
        r["session"]
        for r in agent_sessions
        if r["clm seed"]["found"] < r["agent summary"]["found"]  # type: ignore[index]
    ]
    met = not low and wrong == 0 and longest <= TARGET_TOKENS and not behind
    lines.append(
        f"Targets ({which}): every kind >= {TARGET_RECALL:.0%} "
        f"({'met' if not low else 'MISSED: ' + ', '.join(low)}); stale or wrong facts 0 "
        f"({wrong}); seed <= {TARGET_TOKENS} tokens (max {longest}); seed covers at least as much "
        f"as the agent's own summary ({len(agent_sessions) - len(behind)}/{len(agent_sessions)}) "
        f"-> target {'met' if met else 'MISSED'}"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--public", type=Path, help="a folder of public sessions and truth")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--verbose", action="store_true", help="each session's misses")
    args = parser.parse_args(argv)
    if not sanity():
        print("sanity check failed: the matcher does not catch a wrong seed", file=sys.stderr)
        return 1
    results = {"own": run(OWN), "recorded": run(RECORDED)}
    if args.public:
        results["public"] = run(args.public)
    if args.json:
        out = {
            name: {
                "rows": rows,
                "totals": {
                    cand: {"found": s.found, "asked": s.asked, "wrong": s.wrong}
                    for cand, s in totals.items()
                },
            }
            for name, (totals, rows) in results.items()
        }
        print(json.dumps(out, indent=2, default=str))
        return 0
    for name, (totals, rows) in results.items():
        title = TITLES.get(name, f"Public sessions ({args.public})")
        print("\n".join(report(title, totals, rows)))
        print()
        if args.verbose:
            for row in rows:
                seed = row["clm seed"]
                print(
                    f"- {row['session']}: seed {seed['found']}/{seed['asked']} "  # type: ignore[index]
                    f"({share(seed['found'], seed['asked']).strip()}), "  # type: ignore[index]
                    f"{row['seed_tokens']} tokens, wrong {seed['wrong']}"
                )  # type: ignore[index]
                for kind, text in seed["missing"]:  # type: ignore[index]
                    print(f"    missing {kind}: {text}")
            print()
    print("\n".join(verdict(*results["own"], "hand-written sessions")))
    print("\n".join(verdict(*results["recorded"], "recorded sessions")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
