"""Benchmark: the MCP ``status`` tool of ``clm-policy mcp``, against a minimal server of the same
SDK, each a fresh process spoken to by the same client.

Run: ``.venv/bin/python benchmarks/bench_mcp.py [--json] [--runs N]`` (needs the mcp package)

Claude Code starts a project's MCP servers as processes and calls their tools over standard
input and output; the model waits for the answer. Each timed run is what the person waits for
the first time the tool is called: the server process started, the MCP handshake, one
``status`` call answered (the time stops at the answer; the server is then closed, untimed).

Three servers, round-robin:

- **baseline**: a minimal server of the same SDK (``mcp.server.mcpserver.MCPServer``, the SDK's
  FastMCP) in a script of its own, with one tool ``status`` answering a small object — the
  same client, the same process start, the same handshake;
- **status, call in the transcript**: ``python -m clm_policy mcp`` in a project whose Claude
  Code transcript (``$CLAUDE_CONFIG_DIR/projects/<project>/<session>.jsonl``, about 3 MB, the
  last response at 40,000 tokens) holds the pending ``mcp__clm-policy__status`` call, as
  Claude Code writes it before it calls the tool: the session is found at once;
- **status, call not in the transcript**: the same with a transcript that does not hold the
  call: the session is the one ``CLAUDE_CODE_SESSION_ID`` names — answered without waiting,
  since the client (the SDK's, ``clientInfo.name`` "mcp") is not Claude Code, whose call the
  server would look for until its line lands (Claude Code writes every 100 ms).

Every clm-policy answer must hold the session's 40,000 tokens and the decision ``continue``,
and say how the session was found, or the benchmark exits 1. The subprocesses run without
``PYTHONDONTWRITEBYTECODE`` after warm-ups (bytecode as installed). **Target: the status call
<= 3x the minimal server, both cases, never a fixed wait (issue 27).**
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_hook import write_transcript
from isolated import process_env

TARGET_RATIO = 3.0
WARMUPS = 2
SESSION = "3f6d2b1a-8c4e-4f7a-9b2d-1e5c7a9d0f42"
MINIMAL = '''\
from mcp.server.mcpserver import MCPServer

server = MCPServer("minimal")


@server.tool()
def status() -> dict:
    """How full the context is."""
    return {"context": {"tokens": 40000}, "decision": {"action": "continue"}}


server.run("stdio")
'''
PENDING = {
    "type": "assistant",
    "isSidechain": False,
    "sessionId": SESSION,
    "message": {
        "id": "msg_status",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [{"type": "tool_use", "id": "toolu_status", "name": "mcp__clm-policy__status"}],
        "usage": {
            "input_tokens": 5,
            "cache_creation_input_tokens": 500,
            "cache_read_input_tokens": 39_495,
            "output_tokens": 20,
        },
    },
}


def project_setup(tmp: Path, name: str, pending: bool) -> tuple[Path, dict[str, str]]:
    """A project set up for Claude Code, its transcript, and the server's environment."""
    project = tmp / name
    project.mkdir()
    (project / ".clm-policy.yaml").write_text("version: 1\npolicy: claude-code\n")
    claude = tmp / f"{name}-claude"
    folder = claude / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project))
    folder.mkdir(parents=True)
    transcript = folder / f"{SESSION}.jsonl"
    write_transcript(transcript, 3.0, 40_000)
    if pending:
        with transcript.open("a") as out:
            out.write(json.dumps({**PENDING, "cwd": str(project)}) + "\n")
    env = process_env(tmp)
    env.update(
        CLAUDE_CONFIG_DIR=str(claude),
        CLAUDE_PROJECT_DIR=str(project),
        CLAUDE_CODE_SESSION_ID=SESSION,
        XDG_DATA_HOME=str(tmp / "data"),
    )
    return project, env


async def call_status(
    command: list[str], cwd: Path, env: dict[str, str], calls: int
) -> tuple[float, list[float], Any]:
    """Start the server, shake hands, call ``status``; then call it ``calls`` times more on
    the running server. The time to the first answer, each later call's, the last answer."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], cwd=str(cwd), env=env)
    later = []
    with open(os.devnull, "w") as errlog:
        start = time.perf_counter_ns()
        async with Client(stdio_client(params, errlog=errlog)) as client:
            result = await client.call_tool("status", {})
            first = (time.perf_counter_ns() - start) / 1e6
            for _ in range(calls):
                start = time.perf_counter_ns()
                result = await client.call_tool("status", {})
                later.append((time.perf_counter_ns() - start) / 1e6)
    if result.is_error:
        raise SystemExit(f"{command}: status failed: {result.content[0].text}")
    return first, later, result.structured_content


def check(name: str, answer: Any, found_by: str) -> None:
    context, decision = answer.get("context", {}), answer.get("decision", {})
    ok = context.get("tokens") == 40_000 and decision.get("action") == "continue"
    if not ok or answer.get("found_by") != found_by:
        raise SystemExit(f"{name}: not the session's status: {answer!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--calls", type=int, default=10, help="calls timed per running server")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    import anyio

    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        minimal = tmp / "minimal_server.py"
        minimal.write_text(MINIMAL)
        found, found_env = project_setup(tmp, "found", pending=True)
        named, named_env = project_setup(tmp, "named", pending=False)
        clm = [sys.executable, "-m", "clm_policy", "mcp"]
        cases = {
            "baseline": ([sys.executable, str(minimal)], tmp, process_env(tmp), None),
            "found": (clm, found, found_env, "its transcript holds this call"),
            "named": (clm, named, named_env, "named by CLAUDE_CODE_SESSION_ID"),
        }
        samples: dict[str, list[float]] = {name: [] for name in cases}
        calls: dict[str, list[float]] = {name: [] for name in cases}
        for n in range(WARMUPS + args.runs):
            for name, (command, cwd, env, found_by) in cases.items():
                first, later, answer = anyio.run(call_status, command, cwd, env, args.calls)
                if found_by is not None:
                    check(name, answer, found_by)
                if n >= WARMUPS:
                    samples[name].append(first)
                    calls[name] += later
    return report(args, samples, calls)


def figures(samples: dict[str, list[float]]) -> dict[str, Any]:
    base = statistics.median(samples["baseline"])
    result: dict[str, Any] = {"baseline_median_ms": round(base, 2)}
    for name in ("found", "named"):
        median = statistics.median(samples[name])
        result[name] = {
            "median_ms": round(median, 2),
            "max_ms": round(max(samples[name]), 2),
            "ratio": round(median / base, 2),
            "met": median / base <= TARGET_RATIO,
        }
    return result


def report(
    args: argparse.Namespace, samples: dict[str, list[float]], calls: dict[str, list[float]]
) -> int:
    result: dict[str, Any] = {
        "runs": args.runs,
        "calls": args.calls,
        "first_call": figures(samples),
        "later_call": figures(calls),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(
        "bench_mcp: `clm-policy mcp` started, the handshake, one `status` call, against a "
        "minimal MCPServer of the same SDK"
    )
    print(
        f"  python {sys.version.split()[0]}; round-robin, bytecode; the first call (process "
        f"start, handshake, call) of {args.runs} servers each, then {args.calls} calls each"
    )
    labels = {"found": "call in the transcript", "named": "call not in it"}
    for which, title in (("first_call", "first call"), ("later_call", "a later call")):
        figure_set = result[which]
        for name, label in labels.items():
            figure = figure_set[name]
            met = "met" if figure["met"] else "NOT met"
            print(
                f"  {title + ', ' + label:<36} median {figure['median_ms']:8.2f} ms"
                f" (max {figure['max_ms']:8.2f})  {figure['ratio']:5.2f}x"
                f"  target <= {TARGET_RATIO:g}x: {met}"
            )
        base = figure_set["baseline_median_ms"]
        print(f"  {title + ', minimal MCPServer':<36} median {base:8.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
