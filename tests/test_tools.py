"""@tool: JSON schema from type hints and docstrings; sync, async and context-taking tools."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from handoffs import Agent, RunContext, Runner, Team, tool
from handoffs.testing import ScriptedModel, call, reply


@tool
def lookup_order(order_id: str, include_items: bool = False) -> dict[str, object]:
    """Find an order by its number.

    Args:
        order_id: The order number, e.g. "A-1001".
        include_items: Whether to list the items too.
    """
    return {"order_id": order_id, "items": ["dock"] if include_items else None}


def test_schema_comes_from_type_hints_and_docstring() -> None:
    assert lookup_order.name == "lookup_order"
    assert lookup_order.description == "Find an order by its number."
    params = lookup_order.parameters
    assert params["type"] == "object"
    assert params["required"] == ["order_id"]
    assert params["properties"]["order_id"] == {
        "type": "string", "description": 'The order number, e.g. "A-1001".'}
    assert params["properties"]["include_items"]["type"] == "boolean"
    assert params["properties"]["include_items"]["default"] is False


class Address(BaseModel):
    city: str


@tool(name="ship", description="Ship an order.")
async def ship_order(ctx: RunContext, address: Address, speed: Literal["slow", "fast"]) -> str:
    ctx.shared["shipped_to"] = address.city
    return f"shipped {speed} to {address.city} for {ctx.agent}"


def test_context_parameter_is_hidden_from_the_model() -> None:
    assert ship_order.name == "ship" and ship_order.takes_context and ship_order.is_async
    assert set(ship_order.parameters["properties"]) == {"address", "speed"}
    assert ship_order.parameters["properties"]["speed"]["enum"] == ["slow", "fast"]


async def test_async_tools_with_context_and_nested_models_run() -> None:
    model = ScriptedModel([call("ship", address={"city": "Oslo"}, speed="fast"), reply("ok")])
    runner = Runner(Team([Agent("shop", tools=[ship_order])]), model=model)
    await runner.run("s", "ship it")
    assert model.requests[1].messages[-1].text == "shipped fast to Oslo for shop"
    state = await runner.get_session("s")
    assert state is not None and state.shared["shipped_to"] == "Oslo"


async def test_tool_return_values_are_rendered_as_json() -> None:
    model = ScriptedModel([call("lookup_order", order_id="A1", include_items=True), reply("ok")])
    await Runner(Team([Agent("shop", tools=[lookup_order])]), model=model).run("s", "x")
    assert model.requests[1].messages[-1].text == '{"order_id": "A1", "items": ["dock"]}'


async def test_agent_model_settings_reach_the_model_request() -> None:
    model = ScriptedModel([reply("ok"), reply("ok")])
    team = Team([Agent("a", model_settings={"temperature": 0.1, "max_tokens": 50},
                       tool_choice="none")])
    await Runner(team, model=model).run("s", "x")
    assert dict(model.requests[0].settings) == {"temperature": 0.1, "max_tokens": 50}
    assert model.requests[0].tool_choice == "none"
