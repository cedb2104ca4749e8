"""`@tool(timeout=..., retry=...)`: an attempt over its time limit fails like an exception,
a failed attempt is tried again so many times, and both say so to the model and the log."""

from __future__ import annotations

import asyncio
import logging

import pytest

from handoffs import Agent, HandoffsError, Runner, Team, tool
from handoffs.core.messages import ToolResult
from handoffs.testing import ScriptedModel, call, reply


def _results(runner: Runner, sid: str) -> list[ToolResult]:
    state = runner.store._sessions[sid]  # type: ignore[attr-defined]
    return [m for m in state.messages if isinstance(m, ToolResult)]


async def test_an_attempt_over_the_tools_timeout_is_the_models_feedback() -> None:
    @tool(timeout=0.1)
    async def slow_lookup(order_id: str) -> str:
        """Look an order up."""
        await asyncio.sleep(5)
        return "never"

    runner = Runner(Team([Agent("a", tools=[slow_lookup])]),
                    model=ScriptedModel([call("slow_lookup", order_id="A1"), reply("sorry")]))
    started = asyncio.get_running_loop().time()
    result = await runner.run("s", "where is A1?")
    assert asyncio.get_running_loop().time() - started < 3  # cut at 0.1 s, not 5
    assert result.output == "sorry"
    (done,) = _results(runner, "s")
    assert done.is_error and "did not finish within 0.1 s" in done.text


async def test_a_failed_attempt_is_tried_again_as_often_as_retry_says(
        caplog: pytest.LogCaptureFixture) -> None:
    tries: list[str] = []

    @tool(retry=2)
    def flaky(order_id: str) -> str:
        """Look an order up."""
        tries.append(order_id)
        if len(tries) < 3:
            raise ConnectionError("the order service hung up")
        return "shipped"

    runner = Runner(Team([Agent("a", tools=[flaky])]),
                    model=ScriptedModel([call("flaky", order_id="A1"), reply("ok")]))
    with caplog.at_level(logging.WARNING, logger="handoffs.runtime.tools"):
        result = await runner.run("s", "where is A1?")
    assert result.output == "ok" and tries == ["A1"] * 3
    (done,) = _results(runner, "s")
    assert not done.is_error and done.text == "shipped"
    lines = [r.getMessage() for r in caplog.records if "attempt" in r.getMessage()]
    assert len(lines) == 2 and "session s turn 1 agent a: tool flaky failed" in lines[0]
    assert "ConnectionError: the order service hung up" in lines[0]
    assert lines[1].endswith("attempt 3 of 3")


async def test_the_last_failure_counts_as_on_error_says() -> None:
    tries: list[int] = []

    @tool(retry=1)
    def broken(order_id: str) -> str:
        """Look an order up."""
        tries.append(1)
        raise ConnectionError("down")

    runner = Runner(Team([Agent("a", tools=[broken])]),
                    model=ScriptedModel([call("broken", order_id="A1"), reply("later")]))
    result = await runner.run("s", "where is A1?")
    assert result.output == "later" and len(tries) == 2  # once, then once again
    (done,) = _results(runner, "s")
    assert done.is_error and "down" in done.text


def test_a_tool_without_either_runs_once_with_no_limit() -> None:
    @tool
    def plain(x: str) -> str:
        """Echo."""
        return x

    assert plain.timeout is None and plain.retry == 0


@pytest.mark.parametrize("kw", [{"timeout": 0}, {"timeout": -1.0}, {"timeout": "5"},
                                {"timeout": True}, {"retry": -1}, {"retry": 1.5},
                                {"retry": True}])
def test_bad_settings_are_refused_when_the_tool_is_built(kw: dict[str, object]) -> None:
    with pytest.raises(HandoffsError) as err:
        tool(**kw)  # type: ignore[call-overload]
    assert err.value.code == "invalid_tool"
