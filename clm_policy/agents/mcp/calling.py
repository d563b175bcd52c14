"""Which Claude Code session is calling the MCP server, and its transcript.

Claude Code (2.1.328) starts a project's MCP servers once per process, with
``CLAUDE_PROJECT_DIR`` and ``CLAUDE_CODE_SESSION_ID`` in their environment, and writes each
assistant message to the session's transcript before it runs the tools the message calls:
``$CLAUDE_CONFIG_DIR/projects/<project path, every character but letters and digits as
'->/<session>.jsonl``. So the caller is, in this order:

1. the transcript that holds this very call (a ``tool_use`` of the tool with no result yet,
   near its end): the session Claude Code named first, then the project's others, newest
   first (after ``/clear`` the server keeps the old id; two sessions may share a project);
2. the session ``CLAUDE_CODE_SESSION_ID`` names;
3. the project's transcript modified last.

Claude Code writes its transcript every 100 ms, so the call's line often lands a moment after
the call: it is waited for, :data:`WAIT` seconds at most, only when the client is Claude Code.
"""

from __future__ import annotations

import glob
import json
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass

from clm_policy.agents.hooks.settling import tail
from clm_policy.base.errors import InputError
from clm_policy.base.paths import claude_config_dir

TAIL = 256 * 1024  # bytes of a transcript's end searched for the pending call
CANDIDATES = 20  # transcripts of the project looked at, newest first
WRITER = "claude-code"  # Claude Code's clientInfo.name
WAIT = 1.0  # seconds Claude Code's call may take to reach a transcript (a flush or two)
POLL = 0.01

HOLDS_CALL = "its transcript holds this call"
SESSION_ENV = "CLAUDE_CODE_SESSION_ID"
NAMED = "named by CLAUDE_CODE_SESSION_ID"
NEWEST = "the project's newest transcript"


@dataclass(frozen=True)
class Caller:
    session_id: str
    transcript: str
    project: str
    found_by: str


def project_dir(env: Mapping[str, str], cwd: str) -> str:
    return os.path.abspath(env.get("CLAUDE_PROJECT_DIR") or cwd)


def transcripts_dir(env: Mapping[str, str], project: str) -> str:
    return os.path.join(claude_config_dir(env), "projects", re.sub(r"[^A-Za-z0-9]", "-", project))


def find_caller(tool: str, env: Mapping[str, str], cwd: str, wait: float = 0.0) -> Caller:
    """The session calling ``tool``; the call is looked for until it is found or ``wait``
    seconds have passed."""
    project = project_dir(env, cwd)
    folder = transcripts_dir(env, project)
    deadline = time.monotonic() + wait
    while True:
        named = _named(env, folder)
        found = _newest(folder)
        candidates = ([named] if named else []) + [p for p in found if p != named]
        for path in candidates:
            if holds_pending_call(path, tool):
                return _caller(path, project, HOLDS_CALL)
        if not candidates or time.monotonic() >= deadline:
            break
        time.sleep(POLL)
    if named:
        return _caller(named, project, NAMED)
    if found:
        return _caller(found[0], project, NEWEST)
    named_id = env.get(SESSION_ENV)
    raise InputError(
        f"no Claude Code session found for {project}: no transcript in {folder}"
        + (f" (nor of {SESSION_ENV} {named_id!r} elsewhere)" if named_id else "")
    )


def _newest(folder: str) -> list[str]:
    paths = (
        p for p in glob.glob(os.path.join(glob.escape(folder), "*.jsonl")) if os.path.isfile(p)
    )
    return sorted(paths, key=_mtime, reverse=True)[:CANDIDATES]


def _named(env: Mapping[str, str], folder: str) -> str | None:
    session = env.get(SESSION_ENV, "")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", session):
        return None
    path = os.path.join(folder, f"{session}.jsonl")
    if os.path.isfile(path):
        return path
    # a project path Claude Code names differently (a long one is cut and hashed)
    elsewhere = glob.glob(os.path.join(os.path.dirname(folder), "*", f"{session}.jsonl"))
    return elsewhere[0] if len(elsewhere) == 1 else None


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def _caller(path: str, project: str, how: str) -> Caller:
    session = os.path.basename(path).removesuffix(".jsonl")
    return Caller(session, path, project, how)


def holds_pending_call(path: str, tool: str) -> bool:
    """Whether the end of the transcript holds a call of ``tool`` with no result yet."""

    data = tail(path, TAIL)
    marker = f"__{tool}".encode()
    first = data.find(marker)
    if first < 0:
        return False
    pending: set[str] = set()
    for raw in data[data.rfind(b"\n", 0, first) + 1 :].splitlines():
        # only the lines that call the tool, or may answer a call of it, are read
        if marker not in raw and not (pending and b"tool_result" in raw):
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            continue  # the first line is cut; the last one may be half written
        message = line.get("message") if isinstance(line, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            name = str(block.get("name"))  # (no other JSON value reads as "mcp__...")
            if (
                block.get("type") == "tool_use"
                and name.startswith("mcp__")
                and name.endswith(f"__{tool}")
            ):
                pending.add(str(block.get("id")))
            elif block.get("type") == "tool_result":
                pending.discard(str(block.get("tool_use_id")))
    return bool(pending)
