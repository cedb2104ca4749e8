"""A response that waits for a person (or a client's result): the frame
`decisions.approvals` makes is stored, or handed to the delegate's caller, and said
(`approval_requested` for each waiting call, `tool_called` first for a client's tool);
the agent's work ends (`Pause`)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ...core.messages import ToolCall
from ...core.tools import Tool
from ...log import fields
from ...models.base import ModelResponse
from ..decisions.approvals import paused, suspended
from ..state import Leg, Pause, Turn

if TYPE_CHECKING:
    from ...core import event_data as ed

log = logging.getLogger("handoffs.runtime.approval")  # a stable name (docs/observability.md)


def pause(t: Turn, leg: Leg, response: ModelResponse,
          waiting: list[tuple[int, ToolCall, Tool]]) -> Pause:
    """Keep the response and the calls that wait; say so; end the agent's work. On the
    main line it is stored now; a delegate's goes to its caller (`suspend`), with the
    delegate's own messages so far."""
    frame = paused(t, leg, response, waiting)
    name = frame.agent
    mine = frame.client
    for _, c, _ in waiting:
        data: ed.ApprovalRequested = {"agent": name, "tool": c.name, "call_id": c.id,
                                      "arguments": c.arguments}
        if c.id in mine:  # the client runs it
            t.emit("tool_called", data)
            data = {**data, "client": True}
        t.emit("approval_requested", data)
    state = t.state
    log.info("%s waits for %s of %s", name,
             "a person's approval" if not mine else "the client's result"
             if len(mine) == len(waiting) else "a person's approval or the client's result",
             ", ".join(f"{c.name} ({c.id})" for _, c, _ in waiting),
             extra=fields(state.id, state.turn, name))
    if leg.main:
        state.pending = frame
        return Pause(name)
    return Pause(name, frame)


def suspend(t: Turn, leg: Leg, response: ModelResponse, results: list[Any],
            marks: list[Any], index: int, paused: Pause,
            transfer: tuple[int, Any] | None, escalate: Any, stored: bool = False) -> Pause:
    """The main line's response waits for its delegate's approval: store both, the
    calls the response already settled, and the transfer it decided (if any: its call's
    index and record; `stored`: the record already in its stored form)."""
    t.state.pending = suspended(t, leg, response, results, marks, index, paused, transfer,
                                escalate, stored)
    return Pause(leg.agent.name)
