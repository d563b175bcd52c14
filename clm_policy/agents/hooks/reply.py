"""What a hook answers, as data (:class:`Reply`: the parts the agents read, or an exit code with
standard error, exit 2 blocking where blocking is the point), which handlers build and add to,
rendered once, safe, into what the process writes (:meth:`Reply.render`, :class:`HookOutput`).
"""

from __future__ import annotations

from clm_policy.base.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:  # a prompt that continues renders nothing: no typing at run time
    from collections.abc import Callable, Mapping
    from typing import Any

CONTEXT_LIMIT = 9_500
"""Characters of one text a hook says at most (Claude Code replaces an ``additionalContext`` of
more than 10,000 by a file path)."""


class HookOutput(Record):
    """What the hook process writes: its exit code, standard output and standard error."""

    exit_code: int = 0
    stdout: str = ""
    stderr: str = ""


class Reply(Record):
    """A hook's answer: ``message`` for the person (``systemMessage``), ``context`` for the
    model (``additionalContext`` of ``event``'s ``hookSpecificOutput``), agent-specific
    ``fields`` (their JSON keys: Codex's ``decision``/``reason``, ``continue``/``stopReason``),
    or an ``exit_code`` with ``stderr``. An empty reply says nothing."""

    FIELDS = ("message", "context", "event", "fields", "exit_code", "stderr")
    __slots__ = FIELDS
    HASHABLE = False

    def __init__(
        self,
        message: str = "",
        context: str = "",
        event: str = "",
        fields: Mapping[str, object] | None = None,
        exit_code: int = 0,
        stderr: str = "",
    ) -> None:
        self.message = message
        self.context = context
        self.event = event
        self.fields: Mapping[str, object] = {} if fields is None else fields
        self.exit_code = exit_code
        self.stderr = stderr

    def with_message(self, line: str) -> Reply:
        """This reply with ``line`` first in what the person sees."""
        if not line:
            return self
        return self.replace(message=f"{line}\n{self.message}" if self.message else line)

    def render(self) -> HookOutput:
        """What the process writes: every text — the person's ``systemMessage``, the model's
        ``additionalContext`` and ``reason``, standard error — through the redactor commits
        pass (it is built from the transcript: a key in the goal must not be repeated back, nor
        typed into the agent again), made terminal-safe (the agents show it on a terminal) and
        held to :data:`CONTEXT_LIMIT` (escapes and markers are longer than what they
        replace). The redactor is imported only here: a prompt that continues says nothing."""
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

        clean = cleaner()
        stdout = json.dumps(cleaned(payload, clean)) if payload else ""
        return HookOutput(self.exit_code, stdout, clean(self.stderr) if self.stderr else "")


NOTHING = Reply()


def tell(message: str) -> Reply:
    """A reply that tells the person ``message``."""
    return Reply(message=message)


def cut(text: str) -> str:
    """``text`` held to :data:`CONTEXT_LIMIT` characters."""
    return text if len(text) <= CONTEXT_LIMIT else text[: CONTEXT_LIMIT - 1] + "…"


def cleaner() -> Callable[[str], str]:
    """What every text a hook says passes: redacted, terminal-safe, held to the limit."""
    from clm_policy.base.termsafe import terminal_safe
    from clm_policy.memory.redact import Redactor

    redact = Redactor().text
    return lambda text: cut(terminal_safe(redact(text)))


def cleaned(value: Any, clean: Callable[[str], str]) -> Any:
    """``value`` (JSON data) with every text passed through ``clean``."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {k: cleaned(v, clean) for k, v in value.items()}
    if isinstance(value, list):
        return [cleaned(v, clean) for v in value]
    return value
