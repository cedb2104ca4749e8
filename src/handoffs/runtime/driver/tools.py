"""Running a response's ordinary tool calls (concurrently), before any handoff is decided,
and asking which of them wait for a person (`needing`: a tool's rule may be a function,
sync or async, of the arguments).

A tool that takes `ctx` gets the call's own context: its id, and its event sink
(`Told`: what it reports with `ctx.progress` / `ctx.custom_event` becomes the turn's
event at once). A tool's bad arguments and its exceptions are feedback to the model (the
call's result, `is_error`), unless the tool says `on_error="raise"`; a tool that returns `HandoffTo`
asks for a programmatic handoff (`decisions.calls`). Each tool runs through the executor.
The driver makes the call's events (`tool_called`, `tool_result`) of what the decisions
say, and keeps the turn's memory of its calls (`Turn.repeats`, read by
`decisions.repeats`).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ...core.context import RunContext
from ...core.messages import ToolCall, ToolResult
from ...core.tools import Tool
from ...errors import HandoffsError
from ...log import fields
from ..decisions.calls import Invalid, Ready, ToolOutcome, before, failure_text, returned
from ..decisions.repeats import REPEATED_TOOL_CALL, Again
from ..state import Turn

if TYPE_CHECKING:
    from ...core import event_data as ed

log = logging.getLogger("handoffs.runtime.tools")  # a stable name (docs/observability.md)


async def run_tools(t: Turn, ctx: RunContext, agent: str,
                    calls: list[tuple[int, ToolCall, Tool]]) -> list[ToolOutcome]:
    """Run the calls concurrently; results in call order (then `context_changed`, if
    they changed the typed context)."""
    if len(calls) == 1:
        _, c, tl = calls[0]
        outs = [await run_tool(t, ctx, agent, c, tl)]
    else:
        outs = list(await asyncio.gather(*(run_tool(t, ctx, agent, c, tl)
                                           for _, c, tl in calls)))
    if t.kept is not None:
        t.look(agent)
    return outs


async def run_tool(t: Turn, ctx: RunContext, agent: str, c: ToolCall, tl: Tool) -> ToolOutcome:
    """One call: said (`tool_called`), its arguments checked (`decisions.calls.before`),
    the tool run through the executor (with its own context, holding the call's id), its
    outcome (`tool_result`; a first result remembered for repeats)."""
    t.emit("tool_called", {"agent": agent, "tool": c.name, "call_id": c.id,
                           "arguments": c.arguments})
    ready = before(t, agent, c, tl)
    if not isinstance(ready, Ready):
        return not_run(t, agent, c, ready)
    told = None
    if tl.takes_context:
        told = Told(t, agent, tl.name, c.id)
        ctx = replace(ctx, call_id=c.id, sink=told)
    attempt = 0
    try:
        while True:
            try:
                value = await t.fx.tool(t, tl, ctx, ready.args, c.id)
            except Exception as exc:
                if attempt < tl.retry:  # `@tool(retry=N)`: tried again, said in the log
                    attempt += 1
                    log.warning("session %s turn %s agent %s: tool %s failed (%s: %s); "
                                "attempt %d of %d", t.state.id, t.state.turn, agent, tl.name,
                                type(exc).__name__, exc, attempt + 1, tl.retry + 1)
                    continue
                if tl.on_error == "raise":
                    raise
                return failed(t, agent, c, exc)
            out = returned(value)
            if out[2] is None:
                if t.team.policy.repeated_tool_calls is not None:
                    remember(t, agent, c, ready.raw, out[0])
                t.emit("tool_result", {"agent": agent, "tool": c.name, "call_id": c.id,
                                       "text": out[0], "is_error": False})
            return out
    finally:
        if told is not None:  # a task the tool left running reports no more
            told.over = True


def not_run(t: Turn, agent: str, c: ToolCall, why: Again | Invalid) -> ToolOutcome:
    """A call answered without running its tool: an identical call made before (counted
    on the first one's memory), or bad arguments."""
    data: ed.ToolResult = {"agent": agent, "tool": c.name, "call_id": c.id,
                           "text": why.text, "is_error": True}
    if isinstance(why, Again):
        why.seen[2] = why.times
        data["is_error"] = why.is_error
        if why.is_error:
            data["code"] = REPEATED_TOOL_CALL
    t.emit("tool_result", data)
    return data["text"], data["is_error"], None


def told(t: Turn, result: ToolResult, client: bool = False) -> None:
    """A call's result known without running its tool here, said (`tool_result`): a
    programmatic handoff request's, a person's no, a call that cannot wait, a result the
    client sent (`client`)."""
    data: ed.ToolResult = {"agent": result.agent, "tool": result.name,
                           "call_id": result.call_id, "text": result.text,
                           "is_error": result.is_error}
    if client:
        data["client"] = True
    t.emit("tool_result", data)


def failed(t: Turn, agent: str, c: ToolCall, exc: Exception) -> ToolOutcome:
    """A call whose tool raised: said in the log, and an error result the model reads."""
    text = failure_text(c.name, exc)
    state = t.state
    log.warning("tool %s of %s failed: %s: %s", c.name, agent, type(exc).__name__, exc,
                exc_info=exc, extra=fields(state.id, state.turn, agent))
    t.emit("tool_result", {"agent": agent, "tool": c.name, "call_id": c.id,
                           "text": text, "is_error": True})
    return text, True, None


def remember(t: Turn, agent: str, c: ToolCall, args: dict[str, Any], text: str) -> None:
    """Keep a call's first successful result for the rest of the turn (`Turn.repeats`)."""
    seen = t.repeats
    if seen is None:
        seen = t.repeats = {}
    calls = seen.get((agent, c.name))
    if calls is None:
        seen[(agent, c.name)] = [[args, text, 1]]
    else:
        calls.append([args, text, 1])


class Told:
    """A tool call's event sink (`RunContext.sink`): what the tool reports with
    `ctx.progress` / `ctx.custom_event` becomes the turn's event at once, attributed to
    the call; once the call is over (a task the tool left running), it raises."""

    __slots__ = ("agent", "call_id", "over", "t", "tool")

    def __init__(self, t: Turn, agent: str, tool: str, call_id: str) -> None:
        self.t, self.agent, self.tool, self.call_id = t, agent, tool, call_id
        self.over = False

    def __call__(self, kind: str, fields: dict[str, Any]) -> None:
        if self.over:
            raise HandoffsError(f"The call {self.call_id} of tool {self.tool!r} is over: "
                                "it can report nothing more.", code="no_tool_call")
        # `RunContext` sends these two only, with their own fields (`core.context`).
        if kind == "tool_progress":
            self.t.emit("tool_progress", {"agent": self.agent, "tool": self.tool,
                                          "call_id": self.call_id,
                                          "message": fields["message"]})
        else:
            self.t.emit("custom_event", {"agent": self.agent, "tool": self.tool,
                                         "call_id": self.call_id, "name": fields["name"],
                                         "data": fields["data"]})


async def needing(ctx: Any, calls: list[tuple[int, ToolCall, Tool]]
                  ) -> list[tuple[int, ToolCall, Tool]]:
    """The calls whose tool needs approval for these arguments."""
    out = []
    for item in calls:
        rule = item[2].needs_approval
        if rule is False:
            continue
        if callable(rule):
            try:
                args = json.loads(item[1].arguments or "{}")
            except ValueError:
                continue  # bad arguments: the call fails as feedback, nothing runs
            decided = rule(ctx, args)
            if inspect.isawaitable(decided):
                decided = await decided
            if not decided:
                continue
        out.append(item)
    return out
