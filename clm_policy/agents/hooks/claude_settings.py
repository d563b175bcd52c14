"""Claude Code's ``settings.json`` (and Codex's ``hooks.json``): clm-policy's hooks and status
line, printed, merged in or taken out.

The snippet runs the installed script by its absolute path when it can be found
(:func:`executable`), so the hooks run the same installation whatever PATH Claude Code starts
with. :func:`merge` keeps everything else in the settings, in its order, another tool's hooks
under the same events included. clm-policy's own entries are recognised by their command
(:func:`runs_clm_policy`) and replaced where they stand, never duplicated; another tool's
``statusLine`` is kept unless ``force``. Files are replaced atomically.
"""

from __future__ import annotations

import copy
import json
import os
import shlex
import shutil
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clm_policy.base.errors import InputError, Location
from clm_policy.base.paths import claude_config_dir, shown_path

SCRIPT = "clm-policy"
HOOK_ARGS = ("hook", "claude-code")
CODEX_HOOK_ARGS = ("hook", "codex")
STATUSLINE_ARGS = ("statusline",)
SETTINGS_LIMIT = 4 * 1024 * 1024
SCOPES = ("project", "user")
Merge = Callable[[dict[str, Any]], tuple[dict[str, Any], list[str]]]


def executable() -> str:
    """The command that runs this clm-policy: the running script, else the one next to this
    interpreter (a virtual environment not on PATH), else the one on PATH, else plain
    ``clm-policy``. Absolute, symlinks kept (pipx's ``~/.local/bin/clm-policy`` survives an
    upgrade)."""
    argv0 = sys.argv[0] if sys.argv else ""
    script = Path(argv0)
    if script.name == SCRIPT and script.is_file():
        return os.path.abspath(argv0)
    beside = Path(sys.executable).parent / SCRIPT
    if sys.executable and beside.is_file() and os.access(beside, os.X_OK):
        return os.path.abspath(beside)
    found = shutil.which(SCRIPT)
    return os.path.abspath(found) if found else SCRIPT


def snippet(executable: str) -> dict[str, Any]:
    """The settings.json entries that run ``executable`` (a path, quoted here for the shell)."""
    from clm_policy.agents.hooks.claude_code import EVENTS
    from clm_policy.agents.hooks.shared import hook_settings

    exe = shlex.quote(executable)
    return {
        "hooks": hook_settings(f"{exe} {' '.join(HOOK_ARGS)}", EVENTS),
        "statusLine": {
            "type": "command",
            "command": f"{exe} {' '.join(STATUSLINE_ARGS)}",
            # seconds between Claude Code's extra runs (besides its own events): a handoff
            # the hooks commit after the turn's last one ("handed off") shows within them
            "refreshInterval": 5,
        },
    }


def runs_clm_policy(command: object, args: tuple[str, ...]) -> bool:
    """Whether ``command`` runs clm-policy with ``args`` (``hook claude-code``, ``statusline``)
    — the script by any path, or ``python -m clm_policy`` — whatever options follow."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:  # unbalanced quotes: not ours to read, so not ours
        return False
    for i, word in enumerate(words):
        ours = os.path.basename(word) == SCRIPT or (
            word == "clm_policy" and i > 0 and words[i - 1] == "-m"
        )
        if ours and tuple(words[i + 1 : i + 1 + len(args)]) == args:
            return True
    return False


def merge(
    settings: dict[str, Any],
    snippet: dict[str, Any],
    *,
    force: bool = False,
    args: tuple[str, ...] = HOOK_ARGS,
) -> tuple[dict[str, Any], list[str]]:
    """``settings`` with ``snippet`` merged in (a new dict), and what changed, one line each
    (none: nothing to change). Ours are the hooks that run clm-policy with ``args``. Raises
    :class:`InputError` when ``hooks`` or an event's list is not what Claude Code reads."""
    merged = copy.deepcopy(settings)
    changes: list[str | None] = []
    hooks = merged.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InputError(f"`hooks` is {_kind(hooks)}, expected an object")
    for event, groups in snippet["hooks"].items():
        existing = hooks.get(event, [])
        if not isinstance(existing, list):
            raise InputError(f"`hooks.{event}` is {_kind(existing)}, expected a list")
        hooks[event], change = _merge_event(event, existing, groups[0], args)
        changes.append(change)
    if "statusLine" in snippet:
        changes.append(_merge_status_line(merged, snippet["statusLine"], force))
    return merged, [change for change in changes if change]


def _merge_status_line(merged: dict[str, Any], ours: dict[str, Any], force: bool) -> str | None:
    current = merged.get("statusLine")
    new = ours["command"]
    if current is None:
        merged["statusLine"] = copy.deepcopy(ours)
        return f"added statusLine `{new}`"
    old = _command(current)
    if isinstance(current, dict) and runs_clm_policy(old, STATUSLINE_ARGS):
        # the person's padding or refreshInterval stay; ours fill what is not set
        updated = {**ours, **current, "type": ours["type"], "command": ours["command"]}
        if updated == current:
            return None
        merged["statusLine"] = updated
        if old == new:
            return f"statusLine: updated `{new}`"
        return f"statusLine: replaced `{old}` by `{new}`"
    if force:
        merged["statusLine"] = copy.deepcopy(ours)
        return f"statusLine: replaced `{old}` by `{new}` (--force)"
    return f"statusLine: kept `{old}` (another tool's; --force replaces it by `{new}`)"


def _merge_event(
    event: str, groups: list[Any], ours: dict[str, Any], args: tuple[str, ...]
) -> tuple[list[Any], str | None]:
    """One event's groups with ours in place of every clm-policy hook found (at the first
    one's place), or at the end; other groups and other hooks untouched."""
    (wanted,) = ours["hooks"]
    found: list[dict[str, Any]] = []
    result: list[Any] = []
    for group in groups:
        mine, rest = _split(group, args)
        if rest is not None:
            result.append(rest)
        if mine and not found:  # ours at the first one's place
            result.append(copy.deepcopy(ours))
        found.extend(mine)
    if not found:
        result.append(copy.deepcopy(ours))
        return result, f"added {event} hook `{wanted['command']}`"
    if result == groups:
        return result, None
    old = ", ".join(f"`{h.get('command')}`" for h in found)
    if len(found) == 1 and found[0].get("command") == wanted["command"]:
        return result, f"{event} hook: updated `{wanted['command']}` (type, timeout, matcher)"
    return result, f"{event} hook: replaced {old} by `{wanted['command']}`"


def _mine(group: object, args: tuple[str, ...] = HOOK_ARGS) -> list[dict[str, Any]]:
    """The hooks of ``group`` that run ``clm-policy ARGS`` (``hook claude-code``; none in a
    group the agent does not read: nor is such a group ours to touch)."""
    entries = group.get("hooks") if isinstance(group, dict) else None
    return [
        h
        for h in (entries if isinstance(entries, list) else [])
        if isinstance(h, dict) and runs_clm_policy(h.get("command"), args)
    ]


def _split(group: Any, args: tuple[str, ...]) -> tuple[list[dict[str, Any]], Any]:
    """The hooks of ``group`` that run ``clm-policy ARGS``, and the group without them (None
    when none is left)."""
    mine = _mine(group, args)
    if not mine:
        return mine, group
    rest = [h for h in group["hooks"] if not any(h is m for m in mine)]
    return mine, ({**group, "hooks": rest} if rest else None)


def _command(entry: object) -> str:
    if isinstance(entry, dict) and isinstance(entry.get("command"), str):
        return str(entry["command"])
    return json.dumps(entry)


def _kind(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    return names.get(type(value), "null" if value is None else "a number")


def read_settings(
    path: Path, what: str = "Claude Code settings", limit: int = SETTINGS_LIMIT
) -> dict[str, Any]:
    """The JSON object in ``path`` ({} when missing or blank; at most ``limit`` bytes);
    anything else is an :class:`InputError` at its ``file:line:col``."""
    from clm_policy.formats.jsonio import parse_json
    from clm_policy.formats.textio import path_kind, read_text

    if path_kind(path) == "missing":
        return {}
    shown = shown_path(str(path))
    text = read_text(path, shown, limit=limit, what="settings")
    if not text.strip():
        return {}
    data = parse_json(text, shown)
    if not isinstance(data, dict):
        offset = len(text) - len(text.lstrip())  # where the value starts
        line = text.count("\n", 0, offset) + 1
        at = Location(shown, line, offset - text.rfind("\n", 0, offset))
        raise InputError(f"expected a JSON object ({what}), got {_kind(data)}", at)
    return data


def update_json(
    path: Path, merge: Merge, what: str = "Claude Code settings", limit: int = SETTINGS_LIMIT
) -> tuple[str, list[str]]:
    """The JSON object in ``path`` (made, with its folder, if missing) replaced atomically by
    what ``merge`` makes of it, not written when nothing changes or it cannot be read; a
    symlink's target is updated (a link to nothing is refused). The line saying whether it
    was written, and ``merge``'s changes."""
    return write_json(path, merged_json(path, merge, what, limit))


Prepared = tuple[dict[str, Any], dict[str, Any], list[str]]


def write_json(path: Path, prepared: Prepared) -> tuple[str, list[str]]:
    """Write what :func:`merged_json` made of ``path`` (see :func:`update_json`)."""
    from clm_policy.base.atomicfile import replace

    data, merged, changes = prepared
    if merged == data:
        return f"{shown_path(str(path))}: already up to date; nothing written", changes
    target = Path(os.path.realpath(path))
    text = json.dumps(merged, indent=2, ensure_ascii=False) + "\n"
    try:
        try:
            mode: int | None = target.stat().st_mode & 0o777  # keep the file's permissions
        except FileNotFoundError:
            mode = None  # a new file, as any other: 0o666 less the umask
        target.parent.mkdir(parents=True, exist_ok=True)
        replace(target, text.encode("utf-8"), mode=mode)
    except OSError as exc:  # a folder not yours to write, a read-only or full file system
        raise InputError(
            f"cannot write it: {exc.strerror or exc}; nothing written",
            Location(shown_path(str(path))),
        ) from None
    return f"wrote {shown_path(str(path))}", changes


def merged_json(
    path: Path, merge: Merge, what: str = "Claude Code settings", limit: int = SETTINGS_LIMIT
) -> Prepared:
    """The JSON object in ``path``, what ``merge`` makes of it and its changes, nothing
    written: an :class:`InputError` for a file :func:`update_json` would refuse (a command
    that writes other files asks this first, so that it writes none of them)."""
    _refuse_dangling_link(path)
    data = read_settings(path, what, limit)
    try:
        merged, changes = merge(data)
    except InputError as exc:
        raise InputError(exc.message, Location(str(path))) from None
    if merged != data:
        _refuse_read_only(path)
    return data, merged, changes


def _refuse_read_only(path: Path) -> None:
    """An :class:`InputError` when ``path`` is a file its owner may not write (``chmod a-w``):
    someone made it read-only, and an atomic rename would replace it all the same (as it
    does for the superuser, whom its permissions do not stop)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return  # missing (created), or what reading it will say
    if stat.S_ISREG(mode) and not mode & stat.S_IWUSR:
        raise InputError(
            f"read-only (mode {stat.S_IMODE(mode):04o}): nothing written; make it writable "
            f"(chmod u+w {shlex.quote(str(path))}) for clm-policy to change it",
            Location(str(path)),
        )


def _refuse_dangling_link(path: Path) -> None:
    """An :class:`InputError` when ``path``, or a folder above it, is a symbolic link to
    nothing: writing through it would create the file, and the folders above it, wherever
    the link points (a cloned project's ``.claude/settings.json`` may be such a link)."""
    for link in (path, *path.parents):
        if link.is_symlink() and not link.exists():
            raise InputError(
                f"a symbolic link to {os.readlink(link)}, which does not exist: nothing written "
                "(create that file, or remove the link)",
                Location(str(link)),
            )


def check_scope(scope: str) -> None:
    if scope not in SCOPES:
        raise InputError(f"unknown scope {scope!r} (expected: {', '.join(SCOPES)})")


def settings_path(scope: str, cwd: Path) -> Path:
    """``<cwd>/.claude/settings.json`` (project), or the user's, the one Claude Code reads:
    ``$CLAUDE_CONFIG_DIR/settings.json``, else ``~/.claude/settings.json`` (user)."""
    check_scope(scope)
    if scope == "project":
        return cwd / ".claude" / "settings.json"
    return Path(claude_config_dir()) / "settings.json"


def settings_command(
    print_settings: bool, installing: bool, scope: str, force: bool, cwd: Path
) -> tuple[int, str]:
    """``clm-policy hook claude-code --print-settings`` / ``--install [--project|--user]
    [--force]``: the exit code and the text to print; :class:`InputError` for a settings file
    that cannot be read or merged."""
    snip = snippet(executable())
    if not (print_settings or installing):
        raise InputError("give --print-settings or --install")
    lines: list[str] = []
    if installing:
        path = settings_path(scope, cwd)
        lines, wrote = _install_into(path, lambda data: merge(data, snip, force=force), scope, cwd)
        if wrote:
            lines += [
                "Start a new Claude Code session for it to take effect (/hooks lists the hooks). "
                f"To undo: {SCRIPT} hook claude-code --uninstall --{scope}.",
                "Or install clm-policy as a Claude Code plugin, which also compacts and hands off "
                "by itself in the terminal: clm-policy hook claude-code --install --plugin "
                "(docs/claude-code.md).",
            ]
        from clm_policy.agents.hooks.hook import warm_policy

        warm_policy(str(cwd), "claude-code")  # the first hook finds its policy compiled
        other = settings_path("user" if scope == "project" else "project", cwd)
        if other != path and has_hooks(other):
            lines.append(
                f"note: {shown_path(str(other))} runs clm-policy's hooks too, and Claude Code "
                "runs the hooks of both files: keep them in one."
            )
    if print_settings:
        lines.append(json.dumps(snip, indent=2))
    return 0, "\n".join(lines)


def _install_into(
    path: Path, merge: Merge, scope: str, cwd: Path, what: str = "Claude Code settings"
) -> tuple[list[str], bool]:
    """Merge into ``path`` (the project's configuration written first when it has none, once
    the file is known to merge): what was done, one line each, and whether it was written."""
    prepared = merged_json(path, merge, what)
    if scope == "project":
        check_project(cwd)
    lines = project_config(cwd) if scope == "project" else []
    try:
        result, changes = write_json(path, prepared)
    except InputError as exc:
        if not lines:
            raise
        from clm_policy.config.project import FILENAME

        # the configuration is written already, and a good one: it stays, and is said
        written = cwd / FILENAME
        raise InputError(
            f"{exc.message} ({shown_path(str(written))}, written before it, stays)", exc.location
        ) from None
    return [*lines, result, *(f"  {c}" for c in changes)], result.startswith("wrote")


def unmerge(
    settings: dict[str, Any], *, args: tuple[str, ...] = HOOK_ARGS, status_line: bool = True
) -> tuple[dict[str, Any], list[str]]:
    """``settings`` without clm-policy's entries (a new dict): its hooks, a group, an event or
    ``hooks`` left empty by that, and (``status_line``) its status line; and what was
    removed, one line each."""
    merged = copy.deepcopy(settings)
    changes: list[str] = []
    found = merged.get("hooks")
    hooks: dict[str, Any] = found if isinstance(found, dict) else {}
    for event, groups in list(hooks.items()):
        kept, removed = _without_ours(groups if isinstance(groups, list) else [], args)
        if not removed:
            continue
        changes.append(f"removed {event} hook {', '.join(f'`{c}`' for c in removed)}")
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if changes and not hooks:
        del merged["hooks"]
    current = merged.get("statusLine")
    ours = isinstance(current, dict) and runs_clm_policy(current.get("command"), STATUSLINE_ARGS)
    if status_line and ours:
        del merged["statusLine"]
        changes.append(f"removed statusLine `{_command(current)}`")
    return merged, changes


def _without_ours(groups: list[Any], args: tuple[str, ...]) -> tuple[list[Any], list[str]]:
    """``groups`` without the hooks that run ``clm-policy ARGS``, and the commands removed."""
    kept: list[Any] = []
    removed: list[str] = []
    for group in groups:
        mine, rest = _split(group, args)
        removed += [_command(h) for h in mine]
        if rest is not None:
            kept.append(rest)
    return kept, removed


def uninstall_command(agent: str, scope: str, cwd: Path) -> list[str]:
    """``clm-policy hook claude-code|codex --uninstall [--project|--user]``: clm-policy's
    entries taken out of the scope's settings.json or hooks.json (nothing written when it has
    none). What was done, one line each."""
    if agent == "codex":
        path, args, what = codex_hooks_path(scope, cwd), CODEX_HOOK_ARGS, "Codex hooks.json"
    else:
        path, args, what = settings_path(scope, cwd), HOOK_ARGS, "Claude Code settings"
    status_line = agent != "codex"
    result, changes = update_json(
        path, lambda data: unmerge(data, args=args, status_line=status_line), what
    )
    if not changes:
        return [f"{shown_path(str(path))}: no clm-policy hooks in it; nothing written"]
    return [
        result,
        *(f"  {c}" for c in changes),
        "The project's .clm-policy.yaml and its memory repository are kept.",
    ]


def codex_hooks_path(scope: str, cwd: Path) -> Path:
    """The ``hooks.json`` Codex reads: ``<cwd>/.codex/hooks.json`` (project), or the person's,
    for every project: ``$CODEX_HOME/hooks.json``, else ``~/.codex/hooks.json`` (user)."""
    check_scope(scope)
    if scope == "project":
        return cwd / ".codex" / "hooks.json"
    home = os.environ.get("CODEX_HOME", "")
    return (Path(home) if os.path.isabs(home) else Path.home() / ".codex") / "hooks.json"


def codex_install(scope: str, cwd: Path) -> list[str]:
    """``clm-policy hook codex --install [--project|--user]``: the hooks merged into the
    scope's ``hooks.json`` as a settings.json's are. What was done, one line each."""
    from clm_policy.agents.hooks.codex import settings_snippet
    from clm_policy.agents.hooks.hook import warm_policy

    snip = settings_snippet(executable())
    path = codex_hooks_path(scope, cwd)
    lines, wrote = _install_into(
        path, lambda data: merge(data, snip, args=CODEX_HOOK_ARGS), scope, cwd, "Codex hooks.json"
    )
    if wrote:
        lines.append(
            "Codex runs them once you trust them: start codex, trust this folder when it asks "
            "(a project's hooks), then /hooks to review them (untrusted ones never run)."
        )
    warm_policy(str(cwd))  # the first hook finds its policy compiled
    return lines


def check_project(cwd: Path) -> None:
    """An :class:`InputError` when the project's configuration, or the policy or profile it
    names, cannot be loaded: hooks installed there would answer nothing, and say so only in
    their log. (No configuration is none to check: the one installing writes is sound.)"""
    from clm_policy.agents.hooks.hook import check_policy
    from clm_policy.base.errors import ClmError
    from clm_policy.config.project import find_config

    if find_config(cwd) is None:
        return
    try:
        check_policy(str(cwd), "claude-code")
    except ClmError as exc:
        raise InputError(
            f"{exc.message}; the hooks would answer nothing until it is fixed: nothing written",
            exc.location,
        ) from None


def project_config(cwd: Path) -> list[str]:
    """One command sets a project up: without a configuration, the project gets the Claude
    Code one (the bundled default policy's thresholds never fire on 200K). What was written."""
    from clm_policy.config.project import FILENAME, write_config

    if not write_config(cwd):
        return []
    return [f"wrote {shown_path(str(cwd / FILENAME))} (policy claude-code, profile coding)"]


def has_hooks(path: Path) -> bool:
    """Whether the settings file ``path`` runs ``clm-policy hook claude-code`` (an unreadable
    file does not)."""
    try:
        hooks = read_settings(path).get("hooks")
    except InputError:
        return False
    return isinstance(hooks, dict) and any(
        _mine(group) for groups in hooks.values() if isinstance(groups, list) for group in groups
    )
