"""A call whose arguments are too deep to read is replayed as `{}` to the provider, so
the request after it is still built and sent."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from handoffs import Agent, Runner, RunStatus, Team
from handoffs.models.replay import arguments_object
from wire.clients import openai_model
from wire.openai_api import completion, tool_call
from wire.server import FakeServer
from wire.teams import lookup_order

DEEP = '{"order_id": ' + "[" * 100_000 + "]" * 100_000 + "}"


@pytest.fixture(autouse=True)
def _no_collection_at_depth() -> Iterator[None]:
    """Earlier tests' garbage (SDK clients whose finalizers warn) is collected first, and
    not while reading the deep arguments: a finalizer's warning raised near the recursion
    limit cannot even be formatted, and pytest then fails this test for it."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


async def test_a_too_deep_call_is_replayed_as_an_empty_object(
        openai_server: FakeServer) -> None:
    openai_server.add(completion(calls=[tool_call("c1", "lookup_order", DEEP)]),
                      completion("Which order?"))
    team = Team([Agent("billing", tools=[lookup_order], model=openai_model(openai_server))])
    result = await Runner(team).run("s", "look it up")

    assert result.status is RunStatus.COMPLETED and result.output == "Which order?"
    assert openai_server.rejections == []
    replayed = [c for m in openai_server.bodies[1]["messages"] for c in m.get("tool_calls", ())]
    assert replayed[0]["function"]["arguments"] == "{}"
    assert arguments_object(DEEP) == {}
