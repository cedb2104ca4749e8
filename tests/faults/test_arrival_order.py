"""Messages to one session are stored in the order they arrived (per process).

100 messages, each on its own connection, sent 2 ms apart to a real server: the
session's transcript holds them in the order they were sent, on SQLite and on
PostgreSQL (where each request awaits a database round trip before its turn is queued,
which let later messages overtake earlier ones).
"""

from __future__ import annotations

import asyncio
import itertools
import os
from pathlib import Path

import httpx

from service.conftest import bearer
from stores.conftest import Backend

from .servers import serve

MESSAGES = int(os.environ.get("HANDOFFS_FAULT_MESSAGES", "100"))


def _inversions(texts: list[str]) -> int:
    order = [int(t[1:]) for t in texts]
    return sum(1 for a, b in itertools.pairwise(order) if a > b)


async def test_messages_to_one_session_are_stored_in_the_order_they_arrived(
        durable_backend: Backend, tmp_path: Path) -> None:
    assert durable_backend.url is not None
    with serve(durable_backend.url, tmp_path) as server:
        sid, token = server.session()
        limits = httpx.Limits(max_connections=MESSAGES, max_keepalive_connections=0)
        async with httpx.AsyncClient(base_url=server.url, timeout=120, limits=limits) as c:
            async def send(i: int) -> httpx.Response:
                return await c.post(f"/v1/sessions/{sid}/messages", json={"text": f"m{i}"},
                                    headers=bearer(token))

            sent = []
            for i in range(MESSAGES):
                sent.append(asyncio.create_task(send(i)))
                await asyncio.sleep(0.002)
            answers = await asyncio.gather(*sent)
        assert all(r.status_code == 200 for r in answers), {r.status_code for r in answers}
        exported = server.export(sid)

    users = [m["text"] for m in exported["messages"] if m["kind"] == "user"]
    print(f"{durable_backend.kind}: {MESSAGES} messages 2 ms apart, "
          f"{_inversions(users)} stored out of order")
    assert sorted(users, key=lambda t: int(t[1:])) == [f"m{i}" for i in range(MESSAGES)]
    assert users == [f"m{i}" for i in range(MESSAGES)]
