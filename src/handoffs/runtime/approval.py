"""Tool calls that wait for a person: `@tool(needs_approval=...)`, `runner.approve`,
`runner.reject`.

When a response of the main line has a call whose tool needs approval, nothing of that
response runs yet: the response (text and calls) and the calls that wait are stored in
`SessionState.pending`, an `approval_requested` event names each, and the turn ends
`waiting_for_approval` (persisted: another process, after a restart, can decide). Each
decision is stored as it comes; the last one is stored too, before anything of the
response runs, and continues the same turn with the same agent: approved calls run, a
rejected call's result is the person's reason (an error result the model reads), the
other calls of the response run as usual, and the agent goes on. While a session waits,
a new user message is refused (`waiting_for_approval`).

Approved calls run at most once. If the process dies while the continuation runs, the
decisions are kept and nothing of the response runs again: the next turn (a message,
`runner.resume`, or deciding again) answers each call with "outcome unknown"
(`recovery.settle`). A tool makes itself idempotent with `ctx.call_id`, the id of the
call it runs.

A delegate of the main line waits the same way: its own response and messages are
stored with its caller's response (`suspend`), and the decision continues the delegate,
then the caller (`continuation`). A delegate of a delegate, or of a plan step, cannot wait:
the call's result says so.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from typing import TYPE_CHECKING, Any

from ..core.history import last_user_index
from ..core.messages import ToolCall
from ..core.tools import Tool
from ..errors import HandoffsError
from ..log import fields
from ..models.base import ModelResponse
from ..telemetry.config import captures, observe
from .recovery import continuing
from .recovery import rejected_text as rejected_text  # the loop reads it here
from .result import RunResult, RunStatus
from .state import Leg, Pause, Turn, finish, result

if TYPE_CHECKING:
    from .runner import Runner

log = logging.getLogger(__name__)

IN_DELEGATION = ("{tool!r} needs a person's approval, which this delegated task cannot wait "
                 "for; answer your caller without it (the caller may call it itself).")


async def needing(ctx: Any, calls: list[tuple[int, ToolCall, Tool]]
                  ) -> list[tuple[int, ToolCall, Tool]]:
    """The calls whose tool needs approval for these arguments."""
    out = []
    for item in calls:
        rule = item[2].needs_approval
        if rule is False:
            continue
        if callable(rule):
            try:
                args = json.loads(item[1].arguments or "{}")
            except ValueError:
                continue  # bad arguments: the call fails as feedback, nothing runs
            decided = rule(ctx, args)
            if inspect.isawaitable(decided):
                decided = await decided
            if not decided:
                continue
        out.append(item)
    return out


def pause(t: Turn, leg: Leg, response: ModelResponse,
          waiting: list[tuple[int, ToolCall, Tool]]) -> Pause:
    """Keep the response and the calls that wait; say so; end the agent's work. On the
    main line it is stored now; a delegate's goes to its caller (`suspend`), with the
    delegate's own messages so far."""
    name = leg.agent.name
    frame: dict[str, Any] = {
        "agent": name, "text": response.text, "calls": _calls(response.tool_calls),
        "waiting": [c.id for _, c, _ in waiting], "decisions": {},
    }
    for _, c, _ in waiting:
        t.emit("approval_requested", {"agent": name, "tool": c.name, "call_id": c.id,
                                      "arguments": c.arguments})
    state = t.state
    log.info("%s waits for a person's approval of %s", name,
             ", ".join(f"{c.name} ({c.id})" for _, c, _ in waiting),
             extra=fields(state.id, state.turn, name))
    if leg.main:
        t.state.pending = frame
        return Pause(name)
    frame["record"] = leg.line
    frame["messages"] = [m.to_dict() for m in leg.sub]
    return Pause(name, frame)


def suspend(t: Turn, leg: Leg, response: ModelResponse, results: list[Any],
            marks: list[Any], index: int, paused: Pause, transfer: Any,
            escalate: Any, stored: bool = False) -> Pause:
    """The main line's response waits for its delegate's approval: store both, the
    calls the response already settled, and the transfer it decided (if any; `stored`:
    already in its stored form)."""
    assert paused.frame is not None
    if transfer is not None and not stored:
        transfer = [transfer[0], transfer[1].to_dict()]
    caller = {
        "agent": leg.agent.name, "text": response.text,
        "calls": _calls(response.tool_calls),
        "results": [None if r is None else r.to_dict() for r in results],
        "marks": list(marks), "delegation": index,
        "transfer": transfer,
        "escalate": None if escalate is None else [escalate.code, escalate.message,
                                                   escalate.agent],
    }
    t.state.pending = {**paused.frame, "caller": caller}
    return Pause(leg.agent.name)


def _calls(calls: Any) -> list[dict[str, str]]:
    return [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls]


async def decide(runner: Runner, session_id: str, call_id: str, approved: bool,
                 reason: str = "", context: Any = None) -> RunResult:
    """Record a person's decision on a waiting call; the last one continues the turn."""
    if not isinstance(reason, str):
        raise HandoffsError("The reason must be a string.", code="invalid_argument")
    store = runner.store
    async with store.lock(session_id):
        state = await store.load(session_id)
        if state is None:
            raise HandoffsError(f"No session {session_id!r}.", code="not_found")
        pending = state.pending
        earlier = {} if pending is None else pending.get("decisions", {})
        died = pending is not None and continuing(pending)
        if (pending is None or call_id not in pending.get("waiting", ())
                or (call_id in earlier and not died)):
            waiting = ", ".join(pending.get("waiting", ())) if pending else ""
            raise HandoffsError(
                f"Session {session_id!r} has no call {call_id!r} waiting for approval"
                + (f" (waiting: {waiting})." if waiting else "."), code="no_pending_approval")
        if died:  # its continuation died: the decisions stand, nothing runs again
            from .turn import resume_held

            resumed = await resume_held(runner, state, context, None)
            assert resumed is not None
            return resumed
        since = state.checkpoint()
        agent = pending["agent"]
        decisions = {**earlier, call_id: {"approved": bool(approved), "reason": reason}}
        state.pending = pending = {**pending, "decisions": decisions}
        t = Turn(runner, state, context, None)
        t.user_index = last_user_index(state.messages)
        observe(t)  # traced: the decision joins the trace of the turn that waits
        tool = next((c["name"] for c in pending["calls"] if c["id"] == call_id), "")
        t.emit("approval_decided", {"agent": agent, "tool": tool, "call_id": call_id,
                                    "approved": bool(approved), "reason": reason})
        log.info("call %s (%s) of %s %s%s", tool, call_id, agent,
                 "approved" if approved else "rejected",
                 f": {reason[:200]}" if reason and captures(runner) else "",
                 extra=fields(state.id, state.turn, agent))
        caller = pending.get("caller")
        line_agent = agent if caller is None else caller["agent"]
        if any(c not in decisions for c in pending["waiting"]):
            res = result(t, "", line_agent, RunStatus.WAITING_FOR_APPROVAL)
            finish(t, res)
            await store.commit(state, since, t.lazy_events)
            return res
        for name in {agent, line_agent}:
            if name not in runner.team:
                raise HandoffsError(f"The agent {name!r} of the waiting call is no longer "
                                    "in the team.", code="not_found")
        # Every decision is stored before anything of the response runs: a process that
        # dies from here on leaves them kept, and no approved call runs twice.
        state.status = "running"
        await store.commit(state, since, t.events[:])  # a list: the turn goes on
        t.stored = len(t.raw)
        since = state.checkpoint()
        state.pending = None
        response = ModelResponse(pending["text"], tuple(
            ToolCall(c["id"], c["name"], c["arguments"]) for c in pending["calls"]))
        from .continuation import continue_delegation, continue_response
        from .turn import answer

        async def first(leg: Leg) -> Any:
            if caller is not None:
                return await continue_delegation(t, leg, pending, response, decisions)
            return await continue_response(t, leg, response, decisions)

        state.active_agent = line_agent
        limit = runner.turn_timeout  # the continued turn is bounded like any other
        deadline = (None if limit is None
                    else (asyncio.get_running_loop().time() + limit, limit / 4))
        return await answer(t, line_agent, "", since, deadline, first=first)
