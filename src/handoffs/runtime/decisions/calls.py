"""An ordinary tool call before and after it runs, as decisions: its arguments read and
validated (bad ones are the call's result, feedback: `Invalid`), an identical call of
this turn answered from the first (`repeats.Again`); then its return value rendered as
its result (a `HandoffTo` is a programmatic handoff request), or its exception as an
error result. Running it, its events (`tool_called`, `tool_result`) and the turn's memory
of its calls are the driver's (`driver.tools`)."""

from __future__ import annotations

from typing import Any

from ...core.messages import ToolCall
from ...core.tools import HandoffTo, Tool, render_result
from ..state import Turn
from .asks import error_text, parse_arguments, validation_error
from .repeats import Again, repeated

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


class Invalid:
    """A call whose arguments are not JSON or do not match its tool's schema: not run;
    `text` is its error result, the model's feedback. (The values of the decisions are
    plain slotted classes: a dataclass costs more to import.)"""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def before(t: Turn, agent: str, c: ToolCall, tl: Tool) -> Ready | Again | Invalid:
    """A call about to run: `Ready`, or why it does not run (an identical call made
    before in this turn, bad arguments)."""
    raw, problem = parse_arguments(c.arguments)
    limit = t.team.policy.repeated_tool_calls
    if problem is None and limit is not None:
        again = repeated(t.repeats, agent, c, raw, limit)
        if again is not None:
            return again
    args: Any = raw
    if problem is None:
        try:
            args = tl.parse(c.arguments if raw else raw)
        except validation_error() as exc:
            problem = (f"The arguments of {c.name!r} do not match its schema: "
                       f"{error_text(exc)}. Call it again with corrected arguments.")
    if problem is not None:
        return Invalid(problem)
    return Ready(args, raw)


def returned(value: Any) -> ToolOutcome:
    """A call's return value as its outcome: a `HandoffTo` asks for a handoff (no
    result of its own), anything else is rendered as the call's result."""
    if isinstance(value, HandoffTo):
        return "", False, value
    return render_result(value), False, None


def failure_text(tool: str, exc: BaseException) -> str:
    """The result the model reads of a call whose tool raised `exc`: its type and text
    (which may name hosts, paths or a service's answer: `raised_failure` tells it apart
    so the server never delivers it to a customer)."""
    return f"Tool {tool!r} failed: {type(exc).__name__}: {exc}"


def raised_failure(tool: str, text: str) -> bool:
    """Whether `text`, the result of a call of `tool`, is a tool's own failure
    (`failure_text`), as opposed to the runtime's or a person's sentence."""
    return text.startswith(f"Tool {tool!r} failed: ")
