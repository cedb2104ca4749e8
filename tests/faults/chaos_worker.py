"""A worker process that runs turns back to back until it is killed (fault injection).

    python chaos_worker.py STORE_URL LOG_FILE FIRST_INDEX SESSIONS SEED [keep-going]

Message i goes to session `c{i % SESSIONS}` with the text `c{k}-m{i}`. A turn goes
triage -> (tool `work`) -> billing, or starts at billing, which hands back to triage for
even message numbers; every turn ends with billing answering `answer to <text>`. The
model and the tool sleep a few random milliseconds, so a kill lands anywhere in a turn.

LOG_FILE gets `sent <text>` before `run()`, `stored <text>` once the store's commit that
holds the user's message has returned (from then on the message must never be lost),
and `done <text> <status>` when `run()` returned. With `keep-going`, a run that raises
writes `error <text> <code>` and the worker goes on with the next message, a few random
milliseconds after each answer.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
from typing import Any

from handoffs import Agent, HandoffsError, Runner, Team, tool
from handoffs.core.messages import ToolResult, UserMessage
from handoffs.models import ModelRequest, ModelResponse
from handoffs.stores import open_store
from handoffs.testing import ScriptedModel, call, reply, transfer


class ChaosModel:
    """Decides from the request alone, so any process can continue any session."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    async def complete(self, request: ModelRequest) -> ModelResponse:
        await asyncio.sleep(self.rng.uniform(0, 0.005))
        messages = list(request.messages)
        last = max((i for i, m in enumerate(messages) if isinstance(m, UserMessage)),
                   default=-1)
        text = messages[last].text if last >= 0 else ""
        worked = any(isinstance(m, ToolResult) and m.name == "work"
                     for m in messages[last + 1:])
        number = int(text.rsplit("m", 1)[-1]) if "-m" in text else 1
        refused = any(isinstance(m, ToolResult) and m.is_error for m in messages[last + 1:])
        if refused:  # a handoff the policy refused: answer instead
            step = reply(f"answer to {text}")
        elif request.agent == "triage":
            step: Any = transfer("billing", reason="done") if worked else call("work")
        elif worked:
            step = reply(f"answer to {text}")
        else:
            step = transfer("triage", reason="check") if number % 2 == 0 else call("work")
        return await ScriptedModel([step]).complete(request)  # the step, built as in tests

    async def stream(self, request: ModelRequest) -> Any:
        yield await self.complete(request)


async def main(url: str, log_file: str, first: int, sessions: int, seed: int,
               keep_going: bool = False) -> None:
    rng = random.Random(seed)

    @tool
    async def work() -> str:
        """Do the slow part of the job."""
        await asyncio.sleep(rng.uniform(0, 0.02))
        return "worked"

    team = Team([Agent("triage", tools=[work], handoffs=["billing"]),
                 Agent("billing", tools=[work], handoffs=["triage"])])
    fd = os.open(log_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    store = open_store(url)
    real_commit = store.commit

    async def commit(state: Any, since: Any, events: Any = ()) -> None:
        new = [m.text for m in state.messages[since.messages:] if isinstance(m, UserMessage)]
        await real_commit(state, since, events)
        for text in new:
            os.write(fd, f"stored {text}\n".encode())

    store.commit = commit  # type: ignore[method-assign]
    runner = Runner(team, model=ChaosModel(rng), store=store)
    i = first
    while True:
        text = f"c{i % sessions}-m{i}"
        os.write(fd, f"sent {text}\n".encode())
        try:
            result = await runner.run(f"c{i % sessions}", text)
        except HandoffsError as exc:
            if not keep_going:
                raise
            os.write(fd, f"error {text} {exc.code}\n".encode())
        else:
            os.write(fd, f"done {text} {result.status.value}\n".encode())
        if keep_going:  # a user who reads the answer: other processes get their turn
            await asyncio.sleep(rng.uniform(0, 0.03))
        i += 1


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]),
                     int(sys.argv[5]), sys.argv[6:] == ["keep-going"]))
