"""What a hook answers, as data (:class:`Reply`), rendered once, safe, into what the process
writes (:class:`HookOutput`)."""

from __future__ import annotations

from clm_policy.base.record import Record, field

TYPE_CHECKING = False
if TYPE_CHECKING:  # a prompt that continues renders nothing: no typing at run time
    from collections.abc import Callable, Mapping
    from typing import Any

CONTEXT_LIMIT = 9_500
"""The most one text a hook says may take, measured as its agent measures it (:func:`size_for`).
Past 10,000, Claude Code 2.1.332 replaces an ``additionalContext`` by a 2,000-character preview
and a file path; Codex 0.171 keeps 2,500 of its tokens (bytes / 4) and puts a truncation
notice in place of the middle."""


def utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf8_bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def size_for(agent: str) -> Callable[[str], int]:
    """How ``agent`` measures what a hook tells the model: Codex in bytes of UTF-8, Claude
    Code (JavaScript) in UTF-16 code units."""
    return utf8_bytes if agent == "codex" else utf16_units


class HookOutput(Record):
    exit_code: int = 0
    stdout: str = ""
    stderr: str = ""


class Reply(Record):
    """A hook's answer: ``message`` for the person (``systemMessage``), ``context`` for the
    model (``additionalContext`` of ``event``'s ``hookSpecificOutput``), agent-specific JSON
    ``fields``, or an ``exit_code`` with ``stderr``. An empty reply says nothing."""

    message: str = ""
    context: str = ""
    event: str = ""
    fields: Mapping[str, object] = field(default_factory=dict)
    exit_code: int = 0
    stderr: str = ""
    HASHABLE = False

    def with_message(self, line: str) -> Reply:
        """This reply with ``line`` first in what the person sees."""
        if not line:
            return self
        return self.replace(message=f"{line}\n{self.message}" if self.message else line)

    def render(self, size: Callable[[str], int] = utf16_units) -> HookOutput:
        """What the process writes: every text redacted (it is built from the transcript: a
        key in the goal must not be repeated back), made terminal-safe and held to
        :data:`CONTEXT_LIMIT` as ``size`` measures it. The redactor is imported only here: a
        prompt that continues says nothing."""
        payload: dict[str, object] = {}  # the JSON object on standard output, if any
        if self.message:
            payload["systemMessage"] = self.message
        if self.context:
            payload["hookSpecificOutput"] = {
                "hookEventName": self.event,
                "additionalContext": self.context,
            }
        payload.update(self.fields)
        if not payload and not self.stderr:
            return HookOutput(self.exit_code)
        import json

        clean = cleaner(size)
        stdout = json.dumps(cleaned(payload, clean)) if payload else ""
        return HookOutput(self.exit_code, stdout, clean(self.stderr) if self.stderr else "")


NOTHING = Reply()


def tell(message: str) -> Reply:
    return Reply(message=message)


def cut(text: str, size: Callable[[str], int] = utf16_units) -> str:
    """``text``'s longest start that fits :data:`CONTEXT_LIMIT` with an ellipsis after it."""
    if size(text) <= CONTEXT_LIMIT:
        return text
    room = CONTEXT_LIMIT - size("…")
    low, high = 0, min(len(text), room)  # no character measures less than one
    while low < high:
        middle = (low + high + 1) // 2
        if size(text[:middle]) <= room:
            low = middle
        else:
            high = middle - 1
    return text[:low] + "…"


def cleaner(size: Callable[[str], int] = utf16_units) -> Callable[[str], str]:
    """What every text a hook says passes: redacted, terminal-safe, held to the limit."""

    from clm_policy.base.termsafe import terminal_safe
    from clm_policy.memory.redact import Redactor

    redact = Redactor().text
    return lambda text: cut(terminal_safe(redact(text)), size)


def cleaned(value: Any, clean: Callable[[str], str]) -> Any:
    """``value`` (JSON data) with every text passed through ``clean``."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {k: cleaned(v, clean) for k, v in value.items()}
    if isinstance(value, list):
        return [cleaned(v, clean) for v in value]
    return value
