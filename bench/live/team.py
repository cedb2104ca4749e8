"""The team `bench/live_events.py` serves: one agent whose model streams its answer in
`PIECES` pieces, `PAUSE` seconds apart (a slow model), so every turn has events mid-way."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator

from handoffs import Agent, Runner, Team
from handoffs.models.base import ModelRequest, ModelResponse, TextDelta

PIECES = int(os.environ.get("LIVE_BENCH_PIECES", "20"))
PAUSE = float(os.environ.get("LIVE_BENCH_PAUSE", "0.025"))


class SlowModel:
    async def complete(self, request: ModelRequest) -> ModelResponse:
        await asyncio.sleep(PIECES * PAUSE)
        return ModelResponse(text="".join(f"piece {i}. " for i in range(PIECES)))

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        text = ""
        for i in range(PIECES):
            await asyncio.sleep(PAUSE)
            piece = f"piece {i}. "
            text += piece
            yield TextDelta(piece)
        yield ModelResponse(text=text)


runner = Runner(Team([Agent("desk", instructions="Answer.")]), model=SlowModel())
