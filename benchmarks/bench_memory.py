"""Benchmark: the memory repository — one commit, the audit log, topic search.

Run: ``.venv/bin/python benchmarks/bench_memory.py [--json] [--commits N] [--rounds N]``

1. One compaction commit through clm-policy's write path (lock, journal, files, ``git add`` of
   the new file, ``git commit --only``) against the baseline of a bare ``git add`` + ``git
   commit`` of the same files in an identical repository, side by side, on a fresh repository
   and again after 10,000 commits of history (made with ``git fast-import``). Target: <= 2x
   the baseline, flat.
2. ``clm-policy log`` (as a process, text output) over those 10,000 commits against the bare
   ``git log`` it runs (the same arguments, from ``clm_policy.memory.audit.log_args``), both
   with their output read through a pipe, round-robin. Target: <= 1.5x. The JSON output is
   timed too, for information. The subprocesses run without ``PYTHONDONTWRITEBYTECODE``, after
   a warm-up, as an installed clm-policy does.
3. ``search`` over 10,000 topic files. Target: <= 0.2 s.
Exit 0 whether or not targets are met; 1 when ``log`` does not list every commit.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from isolated import GIT_ISOLATION

from clm_policy.memory.audit import log_args
from clm_policy.memory.git.run import SAFE_CONFIG
from clm_policy.memory.git.write import MemoryRepo
from clm_policy.memory.init import init_memory
from clm_policy.memory.store import GitMemoryStore
from clm_policy.memory.trailers import CommitMessage

ENV = {**os.environ, **GIT_ISOLATION}
os.environ.update(ENV)

SUMMARY = "# Compaction\n\n" + "\n".join(f"- fact {i}: the build passes" for i in range(60))


def git(cwd: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, input=stdin, capture_output=True, text=True, check=True, env=ENV
    ).stdout


def history(repo: Path, count: int, *, topics: int = 0) -> None:
    """Add ``count`` commits (and ``topics`` topic files in the first) with fast-import."""
    head = git(repo, "rev-parse", "HEAD").strip()
    parts = []
    for i in range(count):
        msg = (
            f"clm(compact): h{i % 50} step {i}\n\nClm-Event: compact\nClm-Session: h{i % 50}\n"
            f"Clm-Step: {i}\nClm-Rule: soft_compact\n"
        )
        data = f"# step {i}\n"
        parts.append(
            f"commit refs/heads/main\ncommitter bench <b@b> {1700000000 + i} +0000\n"
            f"data {len(msg.encode())}\n{msg}\n"
        )
        if i == 0:
            parts.append(f"from {head}\n")
        parts.append(
            f"M 100644 inline sessions/h{i % 50}/compactions/{i:06d}.md\n"
            f"data {len(data.encode())}\n{data}\n"
        )
        if i == 0:
            for t in range(topics):
                body = (
                    f"---\nkey: area{t % 100}/topic{t}\ntags: []\nupdated_at: x\n---\n\n"
                    f"Topic {t}: notes about module {t % 977} and the build "
                    f"{'flaky network timeout' if t % 1000 == 7 else 'green'}\n"
                )
                parts.append(
                    f"M 100644 inline topics/area{t % 100}/topic{t}.md\n"
                    f"data {len(body.encode())}\n{body}\n"
                )
    git(repo, "fast-import", "--quiet", stdin="".join(parts))
    git(repo, "reset", "-q", "--hard", "main")


def time_ours(repo: Path, rounds: int, tag: str) -> list[float]:
    times = []
    with MemoryRepo(repo) as mem:
        for i in range(rounds):
            files = {
                f"sessions/b{tag}/compactions/{i:06d}.md": SUMMARY + f"\n{i}\n",
                f"sessions/b{tag}/state.json": json.dumps({"step": i, "pad": "x" * 2000}),
            }
            appends = {f"sessions/b{tag}/decisions.jsonl": json.dumps({"step": i}) + "\n"}
            msg = CommitMessage(
                f"clm(compact): b{tag} step {i}, soft_compact",
                "Goal: bench",
                {"Clm-Event": "compact", "Clm-Session": f"b{tag}", "Clm-Step": str(i)},
            )
            start = time.perf_counter()
            mem.commit(msg, files, appends)
            times.append(time.perf_counter() - start)
    return times


def time_bare(repo: Path, rounds: int, tag: str) -> list[float]:
    times = []
    for i in range(rounds):
        start = time.perf_counter()
        folder = repo / f"sessions/b{tag}"
        (folder / "compactions").mkdir(parents=True, exist_ok=True)
        (folder / f"compactions/{i:06d}.md").write_text(SUMMARY + f"\n{i}\n")
        (folder / "state.json").write_text(json.dumps({"step": i, "pad": "x" * 2000}))
        with (folder / "decisions.jsonl").open("a") as fh:
            fh.write(json.dumps({"step": i}) + "\n")
        git(repo, "add", "--", f"sessions/b{tag}")
        git(repo, "commit", "-q", "-m", f"bare step {i}")
        times.append(time.perf_counter() - start)
    return times


def compare(ours_repo: Path, bare_repo: Path, rounds: int, tag: str) -> tuple[float, float]:
    ours, bare = [], []
    for r in range(rounds):  # interleave so drift hits both alike
        ours += time_ours(ours_repo, 1, f"{tag}{r}")
        bare += time_bare(bare_repo, 1, f"{tag}{r}")
    return statistics.median(ours), statistics.median(bare)


def time_log(repo: Path, commits: int, runs: int = 7) -> dict[str, float | int]:
    """``clm-policy log`` (text and JSON) and the bare ``git log`` it runs, round-robin."""
    env = {k: v for k, v in ENV.items() if k != "PYTHONDONTWRITEBYTECODE"}
    nonce = "0123456789abcdef"
    commands = {
        "text": [sys.executable, "-m", "clm_policy", "log", "--memory", str(repo)],
        "json": [sys.executable, "-m", "clm_policy", "log", "--memory", str(repo), "--format=json"],
        "git": ["git", *SAFE_CONFIG, *log_args(nonce)],
        "git_flush0": ["git", *SAFE_CONFIG, *log_args(nonce)],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    outputs: dict[str, str] = {}
    for run in range(runs + 1):  # the first round writes bytecode and warms the page cache
        for name, cmd in commands.items():
            run_env = {**env, "GIT_FLUSH": "0"} if name == "git_flush0" else env
            start = time.perf_counter()
            done = subprocess.run(cmd, cwd=repo, env=run_env, capture_output=True, check=True)
            if run:
                times[name].append(time.perf_counter() - start)
            outputs[name] = done.stdout.decode()
    records = outputs["git"].count(f"\x1e{nonce}\x1e")
    listed = sum(1 for line in outputs["text"].splitlines() if not line.startswith(" "))
    if not records == listed == len(json.loads(outputs["json"])) >= commits:
        raise SystemExit(f"bench_memory: log listed {listed} commits, git log {records}")
    ours, json_s, bare, buffered = (
        statistics.median(times[name]) for name in ("text", "json", "git", "git_flush0")
    )
    return {
        "log_ms": round(ours * 1000, 1),
        "log_json_ms": round(json_s * 1000, 1),
        "git_log_ms": round(bare * 1000, 1),
        "git_log_flush0_ms": round(buffered * 1000, 1),
        "log_ratio": round(ours / bare, 2),
        "log_json_ratio": round(json_s / bare, 2),
        "log_ratio_flush0": round(ours / buffered, 2),
        "log_entries": listed,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--commits", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ours = init_memory(root / "ours").path
        bare = init_memory(root / "bare").path
        fresh = compare(ours, bare, args.rounds, "f")
        history(ours, args.commits, topics=args.commits)
        history(bare, args.commits, topics=args.commits)
        deep = compare(ours, bare, args.rounds, "d")
        log_figures = time_log(ours, args.commits)
        with MemoryRepo(ours) as repo:
            store = GitMemoryStore(repo)
            search_times = []
            for _ in range(5):
                start = time.perf_counter()
                hits = store.search("flaky network timeout", limit=10)
                search_times.append(time.perf_counter() - start)
    search_s = statistics.median(search_times)
    figures = {
        "commit_fresh_ms": round(fresh[0] * 1000, 1),
        "bare_fresh_ms": round(fresh[1] * 1000, 1),
        "ratio_fresh": round(fresh[0] / fresh[1], 2),
        "commit_deep_ms": round(deep[0] * 1000, 1),
        "bare_deep_ms": round(deep[1] * 1000, 1),
        "ratio_deep": round(deep[0] / deep[1], 2),
        "history_commits": args.commits,
        **log_figures,
        "search_s": round(search_s, 4),
        "search_hits": len(hits),
        "topics": args.commits,
    }
    if args.json:
        print(json.dumps(figures))
        return 0

    def verdict(ok: bool) -> str:
        return "target met" if ok else "target MISSED"

    print(f"bench_memory: memory repository, {args.rounds} commits per side")
    print(
        f"  commit, fresh repo     ours {figures['commit_fresh_ms']:6.1f} ms  bare git add+commit "
        f"{figures['bare_fresh_ms']:6.1f} ms  ratio {figures['ratio_fresh']:.2f}x  "
        f"target <= 2x: {verdict(figures['ratio_fresh'] <= 2)}"
    )
    print(
        f"  commit, {args.commits} commits  ours {figures['commit_deep_ms']:6.1f} ms  bare "
        f"{figures['bare_deep_ms']:6.1f} ms  ratio {figures['ratio_deep']:.2f}x  "
        f"target <= 2x: {verdict(figures['ratio_deep'] <= 2)}"
    )
    print(
        f"  clm-policy log over {figures['log_entries']} commits (process): "
        f"{figures['log_ms']:.1f} ms  bare git log {figures['git_log_ms']:.1f} ms  ratio "
        f"{figures['log_ratio']:.2f}x  target <= 1.5x: {verdict(figures['log_ratio'] <= 1.5)}"
    )
    print(
        f"    for information: --format json {figures['log_json_ms']:.1f} ms "
        f"({figures['log_json_ratio']:.2f}x); git log with GIT_FLUSH=0 (as clm-policy runs it) "
        f"{figures['git_log_flush0_ms']:.1f} ms, log / it {figures['log_ratio_flush0']:.2f}x"
    )
    print(
        f"  search over {args.commits} topics: {search_s * 1000:.1f} ms, {len(hits)} hits  "
        f"target <= 0.2 s: {verdict(search_s <= 0.2)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
