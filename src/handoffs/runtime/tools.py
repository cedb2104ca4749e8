"""Running a response's ordinary tool calls (concurrently), before any handoff is decided.

A tool's bad arguments and its exceptions are feedback to the model (the call's result,
`is_error`), unless the tool says `on_error="raise"`. A tool that returns `HandoffTo`
asks for a programmatic handoff; the caller decides it with the model's own requests.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace

from ..core.context import RunContext
from ..core.messages import ToolCall
from ..core.tools import HandoffTo, Tool, render_result
from ..log import fields
from .repeats import REPEATED_TOOL_CALL, remember, repeated
from .requests import error_text, parse_arguments, validation_error
from .state import Turn

log = logging.getLogger(__name__)

ToolOutcome = tuple[str, bool, HandoffTo | None]
"""A tool call's result text, whether it is an error, and the handoff it asked for."""


async def run_tools(t: Turn, ctx: RunContext, agent: str,
                    calls: list[tuple[int, ToolCall, Tool]]) -> list[ToolOutcome]:
    """Run the calls concurrently; results in call order."""
    if len(calls) == 1:
        _, c, tl = calls[0]
        return [await run_tool(t, ctx, agent, c, tl)]
    return list(await asyncio.gather(*(run_tool(t, ctx, agent, c, tl) for _, c, tl in calls)))


async def run_tool(t: Turn, ctx: RunContext, agent: str, c: ToolCall, tl: Tool) -> ToolOutcome:
    """One call: parse and validate its arguments, invoke the tool, render its result."""
    t.emit("tool_called", {"agent": agent, "tool": c.name, "call_id": c.id,
                           "arguments": c.arguments})
    raw, problem = parse_arguments(c.arguments)
    limit = t.team.policy.repeated_tool_calls
    if problem is None and limit is not None:
        again = repeated(t, agent, c, raw, limit)
        if again is not None:
            data = {"agent": agent, "tool": c.name, "call_id": c.id, "text": again[0],
                    "is_error": again[1]}
            if again[1]:
                data["code"] = REPEATED_TOOL_CALL
            t.emit("tool_result", data)
            return again[0], again[1], None
    args = raw
    if problem is None:
        try:
            args = tl.parse(c.arguments if raw else raw)
        except validation_error() as exc:
            problem = (f"The arguments of {c.name!r} do not match its schema: "
                       f"{error_text(exc)}. Call it again with corrected arguments.")
    if problem is not None:
        t.emit("tool_result", {"agent": agent, "tool": c.name, "call_id": c.id,
                               "text": problem, "is_error": True})
        return problem, True, None
    if tl.takes_context:  # its own context, with the id of the call it runs
        ctx = replace(ctx, call_id=c.id)
    obs = t.obs
    try:  # traced: the call's span is current while the tool runs (`Observer.invoke`)
        value = await (tl.invoke(ctx, args) if obs is None
                       else obs.invoke(tl, ctx, args, c.id))
    except Exception as exc:
        if tl.on_error == "raise":
            raise
        text = f"Tool {c.name!r} failed: {type(exc).__name__}: {exc}"
        state = t.state
        log.warning("tool %s of %s failed: %s: %s", c.name, agent, type(exc).__name__, exc,
                    exc_info=exc, extra=fields(state.id, state.turn, agent))
        t.emit("tool_result", {"agent": agent, "tool": c.name, "call_id": c.id,
                               "text": text, "is_error": True})
        return text, True, None
    if isinstance(value, HandoffTo):
        return "", False, value
    text = render_result(value)
    if limit is not None:
        remember(t, agent, c, raw, text)
    t.emit("tool_result", {"agent": agent, "tool": c.name, "call_id": c.id,
                           "text": text, "is_error": False})
    return text, False, None
