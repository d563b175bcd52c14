"""The real Codex CLI (pinned, versions.json) with clm-policy's hooks, against a scripted
Responses API: ``codex exec`` sessions that patch files and run commands, the hooks' input,
the rollout, compaction, the handoff, and an agent the session spawns.

The model is ``gpt-5.5`` (in Codex 0.171's model catalogue: a 258,400-token window after its
95% margin, and ``apply_patch`` as a freeform tool). clm-policy's bundled ``claude-code``
policy takes shares of the window the rollout names: compact at 60% (155,040), hand off at
75% (193,800).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from clm_policy.lifecycle.request import handoff_request
from clm_policy.lifecycle.seed import PART_1

from . import capture
from .agents import fixtures
from .conftest import skip_module_unless
from .drivers import Codex
from .httpserve import Request
from .responses import Call, CodexScript, Turn, Usage, all_text, input_texts
from .sandbox import Sandbox, read_jsonl

pytestmark = pytest.mark.agents_e2e
skip_module_unless("codex")

AGENT = "codex"
ADD = "*** Begin Patch\n*** Add File: notes.txt\n+status: draft\n*** End Patch\n"
UPDATE = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-status: draft\n+status: final\n*** End Patch\n"
ADD_MAIN = "*** Begin Patch\n*** Add File: main.txt\n+by the session\n*** End Patch\n"
KEPT = "[clm-policy] Kept from before the compaction"
# spawn_agent and wait_agent: Codex 0.171 offers them (the "collaboration" namespace) only
# with multi_agent_v2; the older multi_agent feature, on by default, adds no tool to `exec`
MULTI_AGENT = "[features]\nmulti_agent_v2 = true\n"
TASK = "/root/notes_writer"  # the agent's thread, as Codex names it: /root/<task_name>
SEED = "# Handoff: you continue the task of an earlier session"


def trailers(commit: dict[str, str]) -> dict[str, str]:
    return dict(line.partition(": ")[::2] for line in commit["trailers"].splitlines())


def commits_of(sandbox: Sandbox, event: str) -> list[dict[str, str]]:
    return [c for c in sandbox.memory_log() if trailers(c).get("Clm-Event") == event]


def sent(request: Request) -> str:
    return all_text(request.body if isinstance(request.body, dict) else {})


def _session_of(request: Request) -> str | None:
    return {k.lower(): v for k, v in request.headers.items()}.get("session-id")


def _notes_turns(tokens: tuple[int, int, int, int]) -> list[Turn]:
    return [
        Turn(
            "Adding notes.txt.", [Call("apply_patch", ADD, custom=True)], Usage.context(tokens[0])
        ),
        Turn(
            "",
            [Call("exec_command", {"cmd": "cat notes.txt && echo '2 passed'"})],
            Usage.context(tokens[1]),
        ),
        Turn("", [Call("apply_patch", UPDATE, custom=True)], Usage.context(tokens[2])),
        Turn("notes.txt says final; 2 passed.", [], Usage.context(tokens[3])),
    ]


def _event_msgs(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [
        r["payload"]
        for r in records
        if r.get("type") == "event_msg" and r.get("payload", {}).get("type") == kind
    ]


def save_run(codex: Codex, session_id: str, name: str) -> None:
    if not capture.ENABLED:
        return
    pairs = capture.normaliser(codex.sandbox, codex.server.url)
    capture.save_file(AGENT, f"rollouts/{name}.jsonl", codex.rollout(session_id), pairs)
    capture.save_hook_inputs(AGENT, codex.sandbox.hook_inputs(), pairs)


def test_exec_patches_runs_a_command_and_the_hooks_fire(
    codex: Codex, codex_script: CodexScript, sandbox: Sandbox
) -> None:
    codex_script.main = _notes_turns((20_000, 40_000, 60_000, 70_000))
    ran = codex.exec("Write notes.txt, check it, then mark it final.")
    session = codex.session_id(ran)
    assert ran.stdout.strip() == "notes.txt says final; 2 passed."
    assert (sandbox.project / "notes.txt").read_text() == "status: final\n"

    requests = codex.server.of_kind("main")
    assert len(requests) == 4
    assert {_session_of(r) for r in requests} == {session}
    assert "Success. Updated the following files:\nA notes.txt" in sent(requests[1])
    assert "2 passed" in sent(requests[2])
    assert "M notes.txt" in sent(requests[3])

    # the hooks' input: Codex names exec_command "Bash" for hooks
    inputs = sandbox.hook_inputs()
    events = [i["hook_event_name"] for i in inputs]
    assert events[:2] == ["SessionStart", "UserPromptSubmit"]
    assert events[-1] == "Stop"
    rollout = codex.rollout(session)
    for value in inputs:
        assert value["session_id"] == session
        assert value["transcript_path"] == str(rollout)
        assert value["cwd"] == str(sandbox.project)
        assert value["model"] == "gpt-5.5"
    (start,) = sandbox.hook_inputs("SessionStart")
    assert start["source"] == "startup"
    assert start["permission_mode"] == "bypassPermissions"
    (prompt,) = sandbox.hook_inputs("UserPromptSubmit")
    assert prompt["prompt"] == "Write notes.txt, check it, then mark it final."
    assert prompt["turn_id"]
    tools = [(i["hook_event_name"], i["tool_name"]) for i in inputs if "tool_name" in i]
    assert ("PreToolUse", "apply_patch") in tools
    assert ("PostToolUse", "Bash") in tools
    bash = next(i for i in sandbox.hook_inputs("PreToolUse") if i["tool_name"] == "Bash")
    assert bash["tool_input"] == {"command": "cat notes.txt && echo '2 passed'"}
    (stop,) = sandbox.hook_inputs("Stop")
    assert stop["stop_hook_active"] is False
    assert stop["last_assistant_message"] == "notes.txt says final; 2 passed."

    # the rollout
    records = read_jsonl(rollout)
    kinds = {r.get("type") for r in records}
    assert {"session_meta", "response_item", "event_msg", "turn_context"} <= kinds, kinds
    counts = [c for c in _event_msgs(records, "token_count") if c.get("info")]
    assert counts[-1]["info"]["last_token_usage"]["total_tokens"] == 70_000
    assert counts[-1]["info"]["model_context_window"] == 258_400
    assert [trailers(c).get("Clm-Event") for c in sandbox.memory_log()] == ["init"]

    # the next prompt in the same session: 170,000 of 258,400 (66%) >= compact at 60%
    codex_script.main = [Turn("Nothing is left.", [], Usage.context(171_000))]
    codex_script.final_usage = Usage.context(171_000)
    codex_script.main.insert(
        0, Turn("Checking.", [Call("exec_command", {"cmd": "true"})], Usage.context(170_000))
    )
    codex.exec("resume", session, "What is left?")
    resumed = [r for r in codex.server.of_kind("main") if _session_of(r) == session][4:]
    assert len(resumed) == 2
    assert "What is left?" in input_texts(resumed[0].body, "user")
    assert "[clm-policy]" not in sent(resumed[0])  # 70,000: 27%
    codex.exec("resume", session, "And now?")
    last = [r for r in codex.server.of_kind("main") if _session_of(r) == session][-1]
    assert "And now?" in input_texts(last.body, "user")
    assert "[clm-policy] The context window is 66% (171,000 of 258,400) full" in sent(last)
    assert [i["source"] for i in sandbox.hook_inputs("SessionStart")] == [
        "startup",
        "resume",
        "resume",
    ]
    save_run(codex, session, "exec-session")


def test_automatic_compaction_commits_snapshot_and_summary(
    codex: Codex, codex_script: CodexScript, sandbox: Sandbox
) -> None:
    codex.config_extra = "model_auto_compact_token_limit = 50000\n"
    codex.write_config()
    codex_script.main = _notes_turns((20_000, 60_000, 30_000, 35_000))
    ran = codex.exec("Write notes.txt, check it, then mark it final.")
    session = codex.session_id(ran)
    assert (sandbox.project / "notes.txt").read_text() == "status: final\n"

    (ask,) = codex.server.of_kind("compact")
    assert "CONTEXT CHECKPOINT COMPACTION" in input_texts(ask.body, "user")[-1]
    (pre,) = sandbox.hook_inputs("PreCompact")
    assert pre["trigger"] == "auto"
    (post,) = sandbox.hook_inputs("PostCompact")
    assert post["trigger"] == "auto"
    assert "compact" in [i["source"] for i in sandbox.hook_inputs("SessionStart")]

    (snapshot,) = commits_of(sandbox, "compact")
    facts = trailers(snapshot)
    assert facts["Clm-Session"] == session
    assert facts["Clm-Agent"] == "codex"
    assert facts["Clm-Agent-Trigger"] == "auto"
    assert facts["Clm-Agent-Tokens"] == "60000"
    (summary,) = commits_of(sandbox, "summary")
    assert trailers(summary)["Clm-Agent-Compaction"] == "1"
    summaries = [
        f for f in sandbox.memory_files() if f.startswith(f"sessions/{session}/summaries/")
    ]
    assert len(summaries) == 1
    assert "The session wrote notes.txt and ran the tests" in sandbox.memory_show(summaries[0])

    # the rollout: the compacted item, and the request after it carries what clm-policy kept
    records = read_jsonl(codex.rollout(session))
    compacted = [r for r in records if r.get("type") == "compacted"]
    assert len(compacted) == 1
    assert "The session wrote notes.txt" in compacted[0]["payload"]["message"]
    after = codex.server.of_kind("main")[2]
    assert KEPT in sent(after)
    assert "Goal: Write notes.txt, check it, then mark it final." in sent(after)
    save_run(codex, session, "auto-compaction")


def test_stop_hands_off_and_the_next_session_starts_from_it(
    codex: Codex, codex_script: CodexScript, sandbox: Sandbox
) -> None:
    # 200,000 of 258,400 (77%) >= hand off at 75%
    codex_script.main = [
        *_notes_turns((120_000, 160_000, 190_000, 200_000)),
        Turn(
            "Handoff\nGoal: notes.txt final.\nDone and verified: 2 passed.\nBlockers: none.\n"
            "Next safe action: add a changelog.",
            [],
            Usage.context(201_000),
        ),
    ]
    ran = codex.exec("Write notes.txt, check it, then mark it final.")
    session = codex.session_id(ran)
    stops = sandbox.hook_inputs("Stop")
    assert [s["stop_hook_active"] for s in stops] == [False, True]
    # Codex goes on with the block's reason as the next prompt
    asked = codex.server.of_kind("main")[4]
    assert f"{handoff_request()} Then stop." in sent(asked)
    (handoff,) = commits_of(sandbox, "handoff")
    facts = trailers(handoff)
    assert facts["Clm-Session"] == session
    assert facts["Clm-Agent"] == "codex"
    assert facts["Clm-Rule"] == "hard_handoff"
    assert ran.stdout.strip().startswith("Handoff")
    manifest = json.loads(sandbox.memory_show(facts["Clm-Manifest"]))
    assert manifest["changed_artifacts"] == ["notes.txt"]  # project-relative
    assert manifest["agent_id"] == "main"
    assert len(commits_of(sandbox, "handoff")) == 1

    fresh = codex.exec("Carry on with the notes.")
    new = codex.session_id(fresh)
    assert new != session
    opening = next(r for r in codex.server.of_kind("main") if _session_of(r) == new)
    assert SEED in sent(opening)
    # the agent's reply word for word, then the user's request as the record has it
    assert f"{PART_1}\n\n> Handoff\n> Goal: notes.txt final.\n" in sent(opening)
    assert "> Next safe action: add a changelog." in sent(opening)
    assert "1.\n> Write notes.txt, check it, then mark it final." in sent(opening)
    (start,) = commits_of(sandbox, "start")
    assert trailers(start)["Clm-Parent-Session"] == session
    assert not sandbox.clm_hook_log.exists(), sandbox.clm_hook_log.read_text()
    save_run(codex, session, "stop-handoff")


def test_a_seed_in_japanese_reaches_the_next_session_whole(
    codex: Codex, codex_script: CodexScript, sandbox: Sandbox
) -> None:
    # Codex keeps 10,000 bytes of a hook's context and puts "Warning: truncated output" in
    # place of the middle of a longer one: a seed of 9,400 characters in Japanese (28,000
    # bytes) lost its middle. Measured in bytes, it arrives whole, its last line included.
    line = "金額がゼロの行は出力しない。理由は帳票の仕様による。"
    words = "ハンドオフ\n## Goal\nnotes.txt を仕上げる。\n" + "".join(
        f"## {title}\n" + "".join(f"- {title} {n}: {line}\n" for n in range(40))
        for title in ("Tasks", "Decisions", "Verification")
    )
    words += "## Next step\n変更履歴を書く。"
    codex_script.main = [
        *_notes_turns((120_000, 160_000, 190_000, 200_000)),
        Turn(words, [], Usage.context(201_000)),
    ]
    codex.exec("notes.txt を書いて、確認してから final にしてください。")
    assert len(commits_of(sandbox, "handoff")) == 1
    fresh = codex.exec("続けてください。")
    new = codex.session_id(fresh)
    opening = next(r for r in codex.server.of_kind("main") if _session_of(r) == new)
    text = sent(opening)
    assert SEED in text
    assert "Warning: truncated output" not in text
    assert "Full hook output saved to" not in text
    assert "> 変更履歴を書く。" in text  # the agent's next step
    assert "Left out for length:" in text  # the seed's last line
    assert not sandbox.clm_hook_log.exists(), sandbox.clm_hook_log.read_text()


def test_a_spawned_agent_is_recorded_under_its_id(
    codex: Codex, codex_script: CodexScript, sandbox: Sandbox
) -> None:
    """The session patches main.txt, then spawns an agent with its history (fork_turns "all",
    the default) that adds notes.txt and runs a command; at the agent's SubagentStop its
    own work — not the session's, which its rollout starts with — is committed under its
    agent_id."""
    codex.config_extra = MULTI_AGENT
    codex.write_config()
    collab = "collaboration"
    codex_script.main = [
        Turn("Adding main.txt.", [Call("apply_patch", ADD_MAIN, custom=True)]),
        Turn(
            "Handing the notes to an agent.",
            [
                Call(
                    "spawn_agent",
                    {"task_name": "notes_writer", "message": "Write notes.txt and check it."},
                    namespace=collab,
                )
            ],
        ),
        Turn("", [Call("wait_agent", {"timeout_ms": 120_000}, namespace=collab)]),
        Turn("The agent wrote notes.txt.", []),
    ]
    codex_script.agents[TASK] = [
        Turn("Adding notes.txt.", [Call("apply_patch", ADD, custom=True)], Usage.context(9_000)),
        Turn(
            "",
            [Call("exec_command", {"cmd": "cat notes.txt && echo '1 passed'"})],
            Usage.context(9_500),
        ),
        Turn("notes.txt says draft; 1 passed.", [], Usage.context(10_000)),
    ]
    ran = codex.exec("Write main.txt, then have an agent write the notes.")
    session = codex.session_id(ran)
    assert ran.stdout.strip() == "The agent wrote notes.txt."
    assert (sandbox.project / "notes.txt").read_text() == "status: draft\n"
    assert (sandbox.project / "main.txt").read_text() == "by the session\n"

    # the agent's requests: its own thread, its task as Codex's NEW_TASK message
    asked = codex.server.of_kind("agent")
    assert len(asked) == 3
    assert {r.note["agent"] for r in asked} == {TASK}
    (task,) = [i for i in asked[0].body["input"] if i.get("type") == "agent_message"]
    assert task["content"][0]["text"].startswith(f"Message Type: NEW_TASK\nTask name: {TASK}\n")
    assert "1 passed" in sent(asked[2])
    assert len(codex.server.of_kind("main")) == 4

    # the hooks: SubagentStart and SubagentStop, the agent's tools with its agent_id
    (start,) = sandbox.hook_inputs("SubagentStart")
    (stop,) = sandbox.hook_inputs("SubagentStop")
    # the fields of the captured input the unit tests replay (tests/agents/test_subagents.py
    # holds it to the schema): when capturing, this run's, saved before it is read
    if capture.ENABLED:  # only the agent's hooks: the session's are the other tests' fixtures
        agents_inputs = [i for i in sandbox.hook_inputs() if i.get("agent_id")]
        pairs = capture.normaliser(sandbox, codex.server.url)
        capture.save_hook_inputs(AGENT, agents_inputs, pairs)
    captured = fixtures("codex") / "hook-inputs" / "SubagentStop.json"
    assert set(stop) == set(json.loads(captured.read_text(encoding="utf-8")))
    agent = stop["agent_id"]
    agent_rollout = codex.rollout(agent)
    assert start["agent_id"] == agent
    assert stop["hook_event_name"] == "SubagentStop"
    assert stop["session_id"] == session
    assert stop["transcript_path"] == str(codex.rollout(session))
    assert stop["agent_transcript_path"] == str(agent_rollout)
    assert stop["agent_type"] == "default"
    assert stop["last_assistant_message"] == "notes.txt says draft; 1 passed."
    assert stop["stop_hook_active"] is False
    assert stop["cwd"] == str(sandbox.project)
    tools = [(i["tool_name"], i.get("agent_id")) for i in sandbox.hook_inputs("PostToolUse")]
    assert ("apply_patch", None) in tools  # the session's main.txt
    assert ("apply_patch", agent) in tools  # the agent's notes.txt
    assert ("Bash", agent) in tools
    # its rollout: the session's history first (main.txt), its own after the line Codex names
    records = read_jsonl(agent_rollout)
    meta = records[0]["payload"]
    assert meta["id"] == agent
    assert meta["forked_from_id"] == session
    assert meta["agent_path"] == TASK
    assert "Add File: main.txt" in json.dumps(records[: meta["subagent_history_start_ordinal"]])

    # the memory: one commit for the agent, its own files and commands, project-relative
    (commit,) = commits_of(sandbox, "agent")
    facts = trailers(commit)
    assert commit["subject"] == f"clm(agent): {session} step 3, {agent}"
    assert facts["Clm-Agent-Id"] == agent
    assert facts["Clm-Agent-Type"] == "default"
    assert facts["Clm-Agent"] == "codex"
    assert facts["Clm-Session"] == session
    record = json.loads(sandbox.memory_show(f"sessions/{session}/agents/{agent}.json"))
    assert record["changed_artifacts"] == ["notes.txt"]  # not the session's main.txt
    assert record["commands_and_results"] == ["cat notes.txt && echo '1 passed': passed"]
    assert record["last_message"] == "notes.txt says draft; 1 passed."
    assert record["asked"] == ""  # Codex hands the agent its task encrypted
    assert record["memory_key"] == f"agents/{session}/{agent}"
    listed = sandbox.clm(
        "log", "--memory", str(sandbox.memory()), "--agent", agent, "--format", "json"
    )
    assert listed.returncode == 0, listed.describe()
    (entry,) = json.loads(listed.stdout)
    assert (entry["event"], entry["session"], entry["commit"]) == ("agent", session, commit["sha"])
    assert not sandbox.clm_hook_log.exists(), sandbox.clm_hook_log.read_text()

    if capture.ENABLED:
        pairs = capture.normaliser(sandbox, codex.server.url)
        capture.save_file(AGENT, "rollouts/subagent-main.jsonl", codex.rollout(session), pairs)
        capture.save_file(AGENT, "rollouts/subagent/agent.jsonl", agent_rollout, pairs)
