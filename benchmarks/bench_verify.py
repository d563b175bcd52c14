"""Benchmark: what verification adds to a compaction commit.

Run: ``.venv/bin/python benchmarks/bench_verify.py [--json] [--rounds N]``

A compaction commit is ``run_compaction`` in-process: the state cleaned by the redactor, the
compaction (summary, hint, messages kept), and the commit through clm-policy's write path
(lock, journal, files, ``git add`` of the new summary, ``git commit --only``). It is timed on
the same state in one memory repository **with verification**, as shipped (the state's facts
looked for in the summary, the hint and the messages kept: ``clm_policy.lifecycle.verify``),
and **without** it (``facts`` and ``verify`` replaced in the compaction module by stubs that
ask nothing — the same commit minus listing the facts and normalising them and the next
context), alternating round by round
so that drift hits both alike, after warm-ups. Each round compacts a new step, so every commit
writes a new file. Two states:

- *typical*: 120 messages of about 1.2 KB, 6 kept, and the facts a long session gathers (5
  constraints, 10 decisions, 40 changed files, 50 commands, 10 verified, 5 not verified, a
  blocker, 5 memory keys);
- *large*: the same facts, the 6 messages kept each a 32 KB tool output (the next context
  verification reads is then about 200 KB).

The figure is the ratio of the medians. **Target: <= 1.2 (verification adds <= 20 %) for
both.** ``verify`` alone on the recorded compaction is timed too, for information.
Sanity check: the verified commits record ``Clm-Summary-Kept: 1.00 (N/N)`` with every fact asked and
the unverified ones the stub's ``1.00 (0/0)``; else exit 1. Exit 0 whether or not the target is
met.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from isolated import GIT_ISOLATION

from clm_policy.lifecycle import compaction
from clm_policy.lifecycle.pipelines import SUMMARY_KEPT, run_compaction
from clm_policy.lifecycle.verify import Fact, Recall, compaction_context, facts, verify
from clm_policy.memory.audit import read_log
from clm_policy.memory.git.write import MemoryRepo
from clm_policy.memory.init import init_memory
from clm_policy.models.state import SessionState
from clm_policy.models.state_io import state_from

TARGET = 1.2
WARMUPS = 3
RETAIN = 6

os.environ.update(GIT_ISOLATION)


def session(name: str, *, kept_size: int | None) -> SessionState:
    """A long session's state; with ``kept_size`` its last messages are that large."""
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "You are a careful coding agent."},
        {"role": "user", "content": "Move auth to bearer tokens; keep the tests green."},
    ]
    for i in range(120):
        body = f"step {i}: ran pytest tests/test_auth.py -q, {i % 7} failed; " + (
            "checked the token refresh path, the session store and the middleware. " * 16
        )
        if kept_size is not None and i >= 120 - RETAIN:
            body = (f"tool output {i}: " + "line of a long test log, all passed\n" * 2000)[
                :kept_size
            ]
        messages.append({"role": "assistant" if i % 2 else "tool", "content": body})
    return state_from(
        {
            "session_id": name,
            "goal": "Move the auth service from session cookies to bearer tokens",
            "step_index": 1,
            "tokens": {"context_tokens": 400_000},
            "messages": messages,
            "constraints": [f"constraint {i}: keep the public API of module {i}" for i in range(5)],
            "decisions": [f"decision {i}: tokens expire after {15 + i} minutes" for i in range(10)],
            "changed_artifacts": [f"src/auth/module_{i}.py" for i in range(40)],
            "commands_and_results": [
                f"pytest tests/test_auth_{i}.py -q: {i} passed, {i % 3} failed" for i in range(50)
            ],
            "verified": [f"login {i} works with a bearer token" for i in range(10)],
            "not_verified": [f"token refresh under load case {i}" for i in range(5)],
            "blockers": ["the staging secret for the token signer is missing"],
            "memory_keys": [f"auth/topic-{i}" for i in range(5)],
        }
    )


def _no_facts(state: object) -> list[Fact]:
    return []


def _no_verify(asked: object, context: object) -> Recall:
    return Recall(0, 0)


def one(repo: MemoryRepo, state: SessionState, step: int, *, verified: bool) -> float:
    """Seconds of one compaction commit of ``state`` at ``step``; without ``verified``, the
    compaction module's ``facts`` and ``verify`` are stubs that ask and find nothing."""
    s = state.replace(step_index=step)
    if not verified:
        compaction.facts, compaction.verify = _no_facts, _no_verify  # type: ignore[assignment]
    try:
        start = time.perf_counter()
        run_compaction(repo, s, retain=RETAIN, min_recall=0.9 if verified else None)
        return time.perf_counter() - start
    finally:
        compaction.facts, compaction.verify = facts, verify  # type: ignore[assignment]


def measure(repo: MemoryRepo, state: SessionState, tag: str, rounds: int) -> dict[str, float]:
    on = state.replace(session_id=f"{tag}-on")
    off = state.replace(session_id=f"{tag}-off")
    with_v, without = [], []
    for r in range(WARMUPS + rounds):
        a = one(repo, on, 10 + r, verified=True)
        b = one(repo, off, 10 + r, verified=False)
        if r >= WARMUPS:
            with_v.append(a)
            without.append(b)
    result = compaction.compact(on, retain=RETAIN, now=datetime(2026, 8, 4, 12, 0, tzinfo=UTC))
    asked = facts(on)
    context = compaction_context(result.summary, result.messages)
    alone = []
    for _ in range(rounds):
        start = time.perf_counter()
        verify(asked, context)
        alone.append(time.perf_counter() - start)
    verified_ms, plain_ms = statistics.median(with_v) * 1000, statistics.median(without) * 1000
    return {
        "with_ms": round(verified_ms, 2),
        "without_ms": round(plain_ms, 2),
        "ratio": round(verified_ms / plain_ms, 3),
        "verify_alone_ms": round(statistics.median(alone) * 1000, 3),
        "facts": len(asked),
        "context_chars": sum(len(t) for t in context),
    }


def check(repo: MemoryRepo, tag: str, asked: int) -> None:
    said: dict[str, set[str]] = {f"{tag}-on": set(), f"{tag}-off": set()}
    for entry in read_log(repo, event="compact"):
        if entry.session in said:
            # a deterministic summary's check is Clm-Summary-Kept (a model's would be Clm-Recall)
            trailers = entry.trailers
            said[entry.session].add(trailers.get(SUMMARY_KEPT) or trailers.get("Clm-Recall", ""))
    on, off = said[f"{tag}-on"], said[f"{tag}-off"]
    if on != {f"1.00 ({asked}/{asked})"} or off != {"1.00 (0/0)"}:
        raise SystemExit(f"bench_verify: unexpected recall trailers: {on} / {off}")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = init_memory(Path(tmp) / "mem").path
        with MemoryRepo(root) as repo:
            for tag, kept in (("typical", None), ("large", 32_000)):
                state = session(tag, kept_size=kept)
                figures[tag] = measure(repo, state, tag, args.rounds)
                check(repo, tag, int(figures[tag]["facts"]))
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"bench_verify: a compaction commit with and without verification, {args.rounds} each")
    for tag, f in figures.items():
        verdict = "target met" if f["ratio"] <= TARGET else "target MISSED"
        print(
            f"  {tag:<8} with {f['with_ms']:7.2f} ms  without {f['without_ms']:7.2f} ms  "
            f"ratio {f['ratio']:.3f} ({(f['ratio'] - 1) * 100:+.1f}%)  target <= "
            f"{TARGET:g}: {verdict}"
        )
        print(
            f"           verify alone {f['verify_alone_ms']:.3f} ms: {int(f['facts'])} facts in "
            f"{int(f['context_chars']):,} characters of next context"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
