"""Tool spans: `execute_tool {tool}` from the call to its result, current while the tool
runs (`invoke`, which the runtime calls instead of `Tool.invoke` in a traced turn), with
the exception and its stack trace when the tool raised; `handoffs.tool.duration`."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from ..core.events import Event
from . import semconv as sc

if TYPE_CHECKING:
    from ..core.context import RunContext
    from ..core.tools import Tool
    from .observing import ObservedTurn, Observing


def called(obs: Observing, e: Event) -> Any:
    d = e.data
    name = d["tool"]
    attrs: dict[str, Any] = {sc.OPERATION: sc.EXECUTE_TOOL, sc.TOOL_NAME: name,
                             sc.TOOL_CALL_ID: d["call_id"], sc.TOOL_TYPE: "function"}
    description = _description(obs.t, d["agent"], name)
    if description:
        attrs[sc.TOOL_DESCRIPTION] = description
    if obs.capture:
        attrs[sc.TOOL_ARGUMENTS] = d["arguments"]
    span = obs.start(f"execute_tool {name}", obs.context(), attrs)
    cur = obs.current()
    if cur is not None:
        cur.tools[d["call_id"]] = span
    if obs.metrics is not None:
        obs.tool_t0[d["call_id"]] = time.perf_counter()
    return span

async def invoke(obs: Observing, tl: Tool, ctx: RunContext, arguments: dict[str, Any],
                 call_id: str) -> Any:
    """`tl.invoke(ctx, arguments)` with the call's `execute_tool` span current, and
    the exception it raised (with its stack trace) recorded on that span."""
    cur = obs.current()
    span = cur.tools.get(call_id) if cur is not None else None
    if span is None:
        return await tl.invoke(ctx, arguments)
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        return await tl.invoke(ctx, arguments)
    except Exception as exc:
        span.record_exception(exc)
        raise
    finally:
        otel_context.detach(token)

def result(obs: Observing, e: Event) -> Any:
    d = e.data
    cur = obs.current()
    span = cur.tools.pop(d["call_id"], None) if cur is not None else None
    error = "tool_error"
    if span is None:  # nothing ran: no tool by that name, or a person did not approve
        error = ("not_approved" if _tool_of(obs.t, d["agent"], d["tool"]) is not None
                 else "unknown_tool")
        span = obs.start(f"execute_tool {d['tool']}", obs.context(), {
            sc.OPERATION: sc.EXECUTE_TOOL, sc.TOOL_NAME: d["tool"],
            sc.TOOL_CALL_ID: d["call_id"], sc.TOOL_TYPE: "function"})
    if obs.capture:
        span.set_attribute(sc.TOOL_RESULT, d["text"])
    if d["is_error"]:
        span.set_attribute(sc.ERROR_TYPE, error)
        span.set_status(Status(StatusCode.ERROR, error))
    span.end()
    if obs.metrics is not None:
        t0 = obs.tool_t0.pop(d["call_id"], None)
        if t0 is not None:
            obs.metrics.tool_duration.record(
                time.perf_counter() - t0, {sc.TOOL_NAME: d["tool"], sc.ERROR_TYPE: error}
                if d["is_error"] else {sc.TOOL_NAME: d["tool"]})
    return span

def _tool_of(t: ObservedTurn, agent: str, name: str) -> Any:
    """Tool `name` as offered to `agent` (a function or MCP tool), if it has one."""
    plan = t.team._plans.get(agent)
    tl: Any = plan.tools.get(name) if plan is not None else None
    if tl is None:
        hub = t.runner.mcp_hub
        tl = hub.tool(agent, name) if hub is not None else None
    return tl


def _description(t: ObservedTurn, agent: str, name: str) -> str | None:
    description = getattr(_tool_of(t, agent, name), "description", None)
    return description if isinstance(description, str) else None
