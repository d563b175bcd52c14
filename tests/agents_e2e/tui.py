"""The interactive Claude Code under tmux: the status line only runs in the TUI.

A private tmux server (its own socket in the sandbox) runs ``claude`` through a small script
that sets the sandbox's environment from scratch; ``send-keys`` types, ``capture-pane`` reads
the screen. Claude Code's first-run questions are answered in ``$CLAUDE_CONFIG_DIR/.claude.json``
beforehand: onboarding done, the project trusted, the API key approved.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .drivers import Claude
from .sandbox import API_KEY


def tmux_available() -> bool:
    return shutil.which("tmux") is not None


@dataclass
class Screen:
    socket: Path
    name: str = "e2e"

    def tmux(self, *args: str) -> str:
        proc = subprocess.run(
            ["tmux", "-S", str(self.socket), *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        return proc.stdout

    def text(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.name)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", self.name, "-l", text)
        # the prompt box takes the text before Enter is pressed
        self.wait_for(lambda screen: text[:40] in screen, f"{text!r} typed", timeout=30)
        self.tmux("send-keys", "-t", self.name, "Enter")

    def wait_for(self, check: str | Callable[[str], bool], what: str, timeout: float = 90) -> str:
        """Poll the screen until ``check(screen)`` holds (a string: is in it)."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.text()
            ok = check in screen if isinstance(check, str) else check(screen)
            if ok:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"timed out after {timeout:.0f}s waiting for {what}; screen:\n{screen}"
                )
            time.sleep(0.25)

    def status_line(self, screen: str | None = None) -> str:
        """The line below the prompt box's lower rule: the status line."""
        lines = (screen if screen is not None else self.text()).splitlines()
        rules = [i for i, line in enumerate(lines) if line.startswith("────")]
        if len(rules) < 2:
            return ""
        for line in lines[rules[-1] + 1 :]:
            if line.strip():
                return line.strip()
        return ""


def prepare(claude: Claude, statusline_inputs: Path, *args: str) -> Path:
    """The first-run answers, the status line's input recorded (``tee`` in front of
    clm-policy's own command), and the script tmux runs. Returns the script."""
    sb = claude.sandbox
    config = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "numStartups": 5,
        "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
        "projects": {
            str(sb.project): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}
        },
    }
    (sb.claude_dir / ".claude.json").write_text(json.dumps(config, indent=2))
    settings_file = sb.project / ".claude" / "settings.json"
    if settings_file.exists():  # (the plugin's sessions have no settings of the project)
        settings = json.loads(settings_file.read_text())
        command = settings["statusLine"]["command"]
        tee = f"tee -a {shlex.quote(str(statusline_inputs))}"
        settings["statusLine"]["command"] = f"{tee} | {command}"
        settings_file.write_text(json.dumps(settings, indent=2) + "\n")
    env = claude.env(TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    script = sb.root / "run-claude.sh"
    assignments = " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items())
    model = f" --model {shlex.quote(claude.model)}" if claude.model else ""
    script.write_text(
        "#!/bin/sh\n"
        f"cd {shlex.quote(str(sb.project))} || exit 1\n"
        f"exec env -i {assignments} {shlex.quote(str(claude.exe))}{model}"
        + "".join(f" {shlex.quote(arg)}" for arg in args)
        + "\n"
    )
    script.chmod(0o755)
    return script


@contextmanager
def running(script: Path, socket: Path) -> Iterator[Screen]:
    screen = Screen(socket)
    subprocess.run(
        [
            "tmux",
            "-S",
            str(socket),
            "new-session",
            "-d",
            "-x",
            "200",
            "-y",
            "50",
            "-s",
            screen.name,
            str(script),
        ],
        check=True,
        timeout=30,
    )
    try:
        yield screen
    finally:
        subprocess.run(["tmux", "-S", str(socket), "kill-server"], check=False, timeout=30)
