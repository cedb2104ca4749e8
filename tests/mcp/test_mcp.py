"""MCP servers as tool sources, against real servers written with the `mcp` SDK's own
server API (tools_server.py): over stdio (a subprocess the runner starts) and over
Streamable HTTP (a server on a real port)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install 'handoffs[mcp]')")

from handoffs import Agent, MCPServer, Runner, RunStatus, Team
from handoffs.core.messages import ToolResult
from handoffs.testing import ScriptedModel, call, reply, transfer

SERVER = str(Path(__file__).with_name("tools_server.py"))


def stdio(**kw: object) -> MCPServer:
    return MCPServer.stdio(sys.executable, [SERVER, "stdio"], **kw)  # type: ignore[arg-type]


def results(runner_state: object) -> list[ToolResult]:
    return [m for m in runner_state.messages if isinstance(m, ToolResult)]  # type: ignore[attr-defined]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_an_agent_lists_and_calls_the_tools_of_a_stdio_server() -> None:
    agent = Agent("desk", mcp=[stdio(prefix="orders_", deny=["die"])])
    model = ScriptedModel([call("orders_lookup_order", order_id="A-1"),
                           call("orders_refund", order_id="A-1"),
                           reply("A-1 has shipped; it cannot be refunded.")])
    async with Runner(Team([agent]), model=model) as runner:
        result = await runner.run("s", "where is A-1?")

        assert result.status is RunStatus.COMPLETED
        offered = [t.name for t in model.requests[0].tools]
        assert offered == ["orders_lookup_order", "orders_add", "orders_refund",
                           "orders_transfer_to_billing", "orders_whoami"]
        state = await runner.get_session("s")
        looked, refused = results(state)
        assert looked.text == "order A-1: shipped, 2 items" and not looked.is_error
        assert refused.is_error and "cannot be refunded" in refused.text
        assert [e["tool"] for e in result.events if e.type == "tool_called"] == [
            "orders_lookup_order", "orders_refund"]


async def test_names_that_look_like_handoffs_are_never_offered_and_allow_filters() -> None:
    agent = Agent("desk", handoffs=["billing"],
                  mcp=[stdio(allow=["add", "transfer_to_billing"])])
    model = ScriptedModel([reply("hi")])
    async with Runner(Team([agent, Agent("billing")]), model=model) as runner:
        await runner.run("s", "hi")
    names = [t.name for t in model.requests[0].tools]
    assert names == ["transfer_to_billing", "add"]  # the route, then the one MCP tool


async def test_two_agents_share_one_connection_across_a_handoff() -> None:
    shared = stdio()
    triage = Agent("triage", handoffs=["billing"], mcp=[shared])
    billing = Agent("billing", mcp=[stdio()])  # an equal description: the same server
    model = ScriptedModel({"triage": [call("whoami"), transfer("billing")],
                           "billing": [call("whoami"), reply("done")]})
    async with Runner(Team([triage, billing]), model=model) as runner:
        await runner.run("s", "hi")
        await runner.run("s2", "hi")  # another session: still the same connection
        state = await runner.get_session("s")
        first, _, second = results(state)
        assert first.text == second.text  # one server process answered both agents
        conn = runner.mcp.connection(shared)
        assert conn.opens == 1 and runner.mcp.open_count() == 1
        pid = int(first.text)
        assert alive(pid)
    # Closing the runner closed the connection, from its owner task: the process is gone.
    for _ in range(50):
        if not alive(pid):
            break
        time.sleep(0.1)
    assert not alive(pid)
    assert runner.mcp.open_count() == 0


async def test_a_server_killed_mid_turn_is_a_tool_result_and_is_reopened_next_turn() -> None:
    agent = Agent("desk", mcp=[stdio()])
    model = ScriptedModel([call("whoami"), call("die"), call("add", a=1, b=2),
                           reply("Our order system is down; try again later."),
                           call("whoami"), reply("back")])
    async with Runner(Team([agent]), model=model) as runner:
        result = await runner.run("s", "hi")
        assert result.status is RunStatus.COMPLETED
        assert result.output == "Our order system is down; try again later."
        state = await runner.get_session("s")
        pid, died, after = results(state)
        assert died.is_error and after.is_error
        assert "unavailable" in after.text or "stopped answering" in after.text
        # The next turn opens the server again (a new process).
        again = await runner.run("s", "and now?")
        assert again.output == "back"
        state = await runner.get_session("s")
        assert results(state)[-1].text != pid.text
        assert runner.mcp.connection(stdio()).opens == 2


async def test_a_server_that_does_not_start_leaves_the_turn_working_and_says_so() -> None:
    broken = MCPServer.stdio(sys.executable, ["-c", "import sys; sys.exit(5)"], name="crm")
    model = ScriptedModel([reply("I cannot reach the CRM right now.")])
    async with Runner(Team([Agent("desk", instructions="Help.", mcp=[broken])]),
                      model=model) as runner:
        result = await runner.run("s", "hi")
    assert result.output == "I cannot reach the CRM right now."
    request = model.requests[0]
    assert request.tools == ()
    assert request.system.startswith("Help.")  # the instructions, then what is down
    assert "crm" in request.system and "unavailable" in request.system


def test_an_agent_refuses_what_is_not_an_mcp_server() -> None:
    from handoffs import HandoffsError

    with pytest.raises(HandoffsError, match="MCPServer"):
        Agent("a", mcp=["python server.py"])
    with pytest.raises(HandoffsError, match="http"):
        MCPServer.http("localhost:8000")


@pytest.fixture
def http_server() -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, SERVER, "http", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        else:
            pytest.fail("the MCP HTTP server did not start")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


async def test_a_streamable_http_server_with_headers(http_server: str) -> None:
    agent = Agent("calc", mcp=[MCPServer.http(http_server, headers={"X-Api-Key": "k"})])
    model = ScriptedModel([call("add", a=2, b=3), reply("5")])
    async with Runner(Team([agent]), model=model) as runner:
        await runner.run("s", "2+3?")
        state = await runner.get_session("s")
    assert results(state)[0].text == "5"
    assert "add" in [t.name for t in model.requests[0].tools]


async def test_the_http_client_made_for_headers_closes_with_the_runner(
        http_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx2

    made: list[httpx2.AsyncClient] = []

    class Recorded(httpx2.AsyncClient):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            made.append(self)

    monkeypatch.setattr(httpx2, "AsyncClient", Recorded)
    agent = Agent("calc", mcp=[MCPServer.http(http_server, headers={"X-Api-Key": "k"})])
    model = ScriptedModel([call("add", a=2, b=3), reply("5")])
    async with Runner(Team([agent]), model=model) as runner:
        await runner.run("s", "2+3?")
        assert len(made) == 1 and not made[0].is_closed  # the connection uses it
        assert made[0].headers["x-api-key"] == "k"
    assert made[0].is_closed


async def test_a_name_collision_is_logged_once_not_on_every_step(
        caplog: pytest.LogCaptureFixture) -> None:
    agent = Agent("desk", handoffs=["billing"], mcp=[stdio()])  # its transfer_to_billing
    model = ScriptedModel([call("add", a=1, b=2), call("add", a=3, b=4), reply("7"),
                           reply("again")])
    with caplog.at_level("WARNING", logger="handoffs.mcp"):
        async with Runner(Team([agent, Agent("billing")]), model=model) as runner:
            await runner.run("s", "add")
            await runner.run("s2", "add again")
    said = [r for r in caplog.records if "is not offered to desk" in r.getMessage()]
    assert len(said) == 1


def test_mcp_tool_server_is_a_clearer_name_for_mcp_server() -> None:
    import handoffs

    assert handoffs.MCPToolServer is MCPServer
    assert "MCPToolServer" in handoffs.__all__
