"""A remote billing agent built with the a2a-sdk's own server classes (not ours), run in
a process of its own by the tests: `python remote_billing.py PORT`.

What it does depends on the message, so each test can drive one path:
- "refund" without an order number: asks for it (input-required), and the next message
  of the same task completes it;
- "cancel": the task is cancelled;
- "login": the task needs authentication (auth-required);
- "tool only": the answer is a data artifact with no text;
- "explode": the task fails;
- "slow": the answer takes 30 s, unless the task is cancelled (CancelTask) first;
- anything else: an answer in text, streamed as two artifact chunks.
Every message the agent received is appended, as JSON, to the file named by
$REMOTE_LOG (when set), so a test can check what the remote side was sent; so is every
CancelTask (`{"cancel": task_id}`) and every slow task that ran to its end
(`{"finished": task_id}`).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

import uvicorn
from a2a.helpers.proto_helpers import (
    get_data_parts,
    get_message_text,
    new_data_part,
    new_task,
    new_text_message,
    new_text_part,
)
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    TaskState,
)
from starlette.applications import Starlette


class Billing(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        text = get_message_text(message)
        log = os.environ.get("REMOTE_LOG")
        if log:
            with open(log, "a") as f:
                f.write(json.dumps({"text": text, "data": get_data_parts(message.parts),
                                    "task_id": context.task_id,
                                    "context_id": context.context_id,
                                    "continues": context.current_task is not None}) + "\n")
        task = context.current_task
        if task is None:
            task = new_task(context.task_id or "", context.context_id or "",
                            TaskState.TASK_STATE_SUBMITTED)
            await event_queue.enqueue_event(task)
        up = TaskUpdater(event_queue, task.id, task.context_id)
        await up.start_work()

        def say(words: str):  # an agent message in this task
            return new_text_message(words, context_id=task.context_id, task_id=task.id)

        if context.current_task is not None and ASKED.pop(task.id, None) == "order":
            await up.add_artifact([new_text_part(f"Refund for order {text} approved.")],
                                  name="answer")
            await up.complete()
        elif "refund" in text.lower():
            ASKED[task.id] = "order"
            await up.requires_input(say("What is your order number?"))
        elif "cancel" in text.lower():
            await up.cancel(say("Cancelled on our side."))
        elif "login" in text.lower():
            await up.requires_auth(say("Please sign in to billing first."))
        elif "tool only" in text.lower():
            await up.add_artifact([new_data_part({"invoice": "INV-7", "total": 42})],
                                  name="invoice")
            await up.complete()
        elif "slow" in text.lower():
            await asyncio.sleep(30)
            _log({"finished": task.id})
            await up.add_artifact([new_text_part("Sorry for the wait.")], name="answer")
            await up.complete()
        elif "explode" in text.lower():
            await up.failed(say("The billing ledger is down."))
        else:
            await up.add_artifact([new_text_part("Your balance ")], artifact_id="a1",
                                  name="answer")
            await up.add_artifact([new_text_part("is 0 EUR.")], artifact_id="a1",
                                  append=True, last_chunk=True)
            await up.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        _log({"cancel": context.task_id})
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "") \
            .cancel()


def _log(entry: dict) -> None:
    log = os.environ.get("REMOTE_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps(entry) + "\n")


ASKED: dict[str, str] = {}
"""The tasks waiting for input, and for what."""


def app(port: int) -> Starlette:
    url = f"http://127.0.0.1:{port}/"
    card = AgentCard(
        name="Billing", description="Refunds, invoices and balances.",
        version="1.0.0",
        supported_interfaces=[AgentInterface(url=url, protocol_binding="JSONRPC",
                                             protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"], default_output_modes=["text/plain"],
        skills=[AgentSkill(id="refunds", name="Refunds", description="Refund an order.",
                           tags=["billing"])],
    )
    handler = DefaultRequestHandler(agent_executor=Billing(), task_store=InMemoryTaskStore(),
                                    agent_card=card)
    return Starlette(routes=[*create_agent_card_routes(card),
                             *create_jsonrpc_routes(handler, rpc_url="/")])


if __name__ == "__main__":
    port = int(sys.argv[1])
    uvicorn.run(app(port), host="127.0.0.1", port=port, log_level="warning")
