"""Every effect of a turn goes through its executor: scenarios of several features run
under a recording executor while the models, tools and MCP connections refuse to be
called from anywhere else; each effect the turn performs is in the record."""

from __future__ import annotations

import asyncio
import contextvars
import sys
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import Any

import pytest

from handoffs import Agent, Handoff, MCPServer, Runner, RunStatus, Team, tool
from handoffs.core.tools import Tool
from handoffs.mcp.hub import Hub
from handoffs.runtime.effects.executor import IN_PROCESS
from handoffs.runtime.effects.summary import Summarizer
from handoffs.testing import ScriptedModel, call, reply, transfer

MCP_SERVER = str(Path(__file__).parent / "mcp" / "tools_server.py")
INSIDE: contextvars.ContextVar[bool] = contextvars.ContextVar("inside", default=False)
AROUND: list[str] = []
"""Effects attempted outside the executor (each also raises where it happens)."""


class Recording:
    """The in-process executor, recording each effect and marking it as routed."""

    def __init__(self) -> None:
        self.effects: list[tuple[str, str]] = []
        self.now = IN_PROCESS.now
        self.new_id = IN_PROCESS.new_id

    def _routed(self, kind: str, what: str, make: Any) -> Awaitable[Any]:
        async def run() -> Any:
            self.effects.append((kind, what))
            token = INSIDE.set(True)
            try:
                return await make()
            finally:
                INSIDE.reset(token)
        return run()

    def model(self, t: Any, model: Any, request: Any) -> Awaitable[Any]:
        return self._routed("model", request.agent,
                            lambda: IN_PROCESS.model(t, model, request))

    def summary(self, t: Any, summarizer: Any, fallback: Any, request: Any,
                target: str) -> Awaitable[Any]:
        return self._routed("summary", target, lambda: IN_PROCESS.summary(
            t, summarizer, fallback, request, target))

    def tool(self, t: Any, tl: Any, ctx: Any, args: Any, call_id: str) -> Awaitable[Any]:
        return self._routed("tool", tl.name,
                            lambda: IN_PROCESS.tool(t, tl, ctx, args, call_id))

    def mcp_offer(self, t: Any, agent: Any, taken: Any) -> Awaitable[Any]:
        return self._routed("mcp_offer", agent.name,
                            lambda: IN_PROCESS.mcp_offer(t, agent, taken))

    def within(self, work: Awaitable[Any], seconds: float) -> Awaitable[Any]:
        self.effects.append(("timer", f"{seconds:g}"))
        return asyncio.wait_for(work, seconds)

    def remote(self, t: Any, agent: Any, request: Any) -> Awaitable[Any]:
        return self._routed("remote", agent.name,
                            lambda: IN_PROCESS.remote(t, agent, request))


def _guarded(name: str, original: Any) -> Any:
    def guard(*args: Any, **kwargs: Any) -> Any:
        if not INSIDE.get():
            AROUND.append(name)
            raise AssertionError(f"{name} was called around the executor")
        return original(*args, **kwargs)
    return guard


@pytest.fixture(autouse=True)
def refuse_effects_around_the_executor(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    AROUND.clear()
    monkeypatch.setattr(ScriptedModel, "complete", _guarded("model", ScriptedModel.complete))
    monkeypatch.setattr(ScriptedModel, "stream", _guarded("model", ScriptedModel.stream))
    monkeypatch.setattr(Tool, "invoke", _guarded("tool", Tool.invoke))
    monkeypatch.setattr(Hub, "offer", _guarded("mcp listing", Hub.offer))
    yield
    assert AROUND == []


@tool(timeout=5)
async def lookup(order: str) -> str:
    """Look an order up."""
    return f"{order}: charged twice"


async def _run(team: Team, model: Any, text: str, **kw: Any) -> tuple[Any, list[Any]]:
    rec = Recording()
    async with Runner(team, model=model, executor=rec) as runner:  # type: ignore[arg-type]
        result = await runner.run("s", text, **kw)
    return result, rec.effects


async def test_a_summary_handoff_a_tool_and_a_delegation_are_all_recorded() -> None:
    team = Team([
        Agent("triage", handoffs=[Handoff("billing", history="summary")]),
        Agent("billing", tools=[lookup], handoffs=[Handoff("policy", returns=True,
                                                           timeout=5)]),
        Agent("policy", timeout=5)],
        summarizer=Summarizer(model=ScriptedModel([reply("Charged twice.")])))
    model = ScriptedModel([transfer("billing"), call("lookup", order="A1"),
                           transfer("policy", task="refund rules?"), reply("30 days."),
                           reply("Refund within 30 days.")])
    result, effects = await _run(team, model, "charged twice", timeout=30)
    assert (result.status, result.output) == (RunStatus.COMPLETED, "Refund within 30 days.")
    assert ("summary", "billing") in effects and ("tool", "lookup") in effects
    assert [e for e in effects if e[0] == "model"] == [
        ("model", "triage"), ("model", "billing"), ("model", "billing"),
        ("model", "policy"), ("model", "billing")]
    timers = [float(what) for kind, what in effects if kind == "timer"]
    assert ("timer", "5") in effects  # the delegation's own limit
    assert len(timers) >= 3 and max(timers) <= 30  # and the turn's, around each agent


async def test_an_mcp_listing_and_call_are_recorded() -> None:
    server = MCPServer.stdio(sys.executable, [MCP_SERVER, "stdio"])
    team = Team([Agent("a", mcp=[server])])
    model = ScriptedModel([call("lookup_order", order_id="7"), reply("Shipped.")])
    result, effects = await _run(team, model, "order 7?")
    assert result.output == "Shipped."
    assert effects == [("mcp_offer", "a"), ("model", "a"), ("tool", "lookup_order"),
                       ("mcp_offer", "a"), ("model", "a")]


async def test_a_streamed_turn_records_its_model_calls() -> None:
    rec = Recording()
    async with Runner(Team([Agent("a")]), model=ScriptedModel([reply("Hello there.")]),
                      executor=rec) as runner:  # type: ignore[arg-type]
        events = [e async for e in runner.stream("s", "hi")]
    assert events[-1].type == "run_completed"
    assert rec.effects == [("model", "a")]


async def test_a_remote_agents_exchange_is_recorded(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("a2a", reason="the a2a-sdk is not installed (the `a2a` extra)")
    import handoffs.a2a.client as a2a_client
    from handoffs import RemoteAgent
    from protocols.conftest import remote_billing

    monkeypatch.setattr(a2a_client, "send", _guarded("a2a", a2a_client.send))
    with remote_billing(tmp_path) as remote:
        team = Team([Agent("triage", handoffs=["billing"]),
                     RemoteAgent("billing", remote.url)])
        result, effects = await _run(team, ScriptedModel([transfer("billing")]),
                                     "my balance?")
    assert result.output == "Your balance is 0 EUR."
    assert effects == [("model", "triage"), ("remote", "billing")]
