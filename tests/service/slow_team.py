"""A team for the multi-process tests: the support team, whose model stalls for a minute
on a message containing "stall" (so a test can kill a server mid-turn), and takes a
second over one containing "slowly" (so another process's turn can overlap it)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from handoffs import Runner
from handoffs.core.messages import UserMessage
from handoffs.examples.support import build_team, rule_model
from handoffs.models.base import ModelRequest, ModelResponse, TextDelta


class StallingModel:
    def __init__(self) -> None:
        self.inner = rule_model()

    async def _maybe_stall(self, request: ModelRequest) -> None:
        users = [m for m in request.messages if isinstance(m, UserMessage)]
        if users and "stall" in users[-1].text:
            await asyncio.sleep(60)
        elif users and "slowly" in users[-1].text:
            await asyncio.sleep(1)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        await self._maybe_stall(request)
        return await self.inner.complete(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        await self._maybe_stall(request)
        async for part in self.inner.stream(request):
            yield part


runner = Runner(build_team(), model=StallingModel())
