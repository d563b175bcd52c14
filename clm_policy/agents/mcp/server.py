"""The MCP server (``clm-policy mcp``): the tools of :mod:`.tools` registered with the MCP
Python SDK (the optional ``mcp`` package, 2.x), over standard input and output.

Each tool has typed, bounded arguments (the SDK checks them against the schema it derives
from the signature) and answers JSON. A problem is a tool error with one clear line, and
nothing is written. :data:`DESCRIPTIONS` is what the model reads (docs/mcp.md, held equal).
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, ValidationError

from clm_policy.agents.mcp.calling import WAIT, WRITER
from clm_policy.agents.mcp.tools import Tools
from clm_policy.base.errors import ClmError
from clm_policy.base.suggest import closest
from clm_policy.base.termsafe import one_line
from clm_policy.lifecycle.agent_handoff import AgentHandoff
from clm_policy.lifecycle.request import SECTIONS, tool_description

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from mcp.server.mcpserver import MCPServer

NAME = "clm-policy"

KEY_CHARS = 200

INSTRUCTIONS = (
    "clm-policy keeps this project's context policy and memory. Call status when unsure how "
    "full your context is; call handoff when the task must continue in a fresh session (the "
    "policy says so, or a phase is done): the next session starts from what you write."
)

DESCRIPTIONS = {
    "status": (
        "How full this session's context is, what the project's context policy decides "
        "(continue, compact or handoff), the rule behind it, and what to do now."
    ),
    "explain": (
        "The policy's decision for this session with every rule and guard: its expression, "
        "the values it read and whether it held."
    ),
    "handoff": tool_description() + " Then stop.",
    "memory_search": (
        "Search the project's memory topics (durable notes kept across sessions) for a "
        "word or phrase; the best matches first, with an excerpt."
    ),
    "memory_read": (
        "Read one memory topic by its key (as memory_search lists it), or a whole handoff by "
        "the key its seed names (sessions/<id>/handoffs/<n>)."
    ),
    "memory_write": (
        "Write a memory topic (replacing one with the same key): a note worth keeping across "
        "sessions. Redacted and committed. Keys: letters, digits, '_' and '-', parts "
        "joined by '/'."
    ),
}


def _asks(field: str) -> str:
    """What the request asks of the handoff's part ``field`` (as the Stop request says)."""
    return next(s.asks for s in SECTIONS if s.field == field)


# Bounds per field: a handoff is a page, not a transcript.
Item = Annotated[str, Field(max_length=1_000)]
Items = Annotated[list[Item], Field(max_length=50)]


def failed(tool: str, detail: str) -> str:
    """A tool error's one line, as the SDK words its own (every tool error is made here)."""
    return f"Error executing tool {tool}: {detail}"


def _error(exc: ValidationError) -> str:
    """A tool's rejected arguments, one clause each, without echoing what was sent."""
    parts = []
    for err in exc.errors(include_url=False):
        where = ""
        for step in err["loc"]:
            where += f"[{step}]" if isinstance(step, int) else (f".{step}" if where else step)
        if err["type"] == "missing":
            parts.append(f"missing argument '{where}'")
        else:
            parts.append(f"argument '{where}': {err['msg']}")
    return "; ".join(parts)


SHOWN_UNKNOWN = 5  # unknown arguments named in a refusal (the rest are counted)


def unknown_arguments(arguments: Iterable[str], known: Sequence[str]) -> str | None:
    """The refusal of the ``arguments`` a tool does not take, each with the nearest it takes
    (None: it takes them all). The SDK would drop them unread: a typo (``blocker``) would lose
    what the agent wrote."""
    unknown = [name for name in arguments if name not in known]
    if not unknown:
        return None
    parts = []
    for name in unknown[:SHOWN_UNKNOWN]:
        close = closest(name, known)
        guess = f" (did you mean '{close}'?)" if close is not None else ""
        parts.append(f"unknown argument '{one_line(name[:60])}'{guess}")
    if len(unknown) > SHOWN_UNKNOWN:
        parts.append(f"{len(unknown) - SHOWN_UNKNOWN} more unknown")
    return "; ".join(parts) + f"; its arguments: {', '.join(known) or 'none'}"


_CLIENT: ContextVar[str] = ContextVar("clm_policy_mcp_client", default="")  # clientInfo.name


def client_of(context: Any) -> str:
    """The name the client of the SDK's request ``context`` gave, "" when none."""
    try:
        params = context.session.client_params
    except Exception:  # no request: a call made in process
        return ""
    name = getattr(getattr(params, "client_info", None), "name", "")
    return name if isinstance(name, str) else ""


def call_wait() -> float:
    """How long the call being answered may take to reach a transcript (only Claude Code's
    does)."""
    return WAIT if _CLIENT.get() == WRITER else 0.0


async def read_only(tool: Callable[[float], dict[str, Any]]) -> dict[str, Any]:
    """A tool that only reads: answered on the event loop when it waits for nothing, in a
    worker thread while it may wait for Claude Code's line."""
    wait = call_wait()
    if not wait:
        return tool(wait)
    import anyio

    return await anyio.to_thread.run_sync(tool, wait)


def _new_server() -> MCPServer:
    """The SDK's server, which knows the client of each call, refuses arguments the tool does
    not take, says which it refused without echoing them, and answers the project's errors
    as tool errors (anything else is a crash the SDK reports without detail)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from clm_policy import __version__

    class Server(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            schema = next((t.input_schema for t in await self.list_tools() if t.name == name), None)
            if schema is not None:  # (an unknown tool: the SDK says so)
                refused = unknown_arguments(arguments, list(schema.get("properties", {})))
                if refused is not None:
                    raise ToolError(failed(name, refused))
            client = _CLIENT.set(client_of(context))
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                cause = exc.__cause__
                if isinstance(cause, ValidationError):
                    raise ToolError(failed(name, _error(cause))) from None
                if isinstance(cause, ClmError):  # the SDK's crash: the project's message
                    raise ToolError(failed(name, str(cause))) from None
                raise
            finally:
                _CLIENT.reset(client)

    return Server(NAME, instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")


def build_server(tools: Tools | None = None) -> MCPServer:
    """The server with its six tools (``tools``: by default the process's project)."""
    run = tools or Tools()
    server = _new_server()

    async def status() -> dict[str, Any]:
        return await read_only(run.status)

    async def explain() -> dict[str, Any]:
        return await read_only(run.explain)

    def handoff(
        goal: Annotated[str, Field(max_length=2_000, description=_asks("goal"))],
        next_step: Annotated[str, Field(max_length=1_000, description=_asks("next_step"))],
        tasks: Annotated[Items, Field(description=_asks("tasks"))] = [],  # noqa: B006
        decisions: Annotated[Items, Field(description=_asks("decisions"))] = [],  # noqa: B006
        verification: Annotated[Items, Field(description=_asks("verification"))] = [],  # noqa: B006
        blockers: Annotated[Items, Field(description=_asks("blockers"))] = [],  # noqa: B006
        environment: Annotated[Items, Field(description=_asks("environment"))] = [],  # noqa: B006
        plan: Annotated[Items, Field(description="the steps after the next one, in order")] = [],  # noqa: B006
        notes: Annotated[
            str, Field(max_length=4_000, description="anything else the next session needs")
        ] = "",
    ) -> dict[str, Any]:
        fields = AgentHandoff(
            goal=goal,
            tasks=tasks,
            decisions=decisions,
            verification=verification,
            blockers=blockers,
            environment=environment,
            next_step=next_step,
            plan=plan,
            notes=notes,
        )
        return run.handoff(fields, call_wait())

    def memory_search(
        query: Annotated[str, Field(max_length=200, description="a word or phrase to look for")],
    ) -> dict[str, Any]:
        return run.memory_search(query)

    def memory_read(
        key: Annotated[str, Field(max_length=KEY_CHARS, description="the topic's key")],
    ) -> dict[str, Any]:
        return run.memory_read(key)

    def memory_write(
        key: Annotated[
            str, Field(max_length=KEY_CHARS, description="the topic's key, e.g. decisions/db")
        ],
        text: Annotated[str, Field(max_length=64 * 1024, description="the topic, Markdown")],
    ) -> dict[str, Any]:
        return run.memory_write(key, text)

    for fn in (status, explain, handoff, memory_search, memory_read, memory_write):
        name = fn.__name__
        server.add_tool(fn, name=name, description=DESCRIPTIONS[name])
    return server


def serve() -> None:
    """Run the server on standard input and output, the wire guarded (:mod:`.wire`); Ctrl-C
    ends it once the requests in flight are answered, as ``KeyboardInterrupt`` (exit 130)."""

    from clm_policy.agents.mcp.wire import guarded

    server = build_server()
    with guarded() as wire:
        server.run("stdio")
    if wire.interrupted:
        raise KeyboardInterrupt
