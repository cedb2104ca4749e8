"""A person's decision on a waiting tool call (`runner.approve`, `runner.reject`): stored
as it comes; the last one is stored before anything of the response runs, then continues
the same turn (`continuation`), all in one hold of the session (`session_turn`: the
decision's commit, then the continued turn's end). What waits, and how, is the
decisions' (`decisions.approvals`); a continuation that died is settled by
`decisions.recovery`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from ...core.history import last_user_index
from ...core.idempotency import IdempotencyKey, fingerprint, remember, seen
from ...core.pending import CallDecision
from ...core.session import SessionState, SessionStatus
from ...errors import HandoffsError
from ...log import fields
from ...stores.edits import session_turn
from ...telemetry.config import captures, observe
from ..decisions.approvals import client_tools, stored_response
from ..decisions.recovery import continuing
from ..state import Leg, Turn, finish, result
from ..state.host import Host
from ..state.result import RunResult, RunStatus
from . import retried

if TYPE_CHECKING:
    from ...core import event_data as ed

log = logging.getLogger("handoffs.runtime.approval")  # a stable name (docs/observability.md)


async def decide(runner: Host, session_id: str, call_id: str, approved: bool,
                 reason: str = "", context: Any = None,
                 key: IdempotencyKey | None = None,
                 client_result: tuple[str, bool] | None = None) -> RunResult:
    """Record a person's decision on a waiting call; the last one continues the turn.
    `key`: the decision's idempotency key; a retry gets the first decision's outcome.
    `client_result`: the result (text, is_error) of a client's tool's call, which only it
    decides (`core.client_tools`)."""
    if not isinstance(reason, str):
        raise HandoffsError("The reason must be a string.", code="invalid_argument")
    if client_result is not None and not isinstance(client_result[0], str):
        raise HandoffsError("A tool's result must be a string.", code="invalid_argument")
    async with session_turn(runner.store, session_id, missing=_no_session) as held:
        state = held.state
        pending = state.pending
        earlier = {} if pending is None else pending.decisions
        died = pending is not None and continuing(pending)
        if key is not None:
            print_ = (fingerprint("decide", call_id, str(bool(approved)), reason)
                      if client_result is None else
                      fingerprint("result", call_id, *map(str, client_result)))
            now = runner.executor.now()
            hit = seen(state, key, print_, now)
            if hit is not None and not died:
                return await retried.outcome(runner, session_id, hit)
        if (pending is None or call_id not in pending.waiting
                or (call_id in earlier and not died)):
            waiting = ", ".join(pending.waiting) if pending is not None else ""
            if client_result is not None:
                raise HandoffsError(
                    f"Session {session_id!r} has no call {call_id!r} of a client's tool "
                    "waiting for its result" + (f" (waiting: {waiting})." if waiting
                                                 else "."), code="no_pending_tool_call")
            raise HandoffsError(
                f"Session {session_id!r} has no call {call_id!r} waiting for approval"
                + (f" (waiting: {waiting})." if waiting else "."), code="no_pending_approval")
        client = call_id in pending.client
        if client_result is not None and not client:
            raise HandoffsError(
                f"Call {call_id!r} of session {session_id!r} waits for a person's approval, "
                "not a client's result: approve or reject it.", code="no_pending_tool_call")
        if client and client_result is None and approved:
            raise HandoffsError(
                f"Call {call_id!r} of session {session_id!r} is of a client's tool: it "
                "waits for the client's result (submit_tool_result), which no approval "
                "replaces; reject it to answer it with a refusal.",
                code="no_pending_approval")
        if died:  # its continuation died: the decisions stand, nothing runs again
            from .turn import resume_held

            resumed = await resume_held(runner, held, context, None)
            assert resumed is not None
            return resumed
        if key is not None:  # stored with the decision, or not at all
            remember(state, key, print_, now)
        agent = pending.agent
        decided = (CallDecision(bool(approved), reason) if client_result is None else
                   CallDecision(True, "", client_result[0], bool(client_result[1])))
        state.pending = pending = pending.decided(call_id, decided)
        decisions = pending.decisions
        t = Turn(runner, state, context, None)
        t.client = client_tools(pending)
        t.user_index = last_user_index(state.messages)
        observe(t)  # traced: the decision joins the trace of the turn that waits
        found = pending.call(call_id)
        tool = "" if found is None else found.name
        told: ed.ApprovalDecided = {"agent": agent, "tool": tool, "call_id": call_id,
                                    "approved": decided.approved, "reason": reason}
        if client_result is not None:
            told["client"] = True
        t.emit("approval_decided", told)
        log.info("call %s (%s) of %s %s%s", tool, call_id, agent,
                 "answered by the client" if client_result is not None
                 else "approved" if approved else "rejected",
                 f": {reason[:200]}" if reason and captures(runner) else "",
                 extra=fields(state.id, state.turn, agent))
        caller = pending.caller
        line_agent = agent if caller is None else caller.agent
        if any(c not in decisions for c in pending.waiting):
            res = result(t, "", line_agent, RunStatus.WAITING_FOR_APPROVAL)
            finish(t, res)
            await held.commit_last(t.lazy_events)
            return res
        for name in {agent, line_agent}:
            if name not in runner.team:
                raise HandoffsError(f"The agent {name!r} of the waiting call is no longer "
                                    "in the team.", code="not_found")
        # Every decision is stored before anything of the response runs: a process that
        # dies from here on leaves them kept, and no approved call runs twice.
        state.status = SessionStatus.RUNNING
        await held.commit(t.events[:])  # a list: the turn goes on
        t.stored = len(t.raw)
        state.pending = None
        response = stored_response(pending)
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
        return await answer(t, line_agent, "", held, deadline, first=first)


def _no_session(session_id: str) -> SessionState:
    raise HandoffsError(f"No session {session_id!r}.", code="not_found")
