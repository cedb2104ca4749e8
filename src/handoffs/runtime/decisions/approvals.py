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
(`recovery.settled`). A tool makes itself idempotent with `ctx.call_id`, the id of the
call it runs.

A call of a client's tool (`core.client_tools`) waits the same way, marked the
client's (`PendingApproval.client`), announced by `tool_called` and `approval_requested`
(`client: true`); the client's result (`runner.submit_tool_result`) is its decision, and
its result. The turn's client tools are kept with the frame, offered again when it goes on.

A delegate of the main line waits the same way: its own response and messages are
stored with its caller's response (`suspended`), and the decision continues the delegate,
then the caller (`continuation`). A delegate of a delegate, or of a plan step, cannot wait:
the call's result says so.

These decisions make the stored frames (`core.pending`); the driver stores them, says so
and ends the agent's work (`driver.pause`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ...core.messages import ToolCall
from ...core.tools import Tool, ToolSpec
from ...models.base import ModelResponse
from ..state import Leg, Pause, Turn

if TYPE_CHECKING:
    from ...core.pending import PausedResponse, PendingApproval


def paused(t: Turn, leg: Leg, response: ModelResponse,
           waiting: list[tuple[int, ToolCall, Tool]]) -> PendingApproval:
    """What keeps the response and the calls that wait (`PendingApproval.client`: those
    of the client's tools); a delegate's also keeps its own messages so far and its
    line's record, for its caller to store (`suspended`)."""
    from ...core.pending import PendingApproval  # loaded once a call waits

    client = t.client
    specs = None  # the turn's client tools, offered again when it goes on
    mine: list[str] = []
    if client is not None:
        specs = [_spec(c) for c in client.values()]
        mine = [c.id for _, c, tl in waiting if client.get(c.name) is tl]
    main = leg.main
    return PendingApproval(
        leg.agent.name, response.text, _unmarked(response.tool_calls),
        [c.id for _, c, _ in waiting], reasoning=response.reasoning, client_tools=specs,
        client=mine, record=None if main else leg.line,
        messages=() if main else [m.to_dict() for m in leg.sub])


def suspended(t: Turn, leg: Leg, response: ModelResponse, results: list[Any],
              marks: list[Any], index: int, paused: Pause,
              transfer: tuple[int, Any] | None, escalate: Any,
              stored: bool = False) -> PendingApproval:
    """What keeps the main line's response waiting for its delegate's approval (the
    delegate's frame, `paused`): both, the calls the response already settled, and the
    transfer it decided (if any: its call's index and record; `stored`: the record
    already in its stored form)."""
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
    return paused.frame.with_caller(
        caller, None if client is None else [_spec(c) for c in client.values()])


def client_tools(frame: PendingApproval) -> dict[str, Tool] | None:
    """The client tools of the turn that paused (`frame`), for its continuation to offer
    again (None: it had none)."""
    specs = frame.client_tools
    if not specs:
        return None
    from ...core.client_tools import client_tool

    return {s.name: client_tool(s) for s in specs}


def _spec(tl: Tool) -> ToolSpec:
    return ToolSpec(tl.name, tl.description, tl.parameters)


def stored_response(frame: PausedResponse) -> ModelResponse:
    """The response a stored frame (`paused`'s, or `suspended`'s caller) keeps: its text,
    its calls and the provider's reasoning state that came with it."""
    return ModelResponse(frame.text, stored_calls(frame), reasoning=frame.reasoning)


def stored_calls(frame: PausedResponse) -> tuple[ToolCall, ...]:
    """The calls of a stored frame, unmarked (new objects: the turn may mark them)."""
    return _unmarked(frame.calls)


def _unmarked(calls: Iterable[ToolCall]) -> tuple[ToolCall, ...]:
    return tuple(ToolCall(c.id, c.name, c.arguments) for c in calls)
