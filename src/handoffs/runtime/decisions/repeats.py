"""Repeated identical tool calls: answered from the first result, then refused.

Small models often call the same tool with the same arguments again and again until
`max_steps` ends the turn. Within one turn, a call of the same tool with the same
arguments (compared as canonical JSON) by the same agent is answered from the first
call's result with a sentence saying the model already has it; past
`HandoffPolicy.repeated_tool_calls` identical calls it is refused with the code
`repeated_tool_call` (an error result), and the turn goes on. A call's first time costs
one dict lookup: canonical JSON is only made when the tool was already called.
"""

from __future__ import annotations

import json
from typing import Any

from ...core.messages import ToolCall
from ..state import Turn

REPEATED_TOOL_CALL = "repeated_tool_call"


def _canonical(args: dict[str, Any]) -> str:
    return json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def repeated(t: Turn, agent: str, c: ToolCall, args: dict[str, Any], limit: int
             ) -> tuple[str, bool] | None:
    """The answer to a call made before in this turn (text, is_error), or None."""
    seen = t.repeats
    calls = seen.get((agent, c.name)) if seen is not None else None
    if calls is None:
        return None
    key = _canonical(args)
    for entry in calls:
        if not isinstance(entry[0], str):  # canonical once, when first compared
            entry[0] = _canonical(entry[0])
        if entry[0] == key:
            entry[2] += 1
            if entry[2] <= limit:
                return (f"You already called {c.name} with these arguments in this turn; "
                        f"the result was: {entry[1]}\nUse it: answer, or take another "
                        "step, instead of calling it again."), False
            return (f"{REPEATED_TOOL_CALL}: {c.name} was already called {entry[2] - 1} "
                    "times with these arguments in this turn and is not run again. Use the "
                    "result you have: answer, or take another step."), True
    return None


def remember(t: Turn, agent: str, c: ToolCall, args: dict[str, Any], text: str) -> None:
    """Keep a call's first successful result for the rest of the turn."""
    seen = t.repeats
    if seen is None:
        seen = t.repeats = {}
    calls = seen.get((agent, c.name))
    if calls is None:
        seen[(agent, c.name)] = [[args, text, 1]]
    else:
        calls.append([args, text, 1])
