"""``clm-policy export``: the metrics and decisions of a memory repository as CSV and JSON."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

from conftest import git, invoke, run_on_terminal

STEP_HEADER = (
    "session,step,context_tokens,input_tokens,output_tokens,total_tokens,estimated,tool_calls,"
    "messages,status,action,trigger,proposed,rationale,blocked_by,warnings,forced,event,commit,"
    "recall"
)
SESSION_HEADER = (
    "session,task,parent,status,stopped,profile,model,steps,compactions,handoffs,input_tokens,"
    "output_tokens,tokens,cost,human_interventions,recall_mean,recalls,steps_until_handoff,"
    "tokens_until_handoff,duration_s"
)


def run(memory: Path, *args: str) -> None:
    # the demo's first session alone (it hands off; --continue-after-handoff goes on)
    result = invoke("run", "--memory", str(memory), "--format", "json", "--stop-at-handoff", *args)
    assert result.exit_code == 0, result.stderr


def export(memory: Path, *args: str) -> str:
    result = invoke("export", "--memory", str(memory), *args)
    assert (result.exit_code, result.stderr) == (0, ""), result.stderr
    return result.stdout


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def commit_of(repo: Path, subject: str) -> str:
    return git(repo, "log", "--format=%H", "-F", f"--grep={subject}").strip()


def test_steps_csv(memory: Path) -> None:
    run(memory)
    text = export(memory, "--format", "csv")
    assert text.splitlines()[0] == STEP_HEADER
    table = rows(text)
    metrics = [
        json.loads(line)
        for line in git(memory, "show", "HEAD:sessions/demo/metrics.jsonl").splitlines()
    ]
    assert [r["step"] for r in table] == [str(n) for n in range(1, 44)]
    assert [r["context_tokens"] for r in table] == [str(m["context_tokens"]) for m in metrics]
    assert [r["total_tokens"] for r in table] == [str(m["total_tokens"]) for m in metrics]
    compact = table[22]
    assert {k: compact[k] for k in ("step", "action", "trigger", "event", "forced")} == {
        "step": "23",
        "action": "compact",
        "trigger": "soft_compact",
        "event": "compact",
        "forced": "false",
    }
    assert compact["commit"] == commit_of(memory, "clm(compact): demo step 23")
    assert compact["rationale"] == "context 257352 >= soft limit 250000"
    assert table[0]["trigger"] == table[0]["event"] == table[0]["recall"] == ""
    assert table[-1]["action"] == table[-1]["event"] == "handoff"


def test_sessions_csv(memory: Path) -> None:
    run(memory)
    text = export(memory, "--format", "csv", "--table", "sessions")
    assert text.splitlines()[0] == SESSION_HEADER
    (row,) = rows(text)
    last = json.loads(git(memory, "show", "HEAD:sessions/demo/metrics.jsonl").splitlines()[-1])
    assert {k: v for k, v in row.items() if k != "duration_s"} == {
        "session": "demo",
        "task": "demo",
        "parent": "",
        "status": "phase_boundary",
        "stopped": "handoff",
        "profile": "coding",
        "model": "",
        "steps": "43",
        "compactions": "2",
        "handoffs": "1",
        "input_tokens": str(last["input_tokens"]),
        "output_tokens": str(last["output_tokens"]),
        "tokens": str(last["total_tokens"]),
        "cost": "",
        "human_interventions": "0",
        # the demo's summaries are deterministic (built from the facts they would be checked
        # against): no recall; its handoff's words are the agent's, measured against the record
        "recall_mean": "1.0",
        "recalls": "1",
        "steps_until_handoff": "43",
        "tokens_until_handoff": str(last["total_tokens"]),
    }


def test_json_holds_every_table(memory: Path, tmp_path: Path) -> None:
    run(memory, "--continue-after-handoff")
    out = tmp_path / "history.json"
    result = invoke("export", "--memory", str(memory), "--format", "json", "-o", str(out))
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    doc = json.loads(out.read_text())
    assert list(doc) == [
        "memory",
        "commit",
        "policy",
        "metrics",
        "tasks",
        "sessions",
        "steps",
        "skipped",
    ]
    assert doc["commit"] == git(memory, "rev-parse", "HEAD").strip()
    assert [s["session"] for s in doc["sessions"]] == ["demo", "demo-2"]
    assert doc["tasks"][0]["sessions"] == ["demo", "demo-2"]
    assert doc["tasks"][0]["outcome"] == "completed"
    assert doc["metrics"]["task_completion_rate"] == 1.0
    assert len(doc["steps"]) == 43 + 53  # demo and demo-2, each step once
    assert doc["steps"][0]["blocked_by"] == []
    assert doc["steps"][0]["estimated"] is False
    assert doc["skipped"] == []
    assert invoke("export", "--memory", str(memory), "--format", "json").stdout == out.read_text()


def test_a_spreadsheet_never_runs_a_cell(memory: Path) -> None:
    run(memory, "--scenario", "continue_only")  # scenario-a
    record = {"step": 3, "action": "continue", "rationale": '=HYPERLINK("http://x","y")'}
    path = memory / "sessions/scenario-a/decisions.jsonl"
    path.write_text(path.read_text() + json.dumps(record) + "\n")
    git(memory, "commit", "-q", "-am", "hand-made")
    (row,) = [r for r in rows(export(memory, "--format", "csv")) if r["step"] == "3"]
    assert row["rationale"] == '\'=HYPERLINK("http://x","y")'


def test_no_history_is_an_empty_export(memory: Path) -> None:
    result = invoke("export", "--memory", str(memory), "--format", "csv")
    assert (result.exit_code, result.stdout) == (0, STEP_HEADER + "\n")
    assert result.stderr == (
        f"{memory}: no sessions recorded yet; nothing to report "
        f"(clm-policy run --memory {memory} records one)\n"
    )
    doc = json.loads(invoke("export", "--memory", str(memory), "--format", "json").stdout)
    assert (doc["sessions"], doc["steps"], doc["metrics"]["sessions"]) == ([], [], 0)


def test_bad_input_is_exit_2(memory: Path) -> None:
    run(memory)
    result = invoke("export", "--memory", str(memory), "--format", "json", "--session", "nope")
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {
        "error": {"code": 2, "message": f"{memory}: no session 'nope' recorded (sessions: demo)"}
    }
    result = invoke("export", "--memory", str(memory), "--format", "json", "--table", "steps")
    assert (result.exit_code, json.loads(result.stdout)) == (
        2,
        {
            "error": {
                "code": 2,
                "message": "--table applies to --format csv (JSON holds every table)",
            }
        },
    )


def test_json_is_quiet_on_a_terminal(memory: Path) -> None:
    run(memory)
    done, seen = run_on_terminal(
        [sys.executable, "-m", "clm_policy", "export", "--memory", str(memory), "--format", "json"]
    )
    assert (done.returncode, seen) == (0, b"")
    assert json.loads(done.stdout)["sessions"][0]["session"] == "demo"


def test_a_hook_sessions_context_comes_from_its_trailers(memory: Path) -> None:
    """An agent's hooks record no metrics.jsonl: the steps their commits mark take the
    context from the commits' Clm-Context-Tokens (the export's column was empty)."""
    from clm_policy.memory.git.write import MemoryRepo
    from clm_policy.memory.trailers import CommitMessage, event_subject

    commits = [
        ("compact", 4, {"Clm-Context-Tokens": "140000", "Clm-Agent-Tokens": "140000"}),
        ("summary", 4, {}),  # the context after Claude Code's compaction: unknown
        ("handoff", 9, {"Clm-Context-Tokens": "152000"}),
    ]
    with MemoryRepo(memory) as repo:
        for n, (event, step, extra) in enumerate(commits):
            trailers = {"Clm-Event": event, "Clm-Session": "s1", "Clm-Step": str(step), **extra}
            message = CommitMessage(
                event_subject(event, "s1", step, "claude-code:auto"), "", trailers
            )
            repo.commit(message, {f"sessions/s1/{event}-{n}.md": f"{event}\n"})
    table = rows(export(memory, "--format", "csv", "--table", "steps"))
    assert [(r["step"], r["event"], r["context_tokens"]) for r in table] == [
        ("4", "compact+summary", "140000"),
        ("9", "handoff", "152000"),
    ]
