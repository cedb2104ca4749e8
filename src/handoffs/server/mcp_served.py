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

A person and an approval work here too: a person's replies come first in the next
answer, and a call waiting for approval is decided by asking `approve` / `reject` when
the caller may (the operator key; anyone with `Team(approvals_by="user")`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from fastapi import FastAPI

from ..runtime.state.result import RunStatus
from . import auth
from .contexts import bearer, open_context
from .errors import ApiError, from_exception
from .service import Service, new_session_id
from .views import approvals_view, persons_replies

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
    result. Raises `ValueError` (the tool's error, shown to the caller) when refused.

    A person's replies since the caller's last message come first in `answer` (an MCP
    client has no live stream to see them by). A turn that waits for a person says so in
    `answer`, and so does one that waits for a call's approval. While a call waits, a
    caller who may decide (the operator key, or anyone when `Team(approvals_by="user")`)
    decides it by asking `approve` or `reject`; any other message is refused (a tool
    error saying who decides), nothing stored."""
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
    state = await svc.store.load(sid)
    unseen = persons_replies(svc.team, state) if state is not None else []
    try:
        if state is not None and state.status == "waiting_for_approval":
            decides = auth.is_operator(secret, svc.settings.operator_key) or \
                svc.team.approvals_by == "user"
            result: Any = await _decided(svc, sid, message, decides)
        else:
            run = svc.turns.queue(sid)
            run.go(message)
            try:
                result = await run.finished()
            except asyncio.CancelledError:  # the client cancelled the call, or left
                if run.events and not run.done:
                    svc.runner.cancel(sid)
                raise
    except Exception as exc:  # refused before it ran
        _, code, words = from_exception(exc)
        raise ValueError(f"{code}: {words}") from None
    answer = result.output
    who = svc.team.get(result.agent)
    name = who.label if who is not None else result.agent
    if result.status is RunStatus.WAITING_FOR_HUMAN:
        answer = (f"{name} will reply: a person answers this conversation now. Ask again "
                  "in this session (session_id) to read their reply.")
    elif result.status is RunStatus.WAITING_FOR_APPROVAL:
        answer = (f"{name} needs a person (the operator) to approve a call before going "
                  "on; its answer is stored in this session once they decide.")
    out: dict[str, Any] = {"answer": "\n\n".join([*unseen, answer] if answer else unseen),
                           "agent": result.agent, "status": str(result.status),
                           "session_id": sid}
    if result.error is not None:
        out["code"] = result.error.code
        out["answer"] = result.error.message
    if opened.token is not None:
        out["session_token"] = opened.token
    return out


async def _decided(svc: Service, sid: str, message: str, decides: bool) -> Any:
    """A message on a session whose calls wait for approval: `approve` / `reject` from a
    caller who may decide decides them all; the continued turn's result."""
    from .a2a_inputs import NO, YES

    word = message.strip().strip(".!").lower()
    if not decides or word not in YES | NO:
        raise ApiError("waiting_for_approval", (
            "A call waits for approval: answer approve or reject." if decides else
            "A call waits for the operator's approval; ask again once they decided "
            "(the answer is kept in this session)."))
    state = await svc.store.load(sid)
    result = None
    async with svc.turns.exclusive(sid):
        for call in [a for a in approvals_view(state) if a["decision"] is None]:
            result = await (svc.runner.approve(sid, call["call_id"]) if word in YES
                            else svc.runner.reject(sid, call["call_id"],
                                                   "The user rejected it."))
    svc.hub.wake(sid)
    return result


def _version() -> str:
    from .. import __version__

    return __version__
