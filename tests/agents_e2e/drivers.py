"""Driving the real binaries in a :class:`~.sandbox.Sandbox`: project set-up the way the docs
say (clm-policy's own commands), the command lines, and reading back what they wrote.

Claude Code: ``clm-policy init --claude-code`` and ``clm-policy hook claude-code --install
--project`` in the project; the recorder (record_hook.py) in the *user* settings
(``$CLAUDE_CONFIG_DIR/settings.json``), so the project's settings are exactly what clm-policy
wrote. ``claude -p`` cannot bypass permissions as root: ``--allowedTools`` names the tools.

Codex CLI: ``clm-policy init --codex`` and ``clm-policy hook codex --print-settings``
as ``<project>/.codex/hooks.json`` (docs/codex.md), the recorder added to the same file;
``codex exec --trust --dangerously-bypass-hook-trust`` runs the project's hooks without a
person trusting them in ``/hooks``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .httpserve import RequestLog
from .responses import codex_config
from .sandbox import API_KEY, CLAUDE_EVENTS, CODEX_EVENTS, OPENAI_ENV_KEY, Ran, Sandbox, read_jsonl

# A model whose window Claude Code reports as 200,000 tokens (modelUsage.*.contextWindow):
# the window clm-policy's bundled claude-code policy assumes for every Claude model. The
# current aliases (opus, sonnet, haiku, the default) report 1,000,000.
CLAUDE_200K_MODEL = "claude-sonnet-4-6"
CLAUDE_TOOLS = "Write Edit Bash Agent"
RECORDED_CLAUDE_EVENTS = (*CLAUDE_EVENTS, "PostToolUseFailure")


@dataclass
class Claude:
    sandbox: Sandbox
    exe: Path
    server: RequestLog
    model: str | None = CLAUDE_200K_MODEL
    env_extra: dict[str, str] = field(default_factory=dict)
    runs: list[Ran] = field(default_factory=list)
    tools: str = CLAUDE_TOOLS  # --allowedTools

    def setup_project(self) -> None:
        sb = self.sandbox
        settings = {"hooks": sb.recorder_hooks(RECORDED_CLAUDE_EVENTS)}
        (sb.claude_dir / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")
        for args in (("init", "--claude-code"), ("hook", "claude-code", "--install", "--project")):
            ran = sb.clm(*args)
            assert ran.returncode == 0, ran.describe()

    def env(self, **extra: str) -> dict[str, str]:
        return self.sandbox.env(
            ANTHROPIC_BASE_URL=self.server.url,
            ANTHROPIC_API_KEY=API_KEY,
            **self.env_extra,
            **extra,
        )

    def argv(self, *args: str, output: str = "json") -> list[str]:
        argv = [str(self.exe), "--output-format", output, "--allowedTools", self.tools]
        if self.model:
            argv += ["--model", self.model]
        return [*argv, *args]

    def p(self, prompt: str, *args: str, timeout: float = 240, **env: str) -> dict[str, Any]:
        """``claude -p PROMPT ARGS --output-format json``: its result (a failure says all)."""
        ran = self.sandbox.run(self.argv("-p", prompt, *args), env=self.env(**env), timeout=timeout)
        self.runs.append(ran)
        assert ran.returncode == 0, ran.describe()
        try:
            result = json.loads(ran.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise AssertionError(f"no JSON result\n{ran.describe()}") from None
        assert isinstance(result, dict), ran.describe()
        assert not result.get("is_error"), ran.describe()
        return result

    # -- what it wrote
    def projects_dir(self) -> Path:
        return self.sandbox.claude_dir / "projects"

    def transcript(self, session_id: str) -> Path:
        found = list(self.projects_dir().glob(f"*/{session_id}.jsonl"))
        assert len(found) == 1, f"transcript of {session_id}: {found}"
        return found[0]

    def records(self, session_id: str) -> list[dict[str, Any]]:
        return read_jsonl(self.transcript(session_id))

    def subagent_transcripts(self, session_id: str) -> list[Path]:
        return sorted(self.transcript(session_id).with_suffix("").glob("subagents/agent-*.jsonl"))


def record_kinds(records: list[dict[str, Any]]) -> set[str]:
    """``type``, ``type:subtype`` for system lines, ``attachment:<type>`` for attachments."""
    kinds = set()
    for record in records:
        kind = str(record.get("type"))
        kinds.add(kind)
        if kind == "system" and record.get("subtype"):
            kinds.add(f"system:{record['subtype']}")
        if kind == "attachment" and isinstance(record.get("attachment"), dict):
            kinds.add(f"attachment:{record['attachment'].get('type')}")
    return kinds


@dataclass
class Codex:
    sandbox: Sandbox
    exe: Path
    server: RequestLog
    model: str = "gpt-5.5"  # in 0.171's model catalogue: apply_patch as a freeform tool
    config_extra: str = ""
    runs: list[Ran] = field(default_factory=list)

    def setup_project(self) -> None:
        sb = self.sandbox
        ran = sb.clm("init", "--codex")
        assert ran.returncode == 0, ran.describe()
        printed = sb.clm("hook", "codex", "--print-settings")
        assert printed.returncode == 0, printed.describe()
        hooks = json.loads(printed.stdout)
        for event, groups in sb.recorder_hooks(CODEX_EVENTS).items():
            hooks["hooks"].setdefault(event, []).extend(groups)
        (sb.project / ".codex").mkdir(exist_ok=True)
        (sb.project / ".codex" / "hooks.json").write_text(json.dumps(hooks, indent=2) + "\n")
        self.write_config()

    def write_config(self) -> None:
        config = codex_config(self.server.url, model=self.model, extra=self.config_extra)
        (self.sandbox.codex_home / "config.toml").write_text(config)

    def env(self, **extra: str) -> dict[str, str]:
        return self.sandbox.env(**{OPENAI_ENV_KEY: "sk-e2e-responses", **extra})

    def exec(self, *args: str, timeout: float = 240) -> Ran:
        """``codex exec --trust --dangerously-bypass-hook-trust ... ARGS``."""
        argv = [
            str(self.exe),
            "exec",
            "--trust",
            "--dangerously-bypass-hook-trust",
            "--dangerously-bypass-approvals-and-sandbox",
            "--color",
            "never",
            *args,
        ]
        ran = self.sandbox.run(argv, env=self.env(), timeout=timeout)
        self.runs.append(ran)
        assert ran.returncode == 0, ran.describe()
        return ran

    def rollouts(self) -> list[Path]:
        return sorted((self.sandbox.codex_home / "sessions").glob("*/*/*/rollout-*.jsonl"))

    def session_id(self, ran: Ran) -> str:
        found = re.search(r"session id: (\S+)", ran.stderr)
        assert found, ran.describe()
        return found.group(1)

    def rollout(self, session_id: str) -> Path:
        found = [path for path in self.rollouts() if path.name.endswith(f"-{session_id}.jsonl")]
        assert len(found) == 1, f"rollout of {session_id}: {self.rollouts()}"
        return found[0]
