"""MCP servers as tool sources: `MCPServer` (what to connect to) and the runner's
connections (`hub`). The `mcp` SDK is imported only when a connection opens."""

from .servers import MCPServer, MCPToolServer

__all__ = ["MCPServer", "MCPToolServer"]
