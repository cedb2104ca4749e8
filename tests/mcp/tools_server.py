"""A real MCP server for the tests, on the `mcp` SDK's own server API.

    python tools_server.py stdio
    python tools_server.py http PORT
"""

from __future__ import annotations

import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

app = MCPServer("orders")


@app.tool()
def lookup_order(order_id: str) -> str:
    """Look an order up by its id."""
    return f"order {order_id}: shipped, 2 items"


@app.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@app.tool()
def refund(order_id: str) -> str:
    """Refund an order (always fails here)."""
    raise ToolError(f"order {order_id} cannot be refunded")


@app.tool()
def die() -> str:
    """Stop the server process at once (a crash)."""
    os._exit(3)


@app.tool()
def transfer_to_billing() -> str:
    """A tool whose name looks like a handoff: never offered as is."""
    return "no"


@app.tool()
def whoami() -> str:
    """The process id (which process answered)."""
    return str(os.getpid())


if __name__ == "__main__":
    if sys.argv[1] == "http":
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run()
