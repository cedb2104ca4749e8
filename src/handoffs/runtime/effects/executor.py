"""The effects executor of a turn in this process (`InProcess`): the clock, ids, a model
call (streamed to the turn's reader when it streams), a tool call and a remote agent's
call (A2A), performed directly. It is the default `Runner(executor=...)`; the protocol
it implements is `state.host.Executor`, so an executor for a durable-execution engine can
record each effect and replay it.

Its methods hand back the call's own awaitable rather than wrapping it in a coroutine of
their own, so the seam costs a turn no extra frame per model or tool call.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING, Any, Literal

from ...core.context import RunContext
from ...core.tools import Tool, ToolSpec
from ...errors import ModelError
from ...models.base import Model, ModelRequest, ModelResponse, TextDelta
from ..state import Turn
from .ids import new_id

if TYPE_CHECKING:
    from ...core import event_data as ed
    from ...core.remote import RemoteAgent, RemoteReply, RemoteRequest


async def within(call: Awaitable[Any], seconds: float, name: str) -> Any:
    """`call`'s value, or `TimeoutError` (the tool's failure) after `seconds`."""
    try:
        return await asyncio.wait_for(call, seconds)
    except TimeoutError:
        raise TimeoutError(f"the tool {name} did not finish within {seconds:g} s") from None


class InProcess:
    """Performs a turn's effects in this process (see the module)."""

    __slots__ = ()

    now = staticmethod(time.time)
    """The clock: `time.time`."""
    new_id = staticmethod(new_id)
    """Ids: a per-process random prefix and a counter (`effects.ids`)."""

    def model(self, t: Turn, model: Model, request: ModelRequest) -> Awaitable[ModelResponse]:
        """The model's response; streamed as `text_delta` events when the turn streams."""
        if t.streaming:
            return streamed(t, model, request)
        return model.complete(request)

    def tool(self, t: Turn, tool: Tool, ctx: RunContext, args: Any,
             call_id: str) -> Awaitable[Any]:
        """The tool's return value (a traced turn runs it with its span current); an
        attempt longer than the tool's `timeout` fails with `TimeoutError`."""
        obs = t.obs
        call: Awaitable[Any] = (tool.invoke(ctx, args) if obs is None
                                else obs.invoke(tool, ctx, args, call_id))
        if tool.timeout is None:
            return call
        return within(call, tool.timeout, tool.name)

    def summary(self, t: Turn | None, summarizer: Any, fallback_model: Model | None,
                request: ModelRequest, target: str) -> Awaitable[ModelResponse]:
        """The summariser's response (`effects.summary.summary_model` picks the model)."""
        from .summary import summary_model

        return summary_model(summarizer, fallback_model).complete(request)

    def mcp_offer(self, t: Turn, agent: Any,
                  taken: Iterable[str]) -> Awaitable[tuple[tuple[ToolSpec, ...], str]]:
        """The agent's MCP tools from the runner's connections (`mcp.hub.Hub.offer`)."""
        offer: Awaitable[tuple[tuple[ToolSpec, ...], str]] = t.runner.mcp.offer(
            agent, taken, (t.state.id, t.state.turn))
        return offer

    within = staticmethod(asyncio.wait_for)
    """Timers: `asyncio.wait_for` (`TimeoutError` after the seconds, the call cancelled)."""

    def remote(self, t: Turn, agent: RemoteAgent,
               request: RemoteRequest) -> Awaitable[RemoteReply]:
        """The remote agent's reply over A2A (`handoffs.a2a.client`, the `a2a` extra);
        its text streamed as `text_delta` events when the turn streams."""
        from ...a2a.client import send

        if not t.streaming:
            return send(agent, request)
        name = agent.name
        return send(agent, request,
                    lambda text: t.emit("text_delta", {"agent": name, "text": text}))


async def streamed(t: Turn, model: Model, request: ModelRequest) -> ModelResponse:
    """A streamed model call: text deltas become events, the last piece is the response."""
    response: ModelResponse | None = None
    async for piece in model.stream(request):
        if isinstance(piece, TextDelta):
            t.emit("text_delta", {"agent": request.agent, "text": piece.text})
        else:
            response = piece
    if response is None:
        raise ModelError("The model's stream ended without a response.")
    return response


class Unstreamed:
    """What the executor is given as the turn for a model call whose text must not
    stream to the reader (a one-shot `ask`, the first call beside a running input
    check). The executors read only `streaming` (and `emit`, for deltas) of it."""

    __slots__ = ()

    streaming = False

    def emit(self, type_: Literal["text_delta"], data: ed.TextDelta) -> None:
        """Nothing: such a call has no events of its own."""


UNSTREAMED: Any = Unstreamed()


IN_PROCESS = InProcess()
"""The executor a `Runner` uses unless it is given another."""
