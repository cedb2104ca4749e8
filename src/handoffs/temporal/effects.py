"""A turn's effects inside a workflow: the executor (`InWorkflow`) and the store
(`ActivityStore`) that the session's workflow gives the runtime's own driver.

The clock and ids come from the workflow (`workflow.now()`, `workflow.uuid4()`), so a
replay makes the same ones; model calls, tool calls, loads and commits are activities
(`activities`), whose results the history holds. The decisions and the driver run as
they do in process, on these.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError, TimeoutError

from ..core.context import RunContext
from ..core.events import Event
from ..core.session import Checkpoint, SessionState
from ..core.tools import HandoffTo, Tool, ToolSpec
from ..errors import HandoffsError, ModelError
from ..models.base import Model, ModelRequest, ModelResponse
from . import codec
from .activities import (
    COMMIT,
    LOAD,
    MCP_OFFER,
    MODEL,
    REMOTE,
    SUMMARY,
    TOOL,
    runner_retry,
)
from .options import TemporalOptions

if TYPE_CHECKING:
    from ..runtime.state import Turn


def _seconds(s: float) -> timedelta:
    return timedelta(seconds=s)


def _raised(exc: ActivityError, timeout: str) -> BaseException:
    """What an activity's failure means to the turn: the worker's exception rebuilt
    (`codec.error_from`), or, for a timeout, one that says so; the activity cancelled
    (a time limit of the agent, delegation or turn ran out around it) is the
    `asyncio.CancelledError` that limit's timer waits for, never a tool's failure."""
    cause = exc.cause
    if isinstance(cause, CancelledError):
        return asyncio.CancelledError()
    if isinstance(cause, ApplicationError) and cause.details:
        detail = cause.details[0]
        if isinstance(detail, dict):
            return codec.error_from(detail)
    if isinstance(cause, TimeoutError):
        return codec.error_from({"type": "TimeoutError", "message": timeout})
    return codec.error_from({"type": type(cause or exc).__name__,
                             "message": str(cause or exc)})


class InWorkflow:
    """The executor of a turn run by a session's workflow (see the module)."""

    __slots__ = ("calls", "options")

    def __init__(self, options: TemporalOptions) -> None:
        self.options = options
        self.calls: dict[str, Callable[[str, dict[str, Any]], Any]] = {}
        """The event sinks (`RunContext.sink`) of the tool calls whose activity runs, by
        call id: where the workflow's `told` signal puts what a tool reports."""

    def now(self) -> float:
        """The workflow's time (the same on replay)."""
        return workflow.now().timestamp()

    def new_id(self) -> str:
        """An id from the workflow's seeded random (the same on replay)."""
        return workflow.uuid4().hex[:24]

    async def model(self, t: Turn, model: Model, request: ModelRequest) -> ModelResponse:
        """The model call as an activity, retried by Temporal as the model's own
        `RetryPolicy` says (the activity turns the model's retries off); a traced turn's
        call is its `chat` span, as in process."""
        around = getattr(model, "around", None)  # a traced turn's model (telemetry.chat)
        if around is not None:
            inner = model.inner  # type: ignore[attr-defined]
            response: ModelResponse = await around(
                request, lambda r: self._model(t, inner, r))
            return response
        return await self._model(t, model, request)

    async def _model(self, t: Turn, model: Model, request: ModelRequest) -> ModelResponse:
        retry = runner_retry(model)
        o = self.options
        try:
            d = await workflow.execute_activity(
                MODEL, {"request": codec.request_to(request), "stream": t.streaming},
                start_to_close_timeout=_seconds(o.model_timeout),
                heartbeat_timeout=_seconds(min(o.heartbeat_timeout, o.model_timeout)),
                retry_policy=RetryPolicy(
                    initial_interval=_seconds(max(retry.base_delay, 0.001)),
                    backoff_coefficient=2.0, maximum_interval=_seconds(retry.max_delay),
                    maximum_attempts=retry.max_retries + 1))
        except ActivityError as exc:
            raised = _raised(exc, f"The model did not answer within {o.model_timeout:g} s.")
            if type(raised).__name__ == "TimeoutError" and isinstance(raised, Exception):
                raise ModelError(str(raised), "timeout", retryable=True) from exc
            raise raised from exc
        for text in d.get("deltas") or ():  # a streamed turn's text, as in process
            t.emit("text_delta", {"agent": request.agent, "text": text})
        return codec.response_from(d)

    async def tool(self, t: Any, tool: Tool, ctx: RunContext, args: Any,
                   call_id: str) -> Any:
        """The tool call as an activity; the shared memory and typed context it changed
        are applied here, its exception raised here (the model's feedback, as in
        process)."""
        o = self.options
        own = o.tool_timeouts.get(tool.name, tool.timeout)
        timeout = own or o.tool_timeout
        shared = codec.jsonable(ctx.shared)
        context = codec.jsonable(ctx.context)
        h = ctx.handoff
        if ctx.sink is not None:  # what the activity signals (`activities.Told`) goes here
            self.calls[call_id] = ctx.sink
        try:
            d = await workflow.execute_activity(
                TOOL, {"session_id": ctx.session_id, "agent": ctx.agent, "turn": ctx.turn,
                       "shared": shared, "context": context,
                       "handoff": None if h is None else codec.jsonable(
                           {f.name: getattr(h, f.name) for f in dataclasses.fields(h)}),
                       "channel": ctx.channel, "call_id": call_id, "tool": tool.name,
                       "args": codec.jsonable(args), "timeout": own},
                # The worker cancels an attempt over the tool's own limit (the model's
                # feedback, as in process); the server's limit only catches a dead worker.
                start_to_close_timeout=_seconds(timeout + (0 if own is None else
                                                           min(o.heartbeat_timeout, 5.0))),
                heartbeat_timeout=_seconds(min(o.heartbeat_timeout, timeout)),
                retry_policy=RetryPolicy(maximum_attempts=o.tool_attempts))
        except ActivityError as exc:
            raise _raised(exc, f"the tool did not finish within {timeout:g} s") from exc
        finally:
            self.calls.pop(call_id, None)
        if ctx.sink is not None:
            for kind, fields in d.get("told") or ():  # not signalled live: late, in order
                ctx.sink(kind, fields)
        _apply(ctx.shared, shared, d["shared"])
        if "context" in d:  # the team's typed context, as the tool left it
            _apply_context(ctx.context, context, d["context"])
        if "error" in d:
            raise codec.error_from(d["error"])
        if "handoff_to" in d:
            h2 = d["handoff_to"]
            return HandoffTo(h2["target"], h2["reason"], h2["payload"])
        return d["text"]


    async def summary(self, t: Any, summarizer: Any, fallback_model: Any,
                      request: ModelRequest, target: str) -> ModelResponse:
        """The summariser's model call as an activity: the worker picks the model as in
        process (the route's summariser, the team's, the source agent's model)."""
        o = self.options
        try:
            d = await workflow.execute_activity(
                SUMMARY, {"request": codec.request_to(request), "target": target},
                start_to_close_timeout=_seconds(o.model_timeout),
                heartbeat_timeout=_seconds(min(o.heartbeat_timeout, o.model_timeout)),
                retry_policy=RetryPolicy(maximum_attempts=3))
        except ActivityError as exc:
            raise _raised(exc, f"The summariser did not answer within "
                          f"{o.model_timeout:g} s.") from exc
        return codec.response_from(d)

    async def mcp_offer(self, t: Any, agent: Any,
                        taken: Iterable[str]) -> tuple[tuple[ToolSpec, ...], str]:
        """The agent's MCP tools as listed by a worker (an activity: connecting and
        listing are I/O); the workflow's runner learns their names (`Hub.adopt`), and a
        call of one is a tool activity."""
        o = self.options
        try:
            d = await workflow.execute_activity(
                MCP_OFFER, {"agent": agent.name, "taken": list(taken),
                            "turn": [t.state.id, t.state.turn]},
                start_to_close_timeout=_seconds(o.tool_timeout),
                heartbeat_timeout=_seconds(min(o.heartbeat_timeout, o.tool_timeout)),
                retry_policy=RetryPolicy(maximum_attempts=o.tool_attempts))
        except ActivityError as exc:
            raise _raised(exc, "The MCP servers did not list their tools in time.") from exc
        specs = tuple(codec.tool_from(x) for x in d["tools"])
        t.runner.mcp.adopt(agent.name, specs)
        return specs, d["down"]

    within = staticmethod(asyncio.wait_for)
    """Timers: `asyncio.wait_for` on the workflow's event loop, whose timers are
    Temporal's (durable, the same on replay); what runs out is cancelled (an activity
    then by its heartbeats)."""

    async def remote(self, t: Turn, agent: Any, request: Any) -> Any:
        """A remote agent's call (A2A) as an activity on a worker; its text, when the turn
        streams, the same `text_delta` events as in process. Tried again only when its
        worker died (the message keeps its id, so the remote side sees one message)."""
        from ..core.remote import RemoteReply

        o = self.options
        fields_ = {f.name: getattr(request, f.name) for f in dataclasses.fields(request)}
        try:
            d = await workflow.execute_activity(
                REMOTE, {"agent": agent.name, "request": codec.jsonable(fields_),
                         "stream": t.streaming},
                start_to_close_timeout=_seconds(o.model_timeout),
                heartbeat_timeout=_seconds(min(o.heartbeat_timeout, o.model_timeout)),
                retry_policy=RetryPolicy(maximum_attempts=o.tool_attempts))
        except ActivityError as exc:
            raised = _raised(exc, f"The remote agent {agent.name!r} did not answer within "
                             f"{o.model_timeout:g} s.")
            if isinstance(raised, HandoffsError) or not isinstance(raised, Exception):
                raise raised from exc
            raise HandoffsError(f"Remote agent {agent.name!r} failed: {raised}",
                                code="remote_failed") from exc
        for text in d["deltas"]:
            t.emit("text_delta", {"agent": agent.name, "text": text})
        return RemoteReply(**d["reply"])


def _apply(live: dict[str, Any], before: dict[str, Any], after: dict[str, Any]) -> None:
    """What a tool changed in the shared memory (from `before` to `after`) applied to the
    session's own, so tools that ran side by side each keep their writes."""
    for key in before.keys() - after.keys():
        live.pop(key, None)
    for key, value in after.items():
        if key not in before or before[key] != value:
            live[key] = value


def _apply_context(live: Any, before: dict[str, Any], after: dict[str, Any]) -> None:
    """The typed context's fields a tool changed (from `before` to `after`) set on the
    turn's own instance, validated by its model, so tools side by side keep theirs."""
    changed = [k for k, v in after.items() if before.get(k) != v]
    if changed:
        new = type(live).model_validate(after)
        for k in changed:
            setattr(live, k, getattr(new, k))


class ActivityStore:
    """The store as the driver sees it inside a workflow: `load` and `commit` are
    activities on the worker's store, local ones by default (`TemporalOptions.local_store`:
    a commit that ran but whose workflow task was lost runs again, and finds itself
    stored). `lock` holds nothing: the workflow runs one update of its session at a time,
    and each activity takes the store's own lock."""

    def __init__(self, options: TemporalOptions) -> None:
        self.options = options

    def _run(self, name: str, arg: Any) -> Any:
        """The store activity: a local one (run by this worker, recorded in the history
        without a round trip through the server's queues) unless the options say not."""
        o = self.options
        run = (workflow.execute_local_activity if o.local_store
               else workflow.execute_activity)
        return run(name, arg, start_to_close_timeout=_seconds(o.store_timeout),
                   retry_policy=RetryPolicy(maximum_interval=_seconds(10)))

    def lock(self, session_id: str) -> AbstractAsyncContextManager[None]:
        return nullcontext()

    async def load(self, session_id: str) -> SessionState | None:
        try:
            d = await self._run(LOAD, session_id)
        except ActivityError as exc:
            raise _store_error(exc) from exc
        return None if d is None else codec.state_from(d)

    async def commit(self, state: SessionState, since: Checkpoint,
                     events: Sequence[Event] = ()) -> None:
        try:
            r = await self._run(COMMIT, {
                "state": codec.state_to(state),
                "since": [since.messages, since.handoffs, since.version],
                "events": codec.events_to(events)})
        except ActivityError as exc:
            raise _store_error(exc) from exc
        state.version = r["version"]
        state.event_seq = r["event_seq"]
        state.updated_at = r["updated_at"]


def _store_error(exc: ActivityError) -> HandoffsError:
    raised = _raised(exc, "The store did not answer in time.")
    if isinstance(raised, HandoffsError):
        return raised
    return HandoffsError(str(raised), code="store_unavailable")
