"""Runner(inspect=True): every model call's exact request and raw response as events."""

from __future__ import annotations

import re
from typing import Any

import pytest

from handoffs import Agent, Handoff, Runner, Team, tool
from handoffs.errors import HandoffsError, ModelError
from handoffs.models.base import ModelRequest, ModelResponse, Usage
from handoffs.stores.memory import MemoryStore
from handoffs.telemetry import Telemetry
from handoffs.testing import ScriptedModel, call, reply, transfer


@tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id}: shipped"


def team() -> Team:
    triage = Agent("triage", instructions="You are triage.", tools=[lookup],
                   handoffs=[Handoff("billing", history="last_user")])
    return Team([triage, Agent("billing", instructions="You are billing.")])


def script() -> ScriptedModel:
    return ScriptedModel([
        reply("Hello, how can I help?"),
        call("lookup", order_id="A1"),
        transfer("billing", reason="billing question"),
        reply("Billing here."),
    ])


def content() -> Telemetry:
    return Telemetry(capture_content=True)


async def events_of(runner: Runner, sid: str) -> list[dict[str, Any]]:
    store: Any = runner.store
    return list(await store.events_after(sid, -1, 1000))


async def test_each_model_call_is_recorded_with_what_the_model_got_and_answered() -> None:
    model = script()
    runner = Runner(team(), model=model, inspect=True, telemetry=content())
    await runner.run("s", "hi")
    await runner.run("s", "where is A1 and why was I charged?")
    events = await events_of(runner, "s")
    asked = [e for e in events if e["type"] == "model_request"]
    answered = [e for e in events if e["type"] == "model_response"]
    assert len(asked) == len(answered) == len(model.requests) == 4
    # Each request is exactly what the model was sent.
    for e, sent in zip(asked, model.requests, strict=True):
        assert e["agent"] == sent.agent and e["system"] == sent.system
        assert [m["text"] for m in e["messages"]] == [m.text for m in sent.messages]
        assert [t["name"] for t in e["tools"]] == [s.name for s in sent.tools]
    # After the handoff: billing's view is the route's filter (last_user) over a
    # transcript that holds more, then the handoff's note.
    billing = asked[-1]
    assert billing["agent"] == "billing" and "billing question" not in billing["system"]
    user, note = billing["messages"]
    assert user["text"] == "where is A1 and why was I charged?"
    assert "billing question" in note["text"]
    assert billing["view"]["mode"] == "last_user" and billing["view"]["transcript"] > 1
    assert billing["shared"]["handoff_context"]["source_agent"] == "triage"
    triage_tools = {t["name"] for t in asked[1]["tools"]}
    assert triage_tools == {"lookup", "transfer_to_billing"}
    # Responses: the raw text and calls, tokens, latency, and which call they answer.
    assert [e["call"] for e in answered] == [e["call"] for e in asked] == [1, 1, 2, 3]  # per turn
    assert answered[0]["text"] == "Hello, how can I help?"
    assert answered[1]["tool_calls"][0]["name"] == "lookup"
    assert answered[1]["tool_calls"][0]["arguments"] == '{"order_id": "A1"}'
    assert answered[-1]["usage"] == {"input_tokens": 0, "output_tokens": 0, "requests": 1}
    assert all(e["latency"] >= 0 and e["redacted"] is False for e in answered)
    # A request comes right before the events its response caused.
    types = [e["type"] for e in events]
    assert types.index("model_request") < types.index("model_response") < \
        types.index("message")


async def test_without_captured_content_texts_are_replaced_by_their_length() -> None:
    runner = Runner(team(), model=script(), inspect=True,
                    telemetry=Telemetry(capture_content=False))
    await runner.run("s", "hi")
    asked, answered = [e for e in await events_of(runner, "s")
                       if e["type"] in ("model_request", "model_response")]
    assert re.fullmatch(r"\[redacted: \d+ characters\]", asked["system"])
    assert asked["messages"] == [{"kind": "user", "text": "[redacted: 2 characters]",
                                  "agent": "triage"}]
    assert asked["redacted"] is True and answered["redacted"] is True
    assert answered["text"] == "[redacted: 22 characters]"
    assert [t["name"] for t in asked["tools"]] == ["lookup", "transfer_to_billing"]


async def test_without_inspection_no_model_call_is_recorded() -> None:
    runner = Runner(team(), model=script(), telemetry=content())
    assert runner.inspector is None
    await runner.run("s", "hi")
    types = {e["type"] for e in await events_of(runner, "s")}
    assert not types & {"model_request", "model_response"}


async def test_a_failed_model_call_is_recorded_with_its_error() -> None:
    class Down:
        async def complete(self, request: ModelRequest) -> ModelResponse:
            raise ModelError("The provider is down.", code="provider_unavailable")

        async def stream(self, request: ModelRequest) -> Any:
            raise ModelError("The provider is down.", code="provider_unavailable")
            yield  # pragma: no cover

    runner = Runner(Team([Agent("solo")]), model=Down(), inspect=True, telemetry=content())
    result = await runner.run("s", "hi")
    assert result.error is not None and result.error.code == "provider_unavailable"
    answered = [e for e in await events_of(runner, "s") if e["type"] == "model_response"]
    assert answered[0]["error"] == {"code": "provider_unavailable",
                                    "message": "The provider is down."}


async def test_a_streamed_call_is_recorded_around_its_deltas() -> None:
    class Counting(ScriptedModel):
        pass

    model = Counting([reply("Hello there, friend.")], stream_chunks=5)
    runner = Runner(Team([Agent("solo")]), model=model, inspect=True, telemetry=content(),
                    store=MemoryStore())
    types = [e.type async for e in runner.stream("s", "hi")]
    first, last = types.index("model_request"), types.index("model_response")
    assert first < types.index("text_delta") < last < types.index("message")
    usage = [e for e in await events_of(runner, "s") if e["type"] == "model_response"]
    assert usage[0]["text"] == "Hello there, friend."


def test_inspect_takes_a_bool() -> None:
    with pytest.raises(HandoffsError) as caught:
        Runner(team(), model=script(), inspect="yes")  # type: ignore[arg-type]
    assert caught.value.code == "invalid_argument"


async def test_usage_reported_by_a_provider_is_kept() -> None:
    class Counted:
        async def complete(self, request: ModelRequest) -> ModelResponse:
            return ModelResponse("ok", (), Usage(12, 3, 1), "gpt-test")

        async def stream(self, request: ModelRequest) -> Any:
            yield await self.complete(request)

    runner = Runner(Team([Agent("solo")]), model=Counted(), inspect=True)
    await runner.run("s", "hi")
    answered = [e for e in await events_of(runner, "s") if e["type"] == "model_response"]
    assert answered[0]["usage"]["input_tokens"] == 12 and answered[0]["model"] == "gpt-test"
