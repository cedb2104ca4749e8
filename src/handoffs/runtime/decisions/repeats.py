"""Repeated identical tool calls: answered from the first result, then refused.

Small models often call the same tool with the same arguments again and again until
`max_steps` ends the turn. Within one turn, a call of the same tool with the same
arguments (compared as canonical JSON) by the same agent is answered from the first
call's result with a sentence saying the model already has it; past
`HandoffPolicy.repeated_tool_calls` identical calls it is refused with the code
`repeated_tool_call` (an error result), and the turn goes on.

The memory is the turn's (`Turn.repeats`: by (agent, tool), each call's arguments, first
result and count), kept by the driver (`driver.tools`); `repeated` reads it and says what
an identical call gets. A call's first time costs one dict lookup: canonical JSON is only
made when the tool was already called.
"""

from __future__ import annotations

import json
from typing import Any

from ...core.messages import ToolCall

REPEATED_TOOL_CALL = "repeated_tool_call"


class Again:
    """An identical call made before in this turn: its answer, not run again."""

    __slots__ = ("is_error", "seen", "text", "times")

    def __init__(self, text: str, is_error: bool, seen: list[Any], times: int) -> None:
        self.text = text
        """The call's result: the first call's result with a sentence saying the model
        has it already, or the refusal (`is_error`)."""
        self.is_error = is_error
        """Past the policy's limit: the call is refused (code `repeated_tool_call`)."""
        self.seen = seen
        """The memory's entry of the first call: the driver counts this call on it."""
        self.times = times
        """The identical calls made so far, this one included (the entry's new count)."""


def _canonical(args: dict[str, Any]) -> str:
    return json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def repeated(seen: dict[tuple[str, str], list[list[Any]]] | None, agent: str, c: ToolCall,
             args: dict[str, Any], limit: int) -> Again | None:
    """What a call made before in this turn gets (`seen`: the turn's memory), or None
    (a first call: it runs)."""
    calls = seen.get((agent, c.name)) if seen is not None else None
    if calls is None:
        return None
    key = _canonical(args)
    for entry in calls:
        if _canonical(entry[0]) == key:
            times = entry[2] + 1
            if times <= limit:
                return Again(
                    f"You already called {c.name} with these arguments in this turn; "
                    f"the result was: {entry[1]}\nUse it: answer, or take another step, "
                    "instead of calling it again.", False, entry, times)
            return Again(
                f"{REPEATED_TOOL_CALL}: {c.name} was already called {times - 1} times with "
                "these arguments in this turn and is not run again. Use the result you "
                "have: answer, or take another step.", True, entry, times)
    return None
