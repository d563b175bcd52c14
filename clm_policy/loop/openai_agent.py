"""An Agent backed by any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM,
llama.cpp, Ollama, LiteLLM, ...): each step is one ``POST {base_url}/chat/completions``.

The configuration comes from the environment (:meth:`OpenAIConfig.from_env`); a failing
endpoint is an :class:`EndpointError` whose message never carries the key or a response body.
``inject_context`` and ``reset_with_seed`` queue system messages that the next step adds
unless the conversation has them already (the loop writes both into the state too), so each
is sent once. The model says when it is done: a reply with a line holding only the done
marker completes the task. A conversation without a user message gets the goal as one; after
a reply, the next step asks the model to continue. Without reported usage the step's tokens
stay 0 and the monitor estimates the context; the step's ``notes`` say so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from clm_policy.base.chat import (
    DEFAULT_BASE_URL,
    ENV_BASE_URL,
    ChatEndpoint,
    check_base_url,
    check_endpoint,
)
from clm_policy.base.errors import InputError, quote
from clm_policy.models.enums import MessageRole, TaskStatus
from clm_policy.models.state import AgentStepResult, Message

ENV_MODEL = "CLM_POLICY_OPENAI_MODEL"
ENV_KEYS = ("CLM_POLICY_OPENAI_API_KEY", "OPENAI_API_KEY")  # the first one set wins
ENV_TIMEOUT = "CLM_POLICY_OPENAI_TIMEOUT"

DEFAULT_TIMEOUT = 120.0
DEFAULT_DONE_MARKER = "TASK COMPLETE"
NO_USAGE = "the server reported no usage: the context is estimated (characters / 4)"

# what may surround the done marker on its line: spaces, Markdown emphasis, a closing stop
_MARKER_DECORATION = " \t*_`#>.!"


@dataclass(frozen=True)
class OpenAIConfig:
    """Where to send requests, and how the model says it is done; checked when made."""

    model: str
    api_key: str = field(repr=False)
    base_url: str = DEFAULT_BASE_URL
    timeout: float = DEFAULT_TIMEOUT
    done_marker: str = DEFAULT_DONE_MARKER
    key_source: str = field(default=ENV_KEYS[-1], repr=False)  # named in messages, not the key

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "base_url", check_base_url(self.base_url, ENV_BASE_URL, ENV_KEYS[1])
        )
        no_key = f"no API key: set {ENV_KEYS[1]} (or {ENV_KEYS[0]})"
        names = (ENV_MODEL, ENV_TIMEOUT, no_key)
        check_endpoint(self.model, self.api_key, self.key_source, self.timeout, names)
        marker = self.done_marker
        if not _normal(marker) or len(marker) > 100 or not marker.isprintable():
            raise InputError(
                f"done marker {quote(marker)}: one line of 1 to 100 characters, not only "
                "punctuation"
            )

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, done_marker: str | None = None) -> OpenAIConfig:
        """The configuration the environment gives: the endpoint, the model and the key never
        come from a file another person may write (such as a ``run.json``)."""
        from clm_policy.base.chat import env_timeout

        found_model = env.get(ENV_MODEL)
        if not found_model:
            raise InputError(f"no model: set {ENV_MODEL} (for example gpt-4o-mini)")
        source, key = next(((k, env[k]) for k in ENV_KEYS if env.get(k)), (ENV_KEYS[-1], ""))
        return cls(
            model=found_model,
            api_key=key,
            base_url=env.get(ENV_BASE_URL) or DEFAULT_BASE_URL,
            timeout=env_timeout(env, ENV_TIMEOUT, DEFAULT_TIMEOUT),
            done_marker=done_marker or DEFAULT_DONE_MARKER,
            key_source=source,
        )


def system_prompt(done_marker: str = DEFAULT_DONE_MARKER) -> str:
    """What the agent tells the model before the conversation, every request."""
    return (
        "You work autonomously on the goal the user gives you, one step per reply: do the "
        "next step of the work and say briefly what you did and what comes next. Earlier "
        "messages may have been replaced by a summary (a system message); continue from it. "
        "When the goal is fully achieved, end your reply with a line that says only: "
        f"{done_marker}"
    )


def continue_prompt(done_marker: str = DEFAULT_DONE_MARKER) -> str:
    """The user's message after each reply."""
    return f"Continue with the next step. When the goal is achieved, end with: {done_marker}"


class OpenAIChatAgent:
    """An agent working on ``goal``; ``played`` counts the steps taken (for a resumed session,
    from ``played`` on)."""

    def __init__(self, config: OpenAIConfig, goal: str, *, played: int = 0) -> None:
        self.config = config
        self.goal = goal
        self.system_prompt = system_prompt(config.done_marker)
        self.played = played
        self.last_reply: str | None = None
        self._queued: list[Message] = []
        self._endpoint = ChatEndpoint(config.base_url, config.api_key, config.timeout)

    # -- the Agent protocol ---------------------------------------------------------------------

    def step(self, messages: Sequence[Message]) -> AgentStepResult:
        """One request on ``messages`` (plus what is queued, plus the user's turn)."""
        added = self._unsent(messages)
        so_far = [*messages, *added]
        if not any(m.role is MessageRole.USER for m in so_far):
            added.append(Message(role=MessageRole.USER, content=self.goal))
        elif so_far[-1].role is not MessageRole.USER:
            added.append(
                Message(role=MessageRole.USER, content=continue_prompt(self.config.done_marker))
            )
        reply, usage = self._complete([*messages, *added])
        sent, got = usage or (0, 0)
        self.played += 1
        self.last_reply = reply
        added.append(
            Message(
                role=MessageRole.ASSISTANT, content=reply, tokens=None if usage is None else got
            )
        )
        return AgentStepResult(
            messages_added=added,
            input_tokens=sent,
            output_tokens=got,
            task_status=TaskStatus.COMPLETED if self._is_done(reply) else TaskStatus.RUNNING,
            notes="" if usage is not None else NO_USAGE,
        )

    def write_handoff(self, messages: Sequence[Message], request: str) -> AgentStepResult:
        """One request with clm-policy's ``request`` for the handoff as the user's turn."""
        added = [*self._unsent(messages), Message(role=MessageRole.USER, content=request)]
        reply, usage = self._complete([*messages, *added])
        sent, got = usage or (0, 0)
        return AgentStepResult(
            messages_added=[*added, Message(role=MessageRole.ASSISTANT, content=reply)],
            input_tokens=sent,
            output_tokens=got,
        )

    def inject_context(self, system_addon: str) -> None:
        self._queued.append(Message(role=MessageRole.SYSTEM, content=system_addon))

    def reset_with_seed(self, seed_messages: Sequence[Message]) -> None:
        self._queued = [m.replace() for m in seed_messages]  # what was queued is dropped

    # -- the request ----------------------------------------------------------------------------

    def _unsent(self, conversation: Sequence[Message]) -> list[Message]:
        """What is queued and not in ``conversation`` yet."""
        return [
            m
            for m in self._queued
            if not any(c.role is m.role and c.content == m.content for c in conversation)
        ]

    def _is_done(self, reply: str) -> bool:
        marker = _normal(self.config.done_marker)
        return any(_normal(line) == marker for line in reply.splitlines())

    def _complete(self, conversation: Sequence[Message]) -> tuple[str, tuple[int, int] | None]:
        """The reply's text and ``(prompt_tokens, completion_tokens)`` when reported; what was
        queued is sent."""
        payload = {
            "model": self.config.model,
            "messages": [
                {"role": "system", "content": self.system_prompt},
                *({"role": _role(m), "content": m.content} for m in conversation),
            ],
        }
        answer = self._endpoint.complete(payload)
        self._queued = []
        return answer


def _role(message: Message) -> str:
    # a tool message needs a tool_call_id the API checks; this agent calls no tools, so a tool
    # output that reached the conversation some other way is shown as the user's
    return "user" if message.role is MessageRole.TOOL else message.role.value


def _normal(line: str) -> str:
    return " ".join(line.strip(_MARKER_DECORATION).split()).casefold()
