"""Benchmark: ``clm-policy experiment`` of 3 arms x 20 scenarios x 200 steps, file backend.

Run: ``.venv/bin/python benchmarks/bench_experiment.py [--json] [--scenarios N] [--steps N]
[--mem0-scenarios N]``

Writes ``--scenarios`` (20) scenario files of ``--steps`` (200) steps each — 10,000 to 14,000
tokens a step (seeded), a phase boundary half way, a constraint said in the first message and
needed near the end — and an experiment of three arms with the file backend (the default
policy, the default under the research profile, a policy that hands off instead of
compacting). Times ``clm-policy experiment`` as one process (target: <= 30 s), and as the
baseline the same 60 plays through ``clm-policy run`` one process each, in the same run; prints
both and their ratio, and the CPU time each took (the processes and their children, git
included: on a shared machine the wall time follows the others' load, the CPU time much less).

Then the Mem0 overhead: an experiment of two arms, file and mem0 (the offline stand-in: no
model, so this is Mem0's own cost — extraction by HTTP, embeddings, Qdrant, SQLite — not a
model's), on ``--mem0-scenarios`` (5) of the scenarios, in-process; the difference of the time
the two arms spent playing the workloads (opening Mem0 excluded, reported apart) per
compaction or handoff the mem0 arm told Mem0 about. Skipped, saying so, without the extra.
Exit 0 whether or not the target is met.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from isolated import GIT_ISOLATION, process_env

TARGET_S = 30.0
HANDOFF_EARLY = """\
version: 1
name: handoff-early
extends: default
rules:
  - {id: soft_compact, disable: true}
  - id: early_handoff
    when: tokens.context >= profile.soft_compact
    action: handoff
    because: a fresh session
    after: hard_handoff
"""


def scenario(number: int, steps: int, rng: random.Random) -> str:
    half = steps // 2
    lines = [
        "version: 1",
        f"name: bench-{number:02d}",
        f"goal: Refactor module {number} of the billing service",
        f"session: bench-{number:02d}",
        "profile: coding",
        "system_prompt_tokens: 4000",
        "steps:",
        f"  - user: Refactor module {number}. Never change the public invoice API of module "
        f"{number}.",
        "    say: Starting.",
        "    tokens: 6000",
    ]
    for block, repeat in (("a", half - 2), ("b", steps - half - 4)):
        lines += [
            f"  - say: 'Working on part {{n}} of block {block}.'",
            f"    tokens: {rng.randrange(10_000, 14_001)}",
            "    changed: [src/module.py]",
            f"    repeat: {repeat}",
        ]
        if block == "a":
            lines += ["  - {say: Phase done., tokens: 2000, status: phase_boundary}"]
    lines += [
        "  - say: Checked the public API.",
        f"    needs: [never change the public invoice API of module {number}]",
        "    tokens: 3000",
        "  - {say: Done., tokens: 1000, status: completed}",
    ]
    return "\n".join(lines) + "\n"


def experiment_file(arms: list[str], workloads: str) -> str:
    return (
        "version: 1\nname: bench\nseed: 1\nbootstrap: 200\nmem0: {model: offline}\narms:\n"
        + "".join(f"  - {arm}\n" for arm in arms)
        + f"workloads:\n  - scenarios: '{workloads}'\n"
    )


ARMS = [
    "{name: default, policy: default}",
    "{name: research, policy: default, profile: research}",
    "{name: early, policy: handoff-early.yaml}",
]


def children_cpu() -> float:
    """CPU seconds (user and system) of the child processes waited for so far, theirs
    included: what the machine's other load does not change much, unlike the wall time."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def by_run(tmp: Path, files: list[Path], env: dict[str, str]) -> tuple[float, int]:
    """The baseline: each play as its own ``clm-policy run`` process."""
    runs = [
        ["--policy", "default"],
        ["--policy", "default", "--profile", "research"],
        ["--policy", str(tmp / "handoff-early.yaml")],
    ]
    clm = [sys.executable, "-m", "clm_policy"]
    start = time.perf_counter()
    count = 0
    for i, extra in enumerate(runs):
        memory = tmp / f"runs-{i}"
        for path in files:
            subprocess.run(
                [*clm, "run", "--scenario", str(path), "--memory", str(memory), *extra,
                 "--continue-after-handoff", "--format", "json"],
                env=env, check=True, capture_output=True,
            )  # fmt: skip
            count += 1
    return time.perf_counter() - start, count


def mem0_overhead(tmp: Path, count: int) -> dict[str, float] | None:
    from clm_policy.experiment.load import load_experiment
    from clm_policy.experiment.runner import run_experiment
    from clm_policy.memory.mem0store import available

    if not available():
        return None
    path = tmp / "mem0.yaml"
    names = "|".join(f"bench-{i:02d}" for i in range(count))
    (tmp / "m").mkdir()
    for i in range(count):
        os.link(tmp / "sc" / f"bench-{i:02d}.yaml", tmp / "m" / f"bench-{i:02d}.yaml")
    path.write_text(
        experiment_file(
            ["{name: file, policy: default}", "{name: mem0, policy: default, memory: mem0}"],
            "m/*.yaml",
        )
    )
    del names
    started = time.perf_counter()
    from clm_policy.memory import mem0store

    mem0store._import_mem0(str(tmp / "mem0-home"))  # the one-off import, timed apart
    imported = time.perf_counter() - started
    done = run_experiment(load_experiment(path), tmp / "mem0-work")
    file, mem0 = done.arms
    play = {a.arm: sum(o.seconds for o in a.outcomes) for a in done.arms}
    events = sum(o.compactions + o.handoffs for o in mem0.outcomes)
    file_events = sum(o.compactions + o.handoffs for o in file.outcomes)
    return {
        "import_s": imported,
        "open_s": mem0.seconds - play["mem0"],
        "file_play_s": play["file"],
        "mem0_play_s": play["mem0"],
        "events": events,
        "overhead_per_event_ms": 1000 * (play["mem0"] - play["file"]) / max(1, events),
        "file_per_event_ms": 1000 * play["file"] / max(1, file_events),
        "failures": len(mem0.failures),
    }  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--scenarios", type=int, default=20)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--mem0-scenarios", type=int, default=5)
    args = parser.parse_args()
    os.environ.update(GIT_ISOLATION)
    rng = random.Random(20261201)
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        env = process_env(tmp)
        (tmp / "sc").mkdir()
        files = []
        for i in range(args.scenarios):
            path = tmp / "sc" / f"bench-{i:02d}.yaml"
            path.write_text(scenario(i, args.steps, rng))
            files.append(path)
        (tmp / "handoff-early.yaml").write_text(HANDOFF_EARLY)
        exp = tmp / "bench.yaml"
        exp.write_text(experiment_file(ARMS, "sc/*.yaml"))
        start, cpu = time.perf_counter(), children_cpu()
        done = subprocess.run(
            [sys.executable, "-m", "clm_policy", "experiment", str(exp), "--format", "json"],
            env=env, check=True, capture_output=True, text=True,
        )  # fmt: skip
        total, total_cpu = time.perf_counter() - start, children_cpu() - cpu
        result = json.loads(done.stdout)
        outcomes = result["outcomes"]
        cpu = children_cpu()
        baseline, runs = by_run(tmp, files, env)
        baseline_cpu = children_cpu() - cpu
        mem0_scenarios = min(args.mem0_scenarios, args.scenarios)
        overhead = mem0_overhead(tmp, mem0_scenarios) if mem0_scenarios > 0 else None
    plays = len(outcomes)
    steps = sum(o["steps"] for o in outcomes)
    compactions = sum(o["compactions"] for o in outcomes)
    handoffs = sum(o["handoffs"] for o in outcomes)
    if plays != runs or plays != 3 * args.scenarios:
        print(f"bench_experiment: sanity check failed ({plays} plays, {runs} runs)")
        return 1
    ok = total <= TARGET_S
    figures = {
        "arms": 3,
        "scenarios": args.scenarios,
        "steps": steps,
        "compactions": compactions,
        "handoffs": handoffs,
        "experiment_s": round(total, 3),
        "baseline_runs_s": round(baseline, 3),
        "ratio": round(total / baseline, 3),
        "experiment_cpu_s": round(total_cpu, 3),
        "baseline_cpu_s": round(baseline_cpu, 3),
        "target_met": ok,
        "mem0": overhead and {k: round(v, 3) for k, v in overhead.items()},
    }
    if args.json:
        print(json.dumps(figures))
        return 0
    print(
        f"bench_experiment: 3 arms x {args.scenarios} scenarios x {args.steps} steps: {steps:,} "
        f"steps played, {compactions} compactions, {handoffs} handoffs"
    )
    print(
        f"  experiment {total:6.2f} s   target <= {TARGET_S:g} s: "
        f"{'target met' if ok else 'target MISSED'}"
    )
    print(
        f"  baseline   {baseline:6.2f} s   (the same {runs} plays, `clm-policy run` one by one); "
        f"ratio {total / baseline:.2f}x"
    )
    print(
        f"  CPU time (the process and its children, git included): experiment "
        f"{total_cpu:.1f} s, baseline {baseline_cpu:.1f} s"
    )
    if overhead is None:
        why = "--mem0-scenarios 0" if mem0_scenarios <= 0 else "the mem0 extra is not installed"
        print(f"  mem0: skipped ({why})")
    else:
        print(
            f"  mem0 (offline stand-in) on {min(args.mem0_scenarios, args.scenarios)} scenarios: "
            f"{overhead['overhead_per_event_ms']:.1f} ms more per compaction or handoff than the "
            f"file arm ({overhead['file_per_event_ms']:.1f} ms each there; "
            f"{int(overhead['events'])} events); import {overhead['import_s']:.2f} s and open "
            f"{overhead['open_s']:.2f} s once; {int(overhead['failures'])} failures"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
