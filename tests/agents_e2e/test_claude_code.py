"""The real Claude Code (pinned, versions.json) with clm-policy's hooks, against a scripted
Anthropic API: what reaches the model, what clm-policy commits, what Claude Code writes.

The sessions use ``claude-sonnet-4-6``, a model Claude Code gives a 200,000-token window —
the window clm-policy's bundled ``claude-code`` policy takes for every Claude model (compact
at 60% = 120,000, hand off at 75% = 150,000).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from clm_policy.agents.hooks.claude_code import STOP_LINE
from clm_policy.lifecycle.seed import PART_1

from . import capture
from .anthropic import ClaudeScript, Tool, Turn, Usage, all_text, last_user_text
from .conftest import skip_module_unless
from .drivers import CLAUDE_200K_MODEL, Claude, record_kinds
from .httpserve import Request
from .sandbox import Sandbox, read_jsonl

pytestmark = pytest.mark.agents_e2e
skip_module_unless("claude-code")

AGENT = "claude-code"
# 130,000 of a 200,000 window, as Claude Code counts it: the window less the 20,000 it keeps for
# the reply (its own "% context used")
ADVICE_72 = "[clm-policy] The context window is 72% (130,000 of 180,000) full"
KEPT = "SessionStart hook additional context: [clm-policy] Kept from before the compaction"
SEED = (
    "SessionStart hook additional context: # Handoff: you continue the task of an earlier session"
)
ASK_FOR_HANDOFF = (
    "UserPromptSubmit hook additional context: [clm-policy] The context window is 89% "
    "(160,000 of 180,000) full and the policy says hand off (context 160000 >= hard limit "
    "150000). Finish the step you are on"
)


def main_requests(claude: Claude, session_id: str | None = None) -> list[Request]:
    found = claude.server.of_kind("main")
    if session_id is not None:
        found = [r for r in found if _session_of(r) == session_id]
    return found


def _session_of(request: Request) -> str | None:
    for key, value in request.headers.items():
        if key.lower() == "x-claude-code-session-id":
            return value
    return None


def text_of_request(request: Request) -> str:
    return all_text(request.body if isinstance(request.body, dict) else {})


def trailers(commit: dict[str, str]) -> dict[str, str]:
    pairs = {}
    for line in commit["trailers"].splitlines():
        key, _, value = line.partition(": ")
        pairs[key] = value
    return pairs


def commits_of(sandbox: Sandbox, event: str) -> list[dict[str, str]]:
    return [c for c in sandbox.memory_log() if trailers(c).get("Clm-Event") == event]


def attachments(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [
        r["attachment"]
        for r in records
        if r.get("type") == "attachment" and r["attachment"].get("type") == kind
    ]


def clm_hook_durations(records: list[dict[str, Any]]) -> list[int]:
    """``durationMs`` of every clm-policy hook call Claude Code recorded in a transcript
    (``hook_success`` attachments; ``stop_hook_summary.hookInfos``)."""
    found = [
        int(a["durationMs"])
        for a in attachments(records, "hook_success")
        if "clm-policy hook" in str(a.get("command"))
    ]
    for r in records:
        if r.get("subtype") == "stop_hook_summary":
            found += [
                int(i["durationMs"])
                for i in r.get("hookInfos", [])
                if "clm-policy hook" in str(i.get("command"))
            ]
    return found


def no_hook_problems(sandbox: Sandbox) -> None:
    """clm-policy's hooks logged nothing: no error, and no line for a new session's
    transcript that does not exist yet."""
    log = sandbox.clm_hook_log
    assert not log.exists(), log.read_text()


def no_empty_commits(sandbox: Sandbox) -> None:
    rows = [
        line.split()
        for line in sandbox.git(
            "log", "--all", "--format=%H %T %P", cwd=sandbox.memory()
        ).splitlines()
    ]
    trees = {row[0]: row[1] for row in rows}
    empty = [row[0] for row in rows if len(row) > 2 and trees.get(row[2]) == row[1]]
    assert empty == [], empty


def save_session(claude: Claude, session_id: str, name: str) -> None:
    """Capture (regenerate_fixtures.sh): the transcript and every hook input seen so far."""
    if not capture.ENABLED:
        return
    pairs = capture.normaliser(claude.sandbox, claude.server.url)
    capture.save_file(AGENT, f"transcripts/{name}.jsonl", claude.transcript(session_id), pairs)
    capture.save_hook_inputs(AGENT, claude.sandbox.hook_inputs(), pairs)


# -- a session that writes, edits and tests; the advice at the compact threshold


def test_session_edits_runs_tests_and_the_advice_reaches_the_model(
    claude: Claude, claude_script: ClaudeScript, sandbox: Sandbox
) -> None:
    project = sandbox.project
    test_cmd = "python3 -B test_calc.py"
    claude_script.main = [
        Turn(
            "Writing calc.py.",
            [
                Tool(
                    "Write",
                    {
                        "file_path": str(project / "calc.py"),
                        "content": "def add(a, b):\n    return a - b\n",
                    },
                )
            ],
            Usage.context(30_000),
        ),
        Turn(
            "",
            [
                Tool(
                    "Write",
                    {
                        "file_path": str(project / "test_calc.py"),
                        "content": "from calc import add\n\nassert add(2, 3) == 5, 'add is wrong'\nprint('1 passed')\n",
                    },
                )
            ],
            Usage.context(60_000),
        ),
        Turn(
            "Running the test.",
            [Tool("Bash", {"command": test_cmd, "description": "Run the test"})],
            Usage.context(90_000),
        ),
        Turn(
            "The test fails: fixing add().",
            [
                Tool(
                    "Edit",
                    {
                        "file_path": str(project / "calc.py"),
                        "old_string": "a - b",
                        "new_string": "a + b",
                    },
                )
            ],
            Usage.context(100_000),
        ),
        Turn(
            "",
            [Tool("Bash", {"command": test_cmd, "description": "Run the test again"})],
            Usage.context(125_000),
        ),
        Turn("add() is fixed and the test passes (1 passed).", [], Usage.context(130_000)),
    ]
    first = claude.p("Write calc.py with add() and a test for it; run the test and fix what fails.")
    session = first["session_id"]

    # the work happened
    assert first["result"] == "add() is fixed and the test passes (1 passed)."
    assert (project / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    requests = main_requests(claude, session)
    assert len(requests) == 6
    tool_results = [last_user_text(r.body) for r in requests[1:]]
    assert "AssertionError: add is wrong" in tool_results[2]
    assert "1 passed" in tool_results[4]
    # the -p result reports the model's window
    assert first["modelUsage"][CLAUDE_200K_MODEL]["contextWindow"] == 200_000
    # at 0 (the first prompt) clm-policy adds nothing
    assert "[clm-policy]" not in text_of_request(requests[0])

    # the next prompt: the context is 130,000 of 200,000 (72% of the 180,000 Claude Code counts)
    # >= the compact threshold (60% of the window)
    second = claude.p("Anything left to do?", "--continue")
    assert second["session_id"] == session
    after = main_requests(claude, session)[6]
    assert "Anything left to do?" in last_user_text(after.body)
    sent = text_of_request(after)
    assert f"UserPromptSubmit hook additional context: {ADVICE_72}" in sent
    assert "(context 130000 >= soft limit 120000)" in sent

    # the transcript: records, the usage as scripted, the hook's context and message
    records = claude.records(session)
    kinds = record_kinds(records)
    expected = {
        "user",
        "assistant",
        "queue-operation",
        "last-prompt",
        "system:stop_hook_summary",
        "attachment:hook_additional_context",
        "attachment:hook_system_message",
    }
    assert expected <= kinds, sorted(kinds)
    main_usage = [
        r["message"]["usage"]
        for r in records
        if r.get("type") == "assistant" and not r.get("isSidechain")
    ]
    before_second = [
        u
        for u in main_usage
        if u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"]
        == 130_000
    ]
    assert before_second, main_usage
    messages = [
        r["attachment"]["content"]
        for r in records
        if r.get("type") == "attachment" and r["attachment"].get("type") == "hook_system_message"
    ]
    assert any(
        m.startswith("clm-policy: context 72% (130,000 of 180,000)")
        and "Run: /compact" in m
        and m.endswith("last being done: ran `python3 -B test_calc.py` (passed).")
        for m in messages
    ), messages
    # advice only: nothing committed yet
    assert [trailers(c).get("Clm-Event") for c in sandbox.memory_log()] == ["init"]

    # the hooks' input, as Claude Code sent it
    inputs = sandbox.hook_inputs()
    events = [i["hook_event_name"] for i in inputs]
    for event in (
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "SessionEnd",
    ):
        assert event in events, events
    for value in inputs:
        assert value["session_id"] == session
        assert value["transcript_path"] == str(claude.transcript(session))
        assert value["cwd"] == str(project)
    starts = [i["source"] for i in sandbox.hook_inputs("SessionStart")]
    assert starts == ["startup", "resume"]
    prompts = sandbox.hook_inputs("UserPromptSubmit")
    assert [p["prompt"] for p in prompts][1] == "Anything left to do?"
    assert all(p["permission_mode"] == "default" and p["prompt_id"] for p in prompts)
    stop = sandbox.hook_inputs("Stop")[0]
    assert stop["stop_hook_active"] is False
    assert stop["last_assistant_message"] == "add() is fixed and the test passes (1 passed)."
    tools = {(i["tool_name"], i["hook_event_name"]) for i in inputs if "tool_name" in i}
    assert {("Write", "PostToolUse"), ("Edit", "PostToolUse"), ("Bash", "PreToolUse")} <= tools
    assert {i["reason"] for i in sandbox.hook_inputs("SessionEnd")} == {"other"}
    # the first prompt's transcript did not exist yet: no problem, nothing logged
    no_hook_problems(sandbox)
    assert all(d <= 10_000 for d in clm_hook_durations(records)), clm_hook_durations(records)

    if capture.ENABLED:
        pairs = capture.normaliser(sandbox, claude.server.url)
        capture.save(AGENT, "print-result.json", first, pairs)
        save_session(claude, session, "session")


def test_the_default_model_has_a_1m_window(
    claude: Claude, claude_script: ClaudeScript, sandbox: Sandbox
) -> None:
    """What the binary reports for its default model: clm-policy must not assume 200K (it
    said "65% (130,000 of 200,000) ... compact" of a session 13% full)."""
    claude.model = None
    claude_script.main = [Turn("Hello.", [], Usage.context(130_000))]
    result = claude.p("Say hello.")
    (model,) = result["modelUsage"]
    assert result["modelUsage"][model]["contextWindow"] == 1_000_000
    main = claude.server.of_kind("main")[0]
    assert isinstance(main.body, dict)
    assert main.body["model"] == model
    # 130,000 of 1,000,000: nothing to advise
    claude_script.main = [Turn("Still here.", [], Usage.context(650_000))]
    claude.p("Go on.", "--continue")
    sent = text_of_request(main_requests(claude, result["session_id"])[-1])
    assert "[clm-policy]" not in sent
    # 650,000 of 1,000,000: compact at 60%
    claude.p("And now?", "--continue")
    sent = text_of_request(main_requests(claude, result["session_id"])[-1])
    assert (
        "UserPromptSubmit hook additional context: [clm-policy] The context window is 66% "
        "(650,000 of 980,000) full (context 650000 >= soft limit 600000)"
    ) in sent
    no_hook_problems(sandbox)
    if capture.ENABLED:
        pairs = capture.normaliser(claude.sandbox, claude.server.url)
        capture.save(AGENT, "print-result-default-model.json", result, pairs)


# -- compaction


def _calc_turns(project: Any, tokens: tuple[int, int, int]) -> list[Turn]:
    return [
        Turn(
            "Writing calc.py.",
            [
                Tool(
                    "Write",
                    {
                        "file_path": str(project / "calc.py"),
                        "content": "def add(a, b):\n    return a + b\n",
                    },
                )
            ],
            Usage.context(tokens[0]),
        ),
        Turn(
            "",
            [
                Tool(
                    "Bash",
                    {
                        "command": "python3 -B -c 'import calc; print(calc.add(2, 3))'",
                        "description": "Try add",
                    },
                )
            ],
            Usage.context(tokens[1]),
        ),
        Turn("calc.py works: add(2, 3) prints 5.", [], Usage.context(tokens[2])),
    ]


def test_manual_compact_commits_snapshot_and_summary(
    claude: Claude, claude_script: ClaudeScript, sandbox: Sandbox
) -> None:
    claude_script.main = _calc_turns(sandbox.project, (40_000, 70_000, 80_000))
    session = claude.p("Write calc.py with add().")["session_id"]
    compacted = claude.p("/compact keep calc.py", "--continue")
    assert compacted["session_id"] == session

    # Claude Code asked the model for the summary, with the custom instructions
    asks = claude.server.of_kind("compact")
    assert asks, [r.kind for r in claude.server.requests]
    assert "Additional Instructions:\nkeep calc.py" in last_user_text(asks[0].body)

    # PreCompact: clm-policy's snapshot; PostCompact: Claude Code's own summary
    (snapshot,) = commits_of(sandbox, "compact")
    facts = trailers(snapshot)
    assert facts["Clm-Session"] == session
    assert facts["Clm-Agent"] == "claude-code"
    assert facts["Clm-Agent-Trigger"] == "manual"
    assert facts["Clm-Agent-Tokens"] == "80000"
    assert facts["Clm-Rule"] == "claude-code:manual"
    (summary,) = commits_of(sandbox, "summary")
    assert trailers(summary)["Clm-Agent-Trigger"] == "manual"
    files = sandbox.memory_files()
    summaries = [f for f in files if f.startswith(f"sessions/{session}/summaries/")]
    assert len(summaries) == 1, files
    assert "calc.py written and tested" in sandbox.memory_show(summaries[0])
    assert any(f.startswith(f"sessions/{session}/compactions/") for f in files), files

    # the transcript marks the compaction
    records = claude.records(session)
    (boundary,) = [r for r in records if r.get("subtype") == "compact_boundary"]
    assert boundary["compactMetadata"]["trigger"] == "manual"
    # preTokens counts the last response's output too: 80,000 context + 40 output
    assert boundary["compactMetadata"]["preTokens"] == 80_040
    summary_lines = [r for r in records if r.get("isCompactSummary")]
    assert len(summary_lines) == 1
    assert summary_lines[0]["type"] == "user"

    # the hooks' input
    (pre,) = sandbox.hook_inputs("PreCompact")
    assert pre["trigger"] == "manual"
    assert pre["custom_instructions"] == "keep calc.py"
    (post,) = sandbox.hook_inputs("PostCompact")
    assert post["trigger"] == "manual"
    assert "calc.py written and tested" in post["compact_summary"]
    compact_start = [i for i in sandbox.hook_inputs("SessionStart") if i["source"] == "compact"]
    assert len(compact_start) == 1
    assert compact_start[0]["model"] == CLAUDE_200K_MODEL

    # the session goes on: its next request carries what clm-policy kept (SessionStart compact)
    claude.p("What next?", "--continue")
    after = main_requests(claude, session)[-1]
    assert "What next?" in last_user_text(after.body)
    sent = text_of_request(after)
    assert KEPT in sent
    assert "Goal: Write calc.py with add()." in sent
    save_session(claude, session, "compact-manual")


def test_automatic_compaction_commits_a_snapshot(
    claude: Claude, claude_script: ClaudeScript, sandbox: Sandbox
) -> None:
    # Claude Code compacts on its own near its auto-compact window less a buffer; that
    # window is clm-policy's too, and the claude-code policy hands off before it (75%): a
    # team that lets Claude Code compact sets its limits above it
    claude.env_extra["CLAUDE_CODE_AUTO_COMPACT_WINDOW"] = "100000"
    (sandbox.project / "team.yaml").write_text(
        "version: 1\nname: team\nextends: claude-code\n"
        "profiles:\n  coding: {soft_compact: 90%, hard_handoff: 97%}\n"
    )
    (sandbox.project / ".clm-policy.yaml").write_text(
        "version: 1\npolicy: team.yaml\nprofile: coding\n"
    )
    steps = [(30_000, 1), (60_000, 2), (95_000, 3)]
    claude_script.main = [
        Turn(
            f"Step {n}.",
            [Tool("Bash", {"command": f"echo {n} > step{n}.txt", "description": "Step"})],
            Usage.context(t),
        )
        for t, n in steps
    ]
    claude_script.main.append(Turn("All three steps are done.", [], Usage.context(25_000)))
    result = claude.p("Run the three steps.")
    session = result["session_id"]
    assert result["result"] == "All three steps are done."
    assert all((sandbox.project / f"step{n}.txt").exists() for _, n in steps)

    assert len(claude.server.of_kind("compact")) == 1
    (pre,) = sandbox.hook_inputs("PreCompact")
    assert pre["trigger"] == "auto"
    assert pre["custom_instructions"] is None
    (snapshot,) = commits_of(sandbox, "compact")
    assert trailers(snapshot)["Clm-Agent-Trigger"] == "auto"
    assert trailers(snapshot)["Clm-Agent-Tokens"] == "95000"
    assert commits_of(sandbox, "summary")
    (boundary,) = [r for r in claude.records(session) if r.get("subtype") == "compact_boundary"]
    assert boundary["compactMetadata"]["trigger"] == "auto"
    # the last response's context and output (95,040), and an estimate of what came after
    # it (the tool result)
    assert 95_040 <= boundary["compactMetadata"]["preTokens"] < 96_000
    save_session(claude, session, "compact-auto")


def test_automatic_compaction_at_the_hard_limit_hands_off_exactly_once(
    claude: Claude, claude_script: ClaudeScript, sandbox: Sandbox
) -> None:
    # 200,000-token auto-compact window: Claude Code compacts near 167K; the policy hands
    # off from 150,000 — so at 170,000 clm-policy commits a handoff and blocks the compaction.
    # Claude Code tries again before its next request (172,000): the session has handed off,
    # so that compaction goes ahead (it committed two handoffs before)
    claude.env_extra["CLAUDE_CODE_AUTO_COMPACT_WINDOW"] = "200000"
    claude_script.main = [
        Turn(
            f"Step {n}.",
            [Tool("Bash", {"command": f"echo {n} > step{n}.txt", "description": "Step"})],
            Usage.context(tokens),
        )
        for n, tokens in ((1, 100_000), (2, 170_000), (3, 172_000))
    ]
    claude_script.main.append(Turn("The steps are done.", [], Usage.context(20_000)))
    result = claude.p("Run the three steps.")
    session = result["session_id"]
    assert result["result"] == "The steps are done."

    pres = sandbox.hook_inputs("PreCompact")
    assert [p["trigger"] for p in pres] == ["auto", "auto"]
    (handoff,) = commits_of(sandbox, "handoff")
    facts = trailers(handoff)
    assert facts["Clm-Session"] == session
    assert facts["Clm-Rule"] == "hard_handoff"
    assert facts["Clm-Agent-Trigger"] == "auto"
    assert facts["Clm-Agent-Tokens"] == "170000"
    manifest = json.loads(sandbox.memory_show(facts["Clm-Manifest"]))
    assert manifest["goal"] == "Run the three steps."
    assert manifest["token_snapshot"]["context_tokens"] == 170_000
    assert manifest["token_snapshot"]["model"] == CLAUDE_200K_MODEL
    assert "echo 2 > step2.txt: passed" in manifest["commands_and_results"]
    # the second automatic compaction went ahead, with its snapshot and Claude Code's summary
    assert len(claude.server.of_kind("compact")) == 1
    (snapshot,) = commits_of(sandbox, "compact")
    assert trailers(snapshot)["Clm-Agent-Tokens"] == "172000"
    (summary,) = commits_of(sandbox, "summary")
    # 2.1.328 writes compact_boundary (postTokens) only after the PostCompact hooks: the
    # figure after the compaction is unknown then, and said so (it recorded a 0 before)
    assert "Clm-Context-Tokens" not in trailers(summary)
    assert (
        "\nContext after the compaction: unknown until the agent's next response.\n"
        in (summary["body"])
    )
    # the blocked compaction showed nothing: the turn's Stop told the person, once
    told = attachments(claude.records(session), "hook_system_message")
    assert [t["content"] for t in told] == [
        f"clm-policy: this session has handed off: the handoff is committed "
        f"({facts['Clm-Manifest']}). Run /clear: the next session starts from it."
    ]
    # the next prompt asks for no other handoff
    claude_script.main = [Turn("Anything else?", [], Usage.context(171_000))]
    claude.p("One more thing.", "--continue")
    sent = text_of_request(main_requests(claude, session)[-1])
    assert "UserPromptSubmit hook additional context" not in sent
    assert len(commits_of(sandbox, "handoff")) == 1
    no_empty_commits(sandbox)
    no_hook_problems(sandbox)


# -- the handoff at Stop, and the sessions it seeds


def _handoff_turns(project: Any) -> list[Turn]:
    return [
        *_calc_turns(project, (140_000, 155_000, 160_000)),
        Turn(
            "Handoff\nGoal: calc.py with add().\nDone and verified: add(2, 3) == 5.\n"
            "Not verified: none.\nBlockers: none.\nNext safe action: add subtract().",
            [],
            Usage.context(161_000),
        ),
    ]


def _hand_off(claude: Claude, sandbox: Sandbox) -> str:
    """The calc session up to 160,000 tokens, whose Stop tells the person one line, then the
    next prompt, which carries the request to the model unseen: the handoff reply, committed
    at that turn's Stop. The session's id."""
    first = claude.p("Write calc.py with add().")
    old = str(first["session_id"])
    assert not commits_of(sandbox, "handoff")
    second = claude.p("Go on.", "--continue")
    assert second["session_id"] == old
    assert str(second["result"]).startswith("Handoff\nGoal: calc.py with add().")
    return old


def _assert_stop_handoff(claude: Claude, sandbox: Sandbox, session: str) -> dict[str, Any]:
    stops = sandbox.hook_inputs("Stop")
    assert [s["stop_hook_active"] for s in stops] == [False, False]
    records = claude.records(session)
    # the first Stop: one short line for the person, nothing for the model (Claude Code shows
    # every Stop answer that reaches the model)
    told = [a for a in attachments(records, "hook_system_message") if a["hookEvent"] == "Stop"]
    assert told[0]["content"] == STOP_LINE
    assert not [
        a for a in attachments(records, "hook_additional_context") if a["hookEvent"] == "Stop"
    ]
    assert not attachments(records, "hook_blocking_error")
    assert all(not r.get("hookErrors") for r in records if r.get("subtype") == "stop_hook_summary")
    # the next prompt: the request, unseen (UserPromptSubmit's additionalContext)
    asked = main_requests(claude, session)[3]
    assert ASK_FOR_HANDOFF in text_of_request(asked)
    (handoff,) = commits_of(sandbox, "handoff")
    facts = trailers(handoff)
    assert facts["Clm-Session"] == session
    assert facts["Clm-Rule"] == "hard_handoff"
    assert int(facts["Clm-Context-Tokens"]) >= 150_000
    manifest: dict[str, Any] = json.loads(sandbox.memory_show(facts["Clm-Manifest"]))
    # the goal as the agent's handoff reply states it; the person's request stays listed
    assert manifest["goal"] == "calc.py with add()."
    # the person's requests: the first, and the prompt that carried the request unseen
    assert manifest["requests"] == ["Write calc.py with add().", "Go on."]
    assert manifest["token_snapshot"]["model"] == CLAUDE_200K_MODEL
    assert manifest["changed_artifacts"] == ["calc.py"]  # project-relative, not /tmp/...
    assert any(f.startswith(f"sessions/{session}/handoffs/") for f in sandbox.memory_files())
    return manifest


def test_stop_hands_off_and_a_fresh_session_starts_from_it(
    claude: Claude, claude_script: ClaudeScript, sandbox: Sandbox
) -> None:
    claude_script.main = _handoff_turns(sandbox.project)
    old = _hand_off(claude, sandbox)
    _assert_stop_handoff(claude, sandbox, old)

    fresh = claude.p("Continue the calc work.")
    new = fresh["session_id"]
    assert new != old
    opening = main_requests(claude, new)[0]
    sent = text_of_request(opening)
    assert SEED in sent
    assert f"{PART_1}\n\n> Handoff\n> Goal: calc.py with add().\n" in sent  # its words, whole
    assert "1.\n> Write calc.py with add()." in sent  # the earlier request, word for word
    (start,) = commits_of(sandbox, "start")
    facts = trailers(start)
    assert facts["Clm-Session"] == new
    assert facts["Clm-Parent-Session"] == old
    assert facts["Clm-Seed"].startswith("manifests/")
    assert old in facts["Clm-Seed"]
    save_session(claude, old, "stop-handoff")


def test_clear_starts_a_session_from_the_handoff(
    claude: Claude, claude_script: ClaudeScript, sandbox: Sandbox
) -> None:
    claude_script.main = _handoff_turns(sandbox.project)
    old = _hand_off(claude, sandbox)
    _assert_stop_handoff(claude, sandbox, old)

    cleared = claude.p("/clear", "--continue")
    assert cleared.get("local_command") == "clear"
    new = cleared["session_id"]
    assert new != old
    assert [i["reason"] for i in sandbox.hook_inputs("SessionEnd")][-1] == "other"
    assert any(
        i["reason"] == "clear" and i["session_id"] == old for i in sandbox.hook_inputs("SessionEnd")
    )
    assert any(
        i["source"] == "clear" and i["session_id"] == new
        for i in sandbox.hook_inputs("SessionStart")
    )

    claude.p("Carry on.", "--continue")
    opening = main_requests(claude, new)[0]
    sent = text_of_request(opening)
    assert "<command-name>/clear</command-name>" in sent
    assert SEED in sent
    assert f"{PART_1}\n\n> Handoff\n> Goal: calc.py with add().\n" in sent  # its words, whole
    assert "1.\n> Write calc.py with add()." in sent  # the earlier request, word for word
    (start,) = commits_of(sandbox, "start")
    assert trailers(start)["Clm-Session"] == new
    # its first prompt tells the person, once, which handoff the session starts from (and
    # nothing of a window its hooks cannot know yet: it has no response yet)
    told = attachments(claude.records(new), "hook_system_message")
    assert [t["content"] for t in told] == [
        f"clm-policy: this session starts from the handoff {trailers(start)['Clm-Seed']} "
        "(goal: calc.py with add().)."
    ]
    no_hook_problems(sandbox)
    save_session(claude, new, "after-clear")


def test_resume_by_id_reads_the_transcript(
    claude: Claude, claude_script: ClaudeScript, sandbox: Sandbox
) -> None:
    claude_script.main = _calc_turns(sandbox.project, (60_000, 100_000, 130_000))
    session = claude.p("Write calc.py with add().")["session_id"]
    other = claude.p("An unrelated question.")["session_id"]  # --continue would pick this one
    assert other != session

    resumed = claude.p("Go on.", "--resume", session)
    assert resumed["session_id"] == session
    (start,) = [i for i in sandbox.hook_inputs("SessionStart") if i["source"] == "resume"]
    assert start["session_id"] == session
    assert start["context_tokens"] >= 130_000
    request = main_requests(claude, session)[-1]
    assert "Go on." in last_user_text(request.body)
    assert len(request.body["messages"]) > 4  # the conversation so far goes with it
    assert f"UserPromptSubmit hook additional context: {ADVICE_72}" in text_of_request(request)


# -- a subagent


def test_a_background_subagent_edits_a_file(
    claude: Claude, claude_script: ClaudeScript, sandbox: Sandbox
) -> None:
    notes = sandbox.project / "notes.txt"
    notes.write_text("status: draft\n")
    claude_script.main = [
        Turn(
            "Delegating the notes.",
            [
                Tool(
                    "Agent",
                    {
                        "description": "Update notes",
                        "prompt": "In notes.txt replace 'draft' with 'final'.",
                        "subagent_type": "general-purpose",
                    },
                )
            ],
            Usage.context(40_000),
        ),
        Turn("The agent is updating notes.txt.", [], Usage.context(45_000)),
        Turn("notes.txt says final now.", [], Usage.context(46_000)),
    ]
    claude_script.subagent = [  # Edit refuses a file the agent has not read
        Turn("", [Tool("Read", {"file_path": str(notes)})], Usage.context(7_000)),
        Turn(
            "",
            [Tool("Edit", {"file_path": str(notes), "old_string": "draft", "new_string": "final"})],
            Usage.context(8_000),
        ),
        Turn("notes.txt now says final.", [], Usage.context(9_000)),
    ]
    result = claude.p("Have an agent update notes.txt.")
    session = result["session_id"]
    assert notes.read_text() == "status: final\n"
    assert result["subagent_stats"]["spawned"] == 1

    sub_requests = claude.server.of_kind("subagent")
    assert len(sub_requests) == 3
    agent_ids = {
        v
        for r in sub_requests
        for k, v in r.headers.items()
        if k.lower() == "x-claude-code-agent-id"
    }
    (agent_id,) = agent_ids
    assert "In notes.txt replace 'draft' with 'final'." in last_user_text(sub_requests[0].body)

    (started,) = sandbox.hook_inputs("SubagentStart")
    assert started["agent_id"] == agent_id
    assert started["agent_type"] == "general-purpose"
    (stopped,) = sandbox.hook_inputs("SubagentStop")
    assert stopped["agent_id"] == agent_id
    assert stopped["stop_hook_active"] is False
    (transcript,) = claude.subagent_transcripts(session)
    assert stopped["agent_transcript_path"] == str(transcript)
    assert transcript.name == f"agent-{agent_id}.jsonl"
    assert transcript.with_suffix(".meta.json").exists()
    lines = read_jsonl(transcript)
    assert lines
    assert all(line.get("isSidechain") is True for line in lines if "isSidechain" in line)
    edits = [
        block
        for line in lines
        if line.get("type") == "assistant"
        for block in line["message"]["content"]
        if block.get("type") == "tool_use" and block.get("name") == "Edit"
    ]
    assert len(edits) == 1
    edit_hooks = [i for i in sandbox.hook_inputs("PostToolUse") if i.get("tool_name") == "Edit"]
    assert [i.get("agent_id") for i in edit_hooks] == [agent_id]

    # clm-policy recorded the agent's work in the session's memory, under its id
    (recorded,) = commits_of(sandbox, "agent")
    facts = trailers(recorded)
    assert (facts["Clm-Session"], facts["Clm-Agent-Id"]) == (session, agent_id)
    assert facts["Clm-Agent-Type"] == "general-purpose"
    key = f"agents/{session}/{agent_id}"
    assert facts["Clm-Key"] == key
    record = json.loads(sandbox.memory_show(f"sessions/{session}/agents/{agent_id}.json"))
    assert record["changed_artifacts"] == ["notes.txt"]
    assert record["last_message"] == "notes.txt now says final."
    assert "Files it changed:\n- notes.txt\n" in sandbox.memory_show(f"topics/{key}.md")
    listed = sandbox.clm("log", "--agent", agent_id, "--format", "json")
    assert [e["event"] for e in json.loads(listed.stdout)] == ["agent"], listed.describe()
    no_hook_problems(sandbox)

    if capture.ENABLED:
        pairs = capture.normaliser(sandbox, claude.server.url)
        save_session(claude, session, "subagent-main")
        capture.save_file(AGENT, "transcripts/subagent/agent.jsonl", transcript, pairs)
        capture.save_file(
            AGENT,
            "transcripts/subagent/agent.meta.json",
            transcript.with_suffix(".meta.json"),
            pairs,
        )


# -- a model server that fails


@pytest.mark.parametrize("broken", ["garbage", "hang"])
def test_a_broken_model_server_is_the_agents_error_and_no_hooks(
    claude: Claude, claude_script: ClaudeScript, sandbox: Sandbox, broken: str
) -> None:
    """The model server answers garbage, or nothing: Claude Code reports its own error; the
    hooks that ran (SessionStart, UserPromptSubmit, ...) answered as usual, logged nothing
    and committed nothing."""
    claude_script.broken = broken
    env = claude.env(CLAUDE_CODE_MAX_RETRIES="0", API_TIMEOUT_MS="3000")
    ran = sandbox.run(claude.argv("-p", "Say hello."), env=env, timeout=180)
    result = json.loads(ran.stdout.strip().splitlines()[-1]) if ran.stdout.strip() else {}
    assert ran.returncode != 0 or result.get("is_error") is True, ran.describe()
    assert claude.server.of_kind("broken"), ran.describe()
    assert sandbox.hook_inputs("UserPromptSubmit"), ran.describe()
    no_hook_problems(sandbox)
    assert [trailers(c).get("Clm-Event") for c in sandbox.memory_log()] == ["init"]
