"""The runner's MCP connections: opened lazily, shared, kept alive, closed by their owner.

One `Connection` per distinct server (`MCPServer.key`), shared by every agent and session
that lists it. The `mcp` SDK's client is an anyio context whose exit must run in the task
that entered it, so each connection has an owner task: it enters the client, lists the
tools, and waits until the runner closes (`runner.aclose()`), then exits the client
itself; turns only call tools through it, from their own tasks. A server that fails to
start, or dies, leaves its connection closed with the reason: the agent is told which
tools are unavailable and why, a call in flight becomes a failed tool result, and the
next turn tries to open it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..core.names import tool_name
from ..core.tools import Tool, ToolSpec
from ..errors import HandoffsError, install_hint
from .servers import MCPServer

if TYPE_CHECKING:
    from ..core.agent import Agent

log = logging.getLogger("handoffs.mcp")


class MCPUnavailable(HandoffsError):
    """An MCP server could not be reached (it did not start, or it died)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="mcp_unavailable")


class MCPToolError(Exception):
    """A tool the MCP server ran reported an error (its text is the message)."""


class Connection:
    """One MCP server, owned by one task from open to close."""

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        self.client: Any = None
        self.tools: list[Any] | None = None
        """The server's tools as listed when the connection opened (None: not open)."""
        self.known: list[Any] = []
        """The last listing, kept while the server is down: a call of one of these
        tools is answered with why it is unavailable, not as an unknown tool."""
        self.error = ""
        """Why the last attempt to open (or the open connection) failed."""
        self.tried: Any = None
        """The turn (session id, turn) that last tried to open it: once per turn."""
        self.opens = 0
        """How many times a connection was opened (tests and logs read it)."""
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._lock = asyncio.Lock()

    @property
    def alive(self) -> bool:
        return self.client is not None and self._task is not None and not self._task.done()

    async def ensure(self, turn: Any) -> bool:
        """Open the connection unless it is open, or this turn already failed to."""
        if self.alive:
            return True
        async with self._lock:
            if self.alive:
                return True
            if self.tried == turn and turn is not None:
                return False
            self.tried = turn
            await self._open()
            return self.alive

    async def _open(self) -> None:
        await self._close_task()
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        self._stop = asyncio.Event()
        self._task = loop.create_task(self._own(ready, self._stop),
                                      name=f"mcp {self.server.label}")
        await asyncio.shield(ready)  # done when open, or when it failed (self.error)

    async def _own(self, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        """The owner task: enter the client, list its tools, wait, exit the client."""
        server = self.server
        try:
            from mcp import Client  # the `mcp` extra, only when a server is used
        except ImportError:
            self._failed(ready, f"the `mcp` package is not installed (install "
                         f"{install_hint('mcp')})", None)
            return
        try:
            async with contextlib.AsyncExitStack() as stack, \
                    Client(await _target(server, stack)) as client:
                tools: list[Any] = []
                cursor = None
                while True:
                    page = await client.list_tools(cursor=cursor)
                    tools.extend(page.tools)
                    cursor = getattr(page, "next_cursor", None)
                    if not cursor:
                        break
                self.client, self.tools, self.error = client, tools, ""
                self.known = tools
                self.opens += 1
                log.info("MCP server %s open: %d tools", server.label, len(tools))
                ready.set_result(None)
                await stop.wait()
        except BaseException as exc:  # also the SDK's exception groups
            self._failed(ready, _reason(exc), exc)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self.client = None
            self.tools = None

    def _failed(self, ready: asyncio.Future[None], reason: str,
                exc: BaseException | None) -> None:
        self.error = reason
        log.warning("MCP server %s unavailable: %s", self.server.label, reason, exc_info=exc)
        if not ready.done():
            ready.set_result(None)

    async def call(self, name: str, arguments: dict[str, Any]) -> str:
        """Call one tool; its text result, or `MCPToolError` / `MCPUnavailable`."""
        client = self.client
        if client is None:
            raise MCPUnavailable(f"The MCP server {self.server.label} is unavailable "
                                 f"({self.error or 'closed'}); its tools cannot be used now.")
        try:
            result = await client.call_tool(name, arguments,
                                            read_timeout_seconds=self.server.timeout)
        except Exception as exc:
            reason = _reason(exc)
            if not self.alive or _is_transport_error(exc):
                self.error = reason
                await self._close_task()  # the next turn opens it again
                raise MCPUnavailable(f"The MCP server {self.server.label} stopped answering "
                                     f"({reason}); its tools cannot be used now.") from exc
            raise
        text = render(result)
        if getattr(result, "is_error", False):
            raise MCPToolError(text)
        return text

    async def close(self) -> None:
        """Ask the owner task to exit the client, and wait for it."""
        await self._close_task()

    async def _close_task(self) -> None:
        task, stop = self._task, self._stop
        self._task = None
        if task is None:
            return
        if stop is not None:
            stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), 10)
        except TimeoutError:
            task.cancel()
        except BaseException as exc:  # already recorded by the owner
            if isinstance(exc, asyncio.CancelledError) and not task.done():
                raise


class Hub:
    """Every MCP connection of one runner, and each agent's MCP tools."""

    def __init__(self) -> None:
        self._connections: dict[tuple[Any, ...], Connection] = {}
        self._tools: dict[str, dict[str, Tool]] = {}
        self._warned: set[tuple[str, str, str]] = set()
        """(agent, server, tool) whose name collision was logged: once, not per step."""

    def connection(self, server: MCPServer) -> Connection:
        conn = self._connections.get(server.key)
        if conn is None:
            conn = self._connections[server.key] = Connection(server)
        return conn

    async def offer(self, agent: Agent, taken: Iterable[str],
                    turn: Any = None) -> tuple[tuple[ToolSpec, ...], str]:
        """The agent's MCP tool specs now, and a sentence for the model naming the
        servers that are unavailable and why ("" when all are up)."""
        table: dict[str, Tool] = {}  # offered tools, and those of servers now down
        specs: list[ToolSpec] = []
        used = set(taken)
        down: list[str] = []
        for server in agent.mcp:
            conn = self.connection(server)
            up = await conn.ensure(turn) and conn.tools is not None
            if not up:
                down.append(f"{server.label} ({conn.error or 'not connected'})")
            for mt in (conn.tools or []) if up else conn.known:
                if not server.offers(mt.name):
                    continue
                name = tool_name(server.prefix + mt.name)
                if name in used or name.startswith("transfer_to_"):
                    seen = (agent.name, server.label, mt.name)
                    if seen not in self._warned:
                        self._warned.add(seen)
                        log.warning("MCP tool %r of %s is not offered to %s: its name %r "
                                    "is taken (set MCPServer(prefix=...))", mt.name,
                                    server.label, agent.name, name)
                    continue
                used.add(name)
                table[name] = _tool(conn, mt, name)
                if up:
                    specs.append(table[name].spec)
        self._tools[agent.name] = table
        if not down:
            return tuple(specs), ""
        return tuple(specs), ("These MCP tool servers are unavailable right now, so their tools "
                       "cannot be used: " + "; ".join(down) + ".")

    def adopt(self, agent: str, specs: Iterable[ToolSpec]) -> None:
        """Know the MCP tools another process offered `agent` (a Temporal worker's
        listing, in the session's workflow), so a call of one is a tool call; running it
        here is refused: that process runs it (the tool activity)."""
        table: dict[str, Tool] = {}
        for spec in specs:
            async def elsewhere(**arguments: Any) -> str:
                raise MCPUnavailable("This MCP tool runs on the worker (a tool activity).")

            table[spec.name] = Tool(name=spec.name, description=spec.description,
                                    parameters=dict(spec.parameters), fn=elsewhere,
                                    is_async=True, read_only=spec.read_only)
        self._tools[agent] = table

    def tool(self, agent: str, name: str) -> Tool | None:
        """The MCP tool `name` last offered to `agent`, if any."""
        table = self._tools.get(agent)
        return None if table is None else table.get(name)

    async def aclose(self) -> None:
        """Close every connection, each by its owner task."""
        conns = list(self._connections.values())
        self._connections.clear()
        await asyncio.gather(*(c.close() for c in conns), return_exceptions=True)

    def open_count(self) -> int:
        return sum(1 for c in self._connections.values() if c.alive)


def _tool(conn: Connection, mt: Any, name: str) -> Tool:
    remote = mt.name

    async def call(**arguments: Any) -> str:
        return await conn.call(remote, arguments)

    schema = dict(mt.input_schema or {"type": "object", "properties": {}})
    # The server's own word that the tool changes nothing (MCP's `readOnlyHint`).
    read_only = getattr(getattr(mt, "annotations", None), "read_only_hint", None) is True
    return Tool(name=name, description=(mt.description or remote)[:1024], parameters=schema,
                fn=call, is_async=True, read_only=read_only)


async def _target(server: MCPServer, stack: contextlib.AsyncExitStack) -> Any:
    """What the SDK's `Client` connects to. An HTTP client we make for headers is entered
    on `stack`, so it closes with the connection (the SDK leaves a given client open)."""
    if server.kind == "stdio":
        from mcp.client.stdio import StdioServerParameters

        return StdioServerParameters(command=server.command, args=list(server.args),
                                     env=dict(server.env) or None)
    if not server.headers:
        return server.url
    import httpx2  # the HTTP client the mcp SDK uses
    from mcp.client.streamable_http import streamable_http_client

    # The SDK's own client's timeouts: 30 s, and 300 s to read (a stream may stay open).
    http = await stack.enter_async_context(httpx2.AsyncClient(
        headers=dict(server.headers), timeout=httpx2.Timeout(30.0, read=300.0)))
    return streamable_http_client(server.url, http_client=http)


def render(result: Any) -> str:
    """A tool result's content as text (other content kinds are named, not inlined)."""
    parts: list[str] = []
    for block in getattr(result, "content", None) or ():
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        else:
            parts.append(f"[{kind} content: {getattr(block, 'mime_type', '') or kind}]")
    if not parts and getattr(result, "structured_content", None) is not None:
        return json.dumps(result.structured_content, ensure_ascii=False)
    return "\n".join(parts)


def _reason(exc: BaseException) -> str:
    """A one-line reason, looking inside exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if str(exc) else text


CONNECTION_CLOSED = -32000
"""The JSON-RPC code the SDK gives a request whose connection closed under it."""


def _is_transport_error(exc: BaseException) -> bool:
    """Whether `exc` says the connection is gone (not that one call failed)."""
    if getattr(exc, "code", None) == CONNECTION_CLOSED:
        return True
    name = type(exc).__name__
    return any(k in name for k in ("Closed", "BrokenResource", "EndOfStream", "Connect"))
