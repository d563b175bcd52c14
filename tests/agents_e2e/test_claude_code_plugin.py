"""clm-policy's Claude Code plugin (integrations/claude-code) with the real, pinned Claude Code:
validated and tested by the binary itself, installed offline from the repository's
marketplace by ``clm-policy hook claude-code --install --plugin``, and in the interactive
terminal (tmux) against the scripted API: the context climbs past the compact threshold and
the session compacts by itself with the policy's focus; past the handoff point the model is
asked for its handoff, the conversation is replaced by the seed, and the next turn starts from
it; the memory repository holds the commits; nothing is shown twice. ``claude -p`` falls back
to the command hooks, and without clm-policy on PATH the session goes on and the footer says
why clm-policy is idle."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from clm_policy.agents.hooks.claude_code import ENGINE_PROMPT
from clm_policy.lifecycle.request import compact_focus
from clm_policy.lifecycle.seed import PART_1

from .agents import REPO
from .anthropic import ClaudeScript, Turn, Usage
from .conftest import skip_module_unless
from .drivers import RECORDED_CLAUDE_EVENTS, Claude
from .sandbox import Sandbox, wait_for
from .test_claude_code import commits_of, main_requests, text_of_request, trailers
from .tui import prepare, running, tmux_available

pytestmark = pytest.mark.agents_e2e
skip_module_unless("claude-code")

PLUGIN = REPO / "integrations" / "claude-code"
MARKET = REPO / "integrations"
SEED = "# Handoff: you continue the task of an earlier session"
HANDOFF = (
    "## Goal\ncalc.py with add()\n## Done and verified\nadd() written\n## Not verified\n"
    "test_calc.py\n## Blockers\nnone\n## Next safe action\nwrite test_calc.py"
)


def claude_cli(claude: Claude, *args: str, env: dict[str, str] | None = None) -> str:
    """``claude ARGS`` in the sandbox (no model call); its output, exit 0 checked."""
    ran = claude.sandbox.run(
        [str(claude.exe), *args], env=env or claude.env(), timeout=300, check=True
    )
    return ran.stdout + ran.stderr


def with_plugin(claude: Claude) -> None:
    """The project as ``clm-policy init --claude-code`` leaves it, the hook recorder in the
    user settings, and the plugin installed as the docs say: ``clm-policy hook claude-code
    --install --plugin --user``, with the ``claude`` on PATH it runs."""
    sb = claude.sandbox
    settings = {"hooks": sb.recorder_hooks(RECORDED_CLAUDE_EVENTS)}
    (sb.claude_dir / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")
    assert sb.clm("init", "--claude-code").returncode == 0
    bin_dir = sb.root / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "claude").symlink_to(claude.exe)
    env = claude.env(PATH=f"{bin_dir}{os.pathsep}{sb.env()['PATH']}")
    clm = str(Path(sb.env()["PATH"].split(os.pathsep)[0]) / "clm-policy")
    install = [clm, "hook", "claude-code", "--install", "--plugin", "--user"]
    ran = sb.run(install, env=env, timeout=300)
    assert ran.returncode == 0, ran.describe()
    assert f"$ claude plugin marketplace add {MARKET} --scope user" in ran.stdout
    assert "Successfully installed plugin: clm-policy@clm-policy (scope: user)" in ran.stdout
    listed = claude_cli(claude, "plugin", "list")
    assert "clm-policy@clm-policy" in listed
    assert f"Read from: {PLUGIN}" in listed  # a folder marketplace: read in place


def test_uninstall_plugin_takes_it_out_with_the_binary(claude: Claude) -> None:
    """``--uninstall --plugin --user``, as the install's last line says: the plugin and its
    marketplace are gone from what the real ``claude`` lists."""
    with_plugin(claude)
    sb = claude.sandbox
    bin_dir = sb.root / "bin"
    env = claude.env(PATH=f"{bin_dir}{os.pathsep}{sb.env()['PATH']}")
    clm = str(Path(sb.env()["PATH"].split(os.pathsep)[0]) / "clm-policy")
    ran = sb.run([clm, "hook", "claude-code", "--uninstall", "--plugin", "--user"], env=env)
    assert ran.returncode == 0, ran.describe()
    assert "Successfully uninstalled plugin: clm-policy" in ran.stdout
    assert "clm-policy@clm-policy" not in claude_cli(claude, "plugin", "list")
    assert "clm-policy" not in claude_cli(claude, "plugin", "marketplace", "list")


def test_the_binary_validates_the_plugin_and_runs_its_own_tests(
    claude_agent: object, sandbox: Sandbox
) -> None:
    exe = str(claude_agent.executable)
    env = sandbox.env()
    for path in (PLUGIN, MARKET):
        ran = sandbox.run([exe, "plugin", "validate", str(path)], env=env)
        assert ran.returncode == 0, ran.describe()
        assert "Validation passed" in ran.stdout
        assert "error" not in ran.stdout.lower()
    ran = sandbox.run([exe, "plugin", "test", str(PLUGIN)], env=env, timeout=300)
    assert ran.returncode == 0, ran.describe()
    out = ran.stdout + ran.stderr
    assert " 0 fail" in out, out
    assert "(fail)" not in out, out
    assert " 10 pass" in out, out


def test_claude_p_falls_back_to_the_command_hooks(
    claude: Claude, claude_script: ClaudeScript, sandbox: Sandbox
) -> None:
    """``claude -p`` refuses the engine's compaction: there the plugin's command hooks advise
    as the settings-file hooks do, and no compaction happens by itself."""
    for path in (sandbox.project / ".claude" / "settings.json",):
        path.unlink()  # (the fixture's settings-file install: the plugin's hooks alone)
    with_plugin(claude)
    claude_script.main = [
        Turn("Working.", [], Usage.context(130_000)),
        Turn("Still working.", [], Usage.context(131_000)),
    ]
    first = claude.p("Write calc.py.")
    claude.p("Go on.", "--continue")
    (_, second) = main_requests(claude, str(first["session_id"]))
    assert (
        "UserPromptSubmit hook additional context: [clm-policy] The context window is 72% "
        "(130,000 of 180,000) full"
    ) in text_of_request(second)
    assert claude.server.of_kind("compact") == []
    assert not sandbox.clm_hook_log.exists()


@pytest.mark.skipif(not tmux_available(), reason="agents e2e: tmux is not installed")
def test_the_session_compacts_and_hands_off_by_itself(
    claude: Claude, claude_script: ClaudeScript, sandbox: Sandbox
) -> None:
    (sandbox.project / ".claude" / "settings.json").unlink()  # the plugin's hooks alone
    with_plugin(claude)
    claude_script.main = [
        Turn("Hello.", [], Usage.context(82_000)),
        Turn("Working on calc.py.", [], Usage.context(130_000)),  # past 60%: compacts
        Turn("Done with add().", [], Usage.context(160_000)),  # past 75%: hands off
        Turn(HANDOFF, [], Usage.context(161_000)),  # the reply to the engine's prompt
        Turn("Starting from the handoff.", [], Usage.context(14_000)),
    ]
    debug = sandbox.root / "claude-debug.log"  # Claude Code's own account of each call
    script = prepare(claude, sandbox.root / "statusline-inputs.jsonl", "--debug-file", str(debug))
    with running(script, sandbox.root / "tmux.sock") as screen:
        screen.wait_for("Claude Code v2.1", "the terminal")
        screen.type("Start calc.py.")
        shown = screen.wait_for("ctx 46% 82k/180k", "the footer's status")
        assert "clm-policy: ctx 46% 82k/180k · compact at 67% · continue" in shown

        # the compaction, by itself, with the policy's focus
        screen.type("Go on.")
        wait_for("the compaction", lambda: claude.server.of_kind("compact"), timeout=120)
        shown = screen.wait_for("compacting: context 72%", "the toast")
        (compaction,) = claude.server.of_kind("compact")
        assert compact_focus("The next step is unknown.") in text_of_request(compaction)

        # the handoff: asked, written, committed, and the conversation replaced by the seed
        screen.type("Add add().")
        shown = screen.wait_for(
            "clm-policy: ctx n/a (just compacted) · continues from its handoff",
            "the footer after the handoff",
        )
        # never twice on screen (the seed that replaced the conversation may push it off)
        assert "".join(shown.split()).count("".join(ENGINE_PROMPT.split())) <= 1
        assert "Finish the step you are on" not in shown  # the request to the model: unseen
        assert "Stop hook says" not in shown
        assert "Stop says" not in shown  # the commit is the toast's, not said twice
        screen.type("Next step.")
        screen.wait_for("Starting from the handoff.", "the turn after the handoff")

    session = str(claude.sandbox.hook_inputs("SessionStart")[0]["session_id"])
    requests = main_requests(claude, session)
    asked = requests[3]  # the engine's prompt, with the request unseen beside it
    assert ENGINE_PROMPT in text_of_request(asked)
    submitted = [
        r
        for r in claude.records(session)
        if r.get("type") == "user" and ENGINE_PROMPT in json.dumps(r.get("message"))
    ]
    assert len(submitted) == 1  # the engine asked once
    assert "and the policy says hand off" in text_of_request(asked)
    after = text_of_request(requests[-1])
    assert SEED in after
    assert PART_1 in after
    assert "> calc.py with add()\n" in after  # the agent's reply, word for word
    assert "Hello." not in after  # the conversation before it is gone
    assert "Next step." in after
    # the memory: the snapshot before the compaction, Claude Code's summary, the handoff, and
    # the session's start from it, in place (the same session, no /clear)
    (snapshot,) = commits_of(sandbox, "compact")
    assert trailers(snapshot)["Clm-Agent-Trigger"] == "manual"
    (handoff,) = commits_of(sandbox, "handoff")
    assert trailers(handoff)["Clm-Session"] == session
    manifest_data = json.loads(sandbox.memory_show(trailers(handoff)["Clm-Manifest"]))
    # the person's requests: the engine's prompt is none of them
    assert manifest_data["requests"] == ["Start calc.py.", "Go on.", "Add add()."]
    assert manifest_data["next_safe_action"] == "write test_calc.py"
    (start,) = commits_of(sandbox, "start")
    assert trailers(start)["Clm-Session"] == session
    assert trailers(start)["Clm-Seed"] == trailers(handoff)["Clm-Manifest"]
    assert not sandbox.clm_hook_log.exists(), sandbox.clm_hook_log.read_text()
    # one toast each time it acted, never the model's text (the seed is the conversation's)
    toasts = [
        line.split("$.ui.toast (clm-policy): ", 1)[1]
        for line in debug.read_text().splitlines()
        if "$.ui.toast (clm-policy): " in line
    ]
    manifest = trailers(handoff)["Clm-Manifest"]
    assert toasts == [
        "compacting: context 72% (130,000 of 180,000)",
        "context 89% (160,000 of 180,000): the policy hands off; Claude writes its handoff",
        f"handed off ({manifest}): the conversation continues from it",
    ]
    # an installed plugin's folder is read in place, and never written in
    assert not (PLUGIN / ".claude-plugin" / "types").exists()


@pytest.mark.skipif(not tmux_available(), reason="agents e2e: tmux is not installed")
def test_without_clm_policy_on_path_the_session_goes_on_and_the_footer_says_why(
    claude: Claude, claude_script: ClaudeScript, sandbox: Sandbox
) -> None:
    (sandbox.project / ".claude" / "settings.json").unlink()
    with_plugin(claude)
    claude_script.main = [Turn("Hello without clm-policy.", [], Usage.context(130_000))]
    claude.env_extra["PATH"] = "/usr/local/bin:/usr/bin:/bin"  # no clm-policy
    script = prepare(claude, sandbox.root / "statusline-inputs.jsonl")
    with running(script, sandbox.root / "tmux.sock") as screen:
        screen.wait_for("Claude Code v2.1", "the terminal")
        screen.type("Say hello.")
        screen.wait_for("Hello without clm-policy.", "the reply")
        screen.wait_for("idle: clm-policy is not on PATH", "the footer")
    assert claude.server.of_kind("compact") == []
    lines = sandbox.clm_hook_log.read_text().splitlines()
    said = {line.split(" ", 1)[1] for line in lines}
    assert said == {
        "claude-code engine: clm-policy is not on PATH",
        "claude-code: clm-policy is not on PATH: pip install clm-policy (the plugin runs it)",
    }
