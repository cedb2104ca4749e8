"""PostgreSQL that stops answering: requests get 503 within the store's timeouts.

A real server reaches PostgreSQL through a TCP proxy the test runs. The proxy then
black-holes every connection (bytes are held, nothing is answered, nothing is reset): a
message and `/readyz` must answer 503 `store_unavailable` within the timeouts the URL
sets (`connect_timeout=1`, `statement_timeout=2s`), not hang; when the proxy forwards
again, the server serves again.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from service.conftest import bearer
from stores.conftest import PG_DSN, drop_schema, require_pg

from .servers import Proxy, serve

LIMIT = 1 + 2  # connect_timeout + statement_timeout, in seconds


@pytest.fixture
def proxy() -> Iterator[Proxy]:
    parts = urlsplit(PG_DSN)
    p = Proxy((parts.hostname or "127.0.0.1", parts.port or 5432)).start()
    yield p
    p.close()


async def test_a_black_holed_postgresql_is_503_within_the_timeouts(
        proxy: Proxy, tmp_path: Path) -> None:
    await require_pg()
    schema = f"handoffs_hole_{uuid.uuid4().hex[:10]}"
    path = urlsplit(PG_DSN).path
    url = (f"postgresql://127.0.0.1:{proxy.port}{path}?schema={schema}"
           "&connect_timeout=1&statement_timeout=2s")
    try:
        with serve(url, tmp_path) as server:
            sid, token = server.session()
            assert server.say(sid, token, "hello").status_code == 200

            proxy.mode = "hole"
            t0 = time.monotonic()
            r = httpx.post(f"{server.url}/v1/sessions/{sid}/messages", timeout=15,
                           json={"text": "into the void"}, headers=bearer(token))
            message_took = time.monotonic() - t0
            t0 = time.monotonic()
            ready = httpx.get(f"{server.url}/readyz", timeout=15)
            ready_took = time.monotonic() - t0
            print(f"black hole: message {r.status_code} in {message_took:.1f} s, /readyz "
                  f"{ready.status_code} in {ready_took:.1f} s (limit {LIMIT} s each)")

            assert r.status_code == 503 and r.json()["error"]["code"] == "store_unavailable"
            assert message_took < 2 * LIMIT
            assert ready.status_code == 503
            assert ready.json()["error"]["code"] == "store_unavailable"
            assert ready_took < 2 * LIMIT

            proxy.mode = "pass"
            proxy.cut()  # the held connections are dead to the server anyway
            deadline = time.monotonic() + 30
            while httpx.get(f"{server.url}/readyz", timeout=15).status_code != 200:
                assert time.monotonic() < deadline, "the server never served again"
                time.sleep(0.2)
            r = server.say(sid, token, "back again")
            assert r.status_code == 200 and r.json()["status"] == "completed", r.text
    finally:
        await drop_schema(schema)
