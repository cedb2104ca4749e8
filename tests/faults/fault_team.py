"""The team the served fault tests run (`handoffs serve fault_team.py:runner`).

One agent whose model decides from the user's last message, so any process can answer
any session:

- `big`: a 90,000-character answer, streamed in 900 pieces;
- `stall`: waits a minute (a test kills or cuts the server meanwhile);
- `slow S ...`: waits S seconds, then calls the tool `mark` (which appends the message to
  the file `$FAULT_MARKS`), then answers;
- `fail ...`: the model fails (`model_error`): the turn fails, the API answers 502;
- anything else: `answer to <message>` at once.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator
from typing import Any

from handoffs import Agent, Runner, Team, tool
from handoffs.core.messages import ToolResult, UserMessage
from handoffs.errors import ModelError
from handoffs.models.base import ModelRequest, ModelResponse, TextDelta
from handoffs.testing import ScriptedModel, call, reply

BIG = 90_000

# The server's output shows what the library logs (a test reads it).
logging.basicConfig(level=logging.WARNING, format="%(name)s %(levelname)s %(message)s")


@tool
def mark(text: str) -> str:
    """Note that this turn got as far as its tool."""
    with open(os.environ["FAULT_MARKS"], "a") as f:
        f.write(f"{text}\n")
    return "marked"


class FaultModel:
    async def _step(self, request: ModelRequest) -> Any:
        messages = list(request.messages)
        last = max((i for i, m in enumerate(messages) if isinstance(m, UserMessage)),
                   default=-1)
        text = messages[last].text.split("\n\n")[-1] if last >= 0 else ""
        marked = any(isinstance(m, ToolResult) for m in messages[last + 1:])
        if text.startswith("fail "):
            raise ModelError("the provider is down (a test's fault)", code="model_error")
        if text == "big":
            return reply("x" * BIG)
        if text == "stall":
            await asyncio.sleep(60)
        if text.startswith("slow ") and not marked:
            await asyncio.sleep(float(text.split()[1]))
            return call("mark", text=text)
        return reply(f"answer to {text}")

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return await ScriptedModel([await self._step(request)]).complete(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        response = await self.complete(request)
        if not response.tool_calls and len(response.text) > 1000:
            for i in range(0, len(response.text), 100):
                yield TextDelta(response.text[i:i + 100])
        yield response


runner = Runner(Team([Agent("agent", tools=[mark])]), model=FaultModel())
