"""Who writes a compaction's summary: the deterministic summarizer (the default), or a model
behind an OpenAI-compatible chat-completions endpoint (:class:`OpenAISummarizer`, over
:class:`~clm_policy.base.chat.ChatEndpoint`). Its output is verified like any other summary
(:func:`~clm_policy.lifecycle.compaction.compact_verified`): any failure, or a recall under
``min_recall``, falls back to the deterministic summary, and the commit says so.

It is configured by the environment (:func:`summarizer_from_env`; docs/verification.md lists
the variables). The key is sent only as ``Authorization: Bearer``, never in a message, a
trailer or a file. The model is sent the state the compaction commits, its secrets already
replaced by the memory's redactor.
"""

from __future__ import annotations

from clm_policy.base.errors import ClmError, InputError, clipped_line, quote
from clm_policy.base.record import Record
from clm_policy.lifecycle.compaction import DETERMINISTIC, DETERMINISTIC_NAME, Summarizer
from clm_policy.lifecycle.summary import build_summary
from clm_policy.models.enums import MessageRole

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from clm_policy.models.state import SessionState

ENV_KIND = "CLM_POLICY_SUMMARIZER"
ENV_MODEL = "CLM_POLICY_SUMMARIZER_MODEL"
ENV_BASE_URL = "CLM_POLICY_SUMMARIZER_BASE_URL"
ENV_KEYS = ("CLM_POLICY_SUMMARIZER_API_KEY", "CLM_POLICY_OPENAI_API_KEY", "OPENAI_API_KEY")
"""Where the key is read from, the first one set winning."""
ENV_TIMEOUT = "CLM_POLICY_SUMMARIZER_TIMEOUT"
OPENAI = "openai"
KINDS = (DETERMINISTIC_NAME, OPENAI)
DEFAULT_TIMEOUT = 60.0
MAX_PROMPT_CHARS = 60_000
"""The conversation sent is cut (oldest messages first) to about this many characters, each
message to MESSAGE_CHARS."""
MESSAGE_CHARS = 2_000
MAX_SUMMARY_CHARS = 60_000

SYSTEM_PROMPT = (
    "You summarise the working session of an AI agent so that it can continue after its "
    "earlier messages are removed from its context. Write Markdown with these sections: "
    "Goal, Constraints, Decisions, Changed artifacts, Commands and results, Verified, Not "
    "verified, Blockers, Next safe action, Memory keys, Progress. Keep every fact of the "
    "session record, word for word where you can: file paths, commands and their results, "
    "identifiers, numbers and memory keys exactly as written. Add what the conversation shows "
    "that the record does not. Invent nothing. Answer with the summary only."
)


class SummarizerError(ClmError):
    """A summarizer failed; ``reason`` says how in a few words that are safe to record in a
    commit (``timeout``, ``http 500``, ``garbage``, ``empty``): no URL, key or body."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class OpenAISummarizerConfig(Record):
    """Where the summarizer sends its request; checked when made, the key never shown."""

    FIELDS = ("model", "api_key", "base_url", "timeout", "key_source")
    __slots__ = FIELDS

    def __init__(
        self,
        model: str,
        api_key: str,
        base_url: str = "https://api.openai.com/v1",
        timeout: float = DEFAULT_TIMEOUT,
        key_source: str = ENV_KEYS[0],
    ) -> None:
        from clm_policy.base.chat import check_base_url, check_endpoint

        self.model = model
        self.api_key = api_key
        self.base_url = check_base_url(base_url, ENV_BASE_URL, ENV_KEYS[0])
        self.timeout = timeout
        self.key_source = key_source
        no_key = f"no API key for the summarizer: set {ENV_KEYS[0]} (or {ENV_KEYS[2]})"
        check_endpoint(model, api_key, key_source, timeout, (ENV_MODEL, ENV_TIMEOUT, no_key))

    def __repr__(self) -> str:  # the key (and where it came from) is never shown
        return (
            f"OpenAISummarizerConfig(model={self.model!r}, base_url={self.base_url!r}, "
            f"timeout={self.timeout!r})"
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> OpenAISummarizerConfig:
        from clm_policy.base.chat import DEFAULT_BASE_URL, env_timeout
        from clm_policy.base.chat import ENV_BASE_URL as AGENT_BASE_URL

        model = env.get(ENV_MODEL)
        if not model:
            raise InputError(f"no model for the summarizer: set {ENV_MODEL}")
        source, key = next(((k, env[k]) for k in ENV_KEYS if env.get(k)), (ENV_KEYS[0], ""))
        return cls(
            model=model,
            api_key=key,
            base_url=env.get(ENV_BASE_URL) or env.get(AGENT_BASE_URL) or DEFAULT_BASE_URL,
            timeout=env_timeout(env, ENV_TIMEOUT, DEFAULT_TIMEOUT),
            key_source=source,
        )


class OpenAISummarizer:
    """A summary written by a model: one request, :data:`SYSTEM_PROMPT` and :func:`prompt`.
    Any failure is a :class:`SummarizerError` with a short ``reason``."""

    def __init__(self, config: OpenAISummarizerConfig) -> None:
        from clm_policy.base.chat import ChatEndpoint

        self.config = config
        self.name = f"{OPENAI}:{config.model}"
        self._endpoint = ChatEndpoint(config.base_url, config.api_key, config.timeout)

    def __repr__(self) -> str:
        return f"OpenAISummarizer({self.name!r}, {self._endpoint.url!r})"

    def summarize(self, state: SessionState) -> str:
        return self.answer(SYSTEM_PROMPT, prompt(state))

    def answer(self, system: str, user: str) -> str:
        """The model's answer to ``user`` under ``system``, checked by :func:`answer_text`."""
        from clm_policy.base.chat import ChatEndpointError

        payload = {
            "model": self.config.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        }
        try:
            content, _ = self._endpoint.complete(payload)
        except ChatEndpointError as exc:
            raise SummarizerError(str(exc), exc.kind) from None
        return answer_text(content)


def prompt(state: SessionState) -> str:
    """The session's record, then as much of its conversation as fits (newest kept)."""
    record = build_summary(state)
    lines: list[str] = []
    size = 0
    for message in reversed(state.messages):
        if message.role is MessageRole.SYSTEM and message.name is None:
            continue  # the agent's own system prompt
        line = f"- {message.role.value}: {clipped_line(message.content, MESSAGE_CHARS)}"
        size += len(line) + 1
        if size > MAX_PROMPT_CHARS:
            lines.append(f"- ({len(state.messages) - len(lines)} earlier messages left out)")
            break
        lines.append(line)
    conversation = "\n".join(reversed(lines)) or "(none)"
    return (
        "Summarise this session.\n\n# Session record\n\n"
        f"{record}\n# Conversation, oldest first\n\n{conversation}\n"
    )


def answer_text(content: str) -> str:
    """The summary in a model's answer, unfenced; an empty, oversized or NUL-holding answer is
    a :class:`SummarizerError`."""
    text = content.strip()
    if text.startswith("```") and text.endswith("```") and text.count("\n") >= 1:
        text = text[text.index("\n") + 1 : -3].strip()
    if not text:
        raise SummarizerError("the model's answer is empty", "empty")
    if len(text) > MAX_SUMMARY_CHARS:
        raise SummarizerError(
            f"the model's answer has {len(text)} characters (at most {MAX_SUMMARY_CHARS})",
            "too long",
        )
    if "\x00" in text:
        raise SummarizerError("the model's answer holds NUL bytes", "garbage")
    return text + "\n"


def summarizer_from_env(env: Mapping[str, str], kind: str | None = None) -> Summarizer:
    """The summarizer ``kind`` names (else ``CLM_POLICY_SUMMARIZER``, else deterministic),
    configured from ``env``; a configuration problem is an :class:`InputError`."""
    chosen = (kind or env.get(ENV_KIND) or DETERMINISTIC_NAME).strip().lower()
    if chosen == DETERMINISTIC_NAME:
        return DETERMINISTIC
    if chosen == OPENAI:
        return OpenAISummarizer(OpenAISummarizerConfig.from_env(env))
    raise InputError(f"{ENV_KIND}: {quote(chosen)} is no summarizer (one of {', '.join(KINDS)})")
