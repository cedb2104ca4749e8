"""Tool calls that wait for a person: `@tool(needs_approval=...)`, `runner.approve`,
`runner.reject`: what
the decisions keep (the paused response, a delegate's paused work with its caller's).

When a response of the main line has a call whose tool needs approval, nothing of that
response runs yet: the response (text and calls) and the calls that wait are stored in
`SessionState.pending`, an `approval_requested` event names each, and the turn ends
`waiting_for_approval` (persisted: another process, after a restart, can decide). Each
decision is stored as it comes; the last one is stored too, before anything of the
response runs, and continues the same turn with the same agent: approved calls run, a
rejected call's result is the person's reason (an error result the model reads), the
other calls of the response run as usual, and the agent goes on. While a session waits,
a new user message is refused (`waiting_for_approval`).

Approved calls run at most once. If the process dies while the continuation runs, the
decisions are kept and nothing of the response runs again: the next turn (a message,
`runner.resume`, or deciding again) answers each call with "outcome unknown"
(`recovery.settle`). A tool makes itself idempotent with `ctx.call_id`, the id of the
call it runs.

A call of a client's tool (`core.client_tools`) waits the same way, marked the
client's (`PendingApproval.client`), announced by `tool_called` and `approval_requested`
(`client: true`); the client's result (`runner.submit_tool_result`) is its decision, and
its result. The turn's client tools are kept with the frame, offered again when it goes on.

A delegate of the main line waits the same way: its own response and messages are
stored with its caller's response (`suspend`), and the decision continues the delegate,
then the caller (`continuation`). A delegate of a delegate, or of a plan step, cannot wait:
the call's result says so.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ...core.messages import ToolCall
from ...core.tools import Tool, ToolSpec
from ...log import fields
from ...models.base import ModelResponse
from ..state import Leg, Pause, Turn

if TYPE_CHECKING:
    from ...core import event_data as ed
    from ...core.pending import PausedResponse, PendingApproval

log = logging.getLogger("handoffs.runtime.approval")  # a stable name (docs/observability.md)


def pause(t: Turn, leg: Leg, response: ModelResponse,
          waiting: list[tuple[int, ToolCall, Tool]]) -> Pause:
    """Keep the response and the calls that wait; say so; end the agent's work. On the
    main line it is stored now; a delegate's goes to its caller (`suspend`), with the
    delegate's own messages so far."""
    from ...core.pending import PendingApproval  # loaded once a call waits

    name = leg.agent.name
    client = t.client
    specs = None  # the turn's client tools, offered again when it goes on
    mine: list[str] = []
    if client is not None:
        specs = [_spec(c) for c in client.values()]
        mine = [c.id for _, c, tl in waiting if client.get(c.name) is tl]
    main = leg.main
    frame = PendingApproval(
        name, response.text, _unmarked(response.tool_calls), [c.id for _, c, _ in waiting],
        reasoning=response.reasoning, client_tools=specs, client=mine,
        record=None if main else leg.line,
        messages=() if main else [m.to_dict() for m in leg.sub])
    for _, c, tl in waiting:
        data: ed.ApprovalRequested = {"agent": name, "tool": c.name, "call_id": c.id,
                                      "arguments": c.arguments}
        if client is not None and client.get(c.name) is tl:  # the client runs it
            t.emit("tool_called", data)
            data = {**data, "client": True}
        t.emit("approval_requested", data)
    state = t.state
    log.info("%s waits for %s of %s", name,
             "a person's approval" if not mine else "the client's result"
             if len(mine) == len(waiting) else "a person's approval or the client's result",
             ", ".join(f"{c.name} ({c.id})" for _, c, _ in waiting),
             extra=fields(state.id, state.turn, name))
    if main:
        state.pending = frame
        return Pause(name)
    return Pause(name, frame)


def suspend(t: Turn, leg: Leg, response: ModelResponse, results: list[Any],
            marks: list[Any], index: int, paused: Pause,
            transfer: tuple[int, Any] | None, escalate: Any, stored: bool = False) -> Pause:
    """The main line's response waits for its delegate's approval: store both, the
    calls the response already settled, and the transfer it decided (if any: its call's
    index and record; `stored`: the record already in its stored form)."""
    from ...core.pending import WaitingCaller

    assert paused.frame is not None
    if transfer is not None and not stored:
        transfer = (transfer[0], transfer[1].to_dict())
    caller = WaitingCaller(
        leg.agent.name, response.text, _unmarked(response.tool_calls),
        [None if r is None else r.to_dict() for r in results], marks, index, transfer,
        None if escalate is None else (escalate.code, escalate.message, escalate.agent),
        response.reasoning)
    client = t.client
    t.state.pending = paused.frame.with_caller(
        caller, None if client is None else [_spec(c) for c in client.values()])
    return Pause(leg.agent.name)


def client_of(t: Turn, frame: PendingApproval) -> None:
    """Offer the continued turn the client tools of the turn that paused (`frame`)."""
    specs = frame.client_tools
    if specs:
        from ...core.client_tools import client_tool

        t.client = {s.name: client_tool(s) for s in specs}


def _spec(tl: Tool) -> ToolSpec:
    return ToolSpec(tl.name, tl.description, tl.parameters)


def stored_response(frame: PausedResponse) -> ModelResponse:
    """The response a stored frame (`pause`'s, or `suspend`'s caller) keeps: its text,
    its calls and the provider's reasoning state that came with it."""
    return ModelResponse(frame.text, stored_calls(frame), reasoning=frame.reasoning)


def stored_calls(frame: PausedResponse) -> tuple[ToolCall, ...]:
    """The calls of a stored frame, unmarked (new objects: the turn may mark them)."""
    return _unmarked(frame.calls)


def _unmarked(calls: Iterable[ToolCall]) -> tuple[ToolCall, ...]:
    return tuple(ToolCall(c.id, c.name, c.arguments) for c in calls)
