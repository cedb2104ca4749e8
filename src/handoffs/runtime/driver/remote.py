"""A remote agent at work (`core.remote.RemoteAgent`): one A2A exchange per activation,
performed through the executor (`t.fx.remote`), decided before and after by
`decisions.remote`. Its streamed text reaches the turn's reader as `text_delta` events
with the remote agent as author, like a model's."""

from __future__ import annotations

from ...core.remote import RemoteAgent
from ..decisions import remote
from ..state import Leg, Outcome, Turn


async def step(t: Turn, leg: Leg) -> Outcome:
    """Send the remote agent its message and make its reply the activation's outcome."""
    agent = leg.agent
    assert isinstance(agent, RemoteAgent)
    request = remote.outgoing(t, leg)
    t.steps += 1
    try:
        reply = await t.fx.remote(t, agent, request)
    except Exception as exc:
        return remote.failed_call(leg, exc)
    return remote.replied(t, leg, reply)
