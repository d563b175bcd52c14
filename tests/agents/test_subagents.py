"""Subagents are agents (seed M4.3): what an agent a Claude Code or Codex session started did
joins the session's memory under its ``agent_id``, and the session's handoff points at it.

Replayed from the real artifacts: Claude Code 2.1.328's SubagentStop input and the agent's
own transcript of a background ``Agent`` that read and edited notes.txt
(tests/fixtures/real/claude-code-2.1.328/: hook-inputs/SubagentStop.json,
transcripts/subagent/agent.jsonl); Codex 0.171's SubagentStop input and the rollout of an
agent the session spawned with its history, which added notes.txt and ran a command
(tests/fixtures/real/codex-0.171.0/: hook-inputs/SubagentStop.json,
rollouts/subagent/agent.jsonl, rollouts/subagent-main.jsonl).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_claude_hooks import hook, make_project, memory_of, transcript

from clm_policy.agents.hooks.shared import log_path

from conftest import empty_commits, git, invoke, real_fixtures

REAL = real_fixtures("claude-code")
CODEX = real_fixtures("codex")
# the ids of the real fixtures' session and agent (a regeneration makes new ones)
_STOP = json.loads((REAL / "hook-inputs" / "SubagentStop.json").read_text())
SESSION = _STOP["session_id"]
AGENT = _STOP["agent_id"]
KEY = f"agents/{SESSION}/{AGENT}"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return make_project(tmp_path, monkeypatch)


def subagent_stop(project: Path) -> dict[str, Any]:
    """The real SubagentStop input, its paths pointing at this test's files (the agent's
    transcript keeps its own cwd, /e2e/project: the paths it edited are read against it)."""
    folder = project / "transcripts" / SESSION / "subagents"
    folder.mkdir(parents=True)
    agent = folder / f"agent-{AGENT}.jsonl"
    agent.write_text((REAL / "transcripts" / "subagent" / "agent.jsonl").read_text())
    event: dict[str, Any] = json.loads((REAL / "hook-inputs" / "SubagentStop.json").read_text())
    event.update(
        cwd=str(project),
        transcript_path=str(project / "transcripts" / f"{SESSION}.jsonl"),
        agent_transcript_path=str(agent),
    )
    return event


def commits(memory: Path, *args: str) -> list[str]:
    return git(memory, "log", "--format=%s", *args).splitlines()


def test_a_subagent_is_recorded_under_its_id(project: Path) -> None:
    event = subagent_stop(project)
    done = hook(project, event)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    memory = memory_of(project)
    head = git(memory, "log", "-1", "--format=%s%n%(trailers:only,unfold)")
    assert head.startswith(f"clm(agent): {SESSION} step 3, {AGENT}\n")
    assert f"Clm-Agent-Id: {AGENT}\n" in head
    assert "Clm-Agent-Type: general-purpose\n" in head
    assert f"Clm-Key: {KEY}\n" in head
    facts = json.loads(git(memory, "show", f"HEAD:sessions/{SESSION}/agents/{AGENT}.json"))
    assert facts["changed_artifacts"] == ["notes.txt"]  # project-relative
    assert facts["asked"] == "In notes.txt replace 'draft' with 'final'."
    assert facts["last_message"] == "notes.txt now says final."
    assert facts["memory_key"] == KEY
    topic = git(memory, "show", f"HEAD:topics/{KEY}.md")
    assert f"# Agent {AGENT} (general-purpose) of session {SESSION}" in topic
    assert "Files it changed:\n- notes.txt\n" in topic
    assert f"- [{KEY}](topics/{KEY}.md) — # Agent {AGENT}" in git(memory, "show", "HEAD:MEMORY.md")
    # the same stop again records nothing new
    assert hook(project, event).returncode == 0
    assert len(commits(memory, f"--grep=Clm-Agent-Id: {AGENT}")) == 1
    assert empty_commits(memory) == []


def test_log_status_and_show_name_the_agent(project: Path) -> None:
    assert hook(project, subagent_stop(project)).returncode == 0
    memory = str(memory_of(project))
    listed = json.loads(
        invoke("log", "--memory", memory, "--agent", AGENT, "--format", "json").stdout
    )
    (entry,) = listed
    assert (entry["event"], entry["session"]) == ("agent", SESSION)
    assert entry["trailers"]["Clm-Agent-Id"] == AGENT
    assert (
        json.loads(invoke("log", "--memory", memory, "--agent", "other", "--format", "json").stdout)
        == []
    )
    table = invoke("status", "--memory", memory).stdout
    assert (
        f"agents: session {SESSION} started 1 agent: clm-policy status --memory {memory} "
        f"--session {SESSION}\n"
    ) in table
    detail = invoke("status", "--memory", memory, "--session", SESSION).stdout
    assert (
        f"agent     {AGENT} (general-purpose): topic {KEY} (clm-policy log --agent {AGENT})\n"
    ) in detail
    shown = invoke("show", "--memory", memory, entry["commit"])
    assert shown.exit_code == 0, shown.stderr
    assert shown.stdout.startswith(f"# topics/{KEY}.md @ {entry['commit'][:12]}\n")


def test_the_handoff_of_the_session_points_at_its_agents(project: Path) -> None:
    assert hook(project, subagent_stop(project)).returncode == 0
    path = transcript(project / "main.jsonl", 170_000, session=SESSION)
    pre = {
        "hook_event_name": "PreCompact",
        "trigger": "auto",
        "transcript_path": str(path),
        "session_id": SESSION,
    }
    assert hook(project, pre).returncode == 2
    memory = memory_of(project)
    manifest_path = git(memory, "log", "-1", "--format=%(trailers:key=Clm-Manifest,valueonly)")
    manifest = json.loads(git(memory, "show", f"HEAD:{manifest_path.strip()}"))
    assert manifest["agent_id"] == "main"
    assert manifest["memory_keys"] == [KEY]
    # the next session starts from the handoff, the agent's record among what it reads first
    fresh = transcript(project / "next.jsonl", 5_000, session="next-1", steps=0)
    start = {
        "hook_event_name": "SessionStart",
        "source": "clear",
        "transcript_path": str(fresh),
        "session_id": "next-1",
    }
    context = json.loads(hook(project, start).stdout)["hookSpecificOutput"]["additionalContext"]
    assert KEY in context
    assert "notes.txt now says final." in context


def test_the_compactions_summary_agent_is_no_agent_of_the_task(project: Path) -> None:
    """Claude Code 2.1.328 runs a compaction's summary as an agent too: SubagentStop with no
    agent_type and no transcript file. Nothing to record, and nothing wrong."""
    event = subagent_stop(project)
    event.update(agent_type="", agent_transcript_path=str(project / "agent-acompact.jsonl"))
    done = hook(project, event)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert not memory_of(project).exists()


# -- Codex ----------------------------------------------------------------------------------

_CODEX_STOP = json.loads((CODEX / "hook-inputs" / "SubagentStop.json").read_text())
CODEX_SESSION = _CODEX_STOP["session_id"]  # the ids of the real fixtures
CODEX_AGENT = _CODEX_STOP["agent_id"]
CODEX_KEY = f"agents/{CODEX_SESSION}/{CODEX_AGENT}"
# "subagent-stop.command.input" of Codex 0.171's hook schema (as 0.169's): every field required
SUBAGENT_STOP_FIELDS = {
    "agent_id",
    "agent_transcript_path",
    "agent_type",
    "cwd",
    "hook_event_name",
    "last_assistant_message",
    "model",
    "permission_mode",
    "session_id",
    "stop_hook_active",
    "transcript_path",
    "turn_id",
}


def codex_subagent_stop(project: Path) -> dict[str, Any]:
    """The real SubagentStop input of Codex 0.171, exactly its fields, its rollouts copied
    into this test's folder (the agent's rollout keeps its own cwd, /e2e/project: the paths
    it patched are read against it)."""
    folder = project / "sessions"
    folder.mkdir()
    main = folder / f"rollout-{CODEX_SESSION}.jsonl"
    main.write_text((CODEX / "rollouts" / "subagent-main.jsonl").read_text())
    agent = folder / f"rollout-{CODEX_AGENT}.jsonl"
    agent.write_text((CODEX / "rollouts" / "subagent" / "agent.jsonl").read_text())
    event: dict[str, Any] = json.loads((CODEX / "hook-inputs" / "SubagentStop.json").read_text())
    assert set(event) == SUBAGENT_STOP_FIELDS
    event.update(cwd=str(project), transcript_path=str(main), agent_transcript_path=str(agent))
    return event


def codex_hook(project: Path, event: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """``clm-policy hook codex`` as Codex runs it: a process in the project, ``event`` (and
    nothing else) on stdin."""
    return subprocess.run(
        [sys.executable, "-m", "clm_policy", "hook", "codex"],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        cwd=project,
        timeout=120,
        check=False,
    )


def test_a_codex_agent_is_recorded_under_its_id(project: Path) -> None:
    event = codex_subagent_stop(project)
    done = codex_hook(project, event)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    memory = memory_of(project)
    head = git(memory, "log", "-1", "--format=%s%n%(trailers:only,unfold)")
    assert head.startswith(f"clm(agent): {CODEX_SESSION} step 3, {CODEX_AGENT}\n")
    assert f"Clm-Session: {CODEX_SESSION}\n" in head
    assert f"Clm-Agent-Id: {CODEX_AGENT}\n" in head
    assert "Clm-Agent-Type: default\n" in head
    assert "Clm-Agent: codex\n" in head
    assert f"Clm-Key: {CODEX_KEY}\n" in head
    facts = json.loads(
        git(memory, "show", f"HEAD:sessions/{CODEX_SESSION}/agents/{CODEX_AGENT}.json")
    )
    # its own patch, project-relative; not main.txt, the session's, which its rollout copies
    assert facts["changed_artifacts"] == ["notes.txt"]
    assert facts["commands_and_results"] == ["cat notes.txt && echo '1 passed': passed"]
    assert facts["last_message"] == "notes.txt says draft; 1 passed."
    assert facts["asked"] == ""  # Codex hands the agent its task encrypted
    assert (facts["steps"], facts["context_tokens"], facts["model"]) == (3, 10_000, "gpt-5.5")
    topic = git(memory, "show", f"HEAD:topics/{CODEX_KEY}.md")
    assert f"# Agent {CODEX_AGENT} (default) of session {CODEX_SESSION}" in topic
    assert "Files it changed:\n- notes.txt\n" in topic
    # the same stop again records nothing new
    assert codex_hook(project, event).returncode == 0
    assert len(commits(memory, f"--grep=Clm-Agent-Id: {CODEX_AGENT}")) == 1
    assert empty_commits(memory) == []
    listed = json.loads(
        invoke("log", "--memory", str(memory), "--agent", CODEX_AGENT, "--format", "json").stdout
    )
    (entry,) = listed
    assert (entry["event"], entry["session"]) == ("agent", CODEX_SESSION)
    assert entry["trailers"]["Clm-Agent"] == "codex"
    assert not log_path().exists()


@pytest.mark.parametrize("transcript_path", [None, "missing.jsonl"])
def test_a_codex_agent_without_a_rollout_records_nothing(
    project: Path, transcript_path: str | None
) -> None:
    """agent_transcript_path is ``string|null`` in Codex's schema: null, or a file that is not
    there, is nothing to record, and nothing wrong."""
    event = codex_subagent_stop(project)
    event["agent_transcript_path"] = (
        str(project / transcript_path) if transcript_path is not None else None
    )
    done = codex_hook(project, event)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert not memory_of(project).exists()
    assert not log_path().exists()
