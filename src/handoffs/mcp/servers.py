"""`MCPServer` (also named `MCPToolServer`, a name the `mcp` SDK's own `MCPServer` class
does not share): where an agent's MCP tools come from (a description; no connection).

    Agent("support", mcp=[MCPServer.stdio("python", ["tools_server.py"]),
                          MCPServer.http("http://127.0.0.1:8000/mcp", prefix="crm_")])

The runner opens each server on first use and shares one connection per server among
every agent and session that lists it (`handoffs.mcp.hub`). Needs the `mcp` extra
(`pip install 'handoffs[mcp]'`), imported only when a connection opens.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import HandoffsError, missing_extra


@dataclass(slots=True, frozen=True)
class MCPServer:
    """An MCP server whose tools an agent may call. Build one with `MCPServer.stdio(...)`
    or `MCPServer.http(...)`; equal descriptions share one connection."""

    kind: Literal["stdio", "http"]
    """How to reach it: a subprocess over stdin/stdout, or Streamable HTTP."""
    command: str = ""
    """stdio: the program to start."""
    args: tuple[str, ...] = ()
    """stdio: its arguments."""
    env: tuple[tuple[str, str], ...] = ()
    """stdio: extra environment variables (over a minimal default environment)."""
    url: str = ""
    """http: the server's MCP endpoint (`http://host:port/mcp`)."""
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    """http: headers sent with every request (an API key, say); not shown in `repr`."""
    allow: frozenset[str] | None = None
    """Only these of the server's tools (by the server's names); None: all of them."""
    deny: frozenset[str] = frozenset()
    """None of these tools (by the server's names)."""
    prefix: str = ""
    """Put before every tool name the model sees (`crm_` gives `crm_lookup`)."""
    name: str = ""
    """How messages and logs name the server; default: the command or the URL."""
    timeout: float = 60.0
    """Seconds one tool call may take before it is reported to the model as failed."""

    @classmethod
    def stdio(cls, command: str, args: Sequence[str] = (), env: Mapping[str, str] | None = None,
              *, allow: Sequence[str] | None = None, deny: Sequence[str] = (),
              prefix: str = "", name: str = "", timeout: float = 60.0) -> MCPServer:
        """A server the runner starts as a subprocess (`command args...`)."""
        if not command:
            raise HandoffsError("MCPServer.stdio needs a command.", code="invalid_team")
        return cls("stdio", command=command, args=tuple(args),
                   env=tuple(sorted((env or {}).items())), allow=_names(allow),
                   deny=frozenset(deny), prefix=prefix, name=name, timeout=timeout)

    @classmethod
    def http(cls, url: str, headers: Mapping[str, str] | None = None, *,
             allow: Sequence[str] | None = None, deny: Sequence[str] = (), prefix: str = "",
             name: str = "", timeout: float = 60.0) -> MCPServer:
        """A running server reached over Streamable HTTP at `url`."""
        if not url.startswith(("http://", "https://")):
            raise HandoffsError(f"MCPServer.http needs an http(s) URL, not {url!r}.",
                                code="invalid_team")
        return cls("http", url=url, headers=tuple(sorted((headers or {}).items())),
                   allow=_names(allow), deny=frozenset(deny), prefix=prefix, name=name,
                   timeout=timeout)

    @property
    def label(self) -> str:
        """The server's name in messages: `name`, else the command line or the URL."""
        if self.name:
            return self.name
        return " ".join((self.command, *self.args)) if self.kind == "stdio" else self.url

    @property
    def key(self) -> tuple[Any, ...]:
        """What identifies the connection (filters and prefix are per agent, not here)."""
        return (self.kind, self.command, self.args, self.env, self.url, self.headers)

    def offers(self, tool: str) -> bool:
        """Whether the filters let `tool` (the server's name for it) through."""
        return (self.allow is None or tool in self.allow) and tool not in self.deny



MCPToolServer = MCPServer
"""`MCPServer` under a name that says which side it is: an MCP server whose tools an
agent calls (the `mcp` SDK's `MCPServer` is the other side, a server you write). Both
names stay; use either."""

def _names(allow: Sequence[str] | None) -> frozenset[str] | None:
    return None if allow is None else frozenset(allow)


def require_sdk(agents: Sequence[str]) -> None:
    """Fail when the team is built, with the extra to install, if agents list MCP servers
    and the `mcp` package is not installed (rather than those agents quietly having no
    tools when a turn runs). Looks the package up without importing it."""
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        raise missing_extra(f"{', '.join(agents)} list{'s' * (len(agents) == 1)} MCP servers "
                            "(Agent(mcp=...)), which need the official `mcp` package", "mcp")
