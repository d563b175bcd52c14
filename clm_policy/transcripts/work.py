"""What a session did, gathered from its transcript for a handoff: every request, the agent's
task list or stated plan, each command's run and its result, the files as they are, the
agent's own summaries, the subagents.

The readers (:mod:`.claude_code`, :mod:`.codex`) feed a :class:`WorkLog` the events of one
transcript in file order — a person's prompt, a queued one, a slash command; a tool call and,
later, its result; an assistant's text; a compaction's summary — and :meth:`WorkLog.finish`
gives the :class:`Work`. The tools are told apart here, once for both agents:

- shell commands (Claude Code's ``Bash``, Codex's ``shell`` / ``exec_command`` …): a
  :class:`Run`, judged from its output (:func:`~.results.judge`), and the files its words
  move, delete or make (:func:`~.files.shell_file_ops`, :func:`~.files.created_in_output`);
- edits (``Edit``, ``MultiEdit``, ``Write``, ``NotebookEdit``, ``apply_patch``): applied when
  their result is no error;
- the task list: ``TodoWrite`` (``todos``), the task tools (``TaskCreate`` / ``TaskUpdate`` /
  ``TaskList``, matched by the id each result gives) and Codex's ``update_plan`` (``plan``);
  the latest list wins;
- a stated plan: ``ExitPlanMode``'s plan, or a numbered list in an assistant's message that
  says it is a plan — used only when the agent keeps no list, each step checked against what
  was done after it (:meth:`Work.done_after`);
- ``Agent`` / ``Task`` calls (subagents) and ``AskUserQuestion`` answers (decisions).

A subagent's own transcript is fed to its own log (``agent`` set) and merged by time
(:func:`merge`): its edits and runs count, its requests, lists and messages do not.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, replace
from typing import Any

from clm_policy.base.commands import command_line
from clm_policy.base.errors import clipped_line
from clm_policy.transcripts.environment import (
    facts_of,
    missing_of,
    output_file_shell,
    served_at,
    settle,
    supplies,
)
from clm_policy.transcripts.files import (
    FileLog,
    Paths,
    created_in_output,
    folder_after,
    shell_file_ops,
    shell_reads,
)
from clm_policy.transcripts.results import (
    FAILED,
    PASSED,
    PENDING,
    UNKNOWN,
    Verdict,
    covers,
    first_failure,
    is_check,
    judge,
    normalise,
    reads_only,
    split_folder,
    summary_of,
)

REQUEST_LIMIT = 50_000
"""A person's message is kept whole up to this many characters (a pasted log, a long brief)."""
SAID_KEPT = 40
THOUGHTS_KEPT = 12
TOOLS_KEPT = 400
"""The main agent's latest tool calls kept as one line each (:func:`tool_line`), for a model
that writes the handoff the agent did not (:mod:`clm_policy.lifecycle.model_handoff`)."""
TEXT_LIMIT = 4000
OUTPUT_KEEP = 64 * 1024
"""Characters of a command's output judged (its end: where summaries are)."""

SHELL = "shell"
PATCH = "apply_patch"
EDIT_TOOLS = {
    **dict.fromkeys(("Edit", "MultiEdit", "Write"), "file_path"),
    "NotebookEdit": "notebook_path",
}
READ_TOOLS = {"Read": "file_path", "NotebookRead": "notebook_path"}
OUTPUT_TOOLS = frozenset({"BashOutput", "TaskOutput"})
"""Claude Code's tools that read what a background shell printed (``bash_id``/``task_id``)."""
SUBAGENT_TOOLS = frozenset({"Agent", "Task"})
_API_ERROR = re.compile(r"\s*API Error:?\s*(\d{3})?")
"""How Claude Code answers a subagent call whose model request failed (``API Error: 400 …``)."""

PROMPT = "prompt"
QUEUED = "queued"
COMMAND = "command"
DENIED = "the permission settings denied "
"""How the record's line of a call the harness's permissions refused begins: a named refusal,
so a blocker (the person must allow it, or do it)."""
REJECTION = "rejection"
"""What a person said when they rejected a tool call (Claude Code asks them)."""
REJECTING = "(rejecting a tool call) "
"""How such a message begins in a state's and a manifest's ``requests`` (the seed shows it
apart from the person's words): the call it answers never ran."""

_NOT_A_REPO = "fatal: not a git repository"
_PATCH_FAILED = re.compile(
    r"\s*(?:apply_patch verification failed|execution error|failed to apply patch|error:)", re.I
)
"""What Codex's apply_patch answers when the patch was not applied (its output has no error
flag: ``apply_patch verification failed: Failed to find expected lines in …``)."""
_PATCH_OP = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)
_TASK_ID = re.compile(r"Task #(\w+) created")
_TASK_LINE = re.compile(
    r"^#(\w+) \[(pending|in_progress|completed)\] (.+?)(?: \([^)]*\))?(?: \[blocked by [^\]]*\])?$",
    re.M,
)
_APPROVED_PLAN = re.compile(r"## Approved Plan(?: \(edited by user\))?:\n(.*)\Z", re.S)
_NUMBERED = re.compile(r"^\s{0,3}(\d{1,2})[.)]\s+(.+)$", re.M)
_PLAN_CUE = re.compile(
    r"\b(?:plan|steps?|here'?s what i(?:'ll| will)|i(?:'ll| will) (?:now )?(?:do|start|begin)|"
    r"next,? i(?:'ll| will)|approach)\b",
    re.I,
)
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_SAVED_OUTPUT = re.compile(r"[/\\]\.claude[/\\]projects[/\\].+[/\\]tool-results[/\\]")
"""Where Claude Code keeps a long tool result it cut (read back: no file of the project)."""
_OFFER = re.compile(
    r"\W*(?:if you(?:'d| would)? (?:want|like|prefer)|(?:do )?you want me to|want me to|"
    r"would you like|shall I|should I|I can also|I could (?:also )?|optional(?:ly)?\b|"
    r"let me know)",
    re.I,
)
"""A numbered item that offers the person something ("If you want, I can also add …"): no
step of the agent's plan."""
_PATHLIKE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.[A-Za-z0-9]{1,8})(?![\w/-])")
_BACKTICK = re.compile(r"`([^`\n]{2,120})`")
_WORK_WORDS = {
    "test": ("test", "spec", "pytest", "jest", "vitest", "rspec", "mix test", "cargo test",
             "go test"),
    "lint": ("lint", "ruff", "eslint", "credo", "clippy", "flake8", "rubocop"),
    "build": ("build", "compile"),
    "typecheck": ("mypy", "tsc", "pyright", "typecheck", "type-check", "type check"),
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Request:
    """Something a person asked: its text, and ``source`` — ``prompt``, ``queued`` (typed
    while the agent worked: a ``queue-operation`` line, or the ``queued_command`` attachment
    that hands it to the model), ``command`` (a slash command with its arguments) or
    ``rejection`` (said when rejecting a tool call)."""

    text: str
    source: str = PROMPT


@dataclass(frozen=True, slots=True)
class Task:
    """One item of the agent's task list: its text and status (``pending``, ``in_progress``
    or ``completed``), and what the agent wrote of it beside its title (the task tools'
    ``description``; "" when none)."""

    text: str
    status: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Run:
    """One shell command and what it came to (``verdict``); ``normal`` is the command it is
    the same as (:func:`~.results.normalise`), ``check`` whether it tests or builds the
    project, ``agent`` the subagent that ran it (None: the main agent), ``order`` when."""

    command: str
    normal: str
    verdict: Verdict
    check: bool
    agent: str | None = None
    order: int = 0

    def line(self, limit: int = 200) -> str:
        """``mix test | tail -30: failed (297 tests, 11 failures)``, the command cut to
        ``limit`` characters."""
        return f"{command_line(self.command, limit)}: {self.verdict.line()}"


@dataclass(frozen=True, slots=True)
class Subagent:
    """A subagent the agent started: its id, what it was asked, and its kind; why it failed
    before doing anything ("" when it did not: an API error, a refusal of the call)."""

    ident: str
    description: str
    kind: str
    failed: str = ""


_ERROR_LINE = re.compile(
    r"(?i)\b(?:error|fatal|failed|failure|exception|denied|not found|no such|cannot|can't|"
    r"unable|refused|not recognized|invalid|unexpected|traceback|ENOENT|ENOTFOUND|EACCES)\b"
)


_STRONG_ERROR = re.compile(
    r"\b[A-Z]\w*(?:Error|Exception)(?: \[\w+\])?:|\bE[A-Z]{3,}\b|"
    r"^(?:error|fatal|FATAL|ERROR)\b[:\[ ]|\berror(?:\[\w+\])?:|\bnot recognized\b|"
    r"\bcommand not found\b|\bNo such file\b|\bPermission denied\b|\bnot found\b|\brejected\b"
)
_NOISE_LINE = re.compile(
    r"^(?:at |\^|~+$|throw \w+;$|Node\.js v|npm (?:error|ERR!) (?:A complete log|You can rerun|"
    r"Log files)|For more information|Traceback \(most recent|File \"|\s*\d+ \||note:|help:)"
)


def tool_line(
    name: str, args: dict[str, Any], output: str, is_error: bool, code: int | None
) -> str:
    """One tool call and what it came to, in a line of at most about a thousand characters:
    a command with the end of its output, an edit with its new text, a file read with its
    start, any other tool with its arguments and the start of its answer."""
    failed = "failed: " if is_error or code not in (None, 0) else ""
    if name == SHELL:
        said = _brief(output[-2000:], 500, tail=True)
        exit_code = f" (exit {code})" if code not in (None, 0) else ""
        return f"ran `{_brief(str(args.get('command') or ''), 300)}`{exit_code}: {failed}{said}"
    if name == PATCH:
        return f"applied a patch: {failed}{_brief(str(args.get('patch') or ''), 700)}"
    if name in EDIT_TOOLS:
        path = args.get(EDIT_TOOLS[name])
        edits = args.get("edits") if name == "MultiEdit" else [args]
        new = " | ".join(
            str(e.get("new_string") or e.get("content") or "")
            for e in (edits if isinstance(edits, list) else [])
            if isinstance(e, dict)
        )
        verb = "wrote" if name == "Write" else "edited"
        return f"{verb} `{path}`: {failed}{_brief(new, 500)}"
    if name in READ_TOOLS:
        return f"read `{args.get(READ_TOOLS[name])}`: {failed}{_brief(output[:1000], 200)}"
    shown = ", ".join(f"{k}={_brief(str(v), 120)}" for k, v in list(args.items())[:4])
    return f"{name}({_brief(shown, 300)}): {failed}{_brief(output[:2000], 400)}"


def _brief(text: str, limit: int, *, tail: bool = False) -> str:
    """``text`` on one line, cut to ``limit`` characters (its end kept when ``tail``)."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    return "…" + line[-limit:] if tail else line[:limit] + "…"


_TIMESTAMP = re.compile(r"^\[?\d{4}-\d\d-\d\d[T ][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?\]?\s+")
"""A log line's leading time (a CI's or a deploy's build log: ``2025-10-09T08:11:44.879Z``)."""
_WRAPPER_ERROR = re.compile(
    r"(?i)\b(?:exited|completed|failed|finished) with (?:exit )?(?:code |status )?\d+\b|"
    r"^make(?:\[\d+\])?: \*\*\*|\bELIFECYCLE\b|^npm (?:error|ERR!) (?:code|errno|command|path)\b|"
    r"^error: Recipe `[^`]+` failed|^error Command failed with exit code"
)
"""A line that says only that a step it ran failed (``Error: Command "npm install" exited with
1``, ``make: *** [all] Error 2``, ``npm error code 1``): the cause is said before it."""


def _reason(output: str) -> str:
    """The line of a failed command's or tool's output that says why: the last that names an
    error (``TypeError: …``, ``ENOTFOUND``, ``error:``), else the last that reads like one, else
    the last line — never a stack frame or a tool's boilerplate, and a line that only says a
    step it ran failed only when nothing before it says why."""
    output = output.replace("<tool_use_error>", "").replace("</tool_use_error>", "")
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()][-80:]
    lines = [_TIMESTAMP.sub("", line) for line in lines]
    useful = [line for line in lines if not _NOISE_LINE.match(line)]
    causes = [line for line in useful if not _WRAPPER_ERROR.search(line)]
    for candidates in (causes, useful):
        for pattern in (_STRONG_ERROR, _ERROR_LINE):
            for line in reversed(candidates):
                if pattern.search(line):
                    return clipped_line(line, 200)
    return clipped_line((useful or lines)[-1], 200) if lines else ""


_ACK_WORDS = frozenset(
    {"thanks", "thank", "you", "thx", "ty", "ok", "okay", "k", "kk", "yes", "y", "yep",
     "yeah", "yup", "sure", "continue", "go", "on", "ahead", "proceed", "keep", "going",
     "carry", "please", "pls", "plz", "do", "it", "lgtm", "great", "perfect", "nice",
     "cool", "good", "sounds", "looks", "awesome", "next", "approved", "approve", "correct",
     "right", "exactly", "fine", "alright", "all", "that", "works", "sgtm", "done", "and",
     "so", "well", "then", "now", "again", "more", "same", "agreed", "agree", "excellent",
     "wonderful", "amazing", "fantastic"}
)  # fmt: skip
"""Words of a request that asks for nothing new: thanks, acknowledgements, "go on"."""
WORD = re.compile(r"[a-z']+")


# A prompt template the agent expanded in the person's message (GitHub's spec-kit commands, as
# Codex records them): the person typed the command and the text in the "User Input" block.
_TEMPLATE = re.compile(
    r"\A(## User Input\s*\n+```text\n(.*?\n)?```)\s*\n+"
    r"You \*\*MUST\*\* consider the user input before proceeding[^\n]*\n(.*)\Z",
    re.S,
)


def prompt_template(text: str) -> tuple[str, str, int, str] | None:
    """A person's message that is a prompt template around their input: its ``User Input``
    block, what they typed in it, the template's number of lines and its first instruction
    (what names it, or ""); None for any other message."""
    found = _TEMPLATE.match(text.replace("\r\n", "\n"))
    if found is None:
        return None
    lines = found[3].splitlines()
    steps = (s.strip() for s in lines if s.strip() and not s.startswith("## Outline"))
    return found[1], (found[2] or "").strip(), len(lines), next(steps, "")


def substantive(text: str) -> bool:
    """Whether a request asks for something: not only thanks, an acknowledgement, a "go on"
    or a bare approval."""
    words = WORD.findall(text.lower())
    return bool(words) and not all(w.strip("'") in _ACK_WORDS for w in words)


# ---------------------------------------------------------------------------------------------
# The log a reader fills


SHELL_LINE = "started in the background (shell "


def _served_url(line: str) -> str:
    """The address a background shell's line says it serves, or ""."""
    return line.rpartition(" serves ")[2].split(" ", 1)[0] if " serves " in line else ""


def _started(shell: str) -> str:
    """How the record's line of a background shell begins."""
    return f"{SHELL_LINE}{shell}): "


class WorkLog:
    """The events of one transcript (or of one subagent's, ``agent`` set), in file order."""

    def __init__(self, agent: str | None = None) -> None:
        self.agent = agent
        self.events: list[tuple[str, str, tuple[Any, ...]]] = []  # (timestamp, kind, data)
        self._pending: dict[str, tuple[str, dict[str, Any], str | None]] = {}
        self._called: dict[str, tuple[int, str]] = {}  # a pending call: its place, its time
        self._answered = 0  # the place after the latest call's result
        self._shells: dict[str, str] = {}  # a background shell's id: its command
        self._missing: dict[str, tuple[str, str]] = {}
        """What failed runs found not there: each fact, and the run's command (normalised)."""
        self._ts = ""
        self.cwd: str | None = None
        self.root: str | None = None
        self.timed = True

    # -- time and place ------------------------------------------------------------------------

    def at(self, timestamp: object, cwd: object = None) -> None:
        """The time and working directory of the line being read."""
        if isinstance(timestamp, str) and timestamp:
            self._ts = timestamp
        elif not self._ts:
            self.timed = False
        if isinstance(cwd, str) and cwd:
            self.cwd = cwd
            self.root = self.root or cwd

    def _add(self, kind: str, *data: Any) -> None:
        self.events.append((self._ts, kind, data))

    # -- people and the agent's words ---------------------------------------------------------

    def request(self, text: str, source: str = PROMPT) -> None:
        text = text.strip()
        if text:
            self._add("request", text[:REQUEST_LIMIT], source)

    def context(self, fact: str) -> None:
        """A fact of the environment the harness states (the sandbox, the shell, the branch)."""
        self._add("context", fact)

    def context_gone(self, label: str) -> None:
        """The harness's fact ``label`` (``git branch``) holds no more."""
        self._add("context_gone", label)

    def asked_handoff(self) -> None:
        """clm-policy asked the agent for its handoff here (its next words answer it)."""
        self._add("asked_handoff")

    def notice(self, text: str) -> None:
        """A line the harness wrote into the conversation (a background task finished)."""
        self._add("notice", text[:200])

    def said(self, text: str, kind: str = "said") -> None:
        """An assistant's text (``kind`` ``thought``: its reasoning as the transcript shows it,
        a thinking block, a reasoning summary)."""
        text = text.strip()
        if text:
            self._add(kind, text[:TEXT_LIMIT])

    def summary(self, text: str, kind: str) -> None:
        """The agent's own summary of its context (``claude-compact``, ``codex-compacted``)."""
        if text.strip():
            self._add("summary", text, kind)

    # -- tools -----------------------------------------------------------------------------------

    def tool_use(self, call_id: str | None, name: str, args: dict[str, Any]) -> None:
        """A tool call; handled when its result arrives (:meth:`tool_result`)."""
        key = call_id or f"#{len(self.events)}-{len(self._pending)}"
        if name in ("TodoWrite", "update_plan"):
            self._task_list(name, args)  # the list is what the agent says, whatever the result
            return
        if name in ("KillShell", "KillBash", "TaskStop"):
            shell = args.get("shell_id") or args.get("task_id") or args.get("bash_id")
            if not isinstance(shell, str) or not shell:
                self._add("env", ["stopped a background shell"])
                return
            command = self._shells.get(shell)
            shown = f": `{command_line(command, 120)}`" if command else ""
            self._add("shell", _started(shell), f"stopped background shell {shell}{shown}")
            return
        if name in SUBAGENT_TOOLS:
            asked = str(args.get("description") or "")[:200]
            self._add("subagent", key, asked, str(args.get("subagent_type") or ""))
        self._pending[key] = (name, args, self.cwd)
        self._called[key] = (len(self.events), self._ts)

    def _answer(self, call_id: str | None) -> tuple[str, dict[str, Any], str | None] | None:
        """The pending call ``call_id`` answers, taken off the pending calls; None if none."""
        pending = self._pending.pop(call_id, None) if call_id else None
        if pending is not None:
            self._called.pop(call_id or "", None)
            self._answered = len(self.events)
        return pending

    def tool_result(
        self,
        call_id: str | None,
        output: str,
        *,
        is_error: bool = False,
        exit_code: int | None = None,
        structured: object = None,
    ) -> None:
        pending = self._answer(call_id)
        if pending is None:
            return
        name, args, cwd = pending
        if "\x1b" in output:  # a terminal's colours and cursor moves are no part of what it said
            output = _ANSI.sub("", output)
        self._add("tool", tool_line(name, args, output, is_error, exit_code))
        if name == SHELL:
            self._run(args, output, is_error, exit_code, cwd)
        elif name == PATCH:
            patch = str(args.get("patch") or "")
            if not is_error and (exit_code in (None, 0)) and not _PATCH_FAILED.match(output):
                self._patch(patch, cwd)
            else:
                paths = [m.group(2).strip() for m in _PATCH_OP.finditer(patch) if m.group(2)]
                for path in paths[:3]:
                    self._add("fail", "patch", path, _reason(output), cwd)
        elif name in READ_TOOLS:
            path = args.get(READ_TOOLS[name])
            shell = output_file_shell(path) if isinstance(path, str) else None
            if shell:  # a background shell's output, read back: no file of the project
                self._served(shell, output)
            elif not is_error and isinstance(path, str) and path and not _SAVED_OUTPUT.search(path):
                self._add("read", path, self.cwd)
        elif name in OUTPUT_TOOLS and not is_error:
            shell = args.get("bash_id") or args.get("task_id") or args.get("shell_id")
            self._served(shell if isinstance(shell, str) else None, output)
        elif name in EDIT_TOOLS:
            path = args.get(EDIT_TOOLS[name])
            if not is_error:
                self._edit(name, args, structured)
            elif isinstance(path, str) and path:
                self._add("fail", "edit", path, _reason(output), self.cwd)
        elif name in SUBAGENT_TOOLS and (is_error or _API_ERROR.match(output)):
            self._add("subagent_failed", call_id, _agent_error(output))
        elif name == "TaskCreate":
            task = structured.get("task") if isinstance(structured, dict) else None
            ident = task.get("id") if isinstance(task, dict) else None
            if not isinstance(ident, str):
                m = _TASK_ID.search(output)
                ident = m.group(1) if m else None
            subject, detail = args.get("subject"), _text(args.get("description"))
            if isinstance(subject, str) and subject.strip():
                self._add("task_create", ident, subject.strip(), detail or "")
        elif name == "TaskUpdate" and not is_error and isinstance(args.get("taskId"), str):
            status, subject = _text(args.get("status")), _text(args.get("subject"))
            self._add(
                "task_update", args["taskId"], status, subject, _text(args.get("description"))
            )
        elif name == "TaskList" and not is_error:
            tasks = [
                (m.group(1), m.group(3).strip(), m.group(2)) for m in _TASK_LINE.finditer(output)
            ]
            if tasks or output.strip() == "No tasks found":
                self._add("task_list", tasks)
        elif name == "ExitPlanMode":
            plan = args.get("plan")
            if not isinstance(plan, str):
                m = _APPROVED_PLAN.search(output)
                plan = m.group(1) if m else None
            if isinstance(plan, str) and plan.strip():
                self.stated_plan(plan, "ExitPlanMode")
        elif name == "AskUserQuestion" and isinstance(structured, dict):
            answers = structured.get("answers")
            if isinstance(answers, dict):
                for question, answer in answers.items():
                    if isinstance(question, str) and isinstance(answer, str) and answer.strip():
                        said = f"{clipped_line(question, 160)} → {clipped_line(answer, 160)}"
                        self._add("decision", said)

    def rejected(
        self, call_id: str | None, reason: str | None = None, *, denied: bool = False
    ) -> None:
        """A call the person rejected: it did not run (no result, no failure); what they
        rejected is a decision, with the ``reason`` they gave. ``denied``: the permission
        settings refused it (a blocker: the person must allow it, or do it)."""
        pending = self._answer(call_id)
        if pending is None:
            return
        name, args = pending[0], pending[1]
        if name == SHELL:
            what = f"running `{command_line(str(args.get('command') or ''), 100)}`"
        elif name in EDIT_TOOLS or name == PATCH:
            path = args.get(EDIT_TOOLS.get(name, "file_path"))
            what = f"the edit of `{path}`" if isinstance(path, str) and path else "an edit"
        elif name == "ExitPlanMode":
            plan = str(args.get("plan") or "").strip().splitlines()
            first = f": {clipped_line(plan[0].lstrip('# '), 100)}" if plan else ""
            what = f"the plan (ExitPlanMode){first}"
        else:
            what = f"a {name} call"
        if denied:
            self._add("env", [f"{DENIED}{what}"])
            return
        said = f" — {clipped_line(reason, 200)}" if reason else ""
        self._add("decision", f"the person rejected {what}{said}")

    def background(self, call_id: str | None, ident: str | None) -> None:
        """A command the agent started to keep running (its result is that it started)."""
        pending = self._answer(call_id)
        if pending is None:
            return
        command = str(pending[1].get("command") or "")
        if command:
            if ident:
                self._shells[ident] = command
            start = _started(ident) if ident else "started in the background: "
            self._add("env", [f"{start}`{command_line(command, 160)}`"])

    def _served(self, shell: str | None, output: str) -> None:
        """What a background shell printed, read back: where it serves, if it says."""
        url = served_at(output[-OUTPUT_KEEP:]) if shell else None
        if shell and url:
            command = self._shells.get(shell)
            what = f"`{command_line(command, 120)}`" if command else "a command"
            self._add("shell", _started(shell), f"{_started(shell)}{what} serves {url}")

    def shell_ended(self, shell: str, said: str) -> bool:
        """A background shell the session started has ended (``said``: the harness's words,
        ``Background command "…" failed with exit code 1.``): its one line says so. False for
        a shell it did not start (the harness's words are then a fact of their own)."""
        command = self._shells.get(shell)
        if command is None:
            return False
        ended = said.removeprefix("Background command ").rstrip(".")
        line = f"{_started(shell)}`{command_line(command, 120)}` — ended: {ended}"
        self._add("shell", _started(shell), line)
        return True

    def _not_there(
        self, command: str, normal: str, output: str, status: str, where: str | None
    ) -> None:
        """What a failed run found not there (a command, a module, a git repository); dropped
        when a later run installs or runs it, ``git init`` runs, or the run that found it
        passes (in the same folder, for a repository); ``normal``: the command normalised."""
        if status in (FAILED, UNKNOWN):
            found = [(m, f"not found here (a run failed on it): {m}") for m in missing_of(output)]
            if _NOT_A_REPO in output[-2000:] and "git" in command:
                shown = f"`{command_line(command, 80)}` in {where or 'its folder'}"
                found.append((f"git\0{where}\0{normal}", f"not a git repository: {shown}"))
            for key, fact in found:
                if key not in self._missing:
                    self._missing[key] = (fact, normal)
                    self._add("env", [fact])
        elif status == PASSED:
            repo = f"git\0{where}\0{normal}"
            gone = [
                key
                for key, (_fact, raised) in self._missing.items()
                if (key.startswith("git\0") and (key == repo or "git init" in command))
                or (not key.startswith("git\0") and (raised == normal or supplies(command, key)))
            ]
            for key in gone:
                self._add("env_gone", self._missing.pop(key)[0])

    def finish_pending(self) -> None:
        """The calls whose result the transcript does not hold, each in the place it was made:
        an edit counts (it is most likely done), a command has no result. One made after the
        latest result: the session ended in the middle of a turn; one made before it (a command
        Codex kept running and no one asked about again) is no latest activity."""
        placed: list[tuple[int, list[tuple[str, str, tuple[Any, ...]]]]] = []
        now, self._ts = self._ts, ""
        for key, (name, args, cwd) in self._pending.items():
            where, self._ts = self._called.get(key, (len(self.events), now))
            start = len(self.events)
            if name in EDIT_TOOLS:
                self._edit(name, args, None)
            elif name == PATCH:
                self._patch(str(args.get("patch") or ""), cwd)
            elif name == SHELL:
                command = str(args.get("command") or "")
                if command:
                    verdict = Verdict(PENDING, "")
                    self._add("run", command, normalise(command), verdict, is_check(command), None)
            placed.append((where, self.events[start:]))
            del self.events[start:]
        self._ts = now
        if any(where >= self._answered for where, _events in placed):
            self._add("in_flight")
        # from the last place back (of calls made at one place, the last first), so that the
        # places before stay where they were and calls keep their order
        for _n, (where, events) in sorted(enumerate(placed), key=lambda p: (p[1][0], p[0]))[::-1]:
            self.events[where:where] = events
        self._pending.clear()
        self._called.clear()

    def file_change(self, kind: str, path: str, to: str | None = None) -> None:
        """A change the agent itself reports (Codex's FileChange items): ``add``, ``update``,
        ``delete``, with the path moved to."""
        cwd = self.cwd
        if kind == "delete":
            self._add("file", "delete", path, None, cwd)
        elif to:
            self._add("file", "move", path, to, cwd)
            self._add("file", "edit", to, None, cwd)
        else:
            self._add("file", "create" if kind == "add" else "edit", path, None, cwd)

    def _run(
        self, args: dict[str, Any], output: str, is_error: bool, code: int | None, cwd: str | None
    ) -> None:
        command = str(args.get("command") or "")
        if not command:
            return
        workdir = args.get("workdir")
        where = workdir if isinstance(workdir, str) and workdir else cwd
        verdict = judge(command, code, output[-OUTPUT_KEEP:], is_error=is_error)
        if verdict.status == FAILED and verdict.summary is None and is_check(command):
            # a check that failed with no runner's summary: the line that says why, with its
            # exit code (a build's, a formatter's error)
            reason = _reason(output)
            if reason and reason != verdict.text:
                verdict = Verdict(FAILED, f"{verdict.text}: {reason}" if verdict.text else reason)
        normal = normalise(command)
        self._add("run", command, normal, verdict, is_check(command), where)
        if verdict.status == FAILED and not is_check(command):
            self._add(
                "fail", "run", command, _reason(output) or verdict.text or verdict.line(), where
            )
        if not is_error:
            self._served(output_file_shell(command), output)
        self._not_there(command, normal, output, verdict.status, where)
        background = args.get("run_in_background") is True
        facts = facts_of(command, output[-OUTPUT_KEEP:], verdict.status, background)
        if facts:
            self._add("env", facts, command, where)
        if verdict.status != FAILED:
            self._add("shell_files", command, output[-OUTPUT_KEEP:], where)

    def _patch(self, patch: str, cwd: str | None) -> None:
        current: str | None = None
        for m in _PATCH_OP.finditer(patch):
            if m.group(3):
                if current:
                    self._add("file", "move", current, m.group(3).strip(), cwd)
                    current = m.group(3).strip()
                continue
            current = m.group(2).strip()
            kind = {"Add": "create", "Update": "edit", "Delete": "delete"}[m.group(1)]
            self._add("file", kind, current, None, cwd)

    def _edit(self, name: str, args: dict[str, Any], structured: object) -> None:
        path = args.get(EDIT_TOOLS[name])
        if not isinstance(path, str) or not path.strip():
            return
        created = isinstance(structured, dict) and structured.get("type") == "create"
        self._add("file", "create" if created else "edit", path, None, self.cwd)

    # -- the task list ----------------------------------------------------------------------------

    def _task_list(self, name: str, args: dict[str, Any]) -> None:
        key, text_key = ("todos", "content") if name == "TodoWrite" else ("plan", "step")
        items = args.get(key)
        if not isinstance(items, list):
            return
        pairs = [(i.get(text_key), i.get("status")) for i in items if isinstance(i, dict)]
        tasks = [
            (text.strip(), status)
            for text, status in pairs
            if isinstance(text, str) and text.strip() and isinstance(status, str)
        ]
        self._add("tasks", tasks)

    # -- plans ------------------------------------------------------------------------------------

    def stated_plan(self, text: str, source: str) -> None:
        """A plan the agent proposed as such (ExitPlanMode's, Codex's ``<proposed_plan>``)."""
        items = plan_items(text)
        if items:
            self._add("plan", items, source)

    def said_plan(self, text: str) -> None:
        """An assistant's text that may state a plan (a numbered list it calls one)."""
        numbered = list(_NUMBERED.finditer(text))
        if len(numbered) < 2:
            return
        before = text[: numbered[0].start()]
        steps = [clipped_line(m.group(2), 300) for m in numbered if not _OFFER.match(m.group(2))]
        if _PLAN_CUE.search(before[-400:]) and steps:
            self._add("plan", steps, "message")


def plan_items(text: str) -> list[str]:
    """The steps of a plan in Markdown: its numbered lines, else its top-level bullets, else
    its ``##`` headings (``## Phase 1: …``)."""
    numbered = [m.group(2) for m in _NUMBERED.finditer(text) if not m.group(0).startswith("    ")]
    for found in (numbered, re.findall(r"^[-*]\s+(.+)$", text, re.M)):  # else the bullets
        if len(found) >= 2:
            return [clipped_line(x, 300) for x in found]
    headings = re.findall(r"^#{2,4}\s+(.+)$", text, re.M)
    about = r"(?i)(context|summary|overview|verification)\b"  # a heading of no step
    return [clipped_line(x, 300) for x in headings if not re.match(about, x)]


# ---------------------------------------------------------------------------------------------
# What the log comes to


class Work:
    """What a session did (see the module's doc); paths are as a person reads them."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.tasks: list[Task] | None = None
        self.plan: list[Task] | None = None
        self.runs: list[Run] = []
        self.changed: list[str] = []
        self.made: list[str] = []
        self.moved: list[tuple[str, str]] = []
        self.deleted: list[str] = []
        self.summaries: list[tuple[int, str, str]] = []  # (order, text, kind)
        self.decisions: list[str] = []
        self.subagents: list[Subagent] = []
        self.subagent_files: dict[str, list[str]] = {}
        self.last_message: str | None = None
        self.last_message_order = -1
        self.last_answers_notice = False
        self.last_request_order = -1
        self.request_orders: list[int] = []
        self.said: list[tuple[int, str]] = []
        """The last assistant messages (not those answering a notice), with when."""
        self.thoughts: list[tuple[int, str]] = []
        """The main agent's last reasoning it shows (Claude Code's thinking, Codex's reasoning
        summaries), with when."""
        self.tools: list[tuple[int, str]] = []
        """The main agent's latest tool calls, each with what it came to, with when."""
        self.in_flight = False
        """The session ends with tool calls whose result it does not hold (mid-turn)."""
        self.environment: list[str] = []
        """Git and process state the commands left (:mod:`.environment`), oldest first."""
        self.context: list[str] = []
        """What the harness says of the environment (sandbox, shell, branch), latest kept."""
        self.failures: list[str] = []
        """Commands (not checks) and edits whose latest attempt failed, not done since."""
        self.read: list[str] = []
        """The files the main agent read and did not change, the most recent last."""
        self.last_failure: str | None = None
        """What failed in the main agent's last step (a command or an edit), if it failed."""
        self.handoff_asked_order = -1
        """When clm-policy last asked the agent for its handoff (-1: never)."""
        self.tasks_order = -1  # when the task list last changed
        self.created: list[tuple[int, str]] = []
        """The files the agent's own tools wrote new, with when (as a person reads them)."""
        self.last_tool_order = -1
        """When the main agent last called a tool (mid-turn when after its last words)."""
        self.last_activity: str | None = None
        """What the main agent did last: a command and its result, an edit, an agent."""
        self.last_activity_order = -1  # when it did that (-1: never)
        self._done: list[tuple[int, str, str]] = []  # (order, "file" | "run", what)

    def substantive_orders(self, *, rejections: bool = True) -> list[int]:
        """When each request that asks for something was made, in order (``rejections``:
        what the person said when rejecting a call among them)."""
        return [
            o
            for o, r in zip(self.request_orders, self.requests, strict=False)
            if substantive(r.text) and (rejections or r.source != REJECTION)
        ]

    def last_substantive_order(self) -> int:
        """When the latest request that asks for something was made (-1: none)."""
        starts = self.substantive_orders()
        return starts[-1] if starts else -1

    def active_after(self, order: int) -> bool:
        """Whether the agent changed a file, ran a check that passed or started a subagent after
        ``order``."""
        return any(when > order for when, _what, _value in self._done)

    def made_for(self, order: int, item: str) -> str | None:
        """The file the agent created after ``order`` that is named after ``item`` (a task
        "Create realtime-systems agent" and ``agents/realtime-systems.md`` written new after
        the list last changed: the task's deliverable exists), as a person reads it; None when
        none is. A name of fewer than six characters (``api``, ``utils``) names no task, and a
        file deleted or moved since is no deliverable."""
        lowered = item.lower()
        for when, shown in self.created:
            stem = _stem(shown)
            named = re.search(rf"(?<![\w-]){re.escape(stem)}(?![\w-])", lowered)
            if when > order and len(stem) >= 6 and named and shown in self.changed:
                return shown
        return None

    def done_after(self, order: int, item: str) -> bool:
        """Whether what ``item`` names was done after ``order`` (:meth:`done_since`)."""
        return self.done_since(order, item) is not None

    def done_since(self, order: int, item: str) -> tuple[str, str] | None:
        """What the record shows was done after ``order`` of what ``item`` names (a file, a
        command, an identifier, tests, a lint, a build): (the record's own name of it — the
        file's absolute path, the command —, a few words: `` `x.py` changed``, `` `pytest -q`
        passed``, ``an agent was started``); None when nothing was. Done is: an
        edit of a file it names, a passing run of a command it quotes or of the kind of check it
        names, a passing run that holds an identifier it quotes (`` `GetOptions` `` and ``go
        test -run TestGetOptions``), an edited file named after it (`` `parse_config` `` and
        ``parse_config.py``; not ``ChangeOrganizationRole.vue`` for `` `organizationRole` ``:
        a file that holds the word is not the step done). An item that names nothing checkable
        is not done."""
        quoted = _BACKTICK.findall(item)
        named = [*_PATHLIKE.findall(item), *(q for q in quoted if "." in q and " " not in q)]
        files = {p.removeprefix("./") for p in named}  # `api/blog/route.ts`: that one
        commands = [normalise(q) for q in quoted if " " in q or is_check(q)]
        names = [
            q.lower() for q in quoted if " " not in q and "." not in q and len(q) >= 6
        ]  # identifiers: a function, a test
        lowered = item.lower()
        kinds = [k for k, words in _WORK_WORDS.items() if any(w in lowered for w in words)]
        for when, what, value in self._done:
            if when <= order:
                continue
            shown = next((f for f in files if f"/{value}".endswith(f"/{f.lstrip('/')}")), None)
            if what == "file" and (shown or (names and _stem(value) in names)):
                said = f"`{shown or posixpath.basename(value)}` changed"  # or named after it
                return value, said
            if what == "subagent" and re.search(r"\b(?:sub)?agents?\b", lowered):
                return value, "an agent was started"  # the subagent it meant to dispatch
            if what == "run" and (
                any(n in value.lower() for n in names)  # a test of it ran and passed
                or any(c and (covers(value, c) or covers(c, value)) for c in commands)
                or (kinds and any(w in value for k in kinds for w in _WORK_WORDS[k]))
            ):
                folder, command = split_folder(value)
                return value, f"`{command_line(command, 80)}` passed{folder}"
        return None


_SCRIPT_RUNNERS = frozenset(
    {"node", "python", "python3", "py", "bash", "sh", "zsh", "ruby", "deno", "bun", "tsx",
     "ts-node", "perl", "php", "pwsh", "powershell"}
)  # fmt: skip
_SCRIPT_FILE = re.compile(r"[\w.-]+\.(?:[cm]?[jt]s|py|sh|rb|pl|php|ps1)$")


_CD_FAILED = re.compile(
    r"(?:\bcd:|\(eval\):cd:\d+:|Set-Location\b).{0,200}(?:no such file|not found|"
    r"does not exist|cannot find path|can't cd)",
    re.I,
)
"""A failure whose reason is the command's ``cd`` (the folder was not there from where the
shell stood): the rest of the command never ran."""


def _script_of(normal: str) -> str | None:
    """``node phase1.js`` for a run of a script file (``node scripts/phase1.js``, ``node
    "d:/w/scripts/phase1.js"``): its program, the script's name and its arguments, so that a
    pass of the same script run the same way from another folder undoes its failure (not one
    with other arguments: ``manage.py runserver`` is no ``manage.py migrate``); None for any
    other command."""
    words = split_folder(normal)[1].replace("\\", "/").split()
    if len(words) < 2 or posixpath.basename(words[0]).lower() not in _SCRIPT_RUNNERS:
        return None
    name = posixpath.basename(words[1].strip("'\""))
    if not _SCRIPT_FILE.match(name):
        return None
    return " ".join([posixpath.basename(words[0]).lower(), name, *words[2:]])


BRANCHES_SHOWN = 4
"""The branches a session's branch line names: the latest and the three before it."""


def _stem(path: str) -> str:
    """A file's name without its folder and its last suffix, lowered (``src/Parse_Config.py``:
    ``parse_config``)."""
    return posixpath.splitext(posixpath.basename(path.rstrip("/")))[0].lower()


def merge(main: WorkLog, subs: list[WorkLog]) -> list[tuple[str, str, tuple[Any, ...], str | None]]:
    """The events of the main log and its subagents' in one order: by time when every log
    has times, else the subagents' after the main agent's."""
    tagged = [(ts, kind, data, None) for ts, kind, data in main.events]
    extra = [(ts, kind, data, log.agent) for log in subs for ts, kind, data in log.events]
    if main.timed and all(log.timed for log in subs):
        return sorted(tagged + extra, key=lambda e: e[0])  # stable: file order within a second
    return tagged + extra


def finish(main: WorkLog, subs: list[WorkLog] | None = None) -> Work:
    """The :class:`Work` of a transcript's log and its subagents' logs."""
    subs = subs or []
    for log in [main, *subs]:
        log.finish_pending()
    gathering = _Gathering(Paths(main.root or main.cwd))
    for order, (_ts, kind, data, agent) in enumerate(merge(main, subs)):
        if agent is not None and kind not in ("file", "run", "shell_files"):
            continue  # a subagent's requests, lists, plans and words are its own
        gathering.event(order, kind, data, agent)
    return gathering.finished()


def _nested(one: str, other: str) -> bool:
    """Whether one of two folders is, or holds, the other (may be one repository's)."""
    one, other = one.rstrip("/") + "/", other.rstrip("/") + "/"
    return one.startswith(other) or other.startswith(one)


class _Gathering:
    """The :class:`Work` :func:`finish` fills from the merged events, and what it keeps on the
    way."""

    def __init__(self, paths: Paths) -> None:
        self.paths = paths
        self.work = Work()
        self.files = FileLog()
        self.queued: set[str] = set()  # queued prompts not yet seen as a user line
        self.contexts: dict[str, str] = {}  # what the harness says of the environment, by kind
        self.branches: list[str] = []  # the branches Claude Code saw, each change once
        self.last_run: tuple[str, str] | None = None  # (its activity line, the command)
        self.read_files: dict[str, int] = {}  # a file the main agent read -> when, last
        self.seen: set[str] = set()  # files a command read: they were there
        self.failed: dict[tuple[str, str], tuple[int, str]] = {}  # failures not undone since
        self.listed: list[Task] | None = None  # the latest TodoWrite / update_plan list
        self.task_tools = False  # the task tools keep the list (not a whole list)
        self.by_id: dict[str, list[str]] = {}  # the task tools': id -> [subject, status, detail]
        self.sub_files: dict[str, set[str]] = {}
        self.notice_last = False
        self.plans: list[tuple[int, list[str]]] = []
        self.status_at: dict[str, str | None] = {}  # a `git status` fact -> the folder it ran in

    def event(self, order: int, kind: str, data: tuple[Any, ...], agent: str | None) -> None:
        """One event of the merged logs (``agent``: the subagent's, None for the main
        agent's; a subagent's are only its ``file``, ``run`` and ``shell_files``)."""
        work = self.work
        if kind in ("request", "notice", "said", "thought", "subagent", "subagent_failed"):
            self._conversation_event(order, kind, data)
        elif kind == "summary":
            work.summaries.append((order, data[0], data[1]))
        elif kind == "decision":
            work.decisions.append(data[0])
        elif kind == "in_flight":
            work.in_flight = True
        elif kind in ("tasks", "task_create", "task_update", "task_list"):
            work.tasks_order = order
            self._task_event(kind, data)
        elif kind == "plan":
            self.plans.append((order, data[0]))
        elif kind == "file":
            self._file_event(order, data, agent)
        elif kind == "env":
            self._env_event(data)
        elif kind == "env_gone":
            work.environment = [f for f in work.environment if f != data[0]]
        elif kind == "shell":  # a shell's one line: serves, stopped, ended
            started, line = data
            facts = [f for f in work.environment if not f.startswith(started) and f != line]
            url = _served_url(line)
            if url:  # an earlier shell said it served there: it serves there no more
                facts = [f for f in facts if not f.startswith(SHELL_LINE) or _served_url(f) != url]
            work.environment = [*facts, line]
        elif kind == "read":
            self.read_files[self.paths.absolute(data[0], data[1])] = order
        elif kind == "asked_handoff":
            work.handoff_asked_order = order
        elif kind == "tool":
            work.tools.append((order, data[0]))
            del work.tools[:-TOOLS_KEPT]
        elif kind == "context_gone":
            self.contexts.pop(data[0], None)
        elif kind == "context":
            label = data[0].split(":", 1)[0]
            if label == "background task":
                work.environment.append(data[0])
            else:
                self.contexts[label] = data[0]
                if label == "git branch":
                    branch = data[0].split(":", 1)[1].split(" (", 1)[0].strip()
                    if not self.branches or self.branches[-1] != branch:
                        self.branches.append(branch)
        elif kind == "fail":
            self._fail_event(order, data)
        elif kind == "run":
            self._run_event(order, data, agent)
        elif kind == "shell_files":
            self._shell_files_event(order, data)

    def _conversation_event(self, order: int, kind: str, data: tuple[Any, ...]) -> None:
        """A request, a notice, the agent's words or thinking, a subagent it started."""
        work = self.work
        if kind == "request":
            text, source = data
            if text in self.queued:  # a queued prompt again: delivered, or shown once more
                self._unqueue(text, keep=source == QUEUED)
            elif source == QUEUED:
                self.queued.add(text)
            work.requests.append(Request(text, source))
            work.request_orders.append(order)
            work.last_request_order = order
            self.notice_last = False
        elif kind == "notice":
            self.notice_last = True
        elif kind == "said":
            work.last_message = data[0]
            work.last_message_order = order
            work.last_answers_notice = self.notice_last
            # (a message after a task's notification is still the agent's words to the user:
            # often its summary of the turn — "the app is now running at …")
            work.said.append((order, data[0]))
            del work.said[:-SAID_KEPT]
        elif kind == "thought":
            work.thoughts.append((order, data[0]))
            del work.thoughts[:-THOUGHTS_KEPT]
        elif kind == "subagent":
            work.subagents.append(Subagent(*data))
            work.last_activity = f"started an agent: {clipped_line(data[1] or data[2], 120)}"
            work.last_activity_order = order
            work._done.append((order, "subagent", data[1]))
        elif kind == "subagent_failed":  # it did nothing: no work done, nothing to wait for
            ident, reason = data
            for i, sub in enumerate(work.subagents):
                if sub.ident == ident:
                    work.subagents[i] = replace(sub, failed=reason or "failed")
                    started = [
                        n
                        for n, d in enumerate(work._done)
                        if d[1:] == ("subagent", sub.description)
                    ]
                    if started:  # (its own start: the latest of that description)
                        del work._done[started[-1]]
                    what = clipped_line(sub.description or sub.kind, 120)
                    work.last_activity = f"an agent failed: {what} — {reason or 'failed'}"
                    work.last_activity_order = order
                    break

    def _unqueue(self, text: str, *, keep: bool) -> None:
        """A queued prompt met again — Claude Code writes one as a ``queue-operation`` line
        when the person types it, as a ``queued_command`` attachment when it hands it to the
        model, and (taken as the next turn) as the turn's ``user`` line: one request, listed
        where it was met last (with the source it has there). ``keep``: still queued (a user
        line with its words may follow)."""
        work = self.work
        listed = [n for n, r in enumerate(work.requests) if r.text == text and r.source == QUEUED]
        if listed:
            del work.requests[listed[-1]], work.request_orders[listed[-1]]
        if not keep:
            self.queued.discard(text)

    def _task_event(self, kind: str, data: tuple[Any, ...]) -> None:
        """A whole list (``TodoWrite``, ``update_plan``) or a task tool's change to its list."""
        by_id = self.by_id
        if kind == "tasks":
            self.listed = [Task(text, _status(status)) for text, status in data[0]]
            self.task_tools = False
            by_id.clear()
        elif kind == "task_create":
            ident, subject, detail = data
            ident = ident or str(len(by_id) + 1)
            by_id[ident] = [subject, "pending", detail]
            self.task_tools = True
        elif kind == "task_update":
            ident, status, subject, detail = data
            if ident in by_id:
                if status == "deleted":
                    del by_id[ident]
                else:
                    by_id[ident][1] = status or by_id[ident][1]
                    by_id[ident][0] = subject or by_id[ident][0]
                    by_id[ident][2] = detail or by_id[ident][2]
                self.task_tools = True
        elif kind == "task_list":
            # (the listing names no description: the one the agent wrote is kept)
            details = {ident: item[2] for ident, item in by_id.items()}
            by_id.clear()
            by_id.update(
                (ident, [subject, status, details.get(ident, "")])
                for ident, subject, status in data[0]
            )
            self.task_tools = True

    def _file_event(self, order: int, data: tuple[Any, ...], agent: str | None) -> None:
        """A file edited, written, deleted or moved by a tool."""
        work, paths, files = self.work, self.paths, self.files
        op, path, to, cwd = data
        where = paths.absolute(path, cwd)
        if op in ("edit", "create"):
            files.edit(where, created=op == "create")
        elif op == "delete":
            files.delete(where)
        elif op == "move" and to:
            files.move(where, paths.absolute(to, cwd))
            work._done.append((order, "file", paths.absolute(to, cwd)))
        work._done.append((order, "file", where))
        if agent is not None:
            if op in ("edit", "create"):
                self.sub_files.setdefault(agent, set()).add(paths.shown(where))
            return
        if op in ("edit", "create"):
            self.failed.pop(("file", where), None)
        if op == "create":
            work.created.append((order, paths.shown(where)))
        work.last_tool_order = order
        verb = {"edit": "edited", "create": "wrote", "delete": "deleted", "move": "moved"}
        work.last_activity = f"{verb.get(op, op)} `{paths.shown(where)}`"
        work.last_activity_order = order

    def _fail_event(self, order: int, data: tuple[Any, ...]) -> None:
        """A command or an edit of the main agent's that failed."""
        what, target, reason, cwd = data
        self.work.last_tool_order = order
        if what == "run" and reads_only(target):
            # (a look that found nothing — `sed -n 1,80p gone.py`, `rg x` — is no failure)
            return
        if what == "run":
            key = (what, self._in_folder(target, normalise(target), cwd))
        else:
            key = ("file", self.paths.absolute(target, cwd))
        self.failed[key] = (order, _failure_text(what, target, reason, self.paths, cwd))

    def _in_folder(self, command: str, normal: str, cwd: str | None) -> str:
        """The command a run is the same as, with the folder it ran in when that is not the
        project's (``npm run build (in apps/admin)``): the same command in two folders of a
        monorepo is two checks, and one's pass is not the other's."""
        root = self.paths.root
        if not root or not normal:
            return normal
        folder = self._ended_in(command, cwd)
        if not folder or folder.rstrip("/") == root.rstrip("/"):
            return normal
        shown = self.paths.shown(folder)
        return normal if shown in ("", ".") else f"{normal} (in {shown})"

    def _ended_in(self, command: str, cwd: str | None) -> str | None:
        """The absolute folder ``command`` (run in ``cwd``, else the project) ends in, after
        its ``cd`` and the like; None when neither is known."""
        here = (folder_after(command, cwd, self.paths) if cwd else None) or self.paths.root
        return self.paths.absolute(here) if here else None

    def _run_event(self, order: int, data: tuple[Any, ...], agent: str | None) -> None:
        """A command's run and its verdict."""
        work = self.work
        command, normal, verdict, check, cwd = data
        normal = self._in_folder(command, normal, cwd)
        work.runs.append(Run(command, normal, verdict, check, agent, order))
        if agent is None:
            self._settle_failures(normal, worked=verdict.status != FAILED)
        if agent is None and verdict.status != FAILED:
            script = _script_of(normal)
            for key in [k for k in self.failed if script and _script_of(k[1]) == script]:
                # the same script, run another way (quoted, a full path): what failed is no
                # open failure, and how it worked is worth knowing
                failed = self.failed.pop(key)[1].removesuffix(".")
                work.environment.append(
                    f"{failed}; run as `{command_line(command, 120)}` it worked"
                )
        if agent is None:
            work.last_tool_order = order
            result = verdict.line()
            shown = f" ({result})" if result else ""
            work.last_activity = f"ran `{command_line(command, 160)}`{shown}"
            work.last_activity_order = order
            passed = verdict.status == PASSED and not check  # a look, maybe: told at the end
            self.last_run = (work.last_activity, command) if passed else None
        if verdict.status == PASSED:
            work._done.append((order, "run", normal))

    def _settle_failures(self, normal: str, *, worked: bool) -> None:
        """The failed commands a run of ``normal`` settles: the same command, ``worked`` here
        or in another folder (`git add` failed where the shell had stayed, `cd … && git add`
        worked); and one that failed at its ``cd`` (it never ran), run since whatever came of
        it (the same words, maybe with more: ``vercel --prod`` then ``vercel --prod --yes``
        where the shell already was) — its result is the later run's to tell."""
        words = split_folder(normal)[1].split()
        for key, (_order, text) in list(self.failed.items()):
            before = split_folder(key[1])[1].split()
            if key[0] != "run":
                continue
            if (worked and words == before) or (
                _CD_FAILED.search(text) and words[: len(before)] == before
            ):
                del self.failed[key]

    def _env_event(self, data: tuple[Any, ...]) -> None:
        """One run's environment facts, settled against the earlier ones (a commit makes an
        earlier ``git status`` of the same repository stale, a push marks what it pushed)."""
        facts = data[0]
        if len(data) < 3:
            self.work.environment += facts
            return
        here = self._ended_in(data[1], data[2])
        for fact in facts:
            if "at the last `git status`" in fact:
                self.status_at[fact] = here

        def elsewhere(fact: str) -> bool:  # another repository: neither folder holds the other
            there = self.status_at.get(fact)
            return here is not None and there is not None and not _nested(here, there)

        self.work.environment = settle(self.work.environment, facts, elsewhere)

    def _shell_files_event(self, order: int, data: tuple[Any, ...]) -> None:
        """The files a shell command's words move, delete or make, and those its output says
        it created."""
        files, paths = self.files, self.paths
        command, output, cwd = data
        for op, path, to in shell_file_ops(command, cwd, paths):
            if op == "move" and to:
                files.move(path, to)
            elif op == "made" and self._was_there(path):
                files.edit(path)  # written over: the file was there
            elif op in ("delete", "made", "edit"):
                getattr(files, op)(path)
            if op in ("made", "edit"):  # a failed edit of it, done another way (`node -e`)
                self.failed.pop(("file", path), None)
            self.work._done.append((order, "file", to or path))
        self.seen.update(shell_reads(command, cwd, paths))
        made = created_in_output(output, cwd, paths, command)
        if made:  # where the command went first (cd frontend; npx ng generate …)
            folder = folder_after(command, cwd, paths)
            made = made if folder == cwd else created_in_output(output, folder, paths, command)
        for path in made:
            files.made(path)

    def _was_there(self, path: str) -> bool:
        """Whether the file at ``path`` existed: the session read it, or an edit of it failed
        (``String to replace not found``)."""
        return path in self.seen or path in self.read_files or ("file", path) in self.failed

    def finished(self) -> Work:
        """The :class:`Work`, its task list, plan, files, reads and failures settled."""
        work, paths, files = self.work, self.paths, self.files
        if self.task_tools:
            work.tasks = [
                Task(subj, _status(status), detail) for subj, status, detail in self.by_id.values()
            ]
        elif self.listed is not None:
            work.tasks = self.listed
        if self.plans:
            order, items = self.plans[-1]
            work.plan = [
                Task(item, "completed" if work.done_after(order, item) else "pending")
                for item in items
            ]
        work.changed = [paths.shown(p) for p in files.changed()]
        work.made = [paths.shown(p) for p in files.made_files()]
        work.moved = [(paths.shown(a), paths.shown(b)) for a, b in files.moved()]
        work.deleted = [paths.shown(p) for p in files.deleted()]
        work.subagent_files = {k: sorted(v) for k, v in self.sub_files.items()}
        if len(self.branches) > 1 and "git branch" in self.contexts:
            # the branch changed under the session (the person's checkout, or the agent's)
            before = ", then ".join(self.branches[-BRANCHES_SHOWN:-1])
            self.contexts["git branch"] = self.contexts["git branch"].replace(
                "(as Claude Code last saw it)", f"(as Claude Code last saw it; before: {before})"
            )
        work.context = list(self.contexts.values())
        last = self.last_run
        if last and work.last_activity == last[0] and reads_only(last[1]):
            # (a look that went fine — `sed -n`, `grep` — has no result worth a word)
            work.last_activity = f"ran `{command_line(last[1], 160)}`"
        changed = set(work.changed)
        recent = sorted(self.read_files.items(), key=lambda item: item[1])
        work.read = [
            shown
            for shown in dict.fromkeys(paths.shown(p) for p, _ in recent)
            if shown not in changed
        ][-READ_KEPT:]
        newest = max(self.failed.values(), default=None)
        if newest is not None and newest[0] >= work.last_tool_order:
            work.last_failure = newest[1]
        since = work.last_substantive_order()
        failures = [text for order, text in sorted(self.failed.values()) if order > since]
        work.failures = failures[-FAILURES_KEPT:]
        pasted = _pasted_failure(work)
        if pasted is not None:
            work.failures = [pasted, *work.failures][-FAILURES_KEPT:]
            if newest is None or newest[0] < work.request_orders[-1]:
                work.last_failure = pasted  # nothing failed since the person showed it
        return work


def _pasted_failure(work: Work) -> str | None:
    """What the person's latest message shows of a failing test run they pasted (a CI log:
    ``5 failed, 29 passed in 0.63s``), unless a check of the same runner passed after it."""
    if not work.requests:
        return None
    text = work.requests[-1].text
    summary = summary_of(text) if len(text) > 40 else None
    if summary is None or not summary.failed:
        return None
    after = work.request_orders[-1]
    ran = [r.verdict.summary for r in work.runs if r.order > after and r.verdict.status == PASSED]
    if any(s is not None and s.runner == summary.runner for s in ran):
        return None
    first = first_failure(text)
    shown = summary.text + (f"; first: {clipped_line(first, 120)}" if first else "")
    return f"the test run in the user's latest message failed — {shown}"


FAILURES_KEPT = 5
READ_KEPT = 12


def _failure_text(what: str, target: str, reason: str, paths: Paths, cwd: str | None) -> str:
    """``npm create vite frontend: failed — ENOTFOUND registry.npmjs.org``, ``the edit of
    src/app.ts failed — File has not been read yet``."""
    if what == "run":
        head = f"`{clipped_line(target, 160)}` failed"
    else:
        shown = paths.shown(paths.absolute(target, cwd))
        head = f"the {'patch' if what == 'patch' else 'edit'} of `{shown}` failed"
    return f"{head} — {reason}" if reason else head


def _agent_error(output: str) -> str:
    """Why a subagent failed: an API error's status and its innermost message and code
    (``API Error 400: The requested model is not supported. (model_not_supported)``), else
    the line of the result that says why."""
    said = output.partition("\nagentId:")[0]
    m = _API_ERROR.match(said)
    if not m:
        return _reason(said)
    plain = said.replace("\\", "")
    messages = re.findall(r'"message":\s*"([^"]+)"', plain)
    code = re.findall(r'"code":\s*"([^"]+)"', plain)
    status = f" {m.group(1)}" if m.group(1) else ""
    if not messages:
        return clipped_line(said, 200)
    return clipped_line(f"API Error{status}: {messages[-1].strip()}", 180) + (
        f" ({code[-1]})" if code else ""
    )


def _status(status: str) -> str:
    return status if status in ("pending", "in_progress", "completed") else "pending"


def _text(value: object) -> str | None:
    """A tool argument's text, stripped (None: not text, or blank)."""
    return value.strip() or None if isinstance(value, str) else None
