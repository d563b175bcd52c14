"""Codex CLI rollouts: ``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``.

One ``{"timestamp", "type", "payload"}`` a line; the types are ``session_meta`` (``id``,
``cwd``), ``turn_context`` (``cwd``, ``model``), ``response_item`` (messages, reasoning,
tool calls and their outputs), ``compacted`` (``message``, optional
``replacement_history``) and ``event_msg`` (``user_message``, ``agent_message``,
``token_count``, …).

The context is the last ``token_count`` event with an ``info``:
``info.last_token_usage.total_tokens`` (what Codex itself shows as the context used),
``info.model_context_window`` the window. Never ``info.total_token_usage``: it is the sum
over every request of the session and passes a million tokens in a session whose window is
258,400. Around that rule:

- rate-limit updates repeat the same ``info`` (they are not new requests);
- after a compaction Codex recomputes the context itself and sends a ``token_count`` whose
  ``last_token_usage`` has ``input_tokens`` 0 and ``total_tokens`` > 0, just before (or,
  in other versions, just after) the ``compacted`` line: that is the new figure (Codex's
  own estimate, so ``estimated``);
- a ``compacted`` line after the last figure and not right after such a recomputed one makes
  the figure stale: the context is estimated (characters / 4) from the compaction's
  replacement history (or its message) and the items after it.

:func:`read_tail` reads from the end until the last figure and the last ``turn_context``
(the model), then runs the same :class:`_Figures` over those lines.

An agent a session spawns (``spawn_agent``, multi_agent_v2) has a rollout of its own, its
``session_meta`` naming the session (``session_id``), its own thread (``id``) and its task
(``agent_path``). Spawned with the parent's history (``fork_turns`` "all", the default), the
rollout starts with a copy of it — the parent's ``session_meta``, prompts, tool calls and
outputs — and the agent's own history at the line whose ``ordinal`` is the
``session_meta``'s ``subagent_history_start_ordinal``. The copy is the agent's context (its
figures count it), not its work: its prompts, edits and commands are the parent's
(:func:`_inherited_until`).
"""

from __future__ import annotations

import json
import os
import re
import shlex

from clm_policy.models.enums import count
from clm_policy.transcripts.reading import (
    MESSAGE_LIMIT,
    NOT_COUNTED,
    TEXT_PARTS,
    Lines,
    Source,
    Tally,
    TranscriptReading,
    Warnings,
    clip,
    estimate_tokens,
    joined_text,
    json_object,
    tail_reading,
    text_of,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from clm_policy.transcripts.work import WorkLog

    Event = tuple[Any, ...]

FORMAT = "codex"
NO_USAGE = f"no token_count found; context estimated ({NOT_COUNTED})"
COMPACTED = (
    "compacted after the last token_count; context estimated from the compaction and what "
    f"follows it ({NOT_COUNTED})"
)
RECOMPUTED = "context is Codex's own estimate after a compaction"
SHELL_TOOLS = frozenset({"shell", "container.exec", "shell_command", "exec_command", "local_shell"})
_SHELLS = frozenset({"bash", "sh", "zsh"})
_CWD_LINES = ("session_meta", "turn_context")
_WRAPPERS = (
    "<environment_context>",
    "<user_instructions>",
    "<INSTRUCTIONS>",
    "# AGENTS.md instructions",
    "<user_shell_command>",
    "<turn_aborted>",
    "<hook_prompt",  # a Stop hook's reason, which Codex hands the model as the next prompt
)
_EXIT = (
    re.compile(r"^Exit code: (-?\d+)", re.M),
    re.compile(r"^Process exited with code (-?\d+)", re.M),
)

# ("count", tokens, recomputed, window) | ("compacted", chars) | ("item", chars)
# | ("model", model) | ("meta_model", model)


def event_of(obj: dict[str, Any]) -> Event | None:
    kind = obj.get("type")
    payload = obj.get("payload")
    if not isinstance(payload, dict):
        return None
    if kind == "event_msg":
        if payload.get("type") != "token_count":
            return None
        info = payload.get("info")
        last = info.get("last_token_usage") if isinstance(info, dict) else None
        if not isinstance(info, dict) or not isinstance(last, dict):
            return None
        tokens = count(last.get("total_tokens"))
        if not tokens:
            return None
        window = count(info.get("model_context_window")) or None
        return ("count", tokens, count(last.get("input_tokens")) == 0, window)
    if kind == "response_item":
        return ("item", _item_chars(payload))
    if kind == "compacted":
        history = payload.get("replacement_history")
        if isinstance(history, list):
            chars = sum(_item_chars(item) for item in history if isinstance(item, dict))
        else:
            chars = len(text_of(payload.get("message")) or "")
        return ("compacted", chars)
    if kind == "turn_context" and isinstance(payload.get("model"), str):
        return ("model", payload["model"])
    if kind == "session_meta" and isinstance(payload.get("model"), str):
        return ("meta_model", payload["model"])
    return None


def _item_chars(item: dict[str, Any]) -> int:
    kind = item.get("type")
    if kind == "message":
        return len(joined_text(item.get("content"), TEXT_PARTS))
    if kind in ("function_call", "custom_tool_call"):
        args = item.get("arguments" if kind == "function_call" else "input")
        return len(text_of(item.get("name")) or "") + len(text_of(args) or "")
    if kind in ("function_call_output", "custom_tool_call_output"):
        return len(_output(item.get("output"))[0])
    if kind == "local_shell_call":
        action = item.get("action")
        return len(json.dumps(action)) if isinstance(action, dict) else 0
    if kind == "reasoning":
        return sum(len(text) for text in _texts(item.get("summary")))
    return 0


def _texts(parts: object) -> list[str]:
    """The texts of a list of parts (a ``reasoning`` item's summary, a user message's content),
    whatever their type."""
    return [
        text_of(part.get("text")) or ""
        for part in (parts if isinstance(parts, list) else ())
        if isinstance(part, dict)
    ]


def _output(output: object) -> tuple[str, bool | None]:
    """(text, success) of a tool call's output: a string, ``{content, success}`` or a list
    of content items, depending on the Codex version and the tool."""
    if isinstance(output, str):
        return output, None
    if isinstance(output, dict):
        success = output.get("success")
        return text_of(output.get("content")) or "", success if isinstance(success, bool) else None
    if isinstance(output, list):
        return joined_text(output, TEXT_PARTS), None
    return "", None


class _Figures:
    """The context figure, fed events in file order."""

    def __init__(self) -> None:
        self.tokens: int | None = None
        self.recomputed = False
        self.window: int | None = None
        self.stale = False
        self.used = False  # something came after the figure (a compaction may not reuse it)
        self.chars = 0  # content since the last compaction (or since the start)
        self.model: str | None = None
        self.meta_model: str | None = None

    def feed(self, event: Event) -> None:
        kind = event[0]
        if kind == "count":
            _, self.tokens, self.recomputed, self.window = event
            self.stale = self.used = False
        elif kind == "compacted":
            if not (self.tokens is not None and self.recomputed and not self.used):
                self.stale = True
            self.used = True
            self.chars = event[1]
        elif kind == "item":
            self.used = True
            self.chars += event[1]
        elif kind == "model":
            self.model = event[1]
        elif kind == "meta_model":
            self.meta_model = event[1]

    def result(self) -> tuple[int, bool, str | None]:
        if self.tokens is not None and not self.stale:
            return self.tokens, self.recomputed, RECOMPUTED if self.recomputed else None
        why = NO_USAGE if self.tokens is None else COMPACTED
        return estimate_tokens(self.chars), True, why


def read_tail(src: Source, max_scan: int) -> TranscriptReading:
    lines = Lines(src.file, FORMAT)
    events: list[Event] = []
    found_count = found_model = False
    session_id = cwd = None
    after = 0  # the bytes of the lines after the token count the figure comes from
    for raw, terminated in src.backward(max_scan):
        if not found_count:
            after += len(raw) + 1
        obj = lines.parse(raw, terminated)
        if obj is None:
            continue
        payload = obj.get("payload")
        if obj.get("type") in _CWD_LINES and isinstance(payload, dict):
            cwd = cwd or text_of(payload.get("cwd"))
            if obj.get("type") == "session_meta":
                session_id = text_of(payload.get("id"))
        event = event_of(obj)
        if event is None:
            continue
        events.append(event)
        if event[0] == "count" and not found_count:
            after -= len(raw) + 1  # (counted above: the figure's own line)
        found_count = found_count or event[0] == "count"
        found_model = found_model or event[0] == "model"
        if found_count and found_model:
            break
    figures = _Figures()
    for event in reversed(events):
        figures.feed(event)
    known = (figures.model or figures.meta_model, session_id, cwd)
    sought = None if found_count else "token_count"
    return tail_reading(
        src, lines, figures.result(), sought, max_scan, after, known, figures.window
    )


# ---------------------------------------------------------------------------------------------
# The full read


class _Session(Tally):
    def __init__(self) -> None:
        super().__init__()
        self.total_seen = 0
        self.last_real: int | None = None

    def feed(self, kind: object, payload: dict[str, Any]) -> None:
        if kind in _CWD_LINES:
            self.cwd = text_of(payload.get("cwd")) or self.cwd
        if kind == "session_meta":
            self.session_id = self.session_id or text_of(payload.get("id"))
        elif kind == "compacted":
            self.compacted(self.last_real)
        elif kind == "event_msg":
            self._event(payload)
        elif kind == "response_item" and payload.get("type") == "message":
            text = joined_text(payload.get("content"), TEXT_PARTS)
            if payload.get("role") == "assistant" and text.strip():
                self.last_message = clip(text, MESSAGE_LIMIT)

    def _event(self, payload: dict[str, Any]) -> None:
        kind = payload.get("type")
        if kind == "token_count":
            info = payload.get("info")
            if not isinstance(info, dict):
                return
            total = info.get("total_token_usage")
            new_step = False
            if isinstance(total, dict):
                seen = count(total.get("total_tokens")) or 0
                if seen > self.total_seen:  # a new request (rate-limit updates repeat it)
                    self.steps += 1
                    self.total_seen = seen
                    new_step = True
                self.input_tokens = count(total.get("input_tokens")) or 0
                self.output_tokens = count(total.get("output_tokens")) or 0
            last = info.get("last_token_usage")
            if isinstance(last, dict) and count(last.get("input_tokens")):
                self.last_real = count(last.get("total_tokens"))
                if new_step and self.last_real:  # a request's own figure: one turn
                    turn = (self.steps, self.last_real, self.input_tokens, self.output_tokens)
                    self.turns.append(turn)
        elif kind == "agent_message":
            text = text_of(payload.get("message"))
            if text and text.strip():
                self.last_message = clip(text, MESSAGE_LIMIT)


def _inherited_until(first: dict[str, Any]) -> int:
    """Where the agent's own history starts, by the rollout's first line: the ``ordinal`` its
    ``session_meta`` names (``subagent_history_start_ordinal``: a spawned agent's rollout);
    0 (nothing inherited) for a session's own."""
    payload = first.get("payload")
    if first.get("type") != "session_meta" or not isinstance(payload, dict):
        return 0
    start = payload.get("subagent_history_start_ordinal")
    return start if isinstance(start, int) and not isinstance(start, bool) else 0


def _command_text(command: object) -> str:
    if isinstance(command, str):
        return command
    if not isinstance(command, list) or not all(isinstance(c, str) for c in command):
        return ""
    words: list[str] = command
    if len(words) >= 3 and os.path.basename(words[0]) in _SHELLS and words[1] in ("-c", "-lc"):
        return words[2]
    return shlex.join(words)


_RUNNING = re.compile(r"^Process running with session ID (\d+)", re.M)
_BODY = re.compile(r"^Output:\n", re.M)


def _body(text: str) -> str:
    """A Codex tool output without its header (chunk id, wall time, token count)."""
    m = _BODY.search(text)
    return text[m.end() :] if m else text


def _request(text: str) -> str:
    """A person's message as a request: whole (no clipping), "" for the harness's own; of a
    message the IDE extension wrapped in its context (``# Context from my IDE setup:`` … the
    active file, the open tabs …), the part under ``## My request for Codex:``."""
    text = text.strip()
    if not text or text.startswith(_WRAPPERS):
        return ""
    if text.startswith(_IDE_CONTEXT) and _IDE_REQUEST in text:
        return text.split(_IDE_REQUEST, 1)[1].strip()
    return text


_IDE_CONTEXT = "# Context from my IDE setup:"
_IDE_REQUEST = "## My request for Codex:"
_IDE_ACTIVE = re.compile(r"^## Active file: (.+)$", re.M)


def read_full(src: Source) -> TranscriptReading:
    from clm_policy.transcripts.takeover import goal_of
    from clm_policy.transcripts.work import WorkLog, finish

    lines = Lines(src.file, FORMAT)
    figures = _Figures()
    session = _Session()
    log = WorkLog()
    feeder = _WorkFeeder(log)
    inherited: int | None = None  # a spawned agent's copy of its parent's history: its end
    for number, raw, terminated in src.forward():
        obj = lines.parse(raw, terminated, number)
        if obj is None:
            continue
        event = event_of(obj)
        if event is not None:
            figures.feed(event)
        ordinal = obj.get("ordinal")
        position = ordinal if isinstance(ordinal, int) else number - 1
        if inherited is None:
            inherited = _inherited_until(obj)
        elif position < inherited:
            continue  # the parent's work, not this agent's
        payload = obj.get("payload")
        if isinstance(payload, dict):
            session.feed(obj.get("type"), payload)
            feeder.feed(obj, payload)
    lines.finish()
    tokens, estimated, why = figures.result()
    warnings = Warnings(*lines.warnings(), why)
    work = finish(log)
    reading = TranscriptReading(
        format=FORMAT,
        path=src.file,
        context_tokens=tokens,
        context_estimated=estimated,
        context_window=figures.window,
        model=figures.model or figures.meta_model,
        warnings=warnings.list(),
        bytes_read=src.bytes_read,
    )
    # (every prompt the rollout holds is one of the work's requests: no other goal to fall to)
    return session.full(reading, work, goal_of([r.text for r in work.requests]))


# ---------------------------------------------------------------------------------------------
# What the session did (clm_policy.transcripts.work)

_COMPACT_PREFIX = re.compile(
    r"^Another language model started to solve this problem.*?assist with your own "
    r"analysis:\s*",
    re.S,
)


class _WorkFeeder:
    """A rollout's lines into a :class:`~clm_policy.transcripts.work.WorkLog`.

    Codex reports the same work twice in most versions — a tool call and its output as
    response items, and ``exec_command_end`` / ``patch_apply_end`` events — and only as events
    when the model calls its tools from code mode (an ``exec`` cell of JavaScript calling
    ``tools.exec_command(…)``, ``tools.apply_patch(…)``, ``tools.update_plan(…)``). Each call
    is taken once: by its call id, whichever comes first."""

    def __init__(self, log: WorkLog) -> None:
        self.log = log
        self.recent_prompt: str | None = None  # a user message already taken from an item
        self.patches: set[str] = set()  # call ids of apply_patch calls
        self.pending: set[str] = set()  # call ids of calls waiting for their result
        self.done: set[str] = set()  # call ids whose result was taken
        self.synthetic = 0
        self.running: dict[str, tuple[str, list[str]]] = {}  # session -> (call id, output)
        self.polls: dict[str, str] = {}  # a write_stdin call -> the session it polls

    def feed(self, obj: dict[str, Any], payload: dict[str, Any]) -> None:
        kind = obj.get("type")
        log = self.log
        log.at(obj.get("timestamp"), payload.get("cwd") if kind in _CWD_LINES else None)
        if kind == "turn_context":
            self._context(payload)
        if kind == "compacted":
            text = text_of(payload.get("message")) or ""
            log.summary(_COMPACT_PREFIX.sub("", text), "codex-compacted")
        elif kind == "response_item":
            self._item(payload)
        elif kind == "event_msg":
            self._event(payload)

    def _context(self, payload: dict[str, Any]) -> None:
        """The sandbox and approvals a turn ran under (what the agent could and could not do)."""
        sandbox = payload.get("sandbox_policy")
        mode = sandbox.get("type") or sandbox.get("mode") if isinstance(sandbox, dict) else sandbox
        if isinstance(mode, str) and mode:
            network = sandbox.get("network_access") if isinstance(sandbox, dict) else None
            net = "" if network is None else (", network on" if network else ", network off")
            self.log.context(f"Codex sandbox: {mode}{net}")
        approval = payload.get("approval_policy")
        if isinstance(approval, str) and approval:
            self.log.context(f"Codex approvals: {approval}")

    def _environment(self, text: str) -> None:
        """Codex's ``<environment_context>`` message: the shell and the working directory."""
        for tag, label in (("shell", "shell"), ("cwd", "working directory")):
            m = re.search(rf"<{tag}>([^<\n]{{1,300}})</{tag}>", text)
            if m:
                self.log.context(f"{label}: {m.group(1).strip()}")

    def _continued(self, call_id: str | None, text: str) -> bool:
        """Whether ``text`` is the output of a command that keeps running (Codex's
        ``exec_command`` with ``yield_time_ms``: "Process running with session ID N") or of a
        poll of one (``write_stdin``). The command's result is taken when a poll says it exited,
        with everything it printed; True while it has not."""
        if call_id is None:
            return False
        running = _RUNNING.search(text)
        session = self.polls.pop(call_id, None)
        if session is None:
            if running is None or call_id not in self.pending:
                return False
            self.running[running.group(1)] = (call_id, [_body(text)])
            return True
        if session not in self.running:
            return True  # a poll of a session we never saw start
        original, parts = self.running[session]
        parts.append(_body(text))
        if running is not None:
            return True
        del self.running[session]
        code = _exit_code(text)
        self._result(original, "\n".join(parts), is_error=bool(code), exit_code=code)
        return True

    def _use(self, call_id: str | None, name: str, args: dict[str, Any]) -> None:
        if call_id:
            self.pending.add(call_id)
        self.log.tool_use(call_id, name, args)

    def _result(
        self, call_id: str | None, output: str, *, is_error: bool, exit_code: int | None
    ) -> None:
        if not call_id or call_id not in self.pending or call_id in self.done:
            return
        self.pending.discard(call_id)
        self.done.add(call_id)
        if output.strip() == "exec command rejected by user":  # the person said no: no run
            self.log.rejected(call_id)
            return
        self.log.tool_result(call_id, output, is_error=is_error, exit_code=exit_code)

    def _item(self, item: dict[str, Any]) -> None:
        from clm_policy.transcripts.work import PROMPT

        log = self.log
        kind = item.get("type")
        if kind == "message":
            text = joined_text(item.get("content"), TEXT_PARTS)
            if item.get("role") == "user":
                if "<environment_context>" in text:
                    self._environment(text)
                if "end your reply with a handoff" in text and "clm-policy" in text:
                    log.asked_handoff()  # the Stop hook's reason, handed to the model
                request = _request(text)
                if request:
                    log.request(request, PROMPT)
                    self.recent_prompt = request
                active = _IDE_ACTIVE.search(text) if text.startswith(_IDE_CONTEXT) else None
                if active:  # the file the person had open in the editor when they asked
                    log.context(f"IDE active file: {active.group(1).strip()}")
            elif item.get("role") == "assistant" and text.strip():
                log.said(text)
                plan = _PROPOSED_PLAN.search(text)
                if plan:
                    log.stated_plan(plan.group(1), "proposed_plan")
                else:
                    log.said_plan(text)
                self.recent_prompt = None
        elif kind == "reasoning":
            log.said("\n\n".join(_texts(item.get("summary"))), "thought")
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            self._call(item, kind)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            text, success = _output(item.get("output"))
            call_id = text_of(item.get("call_id"))
            if self._continued(call_id, text):
                return  # a command still running (or its poll): its result comes later
            code = _exit_code(text)
            data = None if _BODY.search(text) else _json_object(text)
            given = data.get("output") if data is not None else None
            body = given if isinstance(given, str) else _body(text)
            failed = success is False or (code is not None and code != 0)
            self._result(call_id, body, is_error=failed, exit_code=code)

    def _call(self, item: dict[str, Any], kind: str) -> None:
        from clm_policy.transcripts.work import PATCH, SHELL

        call_id = text_of(item.get("call_id"))
        name = text_of(item.get("name")) or ""
        args: object
        if kind == "local_shell_call":
            action = item.get("action")
            args = action if isinstance(action, dict) else {}
            name = "local_shell"
        elif kind == "custom_tool_call":
            args = {"input": item.get("input")}
        else:
            raw = item.get("arguments")
            try:
                args = json.loads(raw) if isinstance(raw, str) else raw
            except (ValueError, RecursionError):
                args = {"input": raw}
        if not isinstance(args, dict):
            args = {"input": args}
        patch: str | None = None
        if name == "apply_patch":
            given = args.get("input")
            patch = text_of(given if isinstance(given, str) else args.get("patch")) or ""
        elif name in SHELL_TOOLS:
            command = _command_text(args.get("command", args.get("cmd")))
            if "*** Begin Patch" in command:
                patch = command
            elif command:
                self._use(call_id, SHELL, {"command": command, "workdir": args.get("workdir")})
        elif name == "update_plan":
            self._use(call_id, name, args)
        elif name == "write_stdin":
            # a poll of a command still running: its output is the command's
            session = args.get("session_id")
            if call_id and isinstance(session, int | str):
                self.polls[call_id] = str(session)
        elif name == "exec":
            code = args.get("input")
            if isinstance(code, str):
                self._code_cell(call_id, code)
        if patch is not None:
            if call_id:
                self.patches.add(call_id)
            self._use(call_id, PATCH, {"patch": patch})

    def _code_cell(self, call_id: str | None, code: str) -> None:
        """Code mode: the tools a cell of JavaScript calls. A command's output is the cell's
        when the cell runs one command; a patch is taken from its ``patch_apply_end``."""
        from clm_policy.transcripts.work import SHELL

        commands: list[dict[str, Any]] = []
        for call in _TOOL_CALL.finditer(code):  # tools.<name>(<JSON>)
            try:
                value, _end = _DECODER.raw_decode(code, call.end())
            except (ValueError, RecursionError):
                continue  # an argument that is no JSON literal
            if call.group(1) == "update_plan" and isinstance(value, dict):
                self.log.tool_use(None, "update_plan", value)
            elif call.group(1) == "exec_command" and isinstance(value, dict):
                commands.append(value)
        for n, value in enumerate(commands):
            command = _command_text(value.get("cmd", value.get("command")))
            if not command:
                continue
            key = call_id if n == len(commands) - 1 else None
            if key is None:
                self.synthetic += 1
                key = f"cell-{self.synthetic}"  # no output of its own: no result
            self._use(key, SHELL, {"command": command, "workdir": value.get("workdir")})

    def _event(self, payload: dict[str, Any]) -> None:
        from clm_policy.transcripts.work import PROMPT, SHELL

        kind = payload.get("type")
        if kind == "user_message":
            self._user(text_of(payload.get("message")) or "", PROMPT)
        elif kind == "exec_command_end":
            call_id = text_of(payload.get("call_id"))
            output = payload.get("aggregated_output")
            if not isinstance(output, str):
                out, err = text_of(payload.get("stdout")), text_of(payload.get("stderr"))
                output = (out or "") + (err or "")
            code = payload.get("exit_code")
            code = code if isinstance(code, int) and not isinstance(code, bool) else None
            if call_id and call_id not in self.pending and call_id not in self.done:
                command = _command_text(payload.get("command"))
                if not command:
                    return
                self._use(call_id, SHELL, {"command": command, "workdir": payload.get("cwd")})
            self._result(call_id, output, is_error=bool(code), exit_code=code)
        elif kind == "patch_apply_end":
            call_id = text_of(payload.get("call_id"))
            if call_id in self.patches or payload.get("success") is False:
                return
            self._changes(payload.get("changes"))
        elif kind == "item_completed":
            item = payload.get("item")
            if not isinstance(item, dict):
                return
            if item.get("type") == "UserMessage":
                self._user("\n".join(_texts(item.get("content"))), PROMPT)
            elif item.get("type") == "FileChange" and item.get("id") not in self.patches:
                if item.get("status") not in (None, "completed"):
                    return
                self._changes(item.get("changes"))
            elif item.get("type") == "CommandExecution":
                code = item.get("exit_code")
                code = code if isinstance(code, int) and not isinstance(code, bool) else None
                output = text_of(item.get("aggregated_output")) or ""
                self._result(text_of(item.get("id")), output, is_error=bool(code), exit_code=code)

    def _changes(self, changes: object) -> None:
        for path, change in changes.items() if isinstance(changes, dict) else ():
            if isinstance(path, str) and isinstance(change, dict):
                move = change.get("move_path")
                to = move if isinstance(move, str) else None
                self.log.file_change(str(change.get("type") or "update"), path, to)

    def _user(self, text: str, prompt: str) -> None:
        request = _request(text)
        if request and request != self.recent_prompt:
            self.log.request(request, prompt)
        self.recent_prompt = None


_TOOL_CALL = re.compile(r"\btools\.([a-z_]+)\(")
_DECODER = json.JSONDecoder()
_PROPOSED_PLAN = re.compile(r"<proposed_plan>(.*?)(?:</proposed_plan>|\Z)", re.S)


def _json_object(text: str) -> dict[str, Any] | None:
    """The JSON object ``text`` holds (a tool's output given as JSON), or None."""
    return json_object(text) if text.startswith("{") else None


def _exit_code(text: str) -> int | None:
    data = _json_object(text)
    meta = data.get("metadata") if data is not None else None
    if isinstance(meta, dict) and isinstance(meta.get("exit_code"), int):
        return int(meta["exit_code"])
    found = next((m for m in (pattern.search(text) for pattern in _EXIT) if m), None)
    return int(found.group(1)) if found else None
