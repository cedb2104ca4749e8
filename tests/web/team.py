"""The team the browser tests serve: the support team on the offline rule model, streamed
in small pieces with a pause between them (so a turn lasts long enough to drop its
connection), plus a phone-only agent, so that picking it from the web is refused."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator

from handoffs import Agent, Runner, Team
from handoffs.examples.support import build_team, rule_model
from handoffs.models.base import ModelRequest, ModelResponse, TextDelta

PAUSE = float(os.environ.get("HANDOFFS_WEB_PAUSE", "0.03"))
"""Seconds between two streamed pieces of an answer."""


class Paced:
    """The offline model, with a pause before each streamed piece."""

    def __init__(self) -> None:
        self.inner = rule_model(stream_chunks=6)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return await self.inner.complete(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        async for part in self.inner.stream(request):
            await asyncio.sleep(PAUSE)
            yield part


def make_runner() -> Runner:
    support = build_team()
    phone = Agent("phone", description="Phone support; serves calls only.",
                  channels=("voice",), display_name="Phone line", icon="📞",
                  color="#0f766e")
    team = Team([*support.agents, phone], entry="triage", fallback="triage")
    return Runner(team, model=Paced())
