"""A team for the cross-process live-event tests: one agent whose model first calls
`report`, which waits until a file exists (so a test holds the turn open mid-way, before
anything of it is stored) and returns a text of the asked size (non-ASCII, so a large one
is cut between characters); then, after an optional second gate, the model answers in
several streamed pieces. The user's message is JSON: {"gate", "size", "gate2"?}."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator

from handoffs import Agent, Runner, Team, tool
from handoffs.core.messages import ToolCall, UserMessage
from handoffs.models.base import ModelRequest, ModelResponse, TextDelta

PATTERN = "é€😀 report line; "
PIECES = 5


def report_text(size: int) -> str:
    return (PATTERN * (size // len(PATTERN) + 1))[:size]


async def _until(path: str) -> None:
    while not os.path.exists(path):
        await asyncio.sleep(0.01)


@tool
async def report(size: int, gate: str) -> str:
    """A report of `size` characters, once the file `gate` exists.

    Args:
        size: How many characters.
        gate: The file to wait for.
    """
    await _until(gate)
    return report_text(size)


class GatedModel:
    async def complete(self, request: ModelRequest) -> ModelResponse:
        last: ModelResponse | None = None
        async for part in self.stream(request):
            if isinstance(part, ModelResponse):
                last = part
        assert last is not None
        return last

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        users = [m for m in request.messages if isinstance(m, UserMessage)]
        spec = json.loads(users[-1].text)
        if isinstance(request.messages[-1], UserMessage):
            args = {"size": spec["size"], "gate": spec["gate"]}
            yield ModelResponse(tool_calls=(ToolCall("call_1", "report", json.dumps(args)),))
            return
        if spec.get("gate2"):
            await _until(spec["gate2"])
        text = ""
        for i in range(PIECES):
            await asyncio.sleep(0.01)
            piece = f"piece {i}. "
            text += piece
            yield TextDelta(piece)
        yield ModelResponse(text=text)


team = Team([Agent("desk", instructions="Report.", tools=[report])], entry="desk")
runner = Runner(team, model=GatedModel())
