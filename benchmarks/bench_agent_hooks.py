"""Benchmark: clm-policy's hooks inside a real Claude Code session, as Claude Code times them.

Run: ``.venv/bin/python benchmarks/bench_agent_hooks.py [--json] [--prompts N]``
(needs the pinned agents: ``bash tests/agents_e2e/install.sh``).

The real Claude Code (tests/agents_e2e/versions.json) plays a scripted session offline, against
the end-to-end suite's scripted Anthropic API, in a sandbox of its own (tests/agents_e2e:
sandbox, drivers): ``--prompts`` prompts of one ``claude -p --continue`` each, the context
growing from 20% to past the policy's handoff point of a 200K window — prompts that continue,
prompts the hooks advise a compaction at, a ``/compact`` (PreCompact, PostCompact, SessionStart
``compact``), and the handoff asked for at Stop and committed at the stop after. clm-policy's
hooks are installed as the docs say (``clm-policy hook claude-code --install --project``);
beside them, for every event, the baseline: a hook whose command is ``true``.

The figures are the ``durationMs`` Claude Code records in the transcript: every Stop hook's in
``stop_hook_summary.hookInfos``, and a hook that answered something in its ``hook_success``
attachment. The baseline's are the Stop hooks' (``true`` answers nothing), from the very same
Stop events. Targets: each clm-policy hook call <= 1,000 ms, the median <= 100 ms.

Exit status: 0 whether or not the targets are met; 1 when the agents are not installed or the
session does not go as scripted (then the figures would measure something else).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.agents_e2e.agents import find  # noqa: E402
from tests.agents_e2e.anthropic import ClaudeScript, Turn, Usage  # noqa: E402
from tests.agents_e2e.drivers import Claude  # noqa: E402
from tests.agents_e2e.httpserve import serve  # noqa: E402
from tests.agents_e2e.sandbox import CLAUDE_EVENTS, Sandbox  # noqa: E402

TARGET_MEDIAN_MS = 100
TARGET_MAX_MS = 1000
BASELINE = "true"
PYTHON_BASELINE = f"{sys.executable} -c pass"
OURS = "clm-policy hook claude-code"


def durations(records: list[dict[str, Any]]) -> dict[str, list[tuple[str, int]]]:
    """(event, durationMs) of clm-policy's hook calls and of the baseline's, from the records
    of a transcript."""
    found: dict[str, list[tuple[str, int]]] = {"ours": [], "baseline": [], "python": []}
    who_is = {BASELINE: "baseline", PYTHON_BASELINE: "python"}
    for r in records:
        if r.get("subtype") == "stop_hook_summary":
            for info in r.get("hookInfos") or []:
                command = str(info.get("command"))
                who = "ours" if OURS in command else who_is.get(command, "")
                if who:
                    found[who].append(("Stop", int(info["durationMs"])))
        attachment = r.get("attachment") if r.get("type") == "attachment" else None
        if isinstance(attachment, dict) and attachment.get("type") == "hook_success":
            event = str(attachment.get("hookEvent") or attachment.get("hookName"))
            # a Stop hook's call is in the stop_hook_summary already
            if OURS in str(attachment.get("command")) and event != "Stop":
                found["ours"].append((event, int(attachment["durationMs"])))
    return found


def play(root: Path, prompts: int) -> dict[str, Any]:
    agent = find("claude-code")
    if agent.executable is None:
        raise SystemExit(
            f"bench_agent_hooks: {agent.problem}; run bash tests/agents_e2e/install.sh"
        )
    sandbox = Sandbox(root)
    script = ClaudeScript()
    with serve(script, root / "requests.jsonl") as server:
        claude = Claude(sandbox, agent.executable, server)
        claude.setup_project()
        # the baseline beside clm-policy's hooks, for every event (user settings)
        settings = {
            "hooks": {
                event: [
                    {
                        "hooks": [
                            {"type": "command", "command": command, "timeout": 30}
                            for command in (BASELINE, PYTHON_BASELINE)
                        ]
                    }
                ]
                for event in CLAUDE_EVENTS
            }
        }
        (sandbox.claude_dir / "settings.json").write_text(json.dumps(settings))
        session = None
        for n in range(prompts):
            share = 0.2 + 0.65 * n / max(prompts - 1, 1)  # 20% .. 85% of 200,000
            tokens = int(200_000 * share)
            script.main = [
                Turn(f"Step {n}: reading.", [], Usage.context(tokens)),
            ]
            args = ("--continue",) if session else ()
            result = claude.p(f"Go on with step {n}.", *args)
            session = result["session_id"]
            if n == prompts // 2:
                claude.p("/compact keep the steps", "--continue")
        records = claude.records(str(session))
        memory = [c for c in sandbox.memory_log() if "Clm-Event: handoff" in c["trailers"]]
        if not memory:
            raise SystemExit("bench_agent_hooks: the session did not hand off as scripted")
    found = durations(records)
    found["hook_log"] = sandbox.clm_hook_log.read_text() if sandbox.clm_hook_log.exists() else ""
    return found


def line(label: str, figures: dict[str, float]) -> str:
    return (
        f"  {label:<36} n={figures['count']:3.0f}  median {figures['median']:6.0f} ms  "
        f"max {figures['max']:6.0f} ms"
    )


def summary(values: list[int]) -> dict[str, float]:
    return {
        "count": len(values),
        "median": statistics.median(values) if values else float("nan"),
        "max": max(values) if values else float("nan"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--prompts", type=int, default=12)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="clm-bench-agent-") as tmp:
        found = play(Path(tmp) / "e2e", args.prompts)
    ours = [ms for _, ms in found["ours"]]
    stops = [ms for event, ms in found["ours"] if event == "Stop"]
    base = [ms for _, ms in found["baseline"]]
    python = [ms for _, ms in found["python"]]
    by_event: dict[str, list[int]] = {}
    for event, ms in found["ours"]:
        by_event.setdefault(event, []).append(ms)
    result = {
        "ours": summary(ours),
        "ours_stop": summary(stops),
        "baseline_stop": summary(base),
        "python_stop": summary(python),
        "by_event": {event: summary(values) for event, values in sorted(by_event.items())},
        "ratio_stop_median": statistics.median(stops) / max(statistics.median(base), 1)
        if stops and base
        else None,
        "ratio_stop_python": statistics.median(stops) / max(statistics.median(python), 1)
        if stops and python
        else None,
        "hook_log": found["hook_log"],
    }
    met = (
        bool(ours)
        and result["ours"]["median"] <= TARGET_MEDIAN_MS
        and result["ours"]["max"] <= TARGET_MAX_MS
    )
    if args.json:
        print(json.dumps({**result, "target_met": met}, indent=2))
        return 0
    print("clm-policy's hooks in a real Claude Code session (durationMs as Claude Code records it)")
    print(line("all hook calls", result["ours"]))
    for event, figures in result["by_event"].items():
        print(line(f"  {event}", figures))
    print(line("baseline `true` at the same Stops", result["baseline_stop"]))
    print(line("baseline `python -c pass` there", result["python_stop"]))
    if result["ratio_stop_median"] is not None and result["ratio_stop_python"] is not None:
        print(
            f"  Stop: clm-policy / `true` median {result['ratio_stop_median']:.1f}x, "
            f"/ `python -c pass` {result['ratio_stop_python']:.1f}x"
        )
    print(
        f"  targets: median <= {TARGET_MEDIAN_MS} ms, max <= {TARGET_MAX_MS} ms: "
        f"{'target met' if met else 'target MISSED'}"
    )
    if result["hook_log"]:
        print("  hook.log:\n" + result["hook_log"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
