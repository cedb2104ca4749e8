"""The pieces of a streamed turn's floor (bench/floors.py): each the least code that does
one part of what `runner.stream` must do beyond `runner.run`. bench/floors.py times them
in its own process and counts their instructions under valgrind, running this file:

    python bench/floor_pieces.py PIECE N     # PIECE N times, the garbage collector off
"""

from __future__ import annotations

import asyncio
import gc
import sys
from typing import Any

from handoffs.core.events import Event
from handoffs.core.messages import ToolCall
from handoffs.models import ModelRequest, ModelResponse, TextDelta

EVENTS = 9
"""Events of the streamed H=1 turn: run_started, agent_started, handoff_requested,
agent_handoff, agent_changed, agent_started, text_delta, message, run_completed."""


class ChainModel:
    """bench/ours.py's model (as bench/instructions.py's child has it): agent_0 hands off
    to agent_1, which answers `done`."""

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        if request.agent == "agent_0":
            return ModelResponse("", (ToolCall(f"call_{self.calls}", "transfer_to_agent_1",
                                               '{"reason": "next"}'),))
        return ModelResponse("done")

    async def stream(self, request: ModelRequest) -> Any:
        response = await self.complete(request)
        if response.text:
            yield TextDelta(response.text)
        yield response


_MODEL = ChainModel()
_REQUESTS = [ModelRequest(agent=f"agent_{i}", system="", messages=[], tools=[])
             for i in (0, 1)]
_DATA: dict[str, Any] = {"agent": "agent_1"}
_READY = [object()] * EVENTS


async def complete() -> None:
    """The run turn's two model calls."""
    for r in _REQUESTS:
        await _MODEL.complete(r)


async def stream() -> None:
    """The same two calls through the model's stream."""
    for r in _REQUESTS:
        async for _ in _MODEL.stream(r):
            pass


async def events() -> None:
    """The streamed turn's `Event` objects (a run turn keeps tuples until read)."""
    for k in range(EVENTS):
        Event("message", "s", 1, 0.0, _DATA, None, k)


async def count() -> None:
    """`events`' loop without the events."""
    for _ in range(EVENTS):
        pass


async def _pieces() -> Any:
    for e in _READY:
        yield e


async def read() -> None:
    """The events through an async iterator to a reader."""
    [e async for e in _pieces()]


async def _answer() -> int:
    return 1


async def task() -> None:
    """A task of the turn's own: eager on 3.12+; on 3.11 the task's step and the
    reader's wake-up share one pass of the loop."""
    if sys.version_info >= (3, 12):
        await asyncio.Task(_answer(), loop=asyncio.get_running_loop(), eager_start=True)
    else:
        t = asyncio.get_running_loop().create_task(_answer())
        await asyncio.sleep(0)
        await t


async def nothing() -> None:
    """The cost of calling a piece at all."""


PIECES = {f.__name__: f for f in (complete, stream, events, count, read, task, nothing)}


async def _main(piece: str, n: int) -> None:
    step = PIECES[piece]
    gc.disable()
    for _ in range(n):
        await step()


if __name__ == "__main__":
    asyncio.run(_main(sys.argv[1], int(sys.argv[2])))
