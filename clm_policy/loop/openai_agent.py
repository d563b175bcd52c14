"""An Agent backed by any OpenAI-compatible chat-completions endpoint.

:class:`OpenAIChatAgent` implements :class:`~clm_policy.loop.agent.Agent`: each step is one
``POST {base_url}/chat/completions`` with the model and the conversation (standard library
only, under a timeout). It works for OpenAI and for the servers that speak its API (vLLM,
llama.cpp, Ollama, LiteLLM, ...). The configuration comes from the environment
(:meth:`OpenAIConfig.from_env`); a configuration problem is an
:class:`~clm_policy.base.errors.InputError`, a failing endpoint an :class:`EndpointError`, whose
message never carries the key or a response body.

The conversation is the messages the caller passes to ``step`` (the loop's session state),
after the agent's own system prompt. ``inject_context`` (a compaction's hint) and
``reset_with_seed`` (a handoff's seed) queue system messages that the next step adds to the
conversation unless it has them already — the loop writes both into the state itself, so
each is sent once.

There is no script, so the model says when it is done: the system prompt asks it to end its
reply with a line holding only the done marker (``TASK COMPLETE`` by default) once the goal
is achieved, and a reply with such a line completes the task. A conversation without a user
message (a new session, a seeded one, one compacted down to its hint) gets the goal as the
user's message; after a reply, the next step asks the model to continue.

Tokens: ``usage.prompt_tokens`` is the context the request carried (the step's
``input_tokens``), ``usage.completion_tokens`` what the reply adds (``output_tokens``). When
the server reports no usage both stay 0 and the monitor estimates the context from the
messages (characters / 4; ``tokens.estimated: true``); the step's ``notes`` say so.
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
ENV_KEYS = ("CLM_POLICY_OPENAI_API_KEY", "OPENAI_API_KEY")
"""Where the key is read from, the first one set winning."""
ENV_TIMEOUT = "CLM_POLICY_OPENAI_TIMEOUT"

DEFAULT_TIMEOUT = 120.0
DEFAULT_DONE_MARKER = "TASK COMPLETE"
NO_USAGE = "the server reported no usage: the context is estimated (characters / 4)"

# what may surround the done marker on its line: spaces, Markdown emphasis, a closing stop
_MARKER_DECORATION = " \t*_`#>.!"


@dataclass(frozen=True)
class OpenAIConfig:
    """Where to send requests, and how the model says it is done. Checked when made."""

    model: str
    api_key: str = field(repr=False)
    base_url: str = DEFAULT_BASE_URL
    timeout: float = DEFAULT_TIMEOUT
    done_marker: str = DEFAULT_DONE_MARKER
    key_source: str = field(default=ENV_KEYS[-1], repr=False)
    """The variable the key came from, to name in a message (never the key itself)."""

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
        """The configuration the environment gives — the user's own: the endpoint, the model
        and the key never come from a file another person may write (a resumed session's
        ``run.json`` is such a file)."""
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
    """An agent working on ``goal`` through an OpenAI-compatible chat-completions endpoint.

    ``played`` counts the steps taken (from ``played`` on, for a resumed session);
    ``last_reply`` is the model's latest answer."""

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
        added = [m for m in self._queued if not _holds(messages, m)]
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
        """One request on ``messages`` (plus what is queued) with clm-policy's ``request`` for
        the handoff as the user's turn: the model's reply is its handoff."""
        asked = Message(role=MessageRole.USER, content=request)
        added = [*(m for m in self._queued if not _holds(messages, m)), asked]
        reply, usage = self._complete([*messages, *added])
        sent, got = usage or (0, 0)
        return AgentStepResult(
            messages_added=[*added, Message(role=MessageRole.ASSISTANT, content=reply)],
            input_tokens=sent,
            output_tokens=got,
        )

    def inject_context(self, system_addon: str) -> None:
        """Add ``system_addon`` as a system message to the conversation (next step)."""
        self._queued.append(Message(role=MessageRole.SYSTEM, content=system_addon))

    def reset_with_seed(self, seed_messages: Sequence[Message]) -> None:
        """A fresh conversation starts from ``seed_messages``: what was queued is dropped."""
        self._queued = [m.replace() for m in seed_messages]

    # -- the request ----------------------------------------------------------------------------

    def _is_done(self, reply: str) -> bool:
        marker = _normal(self.config.done_marker)
        return any(_normal(line) == marker for line in reply.splitlines())

    def _complete(self, conversation: Sequence[Message]) -> tuple[str, tuple[int, int] | None]:
        """The reply's text and ``(prompt_tokens, completion_tokens)`` when reported. What was
        queued is sent: from now on it is part of the conversation."""
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


def _holds(conversation: Sequence[Message], message: Message) -> bool:
    return any(m.role is message.role and m.content == message.content for m in conversation)


def _role(message: Message) -> str:
    # a tool message needs a tool_call_id the API checks; this agent calls no tools, so a tool
    # output that reached the conversation some other way is shown as the user's
    return "user" if message.role is MessageRole.TOOL else message.role.value


def _normal(line: str) -> str:
    return " ".join(line.strip(_MARKER_DECORATION).split()).casefold()
