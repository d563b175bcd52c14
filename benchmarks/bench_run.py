"""Benchmark: a 1,000-step simulated session, commits included.

Run: ``.venv/bin/python benchmarks/bench_run.py [--json] [--steps N]``

Generates a scenario of ``--steps`` (1,000) agent steps of 12,000 tokens each, with a phase
boundary every 400 steps, and plays it with ``--continue-after-handoff`` under the default
policy into a fresh memory repository: about 60 compactions and 2 handoffs, each a git commit.
Prints the wall time (target: <= 5 s with >= 20 compactions and >= 2 handoffs) and the share
spent in decide (the policy), in the pipelines (building, redacting, validating), and in git
(the write path), measured by timing those calls in the same run; the baseline for the total
is the same loop with the policy alone (no memory, no commits), timed in the same run.
Exit 0 whether or not the target is met.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from isolated import GIT_ISOLATION

from clm_policy.lifecycle import pipelines
from clm_policy.loop.agent import SimulatedAgent
from clm_policy.loop.control import OuterControlLoop
from clm_policy.loop.monitor import MetricsMonitor
from clm_policy.memory.git.write import MemoryRepo
from clm_policy.memory.init import init_memory
from clm_policy.models.scenario import ScenarioFile
from clm_policy.models.state import SessionState, TokenSnapshot
from clm_policy.policy.compile import load_policy
from clm_policy.policy.engine import Policy

os.environ.update(GIT_ISOLATION)
TARGET_S = 5.0


def scenario(steps: int) -> ScenarioFile:
    spec: list[dict[str, Any]] = []
    left = steps
    while left > 0:
        block = min(399, left - 1) if left > 1 else 0
        if block:
            spec.append(
                {
                    "say": "Working on part {n}.",
                    "tokens": 12000,
                    "tool_calls": 1,
                    "changed": ["src/module.py"],
                    "repeat": block,
                }
            )
        spec.append({"say": "Phase done.", "tokens": 2000, "status": "phase_boundary"})
        left -= block + 1
    spec[-1]["status"] = "completed"
    return ScenarioFile.model_validate(
        {
            "version": 1,
            "goal": "Long refactoring",
            "session": "b",
            "system_prompt_tokens": 4000,
            "steps": spec,
        }
    )


class Clock:
    """Accumulates the time spent in wrapped calls."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}

    def wrap(self, owner: Any, name: str, bucket: str) -> None:
        original: Callable[..., Any] = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.spent[bucket] = self.spent.get(bucket, 0.0) + time.perf_counter() - start

        setattr(owner, name, timed)


def state() -> SessionState:
    return SessionState(
        session_id="b",
        goal="Long refactoring",
        profile="coding",
        tokens=TokenSnapshot(context_tokens=4000),
    )


def decide_only(policy: Policy, spec: ScenarioFile) -> float:
    """The same steps, measured and decided, with nothing written: the baseline."""
    from clm_policy.loop.control import WorkingSession

    session = WorkingSession(SimulatedAgent(spec), state())
    monitor = MetricsMonitor(spec.system_prompt_tokens)
    start = time.perf_counter()
    while session.state.status.value not in ("completed", "failed"):
        step = session.step()
        session.state.tokens = monitor.update(session.state, step)
        policy.decide(session.state)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args()
    spec = scenario(args.steps)
    policy = load_policy("default")
    baseline = decide_only(policy, spec)
    clock = Clock()
    clock.wrap(Policy, "decide", "decide")
    clock.wrap(MemoryRepo, "commit", "git")
    # every pipeline the loop commits through, so that "pipelines" is their time less the
    # commits they make (the session's start and end commit too)
    import clm_policy.loop.control as control

    for name in ("run_compaction", "run_handoff", "record_session_start", "record_session_end"):
        clock.wrap(pipelines, name, "pipelines+git")
        setattr(control, name, getattr(pipelines, name))
    with tempfile.TemporaryDirectory() as tmp:
        repo_path = init_memory(Path(tmp) / "mem").path
        with MemoryRepo(repo_path) as repo:
            loop = OuterControlLoop(
                SimulatedAgent(spec),
                policy,
                state(),
                repo,
                continue_after_handoff=True,
                monitor=MetricsMonitor(spec.system_prompt_tokens),
            )
            clock.spent.clear()  # init_memory's commit is no part of the run
            start = time.perf_counter()
            result = loop.run()
            total = time.perf_counter() - start
    decide = clock.spent.get("decide", 0.0)
    git = clock.spent.get("git", 0.0)
    pipes = clock.spent.get("pipelines+git", 0.0) - git
    ok = total <= TARGET_S and result.compact_count >= 20 and len(result.handoffs) >= 2
    figures = {
        "steps": result.steps,
        "compactions": result.compact_count,
        "handoffs": len(result.handoffs),
        "sessions": len(result.sessions),
        "total_s": round(total, 3),
        "decide_s": round(decide, 3),
        "pipelines_s": round(pipes, 3),
        "git_s": round(git, 3),
        "other_s": round(total - decide - pipes - git, 3),
        "baseline_decide_only_s": round(baseline, 3),
        "target_met": ok,
    }
    if args.json:
        print(json.dumps(figures))
        return 0
    print(
        f"bench_run: {result.steps} simulated steps, {result.compact_count} compactions, "
        f"{len(result.handoffs)} handoffs, {len(result.sessions)} sessions"
    )
    print(
        f"  total      {total:6.2f} s   target <= {TARGET_S} s: "
        f"{'target met' if ok else 'target MISSED'}"
    )
    for name, value in (
        ("decide", decide),
        ("pipelines", pipes),
        ("git", git),
        ("other", total - decide - pipes - git),
    ):
        print(f"  {name:<10} {value:6.2f} s   {100 * value / total:5.1f}%")
    print(
        f"  baseline   {baseline:6.2f} s   (the same steps, decided, nothing written); "
        f"ratio {total / baseline:.1f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
