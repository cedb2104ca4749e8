"""`handoffs run`: one user turn, shown as it happens or as JSON lines."""

from __future__ import annotations

import sys
import uuid

from .render import EventPrinter, Painter, event_json
from .runners import Setup


def new_session_id() -> str:
    """A fresh session id for a command that was given none."""
    return f"cli-{uuid.uuid4().hex[:8]}"


async def run_once(setup: Setup, session_id: str, text: str, as_json: bool,
                   painter: Painter) -> int:
    """Run one turn; 0 when it ended normally, 1 when it failed."""
    runner = setup.runner
    failed = False
    try:
        if as_json:
            print(f"handoffs: model: {setup.model}; session {session_id} in {setup.store}",
                  file=sys.stderr)
            async for event in runner.stream(session_id, text):
                print(event_json(event), flush=True)
                failed = failed or event.type == "run_failed"
            return 1 if failed else 0
        printer = EventPrinter(painter)
        printer.line(painter.dim(f"model: {setup.model}"))
        async for event in runner.stream(session_id, text):
            printer.show(event)
            failed = failed or event.type == "run_failed"
        state = await runner.get_session(session_id)
        active = state.active_agent if state is not None else None
        turn = state.turn if state is not None else 0
        printer.line(painter.dim(
            f"session {session_id} (turn {turn}, active agent {active}, store {setup.store}); "
            f"continue with --session {session_id}"))
        return 1 if failed else 0
    finally:
        await runner.store.close()
