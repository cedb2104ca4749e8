"""A team served as an MCP server (`create_app(..., mcp=True)`, `handoffs serve --mcp`):
one tool, `ask_team`, that any MCP client (Claude Desktop, an IDE, another team's
`Agent(mcp=[MCPServer.http(...)])`) calls to ask the team, with the `mcp` SDK's own server
over Streamable HTTP at `/mcp` (the `mcp` extra).

A call is one user turn of a session, run as `POST /v1/sessions/{id}/messages` runs it
(the page and every follower see it): with no `session_id` it starts a new conversation
and answers, once, with its `session_token`; with one, it continues that conversation
and needs its token (`Authorization: Bearer ...` on the MCP connection) or the operator
key, exactly as over A2A and AG-UI. The result says who answered (`agent`), how the turn
ended (`status`: `completed`, `waiting_for_human`, `waiting_for_approval`, ...) and the
answer (`answer`); a refused call is a tool error with the reason, nothing stored.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI

from .contexts import bearer, open_context
from .errors import ApiError, from_exception
from .service import Service, new_session_id

log = logging.getLogger("handoffs.server.mcp")

MCP_PATH = "/mcp"
"""Where the team answers MCP (Streamable HTTP)."""
TOOL = "ask_team"
"""The name of the tool that asks the team."""


def install(app: FastAPI, service: Service) -> None:
    """Add the MCP endpoint to `app`; its session manager runs while the server does."""
    import importlib.util

    from ..errors import missing_extra

    if importlib.util.find_spec("mcp") is None:
        raise missing_extra("Serving a team over MCP needs the official `mcp` package",
                            "mcp")
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver import MCPServer as SdkServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.server.transport_security import TransportSecuritySettings

    team = service.team
    entry = team[team.entry]
    skills = "; ".join(f"{a.label}: {a.description}" for a in team.agents
                       if a.user_selectable and a.enabled and a.description)
    server: Any = SdkServer(name=entry.label, version=_version(),
                            instructions=entry.description or None)

    async def ask_team(message: str, ctx: Context, session_id: str | None = None
                       ) -> dict[str, Any]:
        request = ctx.request_context.request
        header = request.headers.get("authorization") if request is not None else None
        try:
            return await ask(service, message, session_id, bearer(header))
        except ValueError as exc:  # refused: the caller reads why
            raise ToolError(str(exc)) from None

    # The SDK reads the signature for the tool's schema: the types themselves, not the
    # names this module's postponed annotations would give it.
    ask_team.__annotations__ = {"message": str, "ctx": Context, "session_id": str | None,
                                "return": dict[str, Any]}

    server.add_tool(ask_team, name=TOOL, description=(
        f"Ask {entry.label} ({entry.description or 'a team of agents'}) and get its "
        f"answer. {('The team: ' + skills + '. ') if skills else ''}Leave session_id out "
        "to start a new conversation: the result gives its session_id and, once, its "
        "session_token. To continue it, pass session_id and send the token as "
        "Authorization: Bearer on the MCP connection."))
    # Host checks are the deployment's (as for the rest of the API), not localhost only.
    sub = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    app.router.routes.extend(sub.routes)
    service.lifespans.append(server.session_manager.run)
    log.warning("MCP at %s: anyone who can reach this server may start a conversation "
                "with the %s tool (each is opened after by its own session token)",
                MCP_PATH, TOOL)


async def ask(svc: Service, message: str, session_id: str | None,
              secret: str | None) -> dict[str, Any]:
    """One turn of the session on `message` for a caller presenting `secret`; the tool's
    result. Raises `ValueError` (the tool's error, shown to the caller) when refused."""
    sid = session_id or new_session_id()
    try:
        svc.check_text(message)
        if not message.strip():
            raise ApiError("invalid_argument", "The message is empty.")
    except ApiError as exc:
        raise ValueError(f"{exc.code}: {exc.message}") from None
    opened = await open_context(svc, sid, secret)
    if opened.refused is not None:
        raise ValueError(f"{opened.refused}: {opened.message}")
    run = svc.turns.queue(sid)
    run.go(message)
    try:
        result = await run.finished()
    except Exception as exc:  # refused before it ran (waiting_for_approval, ...)
        _, code, words = from_exception(exc)
        raise ValueError(f"{code}: {words}") from None
    out: dict[str, Any] = {"answer": result.output, "agent": result.agent,
                           "status": str(result.status), "session_id": sid}
    if result.error is not None:
        out["code"] = result.error.code
        out["answer"] = result.error.message
    if opened.token is not None:
        out["session_token"] = opened.token
    return out


def _version() -> str:
    from .. import __version__

    return __version__
