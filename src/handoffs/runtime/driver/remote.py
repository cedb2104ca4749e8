"""A remote agent at work (`core.remote.RemoteAgent`): one A2A exchange per activation,
performed through the executor (`t.fx.remote`), decided before and after by
`decisions.remote`, whose reading of the reply (`Replied`) it applies: the session's
memory of the agent's task, what the agent said, the escalation's record. Its streamed
text reaches the turn's reader as `text_delta` events with the remote agent as author,
like a model's."""

from __future__ import annotations

from ...core.messages import AssistantMessage
from ...core.remote import RemoteAgent
from ..decisions import remote
from ..decisions.remote import BRIEFED, TASKS, TOKENS
from ..state import Leg, Outcome, Transfer, Turn, append


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
    r = remote.replied(t, leg, reply)
    metadata = t.state.metadata
    if r.tasks:
        metadata[TASKS] = r.tasks
    else:
        metadata.pop(TASKS, None)
    if r.briefed is not None:
        metadata[BRIEFED] = r.briefed
    if r.tokens is not None:
        metadata[TOKENS] = r.tokens
    name = agent.name
    t.emit("remote_status", {"agent": name, "task_id": reply.task_id, "state": reply.state})
    if r.said:
        append(t, leg, AssistantMessage(r.said, name))
        t.emit("message", {"agent": name, "text": r.said})
    if isinstance(r.outcome, Transfer):
        t.add_record(r.outcome.record)
    return r.outcome
