"""`Agent(tool_choice=...)` resolved against the tools of one request.

Each adapter turns the resolved choice into its provider's own form; this module only
decides what the agent asked for, so that both providers read it the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ..core.handoff import Handoff
from ..core.tools import ToolSpec
from ..errors import HandoffsError

ChoiceKind = Literal["auto", "required", "none", "tool"]


def resolve_tool_choice(choice: str | None, tools: Sequence[ToolSpec]
                        ) -> tuple[ChoiceKind, str | None] | None:
    """What `choice` asks for: `(kind, tool_name)`, or None to send no choice at all.

    A name may be a tool's name, a handoff tool's name (`transfer_to_billing`) or the
    name of the agent a handoff goes to (`billing`), which is how a user forces a
    handoff. With no tools offered, `auto` and `none` are simply not sent.
    """
    if choice is None:
        return None
    if choice == "auto":
        return ("auto", None) if tools else None
    if choice == "none":
        return ("none", None) if tools else None
    names = [t.name for t in tools]
    if choice == "required":
        if not names:
            raise HandoffsError("tool_choice='required' but the agent offers no tools or "
                                "handoffs; give it one, or use 'auto'.",
                                code="invalid_tool_choice")
        return "required", None
    if choice in names:
        return "tool", choice
    for default in (Handoff.default_tool_name(choice), Handoff.default_ask_name(choice)):
        if default in names:
            return "tool", default
    offered = ", ".join(names) or "none"
    raise HandoffsError(
        f"tool_choice={choice!r} names no tool or enabled handoff of this agent (it offers: "
        f"{offered}); use 'auto', 'required', 'none' or one of those names.",
        code="invalid_tool_choice")
