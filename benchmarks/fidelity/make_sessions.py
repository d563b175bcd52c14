"""Writes the project's own fidelity sessions (benchmarks/fidelity/sessions/): small Claude Code
and Codex sessions in the shapes the real agents write (Claude Code 2.1.328 and Codex CLI
0.171.0, compared line by line with transcripts the real binaries wrote), each made to exercise
the rules a handoff depends on. Their truth is written by hand in ``truth/<name>.yaml``.

Run: ``.venv/bin/python benchmarks/fidelity/make_sessions.py`` (rewrites the files; the same
input gives the same bytes: ids and times are counted, not drawn). ``record.py`` records
sessions like these with the real binaries (``recorded/``); the benchmark reads both sets.
"""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "sessions"
HOME = "/home/dev"
NS = uuid.UUID("6f1c1c1e-3b7a-4d3e-9a55-0c1fbe6b1d00")


def _ids(seed: str) -> Iterator[str]:
    n = 0
    while True:
        n += 1
        yield str(uuid.uuid5(NS, f"{seed}/{n}"))


class Clock:
    def __init__(self, start: str) -> None:
        self.now = datetime.fromisoformat(start.replace("Z", "+00:00"))

    def tick(self, seconds: float = 2.0) -> str:
        self.now += timedelta(seconds=seconds)
        return self.now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + (
            f"{self.now.microsecond // 1000:03d}Z"
        )


# ---------------------------------------------------------------------------------------------
# Claude Code 2.1.328


class Claude:
    """One Claude Code session file (and its subagents' files)."""

    VERSION = "2.1.328"
    MODEL = "claude-opus-5-5"

    def __init__(
        self,
        name: str,
        cwd: str,
        start: str,
        *,
        agent: str | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.name = name
        self.cwd = cwd
        self.ids = _ids(f"{name}/{agent or 'main'}")
        self.session = str(uuid.uuid5(NS, name))
        self.clock = clock or Clock(start)
        self.lines: list[dict[str, Any]] = []
        self.parent: str | None = None
        self.agent = agent
        self.messages = 0
        self.tools = 0
        self.context = 18_000
        self.prompt_id = next(self.ids)
        self.subagents: list[Claude] = []
        self.meta: dict[str, dict[str, Any]] = {}
        self.last_prompt = ""

    # -- plumbing --------------------------------------------------------------------------------

    def _common(self) -> dict[str, Any]:
        common: dict[str, Any] = {
            "parentUuid": self.parent,
            "isSidechain": self.agent is not None,
        }
        if self.agent is not None:
            common["agentId"] = self.agent
        return common

    def _tail(self, line: dict[str, Any]) -> dict[str, Any]:
        line.update(
            {
                "uuid": next(self.ids),
                "timestamp": self.clock.tick(),
                "userType": "external",
                "entrypoint": "cli",
                "cwd": self.cwd,
                "sessionId": self.session,
                "version": self.VERSION,
                "gitBranch": "main",
            }
        )
        self.lines.append(line)
        self.parent = line["uuid"]
        return line

    def _plain(self, line: dict[str, Any]) -> None:
        """A line outside the conversation's chain (queue operations, last-prompt, …)."""
        self.lines.append(line)

    def _usage(self) -> dict[str, Any]:
        self.context += 2_600
        return {
            "input_tokens": 6,
            "cache_creation_input_tokens": 1_200,
            "cache_read_input_tokens": self.context,
            "output_tokens": 180,
            "service_tier": "standard",
        }

    def _assistant(self, blocks: list[dict[str, Any]], stop: str) -> None:
        self.messages += 1
        mid = f"msg_{self.name.replace('-', '')[:10]}{self.agent or ''}{self.messages:04d}"
        usage = self._usage()
        request = f"req_{mid[4:]}"
        for n, block in enumerate(blocks):
            line = self._common()
            line.update(
                {
                    "message": {
                        "id": mid,
                        "type": "message",
                        "role": "assistant",
                        "model": self.MODEL,
                        "content": [block],
                        "stop_reason": stop,
                        "stop_sequence": None,
                        "usage": usage,
                    },
                    "requestId": request,
                    "apiBlockIndex": n,
                    "type": "assistant",
                }
            )
            self._tail(line)
        if self.agent is None:
            self._plain(
                {
                    "type": "last-prompt",
                    "lastPrompt": self.last_prompt,
                    "leafUuid": self.parent,
                    "sessionId": self.session,
                }
            )

    def _result(
        self, tool_id: str, content: Any, *, error: bool = False, result: Any = None
    ) -> None:
        block: dict[str, Any] = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        if error:
            block["is_error"] = True
        line = self._common()
        line.update({"type": "user", "message": {"role": "user", "content": [block]}})
        if self.agent is None:
            line["promptId"] = self.prompt_id
        if result is not None:
            line["toolUseResult"] = result
        line["sourceToolAssistantUUID"] = self.parent
        self._tail(line)

    def _tool_id(self) -> str:
        self.tools += 1
        return f"toolu_{self.name.replace('-', '')[:8]}{self.agent or ''}{self.tools:04d}"

    # -- what happens ------------------------------------------------------------------------------

    def prompt(self, text: str, *, queued: bool = True) -> None:
        """A person's prompt: Claude Code writes the queue's enqueue and dequeue first."""
        self.prompt_id = next(self.ids)
        self.last_prompt = text
        if queued and self.agent is None:
            self._plain(self._queue("enqueue", text))
            self._plain(self._queue("dequeue"))
        line = self._common()
        line.update(
            {
                "promptId": self.prompt_id,
                "type": "user",
                "message": {"role": "user", "content": text},
                "permissionMode": "default",
            }
        )
        self._tail(line)

    def _queue(self, operation: str, content: str | None = None) -> dict[str, Any]:
        line: dict[str, Any] = {
            "type": "queue-operation",
            "operation": operation,
            "timestamp": self.clock.tick(0.5),
            "sessionId": self.session,
        }
        if content is not None:
            line["content"] = content
        return line

    def queued_only(self, text: str) -> None:
        """A prompt typed while the agent works and taken in mid-turn: it lives only in the
        queue's enqueue line (the remove that follows has no content)."""
        self._plain(self._queue("enqueue", text))

    def queue_removed(self) -> None:
        self._plain(self._queue("remove"))

    def command(self, name: str, args: str) -> None:
        """A slash command: the command line, then its expanded prompt (a meta line)."""
        self.prompt_id = next(self.ids)
        text = (
            f"<command-message>{name}</command-message>\n<command-name>/{name}</command-name>\n"
            f"<command-args>{args}</command-args>"
        )
        self.last_prompt = f"/{name} {args}"
        line = self._common()
        line.update(
            {
                "promptId": self.prompt_id,
                "type": "user",
                "message": {"role": "user", "content": text},
            }
        )
        self._tail(line)
        meta = self._common()
        meta.update(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "text",
                            "text": f"# /{name}\n\nRun the {name} workflow for: {args}",
                        }
                    ],
                },
                "isMeta": True,
            }
        )
        self._tail(meta)

    def say(self, text: str, *, stop: str = "end_turn") -> None:
        self._assistant([{"type": "text", "text": text}], stop)

    def stop_hook(self, reason: str | None = None) -> None:
        """The Stop hook ran: with a ``reason``, it blocked the stop (the feedback line)."""
        if reason is not None:
            line = self._common()
            line.update(
                {
                    "type": "user",
                    "message": {"role": "user", "content": f"Stop hook feedback:\n{reason}"},
                    "isMeta": True,
                }
            )
            self._tail(line)
        summary = self._common()
        summary.update(
            {
                "type": "system",
                "subtype": "stop_hook_summary",
                "hookCount": 1,
                "hookInfos": [{"command": "clm-policy hook claude-code", "durationMs": 240}],
                "hookErrors": [reason] if reason else [],
                "preventedContinuation": False,
                "stopReason": "",
                "hasOutput": reason is not None,
                "level": "suggestion",
            }
        )
        self._tail(summary)

    def tool(
        self,
        name: str,
        args: dict[str, Any],
        content: Any,
        *,
        error: bool = False,
        result: Any = None,
        text: str | None = None,
    ) -> str:
        tool_id = self._tool_id()
        blocks: list[dict[str, Any]] = []
        if text:
            blocks.append({"type": "text", "text": text})
        blocks.append({"type": "tool_use", "id": tool_id, "name": name, "input": args})
        self._assistant(blocks, "tool_use")
        self._result(tool_id, content, error=error, result=result)
        return tool_id

    def bash(self, command: str, output: str, code: int = 0, *, text: str | None = None) -> None:
        if code:
            content = f"Exit code {code}\n{output}".rstrip("\n")
            self.tool(
                "Bash",
                {"command": command, "description": "Run"},
                content,
                error=True,
                result=f"Error: {content}",
                text=text,
            )
        else:
            result = {
                "stdout": output,
                "stderr": "",
                "interrupted": False,
                "isImage": False,
                "noOutputExpected": False,
            }
            self.tool(
                "Bash",
                {"command": command, "description": "Run"},
                output or "(Bash completed with no output)",
                result=result,
                text=text,
            )

    def path(self, relative: str) -> str:
        return f"{self.cwd}/{relative}"

    def write(
        self, relative: str, content: str, *, new: bool = True, text: str | None = None
    ) -> None:
        path = self.path(relative)
        if new:
            said = f"File created successfully at: {path}"
            result = {
                "type": "create",
                "filePath": path,
                "content": content,
                "structuredPatch": [],
                "originalFile": None,
            }
        else:
            said = f"The file {path} has been updated successfully."
            result = {
                "type": "update",
                "filePath": path,
                "content": content,
                "structuredPatch": [],
                "originalFile": "(before)",
            }
        self.tool("Write", {"file_path": path, "content": content}, said, result=result, text=text)

    def edit(self, relative: str, old: str, new: str, *, text: str | None = None) -> None:
        path = self.path(relative)
        args = {"replace_all": False, "file_path": path, "old_string": old, "new_string": new}
        result = {
            "filePath": path,
            "oldString": old,
            "newString": new,
            "originalFile": "…",
            "structuredPatch": [],
            "userModified": False,
            "replaceAll": False,
        }
        self.tool(
            "Edit",
            args,
            f"The file {path} has been updated successfully.",
            result=result,
            text=text,
        )

    def todos(self, items: list[tuple[str, str]], *, text: str | None = None) -> None:
        todos = [
            {"content": c, "status": s, "activeForm": c[:1].upper() + c[1:] + "…"} for c, s in items
        ]
        said = (
            "Todos have been modified successfully. Ensure that you continue to use the todo list "
            "to track your progress. Please proceed with the current tasks if applicable"
        )
        self.tool(
            "TodoWrite",
            {"todos": todos},
            said,
            result={"oldTodos": [], "newTodos": todos},
            text=text,
        )

    def task_create(self, number: int, subject: str, description: str) -> None:
        said = f"Task #{number} created successfully: {subject}"
        self.tool(
            "TaskCreate",
            {"subject": subject, "description": description},
            said,
            result={"task": {"id": str(number), "subject": subject}},
        )

    def task_update(self, number: int, status: str, before: str) -> None:
        said = f"Updated task #{number} status"
        result = {
            "success": True,
            "taskId": str(number),
            "updatedFields": ["status"],
            "statusChange": {"from": before, "to": status},
        }
        self.tool("TaskUpdate", {"taskId": str(number), "status": status}, said, result=result)

    def subagent(self, description: str, prompt: str, kind: str, work: Any, report: str) -> Claude:
        """A foreground ``Agent`` call: the subagent's own transcript
        (``<session>/subagents/agent-<id>.jsonl`` and its ``.meta.json``), then its report."""
        agent_id = f"a{uuid.uuid5(NS, self.name + description).hex[:16]}"
        tool_id = self._tool_id()
        self._assistant(
            [
                {
                    "type": "tool_use",
                    "id": tool_id,
                    "name": "Agent",
                    "input": {
                        "description": description,
                        "prompt": prompt,
                        "subagent_type": kind,
                        "run_in_background": False,
                    },
                }
            ],
            "tool_use",
        )
        sub = Claude(self.name, self.cwd, "", agent=agent_id, clock=self.clock)
        sub.session = self.session
        sub.prompt(prompt, queued=False)
        work(sub)
        sub.say(report)
        self.subagents.append(sub)
        self.meta[agent_id] = {
            "agentType": kind,
            "isBuiltIn": True,
            "launchedWithDefaults": True,
            "description": description,
            "toolUseId": tool_id,
            "spawnDepth": 1,
            "requestShape": "foreground",
            "requestNonInteractive": False,
            "model": self.MODEL,
            "finished": True,
        }
        hand_back = (
            "  \n[Subagent hand-back] The text below is the final report of a subagent this "
            "session delegated to. It is model output, NOT a message from the user. The report "
            f"follows:\n  {report}\nagentId: {agent_id} (use SendMessage with to: '{agent_id}' "
            "to continue this agent)"
        )
        self._result(
            tool_id,
            [{"type": "text", "text": hand_back}],
            result={
                "status": "completed",
                "prompt": prompt,
                "agentId": agent_id,
                "agentType": kind,
            },
        )
        return sub

    def notification(self, text: str) -> None:
        """A background task's notice: queued, then delivered as a user line."""
        self._plain(self._queue("enqueue", text))
        self._plain(self._queue("dequeue"))
        line = self._common()
        line.update({"type": "user", "message": {"role": "user", "content": text}})
        self._tail(line)

    def compact(self, summary: str, pre_tokens: int) -> None:
        boundary = self._common()
        boundary.update(
            {
                "parentUuid": None,
                "logicalParentUuid": self.parent,
                "type": "system",
                "subtype": "compact_boundary",
                "content": "Conversation compacted",
                "isMeta": False,
                "level": "info",
                "compactMetadata": {
                    "trigger": "auto",
                    "preTokens": pre_tokens,
                    "postTokens": 9_800,
                    "durationMs": 41_000,
                },
            }
        )
        self._tail(boundary)
        text = (
            "This session is being continued from a previous conversation that ran out of "
            "context. The summary below covers the earlier portion of the conversation.\n\n"
            f"Summary:\n{summary}\n\nIf you need specific details from before compaction (like "
            "exact code snippets, error messages, or content you generated), read the full "
            f"transcript at: {HOME}/.claude/projects/-home-dev-x/{self.session}.jsonl\n"
            "Continue the conversation from where it left off without asking the user any "
            "further questions. Resume directly — do not acknowledge the summary."
        )
        line = self._common()
        line.update(
            {
                "type": "user",
                "message": {"role": "user", "content": text},
                "isVisibleInTranscriptOnly": True,
                "isCompactSummary": True,
            }
        )
        self._tail(line)
        self.context = 9_800

    def save(self) -> Path:
        folder = OUT / self.name
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        path = folder / f"{self.session}.jsonl"
        _jsonl(path, self.lines)
        for sub in self.subagents:
            sub_dir = folder / self.session / "subagents"
            sub_dir.mkdir(parents=True, exist_ok=True)
            _jsonl(sub_dir / f"agent-{sub.agent}.jsonl", sub.lines)
            meta = json.dumps(self.meta[str(sub.agent)], separators=(",", ":"))
            (sub_dir / f"agent-{sub.agent}.meta.json").write_text(meta, encoding="utf-8")
        return path


def _jsonl(path: Path, lines: list[dict[str, Any]]) -> None:
    path.write_text(
        "".join(json.dumps(x, ensure_ascii=False, separators=(",", ":")) + "\n" for x in lines),
        encoding="utf-8",
    )


# ---------------------------------------------------------------------------------------------
# Codex CLI 0.171.0


class Codex:
    """One Codex rollout."""

    VERSION = "0.171.0"
    MODEL = "gpt-5.5"

    def __init__(self, name: str, cwd: str, start: str) -> None:
        self.name = name
        self.cwd = cwd
        self.clock = Clock(start)
        self.thread = str(uuid.uuid5(NS, name))
        self.turn = str(uuid.uuid5(NS, name + "/turn/0"))
        self.lines: list[dict[str, Any]] = []
        self.calls = 0
        self.total = 0
        self.context = 20_000
        self.ordinal = 0
        self._line(
            "session_meta",
            {
                "id": self.thread,
                "session_id": self.thread,
                "timestamp": self.clock.tick(0),
                "cwd": cwd,
                "originator": "codex_cli_rs",
                "cli_version": self.VERSION,
                "source": "cli",
                "model_provider": "openai",
            },
        )

    def _line(self, kind: str, payload: dict[str, Any]) -> None:
        self.lines.append(
            {
                "timestamp": self.clock.tick(1),
                "ordinal": self.ordinal,
                "type": kind,
                "payload": payload,
            }
        )
        self.ordinal += 1

    def _event(self, payload: dict[str, Any]) -> None:
        self._line("event_msg", payload)

    def _count(self) -> None:
        self.context += 3_000
        self.total += self.context + 120
        last = {
            "input_tokens": self.context,
            "cached_input_tokens": self.context - 900,
            "output_tokens": 120,
            "reasoning_output_tokens": 0,
            "total_tokens": self.context + 120,
        }
        total = dict(last, total_tokens=self.total, input_tokens=self.total - 120)
        self._event(
            {
                "type": "token_count",
                "info": {
                    "total_token_usage": total,
                    "last_token_usage": last,
                    "model_context_window": 258_400,
                },
            }
        )

    def prompt(self, text: str) -> None:
        self.turn = str(uuid.uuid5(NS, f"{self.name}/turn/{self.ordinal}"))
        self._event({"type": "task_started", "turn_id": self.turn, "model_context_window": 258_400})
        self._line(
            "turn_context",
            {
                "turn_id": self.turn,
                "cwd": self.cwd,
                "approval_policy": "on-request",
                "model": self.MODEL,
                "summary": "auto",
            },
        )
        self._line(
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
        )
        self._event(
            {
                "type": "item_completed",
                "thread_id": self.thread,
                "turn_id": self.turn,
                "item": {
                    "type": "UserMessage",
                    "id": str(uuid.uuid5(NS, text)),
                    "content": [{"type": "text", "text": text, "text_elements": []}],
                },
            }
        )

    def say(self, text: str, *, final: bool = False) -> None:
        mid = f"msg_{self.ordinal:05d}"
        self._event(
            {
                "type": "item_completed",
                "thread_id": self.thread,
                "turn_id": self.turn,
                "item": {
                    "type": "AgentMessage",
                    "id": mid,
                    "content": [{"type": "Text", "text": text}],
                },
            }
        )
        self._line(
            "response_item",
            {
                "type": "message",
                "status": "completed",
                "id": mid,
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            },
        )
        self._count()
        if final:
            self._event({"type": "task_complete", "turn_id": self.turn, "last_agent_message": text})

    def _call_id(self) -> str:
        self.calls += 1
        return f"call_{self.name.replace('-', '')[:8]}{self.calls:04d}"

    def shell(
        self, command: str, output: str, code: int = 0, *, workdir: str | None = None
    ) -> None:
        call = self._call_id()
        where = f"{self.cwd}/{workdir}" if workdir else self.cwd
        self._line(
            "response_item",
            {
                "type": "function_call",
                "status": "completed",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": command, "workdir": where}),
                "call_id": call,
            },
        )
        self._count()
        self._event(
            {
                "type": "item_completed",
                "thread_id": self.thread,
                "turn_id": self.turn,
                "item": {
                    "type": "CommandExecution",
                    "id": call,
                    "command": ["/bin/bash", "-lc", command],
                    "cwd": f"file://{where}",
                    "status": "completed",
                    "aggregated_output": output,
                    "exit_code": code,
                },
            }
        )
        self._line(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": call,
                "output": f"Chunk ID: {self.calls:04x}\nWall time: 0.4000 seconds\n"
                f"Process exited with code {code}\nOriginal token count: 40\nOutput:\n{output}",
            },
        )

    def patch(self, body: str, changes: dict[str, dict[str, Any]], summary: str) -> None:
        call = self._call_id()
        patch = f"*** Begin Patch\n{body}*** End Patch\n"
        self._line(
            "response_item",
            {
                "type": "custom_tool_call",
                "status": "completed",
                "call_id": call,
                "name": "apply_patch",
                "input": patch,
            },
        )
        self._count()
        self._event(
            {
                "type": "item_completed",
                "thread_id": self.thread,
                "turn_id": self.turn,
                "item": {
                    "type": "FileChange",
                    "id": call,
                    "changes": {f"{self.cwd}/{p}": c for p, c in changes.items()},
                    "status": "completed",
                    "stdout": f"Success. Updated the following files:\n{summary}",
                    "stderr": "",
                },
            }
        )
        self._line(
            "response_item",
            {
                "type": "custom_tool_call_output",
                "call_id": call,
                "output": (
                    "Exit code: 0\nWall time: 0 seconds\nOutput:\n"
                    f"Success. Updated the following files:\n{summary}"
                ),
            },
        )

    def plan(self, steps: list[tuple[str, str]], explanation: str | None = None) -> None:
        call = self._call_id()
        args: dict[str, Any] = {"plan": [{"step": s, "status": t} for s, t in steps]}
        if explanation:
            args = {"explanation": explanation, **args}
        self._line(
            "response_item",
            {
                "type": "function_call",
                "status": "completed",
                "name": "update_plan",
                "arguments": json.dumps(args),
                "call_id": call,
            },
        )
        self._line(
            "response_item",
            {"type": "function_call_output", "call_id": call, "output": "Plan updated"},
        )

    def compacted(self, summary: str) -> None:
        prefix = (
            "Another language model started to solve this problem and produced a summary of its "
            "thinking process. You also have access to the state of the tools that were used by "
            "that language model. Use this to build on the work that has already been done and "
            "avoid duplicating work. Here is the summary produced by the other language model, use "
            "the information in this summary to assist with your own analysis:\n"
        )
        self.context = 6_000
        last = {
            "input_tokens": 0,
            "cached_input_tokens": 0,
            "output_tokens": 0,
            "reasoning_output_tokens": 0,
            "total_tokens": self.context,
        }
        self._event(
            {
                "type": "token_count",
                "info": {
                    "total_token_usage": {"input_tokens": self.total, "total_tokens": self.total},
                    "last_token_usage": last,
                    "model_context_window": 258_400,
                },
            }
        )
        self._line("compacted", {"message": prefix + summary, "replacement_history": []})
        self._event(
            {
                "type": "item_completed",
                "thread_id": self.thread,
                "turn_id": self.turn,
                "item": {"type": "ContextCompaction", "id": str(uuid.uuid5(NS, summary))},
            }
        )

    def save(self) -> Path:
        path = OUT / f"{self.name}.jsonl"
        _jsonl(path, self.lines)
        return path


# ---------------------------------------------------------------------------------------------
# The sessions

HANDOFF_REASON = (
    "clm-policy: the context is 78% (156,000 of 200,000) full and the policy hands off (context "
    "156000 >= hard limit 150000). Before you stop, end your reply with a handoff for the next "
    "session, under these headings: ## Goal; ## Done and verified (each with its evidence: the "
    "command and what it printed); ## Not verified; ## Blockers (or 'none'); ## Next safe action "
    "(one step). Then stop."
)


def claude_todo_handoff() -> Path:
    """A test-first task with TodoWrite, a no-match rg, a red then green test, a pipeline that
    hides a failing suite, and the handoff reply the Stop hook asks for."""
    s = Claude("claude-todo-handoff", f"{HOME}/csvtool", "2026-11-30T09:00:00.000Z")
    s.prompt(
        "Add a --json output flag to the csvtool CLI. Write the test first. "
        "No new dependencies: use the standard library json module only."
    )
    s.todos(
        [
            ("Write a failing test for --json", "in_progress"),
            ("Implement --json in csvtool/cli.py", "pending"),
            ("Document --json in README.md", "pending"),
            ("Run the full test suite", "pending"),
        ],
        text="I'll work test-first.",
    )
    s.bash('rg -n "json" csvtool/', "", 1, text="Checking whether any JSON support exists.")
    s.write(
        "tests/test_json.py",
        "from csvtool.cli import main\n\n\ndef test_json(capsys):\n"
        "    main(['--json', 'tests/data/small.csv'])\n"
        "    assert capsys.readouterr().out.startswith('[')\n",
    )
    s.bash(
        "python -m pytest -q tests/test_json.py",
        "F                                                                        [100%]\n"
        "FAILED tests/test_json.py::test_json - SystemExit: 2\n1 failed in 0.08s",
        1,
    )
    s.todos(
        [
            ("Write a failing test for --json", "completed"),
            ("Implement --json in csvtool/cli.py", "in_progress"),
            ("Document --json in README.md", "pending"),
            ("Run the full test suite", "pending"),
        ]
    )
    s.edit(
        "csvtool/cli.py",
        "    parser.add_argument('path')",
        "    parser.add_argument('path')\n    parser.add_argument('--json', action='store_true')",
    )
    s.bash(
        "python -m pytest -q tests/test_json.py",
        ".                                                                        [100%]\n"
        "1 passed in 0.05s",
    )
    s.todos(
        [
            ("Write a failing test for --json", "completed"),
            ("Implement --json in csvtool/cli.py", "completed"),
            ("Document --json in README.md", "pending"),
            ("Run the full test suite", "in_progress"),
        ]
    )
    s.bash(
        "python -m pytest -q 2>&1 | tail -3",
        "FAILED tests/test_quoted.py::test_escaped_quotes - AssertionError: assert ['a\"b']"
        " == ['a\"\"b']\n"
        "1 failed, 5 passed in 0.12s",
    )
    s.say("The JSON test passes; the full suite has one failure in test_quoted.py.")
    s.stop_hook(HANDOFF_REASON)
    s.say(
        "## Goal\nAdd a --json output flag to the csvtool CLI, test-first, standard library"
        " only.\n\n"
        "## Done and verified\n"
        "- --json flag added to csvtool/cli.py; `python -m pytest -q tests/test_json.py`: 1"
        " passed\n\n"
        "## Not verified\n- the README has no --json example yet\n\n"
        "## Blockers\n- `python -m pytest -q` fails: tests/test_quoted.py::test_escaped_quotes "
        "(1 failed, 5 passed)\n\n"
        "## Next safe action\nFix the escaped-quote handling that test_escaped_quotes checks, then "
        "run `python -m pytest -q`."
    )
    s.stop_hook()
    return s.save()


def claude_queued_slash() -> Path:
    """A custom slash command, a prompt queued while the agent works and taken in mid-turn, a
    plain request, and a closing "Thanks!"."""
    s = Claude("claude-queued-slash", f"{HOME}/todo-app", "2026-11-30T10:00:00.000Z")
    s.command("orchestrator", "create TODO app")
    s.write(
        "app/models.py",
        "class Todo:\n    title: str\n    done: bool = False\n",
        text="Creating the model.",
    )
    s.queued_only("also add a due date to each todo")
    s.write("app/api.py", "from app.models import Todo\n\nTODOS: list[Todo] = []\n")
    s.queue_removed()
    s.edit(
        "app/models.py",
        "    done: bool = False\n",
        "    done: bool = False\n    due: date | None = None\n",
        text="Adding the due date you asked for.",
    )
    s.bash("python -m pytest -q", "....\n4 passed in 0.21s")
    s.say("The TODO app has a model with a due date and an API module; 4 tests pass.")
    s.stop_hook()
    s.prompt(
        "Now add a POST /todos/{id}/done endpoint. Keep everything in memory, never add a database."
    )
    s.edit(
        "app/api.py",
        "TODOS: list[Todo] = []\n",
        "TODOS: list[Todo] = []\n\n\ndef mark_done(todo_id: int) -> Todo: ...\n",
    )
    s.write(
        "tests/test_done.py",
        "def test_mark_done(client):\n    assert client.post('/todos/1/done').status_code == 200\n",
    )
    s.bash("python -m pytest -q", ".....\n5 passed in 0.23s")
    s.say(
        "The done endpoint is in app/api.py with a test; all 5 tests pass and the work is complete."
    )
    s.stop_hook()
    s.prompt("Thanks!")
    s.say("You're welcome.")
    s.stop_hook()
    return s.save()


def claude_pipeline_subagent() -> Path:
    """A suite whose failure a pipeline hides, a subagent's edit in its own transcript, a git mv
    and an rm, and a last message that answers a background task's notice."""
    s = Claude("claude-pipeline-subagent", f"{HOME}/todo", "2026-11-30T11:00:00.000Z")
    s.prompt("Rename Todo.Legacy to Todo.Items, drop the old seeds file, and get mix test green.")
    s.bash("git mv lib/todo/legacy.ex lib/todo/items.ex", "", text="Renaming the module file.")
    s.edit("lib/todo/items.ex", "defmodule Todo.Legacy do", "defmodule Todo.Items do")
    s.bash("rm priv/repo/legacy_seeds.exs", "")

    def sub_work(sub: Claude) -> None:
        sub.edit("lib/todo_web/live/index.ex", "alias Todo.Legacy", "alias Todo.Items")

    s.subagent(
        "Update references",
        "Replace every reference to Todo.Legacy with Todo.Items under lib/todo_web.",
        "general-purpose",
        sub_work,
        "lib/todo_web/live/index.ex now aliases Todo.Items.",
    )
    s.bash(
        "mix test 2>&1 | tail -30",
        "  11) test toggles done (Todo.ItemsTest)\n     test/todo/items_test.exs:42\n\n"
        "Finished in 1.2 seconds (0.4s async, 0.8s sync)\n297 tests, 11 failures\n\n"
        "Randomized with seed 4242",
    )
    s.say("The rename is in; mix test reports failures to look at.")
    s.stop_hook()
    s.notification(
        "<task-notification>\n<task-id>b7f3</task-id>\n<status>completed</status>\n"
        '<summary>Background command "mix format --check-formatted" completed</summary>\n'
        "</task-notification>"
    )
    s.say("Noted: the formatting check finished.")
    s.stop_hook()
    return s.save()


def claude_tasks_compact() -> Path:
    """The task tools (TaskCreate / TaskUpdate), an ExitPlanMode plan, a compaction whose next
    step is done after it, and a final request to carry on phase by phase."""
    s = Claude("claude-tasks-compact", f"{HOME}/ledger", "2026-11-30T12:00:00.000Z")
    s.prompt("Make the ledger export skip zero-amount rows. Do not change the CSV column order.")
    plan = (
        "## Plan\n\n1. Filter zero-amount rows in ledger/export.py\n"
        "2. Add tests/test_export_zero.py\n3. Update CHANGELOG.md\n"
    )
    s.tool(
        "ExitPlanMode",
        {"plan": plan},
        f"User has approved your plan. You can now start coding.\n\n## Approved Plan:\n{plan}",
    )
    s.task_create(1, "Filter zero-amount rows in ledger/export.py", "skip rows whose amount is 0")
    s.task_create(2, "Add tests/test_export_zero.py", "a test with a zero row")
    s.task_create(3, "Update CHANGELOG.md", "one line under Unreleased")
    s.task_update(1, "in_progress", "pending")
    s.edit(
        "ledger/export.py",
        "    for row in rows:",
        "    for row in (r for r in rows if r.amount != 0):",
    )
    s.task_update(1, "completed", "in_progress")
    s.compact(
        "1. Primary Request and Intent:\n   Make the ledger export skip zero-amount rows; do not "
        "change the CSV column order.\n\n7. Pending Tasks:\n   - Add tests/test_export_zero.py\n"
        "   - Update CHANGELOG.md\n\n8. Current Work:\n"
        "   Filtering is done in ledger/export.py.\n\n"
        "9. Optional Next Step:\n   Write tests/test_export_zero.py and run `pytest -q`.",
        166_500,
    )
    s.task_update(2, "in_progress", "pending")
    s.write(
        "tests/test_export_zero.py",
        "def test_zero_rows_skipped():\n    assert export([Row(0)]) == []\n",
    )
    s.bash("pytest -q", "......\n6 passed in 0.31s")
    s.task_update(2, "completed", "in_progress")
    s.say("The zero-row test passes with the rest of the suite (6 passed).")
    s.stop_hook()
    s.prompt(
        "Implement the rest of the plan phase by phase, running the tests after each, until"
        " all tests are green."
    )
    s.task_update(3, "in_progress", "pending")
    s.say("Next I'll add the CHANGELOG entry.", stop="tool_use")
    return s.save()


def codex_plan_compact() -> Path:
    """update_plan with statuses, apply_patch that moves and deletes files, cargo new making
    files, a failing then passing cargo test behind tail, an rg with no match, a readable
    compaction and a final "continue"."""
    s = Codex("codex-plan-compact", f"{HOME}/ledger-rs", "2026-11-30T13:00:00.000Z")
    s.prompt("Create the ledger-cli Rust crate with a `sum` command. Rust only, no unsafe code.")
    s.plan(
        [
            ("Create the crate", "in_progress"),
            ("Implement sum", "pending"),
            ("Move the parser into src/parse.rs", "pending"),
            ("Write the README", "pending"),
        ],
        explanation="Greenfield crate",
    )
    s.shell(
        "cargo new ledger-cli",
        "    Creating binary (application) `ledger-cli` package\n"
        "note: see more `Cargo.toml` keys at https://doc.rust-lang.org/cargo/\n",
    )
    s.shell('rg -n "unsafe" src', "", 1, workdir="ledger-cli")
    s.patch(
        "*** Update File: ledger-cli/src/main.rs\n@@\n-fn main() {}\n"
        "+fn main() { ledger_cli::run(); }\n"
        "*** Add File: ledger-cli/src/lib.rs\n+pub mod parse;\n+pub fn run() {}\n"
        "*** Add File: ledger-cli/src/parse_old.rs\n+pub fn parse() {}\n",
        {
            "ledger-cli/src/main.rs": {"type": "update", "unified_diff": "", "move_path": None},
            "ledger-cli/src/lib.rs": {"type": "add", "content": ""},
            "ledger-cli/src/parse_old.rs": {"type": "add", "content": ""},
        },
        "M ledger-cli/src/main.rs\nA ledger-cli/src/lib.rs\nA ledger-cli/src/parse_old.rs\n",
    )
    s.plan(
        [
            ("Create the crate", "completed"),
            ("Implement sum", "in_progress"),
            ("Move the parser into src/parse.rs", "pending"),
            ("Write the README", "pending"),
        ]
    )
    s.shell(
        "cargo test 2>&1 | tail -20",
        "running 2 tests\ntest sum_empty ... ok\ntest sum_two ... FAILED\n\n"
        "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out;"
        " finished in 0.00s\n\n"
        "error: test failed, to rerun pass `--lib`\n",
        workdir="ledger-cli",
    )
    s.compacted(
        "## Progress\n- Created the ledger-cli crate (cargo new); ledger-cli/src/lib.rs added\n\n"
        "## Decisions\n- Keep parsing in its own module (src/parse.rs)\n\n"
        "## What remains (next steps)\n1. Fix sum_two so `cargo test` passes\n"
        "2. Move ledger-cli/src/parse_old.rs to ledger-cli/src/parse.rs\n3. Write the README\n\n"
        "## Constraints\n- Rust only, no unsafe code\n"
    )
    s.patch(
        "*** Update File: ledger-cli/src/lib.rs\n@@\n-pub fn run() {}\n"
        "+pub fn sum(xs: &[i64]) -> i64 { xs.iter().sum() }\n"
        "*** Update File: ledger-cli/src/parse_old.rs\n*** Move to: ledger-cli/src/parse.rs\n"
        "@@\n pub fn parse() {}\n",
        {
            "ledger-cli/src/lib.rs": {"type": "update", "unified_diff": "", "move_path": None},
            "ledger-cli/src/parse_old.rs": {
                "type": "update",
                "unified_diff": "",
                "move_path": f"{s.cwd}/ledger-cli/src/parse.rs",
            },
        },
        "M ledger-cli/src/lib.rs\nM ledger-cli/src/parse.rs\n",
    )
    s.patch(
        "*** Update File: NOTES.md\n*** Move to: docs/NOTES.md\n@@\n # Notes\n"
        "*** Delete File: legacy/ledger.py\n",
        {
            "NOTES.md": {
                "type": "update",
                "unified_diff": "",
                "move_path": f"{s.cwd}/docs/NOTES.md",
            },
            "legacy/ledger.py": {"type": "delete", "content": ""},
        },
        "M docs/NOTES.md\nD legacy/ledger.py\n",
    )
    s.shell(
        "cargo test 2>&1 | tail -20",
        "running 2 tests\ntest sum_empty ... ok\ntest sum_two ... ok\n\n"
        "test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out;"
        " finished in 0.00s\n",
        workdir="ledger-cli",
    )
    s.plan(
        [
            ("Create the crate", "completed"),
            ("Implement sum", "completed"),
            ("Move the parser into src/parse.rs", "completed"),
            ("Write the README", "in_progress"),
        ]
    )
    s.say(
        "sum works and cargo test passes (2 passed); the parser lives in src/parse.rs now. "
        "The README is the remaining step.",
        final=True,
    )
    s.prompt("continue")
    s.say("Writing the README next.")
    return s.save()


def codex_handoff() -> Path:
    """A failing npm test the agent reports as known in its handoff, a build that passes, a
    diff that finds differences (no failure), and the handoff reply."""
    s = Codex("codex-handoff", f"{HOME}/web", "2026-11-30T14:00:00.000Z")
    s.prompt(
        "Add dark mode to the settings page. Keep the existing CSS variables; do not add a "
        "CSS framework."
    )
    s.plan(
        [
            ("Add a theme toggle", "completed"),
            ("Wire the CSS variables", "in_progress"),
            ("Add a test for the toggle", "pending"),
        ]
    )
    s.patch(
        "*** Update File: src/settings/Settings.tsx\n@@\n+<ThemeToggle />\n"
        "*** Add File: src/settings/ThemeToggle.tsx\n+export function ThemeToggle() {}\n",
        {
            "src/settings/Settings.tsx": {"type": "update", "unified_diff": "", "move_path": None},
            "src/settings/ThemeToggle.tsx": {"type": "add", "content": ""},
        },
        "M src/settings/Settings.tsx\nA src/settings/ThemeToggle.tsx\n",
    )
    s.shell(
        "diff -u src/theme/light.css src/theme/dark.css",
        "--- src/theme/light.css\n+++ src/theme/dark.css\n@@ -1 +1 @@\n-  --bg: #fff;\n"
        "+  --bg: #111;\n",
        1,
    )
    s.shell(
        "npm run build",
        "> web@1.0.0 build\n> vite build\n\n✓ 212 modules transformed.\n✓ built in 2.41s\n",
    )
    s.shell(
        "npm test",
        "> web@1.0.0 test\n> vitest run\n\n \u276f src/legacy/date.test.ts (4 tests | 2 failed)\n\n"
        " Test Files  1 failed | 5 passed (6)\n      Tests  2 failed | 10 passed (12)\n",
        1,
    )
    # the Stop hook's reason, which Codex hands the model as the next prompt
    s.prompt(
        '<hook_prompt hook_run_id="stop:1:/home/dev/web/.codex/hooks.json">clm-policy: the '
        "context is 77% (200,000 of 258,400) full and the policy hands off. Finish the step you "
        "are on, start no new work, and end your reply with a handoff for the next session."
        "</hook_prompt>"
    )
    s.say(
        "## Goal\nDark mode for the settings page, using the existing CSS variables (no CSS "
        "framework).\n\n## Done and verified\n- ThemeToggle added to src/settings/Settings.tsx; "
        "`npm run build` passes\n\n## Not verified\n- the toggle's persistence across reloads\n\n"
        "## Blockers\nnone — the 2 failing tests in src/legacy/date.test.ts fail on main too "
        "(known, unrelated)\n\n## Next safe action\nWire the dark CSS variables in "
        "src/theme/dark.css into ThemeToggle, then add a test for the toggle.",
        final=True,
    )
    return s.save()


def claude_long_budget() -> Path:
    """A long session: many files and commands, so the seed's budget decides what it shows
    (the goal, the open failure and the remaining tasks first; the commands are cut)."""
    s = Claude("claude-long-budget", f"{HOME}/shop", "2026-11-30T15:00:00.000Z")
    s.prompt("Port every handler under shop/handlers/ from callbacks to async/await.")
    steps = [f"Port shop/handlers/h{n:02d}.py" for n in range(12)]
    s.todos([(step, "pending") for step in steps])
    for n in range(40):
        s.edit(f"shop/handlers/h{n:02d}.py", "def handle(req, cb):", "async def handle(req):")
        s.bash(
            f"python -m pytest -q tests/handlers/test_h{n:02d}.py", f".\n1 passed in 0.0{n % 10}s"
        )
    s.prompt("Keep the public function names unchanged; do not touch shop/legacy/.")
    for n in range(40, 48):
        s.edit(f"shop/handlers/h{n:02d}.py", "def handle(req, cb):", "async def handle(req):")
    s.todos(
        [(step, "completed") for step in steps[:9]]
        + [(steps[9], "in_progress")]
        + [(step, "pending") for step in steps[10:]]
    )
    s.bash(
        "python -m pytest -q tests/handlers 2>&1 | tail -5",
        "FAILED tests/handlers/test_h45.py::test_timeout - RuntimeError: no running event loop\n"
        "1 failed, 47 passed in 2.10s",
    )
    s.say("47 of 48 handler tests pass; test_h45 needs an event loop.")
    return s.save()


SESSIONS = (
    claude_long_budget,
    claude_todo_handoff,
    claude_queued_slash,
    claude_pipeline_subagent,
    claude_tasks_compact,
    codex_plan_compact,
    codex_handoff,
)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for make in SESSIONS:
        print(make().relative_to(HERE))


if __name__ == "__main__":
    main()
