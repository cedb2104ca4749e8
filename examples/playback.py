"""What the examples share: the model they run on, and printing a conversation as it goes.

Each example runs offline on a scripted model, or on a real provider when HANDOFFS_MODEL
is set (for example HANDOFFS_MODEL=openai:gpt-4.1-mini with OPENAI_API_KEY).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from handoffs import Runner, RunResult, Team
from handoffs.cli.render import EventPrinter, Painter, use_color


def real_model() -> str | None:
    """The provider model named by HANDOFFS_MODEL, or None to play the script."""
    return os.environ.get("HANDOFFS_MODEL") or None


def announce(model: object) -> None:
    where = f"on {model}" if isinstance(model, str) else "offline, on a scripted model"
    print(f"(running {where}; set HANDOFFS_MODEL=provider:name for a real one)\n")


def printer(team: Team) -> EventPrinter:
    """Prints events with each agent's display name, icon and colour."""
    return EventPrinter(Painter(team, use_color(sys.stdout)))


async def play(runner: Runner, session_id: str, messages: Sequence[str]) -> RunResult:
    """Send each message as a user turn, printing every event; the last turn's result."""
    out = printer(runner.team)
    result: RunResult | None = None
    for text in messages:
        out.line(f"user: {text}")
        async for event in runner.stream(session_id, text):
            out.show(event)
            if event.is_terminal:
                result = event.result
        out.line()
    assert result is not None
    return result
