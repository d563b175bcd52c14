"""The context window of a Claude Code session, as Claude Code knows it.

Claude Code's windows differ by model and by option — 200,000 tokens for some models,
1,000,000 for the current defaults and for any model with the ``[1m]`` suffix — and its hooks
never say which (their input has no window). Assuming 200,000 for every Claude model puts a
session at 130,000 tokens of a 1M window at "65%, compact": wrong by a factor of five. So the
window is taken from the best source that knows it, in this order:

1. the window Claude Code reported to the status line for this session
   (``context_window.context_window_size``; :func:`clm_policy.agents.statusline.record_window`
   keeps it among the session's facts);
2. a model name with the ``[1m]`` suffix: the model SessionStart named (kept by the hook),
   the ``model`` of Claude Code's settings, ``ANTHROPIC_MODEL``;
3. where Claude Code compacts on its own: ``CLAUDE_CODE_AUTO_COMPACT_WINDOW``, else
   ``autoCompactWindow`` in its settings (local, project, user);
4. the policy's ``models:`` table for the model the transcript (else SessionStart) names
   (policies/claude-code.yaml lists the models Claude Code 2.1.x gives 200,000 and 1,000,000).

When none knows, the window stays unknown: thresholds given as shares of it cannot fire, and
the prompt hook says so once.
"""

from __future__ import annotations

import os

from clm_policy.agents.sessionfacts import json_object, read_facts
from clm_policy.base.paths import claude_config_dir
from clm_policy.base.privatefiles import read_regular
from clm_policy.base.record import text_or_none

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SETTINGS_LIMIT = 1024 * 1024
MAX_WINDOW = 100_000_000


def claude_code_window(
    session_id: str, model: str | None, cwd: str | None
) -> tuple[int | None, str | None]:
    """The window (None: no source knows it) and model of the session whose transcript names
    ``model`` (None: none yet), run in ``cwd``."""
    seen = read_facts(session_id, "window")
    reported = _tokens(seen.get("window"))
    if reported:
        return reported, model or (
            seen.get("model") if isinstance(seen.get("model"), str) else None
        )
    started = text_or_none(read_facts(session_id, "hook").get("model"))
    model = model or started
    settings = _settings(cwd)
    for name in (started, _value(settings, "model"), os.environ.get("ANTHROPIC_MODEL")):
        if isinstance(name, str) and name.strip().lower().endswith("[1m]"):
            return 1_000_000, model
    auto = _tokens(os.environ.get("CLAUDE_CODE_AUTO_COMPACT_WINDOW")) or _tokens(
        _value(settings, "autoCompactWindow")
    )
    return auto, model


def _tokens(value: object) -> int | None:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_WINDOW:
        return value
    return None


def _settings(cwd: str | None) -> list[dict[str, Any]]:
    """Claude Code's settings, most specific first: the project's local and shared ones, then
    the user's."""
    files = []
    if cwd and os.path.isabs(cwd):
        files += [
            os.path.join(cwd, ".claude", "settings.local.json"),
            os.path.join(cwd, ".claude", "settings.json"),
        ]
    files.append(os.path.join(claude_config_dir(), "settings.json"))
    return [data for data in map(_read_json, files) if data]


def _value(settings: list[dict[str, Any]], key: str) -> object:
    return next((data[key] for data in settings if key in data), None)


def _read_json(path: str) -> dict[str, Any]:
    """A settings file's JSON object; {} when missing, not an object or not a regular file (a
    FIFO in its place must not hang the hook)."""

    return json_object(read_regular(path, SETTINGS_LIMIT), SETTINGS_LIMIT)
