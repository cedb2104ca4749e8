"""An A2A 0.3 client (a2a-sdk 0.3.x, in a venv of its own: `make a2a-v03-client`) talking
to a served team: `python a2a_v03_client.py URL`. Prints one JSON line per message it
sends: the task's state, its context, the artifacts' texts, and the token the first task
of a new conversation gave (a 1.0 server's answer, read by a 0.3 client)."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, TaskQueryParams, TextPart


def message(text: str, context_id: str | None = None) -> Message:
    return Message(role=Role.user, message_id=uuid.uuid4().hex, context_id=context_id,
                   parts=[Part(root=TextPart(text=text))])


async def main(url: str) -> None:
    card = httpx.get(url + "/.well-known/agent-card.json").json()
    print(json.dumps({"card_url": card.get("url"),
                      "card_protocol": card.get("protocolVersion")}), flush=True)
    token = None
    context = None
    for text, streaming in (("I was charged twice", True), ("It is order A-1001", False)):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with httpx.AsyncClient(headers=headers, timeout=30) as http:
            client = await ClientFactory.connect(
                url, ClientConfig(httpx_client=http, streaming=streaming))
            task = None
            async for event in client.send_message(message(text, context)):
                if isinstance(event, tuple):
                    task = event[0]
            assert task is not None
            await client.close()
        token = token or (task.metadata or {}).get("handoffs_session_token")
        context = task.context_id
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                     timeout=30) as http:
            client = await ClientFactory.connect(url, ClientConfig(httpx_client=http))
            again = await client.get_task(TaskQueryParams(id=task.id))
            print(json.dumps({
                "state": again.status.state.value, "context": context,
                "token": bool(token),
                "artifacts": [p.root.text for a in again.artifacts or []
                              for p in a.parts if hasattr(p.root, "text")]}), flush=True)
            await client.close()


asyncio.run(main(sys.argv[1]))
