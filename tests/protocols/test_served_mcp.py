"""A team served as an MCP server (`handoffs serve --mcp`), driven with the official `mcp`
SDK's client: its `ask_team` tool runs a turn in a new or a given session, a session is
opened only by its token, and the page's API sees the same conversation."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from handoffs import Agent, HumanAgent, Runner, Team, tool
from handoffs.testing import ScriptedModel, call, reply, transfer
from service.conftest import OPERATOR_KEY, ServeProcess, handoffs_serve, serving

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


def escalating() -> Runner:
    desk = Agent("desk", description="The desk.", handoffs=["person"])
    person = HumanAgent("person", description="A person.", handoffs=["desk"])
    model = ScriptedModel([transfer("person", reason="asks for a person")])
    return Runner(Team([desk, person]), model=model)


async def test_a_persons_reply_comes_with_the_next_answer() -> None:
    with serving(escalating, mcp=True) as s:
        first = (await ask(s.url, {"message": "a person please"})).structured_content
        assert first["status"] == "waiting_for_human"
        assert "a person answers this conversation now" in first["answer"]
        sid, token = first["session_id"], first["session_token"]
        r = httpx.post(f"{s.url}/v1/sessions/{sid}/human",
                       headers={"Authorization": f"Bearer {OPERATOR_KEY}"},
                       json={"text": "Sam here: your account is fine."})
        assert r.status_code == 200, r.text
        second = (await ask(s.url, {"message": "thanks", "session_id": sid}, token)
                  ).structured_content
    assert second["answer"].startswith("Sam here: your account is fine.")


@tool(needs_approval=True)
def refund(order_id: str) -> str:
    """Refund an order."""
    return f"refunded {order_id}"


def approving(approvals_by: Any) -> Any:
    def make() -> Runner:
        model = ScriptedModel([call("refund", order_id="A-5"), reply("A-5 is refunded.")])
        return Runner(Team([Agent("billing", tools=[refund])], approvals_by=approvals_by),
                      model=model)
    return make


async def test_a_user_the_team_lets_decide_approves_by_asking_approve() -> None:
    with serving(approving("user"), mcp=True) as s:
        first = (await ask(s.url, {"message": "refund A-5"})).structured_content
        assert first["status"] == "waiting_for_approval"
        sid, token = first["session_id"], first["session_token"]
        other = await ask(s.url, {"message": "hello?", "session_id": sid}, token)
        assert other.is_error and "answer approve or reject" in other.content[0].text
        got = (await ask(s.url, {"message": "approve", "session_id": sid}, token)
               ).structured_content
    assert got["status"] == "completed" and got["answer"] == "A-5 is refunded."


async def test_a_call_the_operator_decides_is_said_so_and_its_answer_kept() -> None:
    with serving(approving("operator"), mcp=True) as s:
        got = (await ask(s.url, {"message": "refund A-5"})).structured_content
        assert got["status"] == "waiting_for_approval"
        assert "operator" in got["answer"]
        sid = got["session_id"]
        op = {"Authorization": f"Bearer {OPERATOR_KEY}"}
        call_id = httpx.get(f"{s.url}/v1/sessions/{sid}/approvals",
                            headers=op).json()["approvals"][0]["call_id"]
        token = got["session_token"]
        mine = await ask(s.url, {"message": "approve", "session_id": sid}, token)
        assert mine.is_error and "operator's approval" in mine.content[0].text
        r = httpx.post(f"{s.url}/v1/sessions/{sid}/approvals/{call_id}", headers=op,
                       json={"approved": True})
        assert r.json()["output"] == "A-5 is refunded."


@tool
async def slow_lookup(order_id: str) -> str:
    """Look an order up, slowly."""
    await asyncio.sleep(5)
    return f"{order_id}: found"


async def test_a_cancelled_call_cancels_the_turn() -> None:
    def make() -> Runner:
        model = ScriptedModel([call("slow_lookup", order_id="A-9"), reply("Found it.")])
        return Runner(Team([Agent("billing", tools=[slow_lookup])]), model=model)

    with serving(make, mcp=True) as s:
        asking = asyncio.create_task(ask(s.url, {"message": "find A-9"}))
        op = {"Authorization": f"Bearer {OPERATOR_KEY}"}

        def running() -> list[dict[str, Any]]:
            found: list[dict[str, Any]] = httpx.get(
                f"{s.url}/v1/sessions", headers=op).json()["sessions"]
            return found

        deadline = time.monotonic() + 5
        while not running() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)  # the slow tool has started
        asking.cancel()
        with contextlib.suppress(BaseException):
            await asking
        sid = running()[0]["id"]
        started = time.monotonic()
        while time.monotonic() - started < 4:
            state = httpx.get(f"{s.url}/v1/sessions/{sid}", headers=op).json()
            if state["status"] == "idle":
                break
            await asyncio.sleep(0.05)
        transcript = httpx.get(f"{s.url}/v1/sessions/{sid}/transcript", headers=op).json()
    assert time.monotonic() - started < 4  # not the tool's 5 s
    texts = [m.get("text") for m in transcript["messages"]]
    assert "find A-9" in texts and "Found it." not in texts
