"""Registering clm-policy's MCP server with Claude Code (``clm-policy mcp --install``).

Claude Code reads a project's servers from ``<project>/.mcp.json`` (meant to be committed; each
person approves a project's servers once) and the person's own from the ``mcpServers`` of
``~/.claude.json``. :func:`install` merges the ``clm-policy`` entry into one of them and keeps
everything else, in its order — in its own entry too, every key but :data:`OWNED`;
:func:`uninstall` takes that entry out and leaves the rest as it is.
"""

from __future__ import annotations

import copy
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from clm_policy.agents.hooks import claude_settings as cs
from clm_policy.base.errors import InputError
from clm_policy.base.paths import claude_user_config, shown_path

NAME = "clm-policy"


def config_path(scope: str, cwd: Path) -> Path:
    cs.check_scope(scope)
    if scope == "project":
        return cwd / ".mcp.json"
    return Path(claude_user_config())


USER_CONFIG_LIMIT = 256 * 1024 * 1024
"""``~/.claude.json`` is Claude Code's own file, and it keeps every project's history: tens of
MB is common (anthropics/claude-code#6394), where a settings file's 4 MiB is plenty."""


def limit(scope: str) -> int:
    return USER_CONFIG_LIMIT if scope == "user" else cs.SETTINGS_LIMIT


OWNED = ("type", "command", "args")  # any other key of the entry (env, ...) is the person's


def merge(config: dict[str, Any], ours: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``config`` with ``ours`` as its ``mcpServers.clm-policy`` (a new dict), and what
    changed."""
    merged = copy.deepcopy(config)
    servers = merged.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InputError("`mcpServers` is not an object")
    current = servers.get(NAME)
    kept = [k for k in current if k not in OWNED] if isinstance(current, dict) else []
    entry = copy.deepcopy(current) if isinstance(current, dict) else {}
    entry.update(copy.deepcopy(ours))
    if current == entry:
        return merged, []
    servers[NAME] = entry
    shown = " ".join([ours["command"], *ours["args"]])
    if current is None:
        return merged, [f"added MCP server {NAME} `{shown}`"]
    keeping = f" (kept its {', '.join(kept)})" if kept else ""
    return merged, [f"MCP server {NAME}: replaced {_shown(current)} by `{shown}`{keeping}"]


def _shown(value: object) -> str:
    if isinstance(value, dict) and isinstance(value.get("command"), str):
        args = value.get("args") if isinstance(value.get("args"), list) else []
        return "`" + " ".join([value["command"], *map(str, args or [])]) + "`"
    return "another entry"


def _ours() -> dict[str, Any]:
    return {"type": "stdio", "command": cs.executable(), "args": ["mcp"]}


def check(scope: str, cwd: Path) -> None:
    """The :class:`InputError` :func:`install` would raise, nothing written."""
    ours = _ours()
    cs.merged_json(config_path(scope, cwd), lambda data: merge(data, ours), limit=limit(scope))


def install(scope: str, cwd: Path) -> list[str]:
    """Merge the server into the ``scope``'s file atomically; what changed, one line each."""
    path = config_path(scope, cwd)
    ours = _ours()
    with _locked(scope, path):
        result, changes = cs.update_json(path, lambda data: merge(data, ours), limit=limit(scope))
    lines = [result, *(f"  {change}" for change in changes)]
    if scope == "project":
        lines.append(
            "Claude Code asks once whether to use a project's MCP servers: approve "
            f"{NAME} (or list it in enabledMcpjsonServers in .claude/settings.local.json)."
        )
    allow = cs.settings_path(scope, Path())  # (the project's: relative, as it is shown)
    lines.append(
        f"Its tools are mcp__{NAME}__handoff, __status, __explain, __memory_search, "
        f"__memory_read and __memory_write; to call them without a prompt add "
        f'"mcp__{NAME}" to permissions.allow in {allow}.'
    )

    if not sdk_installed():
        lines.append(f"note: the server needs the mcp package: pip install '{NAME}[mcp]'")
    return lines


def unmerge(config: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``config`` without ``mcpServers.clm-policy`` (a new dict; ``mcpServers`` left empty by
    that goes too), and what was removed."""
    merged = copy.deepcopy(config)
    servers = merged.get("mcpServers")
    if not isinstance(servers, dict) or NAME not in servers:
        return merged, []
    removed = servers.pop(NAME)
    if not servers:
        del merged["mcpServers"]
    return merged, [f"removed MCP server {NAME} {_shown(removed)}"]


def uninstall(scope: str, cwd: Path) -> list[str]:
    """Take the server out of the ``scope``'s file (nothing written when it has none); what
    was done, one line each."""
    path = config_path(scope, cwd)
    with _locked(scope, path):
        result, changes = cs.update_json(path, unmerge, limit=limit(scope))
    if not changes:
        return [f"{shown_path(str(path))}: no {NAME} MCP server in it; nothing written"]
    return [result, *(f"  {change}" for change in changes)]


def _locked(scope: str, path: Path) -> AbstractContextManager[None]:
    """Claude Code's lock on ``~/.claude.json`` from the read to the rename (its sessions
    write that file all the time); a project's ``.mcp.json`` is a person's file: no lock."""
    if scope != "user":
        return nullcontext()
    from clm_policy.agents.mcp.claude_lock import claude_file_lock

    return claude_file_lock(path)


def sdk_installed() -> bool:

    import importlib.util

    try:
        return importlib.util.find_spec("mcp.server.mcpserver") is not None
    except (ImportError, ValueError):
        return False
