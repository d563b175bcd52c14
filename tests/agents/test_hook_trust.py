"""A cloned project's .clm-policy.yaml is data: with the hooks installed for every project, a
stranger's repository that names another project's memory and its own remote gets neither
until the person trusts the file (`clm-policy trust`), and again not once the file changes
(issue 16). The hooks run as Claude Code runs them: a process, the JSON on standard input."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from test_claude_hooks import NEXT_SESSION, SESSION, hook, memory_of, transcript

from clm_policy.agents.hooks.claude_code import STOP_LINE

from conftest import git, invoke

CONFIG = "version: 1\npolicy: claude-code\nprofile: coding\n"
THIRD_SESSION = "5c5c5c5c-1111-4222-8333-444455556666"


class Setup:
    def __init__(self, tmp_path: Path) -> None:
        # another project of this person, with a handoff no session has taken yet
        self.victim = tmp_path / "victim"
        self.victim.mkdir()
        (self.victim / ".clm-policy.yaml").write_text(CONFIG)
        full = transcript(self.victim / "t.jsonl", 166_000)
        event = {"hook_event_name": "PreCompact", "trigger": "auto", "transcript_path": str(full)}
        assert hook(self.victim, event).returncode == 2  # the handoff is committed
        self.victim_memory = memory_of(self.victim)
        self.victim_log = self.log(self.victim_memory)
        # the stranger's repository, cloned: their remote, and the victim's memory
        self.bare = tmp_path / "theirs.git"
        git(tmp_path, "init", "-q", "--bare", str(self.bare))
        self.stranger = tmp_path / "stranger"
        self.stranger.mkdir()
        self.config = self.stranger / ".clm-policy.yaml"
        self.config.write_text(
            f"{CONFIG}memory: {self.victim_memory}\nremote: {self.bare}  # handoffs go here\n"
        )

    @staticmethod
    def log(memory: Path) -> str:
        return git(memory, "log", "--all", "--format=%H %s")

    def start(self, session: str) -> dict[str, object]:
        fresh = transcript(self.stranger / f"{session}.jsonl", 5_000, session=session, steps=0)
        event = {
            "hook_event_name": "SessionStart",
            "source": "startup",
            "transcript_path": str(fresh),
            "session_id": session,
        }
        done = hook(self.stranger, event)
        assert (done.returncode, done.stderr) == (0, "")
        reply: dict[str, object] = json.loads(done.stdout) if done.stdout else {}
        return reply

    def hand_off(self, session: str) -> dict[str, object]:
        """A Stop past the policy's handoff point, then the stop after it: the handoff."""
        path = transcript(self.stranger / f"{session}-full.jsonl", 155_000, session=session)
        stop = {
            "hook_event_name": "Stop",
            "stop_hook_active": False,
            "transcript_path": str(path),
            "session_id": session,
        }
        blocked = hook(self.stranger, stop)
        assert json.loads(blocked.stdout) == {"systemMessage": STOP_LINE}  # nothing more
        done = hook(self.stranger, {**stop, "stop_hook_active": True})
        assert (done.returncode, done.stderr) == (0, "")
        reply: dict[str, object] = json.loads(done.stdout)
        return reply

    def pushed(self) -> str:
        return git(self.bare, "for-each-ref")


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Setup:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    for name in ("CLM_POLICY_MEMORY", "CLM_POLICY_REMOTE", "CLM_POLICY_POLICY"):
        monkeypatch.delenv(name, raising=False)
    return Setup(tmp_path)


def notice(config: Path, why: str = "you have not trusted this file") -> str:
    return (
        f"clm-policy: ignored memory and remote in {config}: {why} (the project's default "
        f"memory is used; nothing is pushed). To use them: clm-policy trust "
        f"{shlex.quote(str(config))}"
    )


def test_an_untrusted_config_chooses_neither_memory_nor_remote(setup: Setup) -> None:
    reply = setup.start(NEXT_SESSION)
    # the victim's handoff is neither injected nor taken; the person is told once
    assert reply == {"systemMessage": notice(setup.config)}
    assert setup.log(setup.victim_memory) == setup.victim_log
    handed = setup.hand_off(NEXT_SESSION)
    assert handed["systemMessage"].startswith("clm-policy: handoff committed")  # type: ignore[union-attr]
    assert "trust" not in str(handed)
    assert setup.pushed() == ""
    assert setup.log(setup.victim_memory) == setup.victim_log
    # the handoff went to the project's own default memory
    own = memory_of(setup.stranger)
    assert own != setup.victim_memory
    assert git(own, "log", "-1", "--format=%s").startswith(f"clm(handoff): {NEXT_SESSION}")
    # a later session is told again, and starts from the handoff in the project's own memory
    later = setup.start(THIRD_SESSION)
    assert later["systemMessage"] == notice(setup.config)
    context = later["hookSpecificOutput"]["additionalContext"]  # type: ignore[index]
    assert context.startswith("# Handoff: you continue the task of an earlier session")
    assert setup.log(setup.victim_memory) == setup.victim_log


def test_a_trusted_config_is_honoured_until_it_changes(setup: Setup) -> None:
    trusted = invoke("trust", str(setup.config))
    assert trusted.exit_code == 0, trusted.stderr
    reply = setup.start(NEXT_SESSION)
    assert "systemMessage" not in reply
    context = reply["hookSpecificOutput"]["additionalContext"]  # type: ignore[index]
    assert context.startswith("# Handoff: you continue the task of an earlier session")
    assert f"clm(start): {NEXT_SESSION} step 0, seeded" in setup.log(setup.victim_memory)
    setup.hand_off(NEXT_SESSION)
    assert "refs/heads/" in setup.pushed()
    # edited: untrusted again, and said again
    setup.config.write_text(setup.config.read_text() + "# one more line\n")
    before = setup.log(setup.victim_memory)
    changed = notice(setup.config, "it changed since you trusted it")
    assert setup.start(THIRD_SESSION) == {"systemMessage": changed}
    assert setup.log(setup.victim_memory) == before


def test_the_users_own_environment_needs_no_trust(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLM_POLICY_MEMORY", str(setup.victim_memory))
    reply = setup.start(NEXT_SESSION)
    # the environment chose the memory; the file's remote is still ignored, and said so
    context = reply["hookSpecificOutput"]["additionalContext"]  # type: ignore[index]
    assert context.startswith("# Handoff")
    assert reply["systemMessage"] == (
        f"clm-policy: ignored remote in {setup.config}: you have not trusted this file "
        f"(nothing is pushed). To use it: clm-policy trust {shlex.quote(str(setup.config))}"
    )


def test_a_prompt_says_it_once_and_loads_nothing_heavy(setup: Setup) -> None:
    """UserPromptSubmit runs on every prompt: with an untrusted file it tells the person once,
    then nothing, and imports none of the modules that cost start-up time."""
    path = transcript(setup.stranger / "t.jsonl", 40_000)
    event = {
        "session_id": SESSION,
        "cwd": str(setup.stranger),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "go on",
        "transcript_path": str(path),
    }
    probe = (
        "import sys\n"
        "sys.argv = ['clm-policy', 'hook', 'claude-code']\n"
        "from clm_policy.cli.entry import main\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\n"
        "heavy = ['click', 'pydantic', 'ruamel.yaml', 'simpleeval', 'dataclasses', 'typing',\n"
        "         'pathlib', 'hashlib', 'inspect', 'subprocess']\n"
        "sys.stderr.write(repr(([m for m in heavy if m in sys.modules], code)))\n"
    )
    said = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", probe],
            input=json.dumps(event),
            capture_output=True,
            text=True,
            cwd=setup.stranger,
            timeout=120,
            check=False,
        )
        assert done.stderr == "([], 0)"
        said.append(done.stdout)
    assert said == [json.dumps({"systemMessage": notice(setup.config)}) + "\n", ""]


def test_codex_hooks_say_it_too(setup: Setup) -> None:
    """The same door for `hook codex` (through click): the notice in the reply, stderr empty."""
    event = {
        "session_id": NEXT_SESSION,
        "cwd": str(setup.stranger),
        "hook_event_name": "SessionStart",
        "source": "startup",
        "transcript_path": None,
    }
    done = subprocess.run(
        [sys.executable, "-m", "clm_policy", "hook", "codex"],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        cwd=setup.stranger,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout) == {"systemMessage": notice(setup.config)}
    assert setup.log(setup.victim_memory) == setup.victim_log
