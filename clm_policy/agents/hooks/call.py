"""A hook call's input: the JSON object the agent writes on the hook's standard input, checked
once, and the fields the handlers read from it. Claude Code and Codex send the same core
fields (``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``), and each event
its own.
"""

from __future__ import annotations

import json
import os

from clm_policy.base.errors import InputError
from clm_policy.base.record import Record, text_or_none

TYPE_CHECKING = False
if TYPE_CHECKING:  # a hook runs on every prompt: no typing at run time
    from collections.abc import Mapping
    from typing import Any

MAX_INPUT = 16 * 1024 * 1024


class NoTranscriptYet(InputError):
    """The transcript does not exist yet (a new session's first hooks): answered with
    nothing, and not logged."""


class HookCall(Record):
    """One event as the agent sent it, and its ``hook_event_name``."""

    FIELDS = ("event",)
    __slots__ = ("event", "name")
    HASHABLE = False

    def __init__(self, event: Mapping[str, Any]) -> None:
        self.event = event
        self.name = str(event.get("hook_event_name") or "")

    def text(self, key: str) -> str | None:
        return text_or_none(self.event.get(key))

    @property
    def session(self) -> str:
        return self.text("session_id") or ""

    @property
    def turn(self) -> str:
        """The turn this call belongs to: Claude Code's ``prompt_id``, Codex's ``turn_id``."""
        return self.text("prompt_id") or self.text("turn_id") or ""

    def folder(self) -> str | None:
        """The call's ``cwd``; an :class:`InputError` for one no folder can have (a NUL byte:
        every look at it would fail, far from here)."""
        cwd = self.text("cwd")
        if cwd is not None and "\0" in cwd:
            raise InputError(f"{self.name}: the hook's cwd holds a NUL byte: no folder is so named")
        return cwd

    def transcript(self) -> str:
        """The transcript's path; :class:`NoTranscriptYet` while the agent has not written it."""
        path = self.text("transcript_path")
        if path is None:
            raise InputError(f"{self.name}: no transcript_path in the hook's input")
        path = os.path.expanduser(path)
        if not os.path.lexists(path):
            raise NoTranscriptYet(f"{self.name}: the transcript {path} does not exist yet")
        return path


def read_call(raw: bytes) -> HookCall:
    """The hook's input, a JSON object in UTF-8, or an :class:`InputError` saying why not."""

    if len(raw) > MAX_INPUT:
        raise InputError(f"hook input larger than {MAX_INPUT // 1024 // 1024} MiB")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"hook input is not UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start}"
        ) from None
    if "\\u" in text:  # "\ud800": valid JSON, no Unicode text; refused before it is read
        from clm_policy.base.surrogates import lone_surrogate

        found = lone_surrogate(text)
        if found is not None:
            raise InputError(
                f"hook input holds a lone surrogate ({found[1]}) at offset {found[0]}: "
                "not Unicode text"
            )
    try:
        event = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"hook input is not JSON: {exc}") from None
    if not isinstance(event, dict):
        raise InputError("hook input is not a JSON object")
    return HookCall(event)
