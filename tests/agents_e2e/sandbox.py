"""One test's world: a temporary home, agent configuration folders, XDG folders, clm-policy's
cache, a git project and the environment that points the agents at the scripted servers.

Nothing here reads or writes the real home: every variable an agent or clm-policy uses to
find a folder is set to one under ``root``, and the environment is built from scratch (not
inherited), so a developer's API keys or settings never reach the agents.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RECORD_HOOK = HERE / "record_hook.py"
# clm-policy of this checkout: the hooks run the script next to the test's Python.
CLM_POLICY = Path(sys.executable).with_name("clm-policy")

# Every hook event of Claude Code 2.1.x that a session of these tests can reach; the
# recorder (record_hook.py) writes each one's input, beside clm-policy's own hooks.
CLAUDE_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "Notification",
    "SessionEnd",
)
CODEX_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "Stop",
    "SubagentStart",
    "SubagentStop",
)
API_KEY = "sk-ant-e2e-test-0000000000000000000000"
OPENAI_ENV_KEY = "E2E_RESPONSES_API_KEY"


@dataclass
class Ran:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def describe(self) -> str:
        return (
            f"$ {shlex.join(self.argv)}\n-> exit {self.returncode} in {self.seconds:.1f}s\n"
            f"--- stdout\n{self.stdout[-4000:]}\n--- stderr\n{self.stderr[-4000:]}"
        )


@dataclass
class Sandbox:
    root: Path
    env_extra: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for folder in (
            self.home,
            self.claude_dir,
            self.codex_home,
            self.xdg("config"),
            self.xdg("data"),
            self.xdg("state"),
            self.xdg("cache"),
            self.cache_dir,
            self.tmp,
            self.project,
        ):
            folder.mkdir(parents=True, exist_ok=True)
        # the user's global git identity (clm-policy commits to the memory repository with it)
        (self.home / ".gitconfig").write_text(
            "[user]\n\tname = E2E User\n\temail = e2e-user@clm.invalid\n"
            "[init]\n\tdefaultBranch = main\n",
            encoding="utf-8",
        )
        self.git("init", "-q", cwd=self.project)
        self.git("config", "user.name", "E2E Project", cwd=self.project)
        self.git("config", "user.email", "e2e-project@clm.invalid", cwd=self.project)

    # -- folders
    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def claude_dir(self) -> Path:
        return self.home / ".claude"

    @property
    def codex_home(self) -> Path:
        return self.home / ".codex"

    def xdg(self, what: str) -> Path:
        return self.root / "xdg" / what

    @property
    def cache_dir(self) -> Path:
        return self.root / "clm-cache"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def project(self) -> Path:
        return self.root / "project"

    @property
    def hook_records(self) -> Path:
        return self.root / "hook-records.jsonl"

    @property
    def clm_hook_log(self) -> Path:
        return self.xdg("state") / "clm-policy" / "hook.log"

    # -- environment
    def env(self, **extra: str) -> dict[str, str]:
        path = os.pathsep.join([str(CLM_POLICY.parent), "/usr/local/bin", "/usr/bin", "/bin"])
        env = {
            "PATH": path,
            "HOME": str(self.home),
            "USER": "e2e",
            "LOGNAME": "e2e",
            "SHELL": "/bin/bash",
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "TERM": "dumb",
            "TMPDIR": str(self.tmp),
            "XDG_CONFIG_HOME": str(self.xdg("config")),
            "XDG_DATA_HOME": str(self.xdg("data")),
            "XDG_STATE_HOME": str(self.xdg("state")),
            "XDG_CACHE_HOME": str(self.xdg("cache")),
            "CLM_POLICY_CACHE_DIR": str(self.cache_dir),
            "CLAUDE_CONFIG_DIR": str(self.claude_dir),
            "CODEX_HOME": str(self.codex_home),
            "GIT_CONFIG_NOSYSTEM": "1",
            # no network but the scripted servers; nothing reported anywhere
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_BUG_COMMAND": "1",
            "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
            "CODEX_MANAGED_BY_NPM": "1",
            "NO_COLOR": "1",
            "E2E_HOOK_RECORDS": str(self.hook_records),
        }
        env.update(self.env_extra)
        env.update(extra)
        return env

    # -- running things
    def run(
        self,
        argv: list[str],
        *,
        cwd: Path | None = None,
        timeout: float = 180,
        stdin: str | None = None,
        env: Mapping[str, str] | None = None,
        check: bool = False,
    ) -> Ran:
        started = time.monotonic()
        proc = subprocess.run(
            argv,
            cwd=cwd or self.project,
            env=dict(env) if env is not None else self.env(),
            input=stdin if stdin is not None else "",
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        ran = Ran(argv, proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)
        with (self.root / "runs.log").open("a", encoding="utf-8") as log:  # for a post-mortem
            log.write(ran.describe().replace(ran.stdout[-4000:], ran.stdout) + "\n\n")
        if check and ran.returncode != 0:
            raise AssertionError(ran.describe())
        return ran

    def git(self, *args: str, cwd: Path | None = None) -> str:
        proc = subprocess.run(
            ["git", *args],
            cwd=cwd or self.project,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return proc.stdout

    def clm(self, *args: str, cwd: Path | None = None, stdin: str | None = None) -> Ran:
        return self.run([str(CLM_POLICY), *args], cwd=cwd, stdin=stdin, timeout=120)

    # -- clm-policy's memory repository (the project's default, under XDG_DATA_HOME)
    def memory(self) -> Path:
        found = sorted((self.xdg("data") / "clm-policy" / "projects").glob("*/memory"))
        assert len(found) == 1, f"expected one project memory repository, found {found}"
        return found[0]

    def memory_log(self) -> list[dict[str, str]]:
        """The memory repository's commits, oldest first: subject, body and trailers."""
        sep, end = "\x1f", "\x1e"
        out = self.git(
            "log",
            "--reverse",
            f"--format=%H{sep}%s{sep}%b{sep}%(trailers:only,unfold){end}",
            cwd=self.memory(),
        )
        commits = []
        for record in out.split(end):
            if not record.strip():
                continue
            sha, subject, body, trailers = record.strip("\n").split(sep)
            commits.append({"sha": sha, "subject": subject, "body": body, "trailers": trailers})
        return commits

    def memory_files(self) -> list[str]:
        return self.git("ls-files", cwd=self.memory()).split()

    def memory_show(self, path: str) -> str:
        return self.git("show", f"HEAD:{path}", cwd=self.memory())

    # -- the hook recorder
    def recorder_hooks(self, events: tuple[str, ...]) -> dict[str, Any]:
        """A settings/hooks.json ``hooks`` table running record_hook.py on ``events``."""
        command = f"{shlex.quote(sys.executable)} {shlex.quote(str(RECORD_HOOK))}"
        return {
            event: [{"hooks": [{"type": "command", "command": command, "timeout": 30}]}]
            for event in events
        }

    def hook_inputs(self, event: str | None = None) -> list[dict[str, Any]]:
        """What the recorder saw, in order (``event``: only those)."""
        if not self.hook_records.exists():
            return []
        records = [json.loads(line) for line in self.hook_records.read_text().splitlines()]
        inputs = [r["input"] for r in records if isinstance(r.get("input"), dict)]
        if event is None:
            return inputs
        return [i for i in inputs if i.get("hook_event_name") == event]


def wait_for(
    what: str, probe: Callable[[], Any], *, timeout: float = 120, every: float = 0.2
) -> Any:
    """Poll ``probe`` until it returns something truthy; fail saying ``what`` after
    ``timeout`` seconds (generous: the machine may be loaded)."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(every)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The complete JSON lines of ``path`` (a truncated last line is left out)."""
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            records.append(value)
    return records
