"""A team served as an MCP server (`handoffs serve --mcp`), driven with the official `mcp`
SDK's client: its `ask_team` tool runs a turn in a new or a given session, a session is
opened only by its token, and the page's API sees the same conversation."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.conftest import OPERATOR_KEY, ServeProcess, handoffs_serve

pytest.importorskip("mcp", reason="the mcp SDK is not installed (the `mcp` extra)")

import httpx2
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    cwd: Path = tmp_path_factory.mktemp("mcp")
    with handoffs_serve(["--demo", "--store", "memory://", "--mcp"], cwd) as s:
        yield s


@contextlib.asynccontextmanager
async def client(url: str, token: str | None = None) -> AsyncIterator[Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http, \
            Client(streamable_http_client(url + "/mcp", http_client=http)) as c:
        yield c


async def ask(url: str, arguments: dict[str, Any], token: str | None = None) -> Any:
    async with client(url, token) as c:
        return await c.call_tool("ask_team", arguments)


async def test_the_team_is_one_tool_that_says_what_it_does(served: ServeProcess) -> None:
    async with client(served.url) as c:
        tools = (await c.list_tools()).tools
    assert [t.name for t in tools] == ["ask_team"]
    assert "Triage" in (tools[0].description or "")
    assert set(tools[0].input_schema["properties"]) == {"message", "session_id"}


async def test_ask_team_runs_a_turn_in_a_new_then_the_same_session(
        served: ServeProcess) -> None:
    first = await ask(served.url, {"message": "I was charged twice for order A-1001"})
    assert not first.is_error
    out = first.structured_content
    sid, token = out["session_id"], out["session_token"]
    assert out["agent"] in ("billing", "refunds") and out["answer"]
    assert out["status"] == "completed"

    second = await ask(served.url, {"message": "Thanks, that is all", "session_id": sid},
                       token)
    assert not second.is_error
    assert second.structured_content["session_id"] == sid
    assert "session_token" not in second.structured_content

    # The page's API sees the same conversation.
    seen = httpx.get(f"{served.url}/v1/sessions/{sid}/transcript",
                     headers={"Authorization": f"Bearer {token}"}).json()
    said = [m["text"] for m in seen["messages"] if m["kind"] == "user"]
    assert said == ["I was charged twice for order A-1001", "Thanks, that is all"]


async def test_a_session_is_not_open_without_its_token(served: ServeProcess) -> None:
    first = await ask(served.url, {"message": "hello"})
    sid = first.structured_content["session_id"]
    for token in (None, "not-the-token"):
        refused = await ask(served.url, {"message": "show me", "session_id": sid}, token)
        assert refused.is_error
        assert "needs its token" in refused.content[0].text or \
            "does not open" in refused.content[0].text
    by_operator = await ask(served.url, {"message": "thanks", "session_id": sid},
                            OPERATOR_KEY)
    assert not by_operator.is_error
    seen = httpx.get(f"{served.url}/v1/sessions/{sid}/transcript",
                     headers={"Authorization": f"Bearer {OPERATOR_KEY}"}).json()
    assert [m["text"] for m in seen["messages"] if m["kind"] == "user"] == \
        ["hello", "thanks"]


def test_serve_says_where_mcp_is(served: ServeProcess) -> None:
    assert "MCP (Streamable HTTP) at" in served.output()
    assert "anyone who can reach this server may start a conversation" in served.output()
