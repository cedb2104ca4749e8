"""What the API answers with: sessions, transcripts, the team, as plain JSON."""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import JSONResponse

from ..core.agent import Agent
from ..core.messages import AssistantMessage, UserMessage
from ..core.session import SessionState
from ..core.team import Team
from ..stores.text import valid
from . import customer

HIDDEN = ("token_sha256", "a2a_tokens")
"""Metadata a client never sees."""


class Answer(JSONResponse):
    """A JSON answer whose text is valid Unicode: a lone surrogate (which a client may
    send as `\\ud800`) becomes U+FFFD, as the stores keep it, instead of failing the
    answer."""

    def render(self, content: Any) -> bytes:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, indent=None,
                          separators=(",", ":"))
        return valid(text).encode("utf-8")


def selectable(agent: Agent) -> bool:
    """Whether a user may pick `agent` (the policy's rules for a pick, but the channel):
    what the page's picker and `GET /v1/models` offer."""
    return agent.user_selectable and not agent.system_only and agent.enabled


def agent_view(agent: Agent | None, name: str | None) -> dict[str, Any] | None:
    if name is None:
        return None
    if agent is None:  # an agent that left the team since the session was stored
        return {"name": name, "display_name": name, "icon": None, "color": None}
    return {"name": agent.name, "display_name": agent.display_name or agent.name,
            "icon": agent.icon, "color": agent.color, "human": agent.is_human}


def session_view(team: Team, state: SessionState, operator: bool = False) -> dict[str, Any]:
    """`GET /v1/sessions/{id}`: with the team's typed context under `context` (all of it
    for the operator key, the public fields for the session's own token)."""
    name = state.active_agent or team.entry
    fields = context_of(team, state)
    shown = {} if fields is None else {
        "context": fields if operator else customer.context(team, fields)}
    return shown | {
        "id": state.id, "active_agent": agent_view(team.get(name), name),
        "status": state.status, "turn": state.turn, "channel": state.channel,
        "messages": len(state.messages), "created_at": state.created_at,
        "updated_at": state.updated_at,
        "metadata": {k: v for k, v in state.metadata.items() if k not in HIDDEN},
        "approvals": approvals_view(state),
    }


def context_of(team: Team, state: SessionState) -> dict[str, Any] | None:
    """The session's typed context fields (a new context's before its first turn); None
    for a team without a context type."""
    if team.context_type is None:
        return None
    from ..core.typed_context import current

    return current(team.context_type, state.context)


def persons_replies(team: Team, state: SessionState) -> list[str]:
    """What a human agent said after the user's last message: given to a client that
    has no live stream (OpenAI-compatible, MCP) with the answer to its next message."""
    found: list[str] = []
    for m in reversed(state.messages):
        if isinstance(m, UserMessage):
            break
        agent = team.get(m.agent) if isinstance(m, AssistantMessage) else None
        if agent is not None and agent.is_human and m.text:
            found.append(m.text)
    return found[::-1]


def approvals_view(state: SessionState) -> list[dict[str, Any]]:
    """The tool calls that wait for a person's decision (empty unless the session is
    `waiting_for_approval`), each with whether it was decided yet; `client`: a call of
    a client's tool, which waits for the client's result (an operator may reject it)."""
    pending = state.pending
    if pending is None:
        return []
    decisions = pending.decisions
    client = pending.client
    out = []
    for cid in pending.waiting:
        call = pending.call(cid)
        decision = decisions.get(cid)
        out.append({"call_id": cid, "agent": pending.agent,
                    "tool": None if call is None else call.name,
                    "arguments": None if call is None else call.arguments,
                    "decision": None if decision is None else decision.to_dict(),
                    "client": cid in client})
    return out


def transcript_view(team: Team, state: SessionState) -> dict[str, Any]:
    messages = []
    for i, m in enumerate(state.messages):
        d = m.to_dict()
        d["index"] = i
        agent = d.get("agent")
        if isinstance(agent, str) and agent in team:
            d["display_name"] = team[agent].display_name or agent
        messages.append(d)
    return {"session_id": state.id, "active_agent": state.active_agent or team.entry,
            "messages": messages, "handoffs": [r.to_dict() for r in state.handoffs]}


def team_view(team: Team) -> dict[str, Any]:
    agents = []
    routes = []
    for a in team.agents:
        agents.append({
            "name": a.name, "display_name": a.display_name or a.name,
            "description": a.description, "icon": a.icon, "color": a.color,
            "user_selectable": selectable(a),
            "system_only": a.system_only, "human": a.is_human,
            "entry": a.name == team.entry,
        })
        for r in team.plan(a.name).routes.values():
            h = r.handoff
            kind = ("delegation" if h.returns else
                    "next_turn" if getattr(h, "respond", None) == "next_turn" else "transfer")
            routes.append({"source": a.name, "target": r.target.name, "kind": kind,
                           "tool": r.tool_name})
    return {"entry": team.entry, "agents": agents, "routes": routes,
            "suggested_prompts": list(team.suggested_prompts), "mermaid": team.mermaid(),
            "person_keeps_conversation": team.policy.person_keeps_conversation}
