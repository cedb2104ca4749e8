"""What people do to a session: a user picks an agent; a human operator replies."""

from __future__ import annotations

import logging
from functools import partial
from typing import TYPE_CHECKING, Any

from ...core.context import RunContext
from ...core.handoff import HandoffReason, HandoffRecord, context_json
from ...core.idempotency import IdempotencyKey, Seen, fingerprint, remember, seen
from ...core.messages import AssistantMessage
from ...core.policy import HandoffRequest, Rejection
from ...core.session import SessionState, SessionStatus, ViewSpec
from ...errors import HandoffsError
from ...log import fields
from ...stores.edits import Held, session_turn
from ...telemetry.config import count_handoff, observe
from ..decisions.recovery import skipped
from ..decisions.views import enabled
from ..state import Turn
from ..state.result import RunResult, RunStatus
from .moves import move
from .turn import check_text, new_session

if TYPE_CHECKING:
    from ..state.host import Host

def _replied(state: SessionState, text: str, hit: Seen) -> RunResult:
    """A retried operator reply's answer: the first reply's result, from its key."""
    agent, status, ids = hit.outcome
    records = [r for r in (state.record(i) for i in ids) if r is not None]
    return RunResult(state.id, text, agent, RunStatus(status), hit.turn, records)


log = logging.getLogger("handoffs.runtime.human")  # a stable name (docs/observability.md)


async def select_agent(runner: Host, session_id: str, name: str,
                       key: IdempotencyKey | None = None) -> HandoffRecord:
    """See `Runner.select_agent`. The pick is stored and published like any handoff:
    `agent_handoff` and `agent_changed` when accepted, `handoff_rejected` when the policy
    refuses it. A session that waits for a person's approval refuses any pick
    (`waiting_for_approval`), changing nothing: the waiting agent's response must be
    decided first. `key`: a retry of a pick (the same key) gets its record again (or
    its refusal), and nothing is stored."""
    team = runner.team
    store = runner.store

    async def pick(held: Held) -> HandoffRecord:
        state = held.state
        if key is not None:
            print_ = fingerprint("pick", name)
            hit = seen(state, key, print_, runner.executor.now())
            if hit is not None:
                return _picked(state, hit.outcome)
        if state.pending is not None:
            raise HandoffsError(
                "A tool call waits for a person's approval; an agent can be picked once "
                "it is approved or rejected.", code="waiting_for_approval")
        source = state.active_agent or team.entry
        rejection = team.policy.check_selection(team, name, state)
        record = HandoffRecord(
            id=runner.executor.new_id(), source=source, target=name,
            reason=HandoffReason.USER_REQUEST,
            explanation="The user picked this agent.", accepted=rejection is None,
            rejection=rejection.code if rejection else None,
            message=rejection.message if rejection else "", at=runner.executor.now(),
            turn=state.turn,
        )
        t = Turn(runner, state, None, None)
        t.add_record(record)
        if rejection is None:
            target = team[name]
            state.active_agent = name
            state.view = ViewSpec("full", 0, 0, record.id)
            state.shared["handoff_context"] = context_json(record)
            t.emit("agent_handoff", {
                "source": source, "target": name, "reason": record.reason,
                "explanation": record.explanation, "record_id": record.id,
                "returns": False})
            t.emit("agent_changed", {"agent": name, "previous": source,
                                     "display_name": target.label, "icon": target.icon,
                                     "color": target.color})
            if target.is_human:
                state.status = SessionStatus.WAITING_FOR_HUMAN
                t.emit("human_waiting", {"agent": name, "display_name": target.label})
            elif state.status == "waiting_for_human":
                state.status = SessionStatus.IDLE
        else:
            t.emit("handoff_rejected", {"agent": source, "target": name,
                                        "code": rejection.code, "message": rejection.message,
                                        "record_id": record.id})
        if key is not None:
            remember(state, key, print_, record.at, record.id)
        await held.commit(t.lazy_events)
        count_handoff(runner, record, state)
        log.info("user picked %s: handoff %s -> %s %s", name, source, name,
                 "accepted" if rejection is None else f"refused ({rejection.code})",
                 extra=fields(session_id, state.turn, source))
        if rejection is not None:
            raise HandoffsError(rejection.message, code=rejection.code)
        return record

    return await session_turn(store, session_id, pick, partial(new_session, runner))


def _picked(state: SessionState, record_id: Any) -> HandoffRecord:
    """A retried pick's answer: the first pick's record, or its refusal again."""
    record = state.record(record_id) if isinstance(record_id, str) else None
    if record is None:
        raise HandoffsError("This pick was already made (the same idempotency key), but "
                            "its record is no longer in the session.",
                            code="idempotency_outcome_lost")
    if not record.accepted:
        raise HandoffsError(record.message, code=record.rejection or "rejected")
    return record


async def reply_as_human(runner: Host, session_id: str, text: str,
                         handoff_to: str | None,
                         key: IdempotencyKey | None = None) -> RunResult:
    """See `Runner.reply_as_human`. Checked before anything changes: a refused reply
    leaves the session as it was, on every store. `key`: a retry of a reply (the same
    key) stores nothing and gets the first reply's result (without its events)."""
    check_text(runner, text)
    team = runner.team
    store = runner.store

    async def reply(held: Held) -> RunResult:
        state = held.state
        if key is not None:
            print_ = fingerprint("reply", text, handoff_to or "")
            now = runner.executor.now()
            hit = seen(state, key, print_, now)
            if hit is not None:
                return _replied(state, text, hit)
        human = team.get(state.active_agent or "")
        if human is None or not human.is_human:
            raise HandoffsError(
                f"No human agent holds session {session_id!r} (the active agent is "
                f"{state.active_agent!r}); hand off to a HumanAgent first.",
                code="not_waiting_for_human",
            )
        route = None
        if handoff_to is not None:
            route = team.plan(human.name).routes_by_target.get(handoff_to)
            h = route.handoff if route is not None else None
            ctx = RunContext(state.id, human.name, state.turn, state.shared,
                             _read_only_context(team, state), None, state.channel)
            rejection = team.policy.review(team, HandoffRequest(
                human.name, handoff_to, h,
                route_enabled=h is None or h.enabled is True or enabled(h, ctx)), state)
            target = team.get(handoff_to)
            if rejection is None and target is not None and target.is_human:
                rejection = Rejection("target_disabled", f"{handoff_to!r} is a human; "
                                      "hand back to an AI agent.")
            if rejection is not None:
                raise HandoffsError(rejection.message, code=rejection.code)
        state.event_seq += skipped(state)
        t = Turn(runner, state, None, None)
        observe(t)  # the hand-back, if any, is a handoff span and is counted
        state.messages.append(AssistantMessage(text, human.name))
        t.emit("message", {"agent": human.name, "text": text})
        status = RunStatus.WAITING_FOR_HUMAN
        agent = human.name
        if route is not None:
            record = HandoffRecord(
                id=runner.executor.new_id(), source=human.name, target=route.target.name,
                reason=HandoffReason.PROGRAMMATIC,
                explanation="The human operator handed the conversation back.",
                at=runner.executor.now(), turn=state.turn,
            )
            t.add_record(record)
            move(t, None, record, route.target, route)
            status = RunStatus.COMPLETED
            agent = route.target.name
            state.status = SessionStatus.IDLE
        if key is not None:
            remember(state, key, print_, now,
                     [agent, status.value, [r.id for r in t.records]])
        await held.commit(t.lazy_events)
        res = RunResult(session_id, text, agent, status, state.turn, t.records)
        res.bind_events(t.log)
        return res

    return await session_turn(store, session_id, reply, partial(new_session, runner))


def _read_only_context(team: Any, state: SessionState) -> Any:
    """The typed context a route's `enabled` reads when a person hands back (a copy: a
    person's reply runs no code that may change it); None for a team without one."""
    if team.context_type is None:
        return None
    from ...core.typed_context import opened

    return opened(team.context_type, state.context, None)
