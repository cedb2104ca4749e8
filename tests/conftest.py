"""Shared helpers for the core tests."""

from __future__ import annotations

from handoffs import Agent, Team


def two_agents(**handoff_kwargs: object) -> Team:
    """triage -> billing with one route; billing answers."""
    from handoffs import Handoff

    triage = Agent("triage", instructions="Route customers.", description="Routes.",
                   handoffs=[Handoff("billing", **handoff_kwargs)])  # type: ignore[arg-type]
    billing = Agent("billing", instructions="Handle billing.", description="Billing questions.",
                    handoffs=["triage"], display_name="Billing", icon="B", color="#00f")
    return Team([triage, billing])
