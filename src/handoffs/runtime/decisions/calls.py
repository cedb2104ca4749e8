"""An ordinary tool call before and after it runs, as decisions: its `tool_called` event,
its arguments read and validated (bad ones are the call's result, feedback), an
identical call of this turn answered from the first (`repeats`); then its return value
rendered as its result (a `HandoffTo` is a programmatic handoff request), or its
exception as an error result. Running it is the executor's (`driver.tools`)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ...core.messages import ToolCall
from ...core.tools import HandoffTo, Tool, render_result
from ...log import fields
from ..state import Turn
from .asks import error_text, parse_arguments, validation_error
from .repeats import REPEATED_TOOL_CALL, remember, repeated

if TYPE_CHECKING:
    from ...core import event_data as ed

log = logging.getLogger("handoffs.runtime.tools")  # a stable name (docs/observability.md)

ToolOutcome = tuple[str, bool, HandoffTo | None]
"""A tool call's result text, whether it is an error, and the handoff it asked for."""


class Ready:
    """A call whose arguments are valid: run it with `args`."""

    __slots__ = ("args", "raw")

    def __init__(self, args: Any, raw: dict[str, Any]) -> None:
        self.args = args
        """What the tool gets (validated)."""
        self.raw = raw
        """The arguments as the model wrote them (for the repeat check)."""


def before(t: Turn, agent: str, c: ToolCall, tl: Tool) -> Ready | ToolOutcome:
    """A call about to run: `Ready`, or its outcome already (bad arguments, a repeat)."""
    t.emit("tool_called", {"agent": agent, "tool": c.name, "call_id": c.id,
                           "arguments": c.arguments})
    raw, problem = parse_arguments(c.arguments)
    limit = t.team.policy.repeated_tool_calls
    if problem is None and limit is not None:
        again = repeated(t, agent, c, raw, limit)
        if again is not None:
            data: ed.ToolResult = {"agent": agent, "tool": c.name, "call_id": c.id,
                                   "text": again[0],
                    "is_error": again[1]}
            if again[1]:
                data["code"] = REPEATED_TOOL_CALL
            t.emit("tool_result", data)
            return again[0], again[1], None
    args: Any = raw
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
    return Ready(args, raw)


def returned(t: Turn, agent: str, c: ToolCall, ready: Ready, value: Any) -> ToolOutcome:
    """A call's return value as its outcome (remembered for repeats)."""
    if isinstance(value, HandoffTo):
        return "", False, value
    text = render_result(value)
    if t.team.policy.repeated_tool_calls is not None:
        remember(t, agent, c, ready.raw, text)
    t.emit("tool_result", {"agent": agent, "tool": c.name, "call_id": c.id,
                           "text": text, "is_error": False})
    return text, False, None


def failure_text(tool: str, exc: BaseException) -> str:
    """The result the model reads of a call whose tool raised `exc`: its type and text
    (which may name hosts, paths or a service's answer: `raised_failure` tells it apart
    so the server never delivers it to a customer)."""
    return f"Tool {tool!r} failed: {type(exc).__name__}: {exc}"


def raised_failure(tool: str, text: str) -> bool:
    """Whether `text`, the result of a call of `tool`, is a tool's own failure
    (`failure_text`), as opposed to the runtime's or a person's sentence."""
    return text.startswith(f"Tool {tool!r} failed: ")


def raised(t: Turn, agent: str, c: ToolCall, exc: Exception) -> ToolOutcome:
    """A call whose tool raised, as its outcome: an error result the model reads."""
    text = failure_text(c.name, exc)
    state = t.state
    log.warning("tool %s of %s failed: %s: %s", c.name, agent, type(exc).__name__, exc,
                exc_info=exc, extra=fields(state.id, state.turn, agent))
    t.emit("tool_result", {"agent": agent, "tool": c.name, "call_id": c.id,
                           "text": text, "is_error": True})
    return text, True, None
