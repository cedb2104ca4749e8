"""The small teams the wire tests run: a triage agent, a billing agent with tools."""

from __future__ import annotations

from typing import Any

from handoffs import Agent, Team, tool

LOOKUPS: list[str] = []


@tool
def lookup_order(order_id: str) -> dict[str, object]:
    """Look up an order by its number.

    Args:
        order_id: The order number, e.g. "A-1".
    """
    LOOKUPS.append(order_id)
    return {"order_id": order_id, "amount": 129.0, "charged": 2}


@tool
def order_status(order_id: str) -> str:
    """The shipping status of an order.

    Args:
        order_id: The order number.
    """
    return f"{order_id} shipped"


def support_team(triage_model: Any = None, billing_model: Any = None,
                 triage_choice: str | None = None, history: Any = None) -> Team:
    """triage (routes) <-> billing (lookup_order, order_status)."""
    from handoffs import Handoff

    to_billing: Any = Handoff("billing", history=history) if history else "billing"
    triage = Agent("triage", instructions="Route customers to billing.",
                   handoffs=[to_billing], model=triage_model, tool_choice=triage_choice)
    billing = Agent("billing", instructions="Answer billing questions.",
                    tools=[lookup_order, order_status], handoffs=["triage"],
                    model=billing_model)
    return Team([triage, billing], entry="triage")
