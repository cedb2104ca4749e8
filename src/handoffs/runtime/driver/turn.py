"""One user turn from start to end: DESIGN.md's steps 1, 2 and 4 around the loop.

Hold the session (lock it and load it: `stores.edits.session_turn`), make the user's
message durable before any model call, run the main line, and persist what the turn
did, whatever happened in between: two commits of one hold, its lock kept across the
model calls. The turn's terminal event reaches its reader only once the turn is stored.

A turn that died (a crash, a cancel from outside, a lost lock, a failed last commit)
leaves its user message stored and the session `interrupted`. That message is answered
once, never twice and never lost (and the next turn numbers its events past the dead
one's, `recovery`):
- the same text sent again (a client's retry) resumes it;
- a new message is stored first, and the agent answers both in one turn (the
  transcript holds them in order), so a turn never does more than one catch-up;
- `runner.resume(session_id)` answers it without a new message.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from ...core.events import Event
from ...core.history import last_user_index
from ...core.messages import Note, UserMessage
from ...core.session import SessionState, SessionStatus, ViewSpec
from ...errors import HandoffsError
from ...log import fields, show_first_failure
from ...stores.edits import Held, session_turn
from ...telemetry.config import observe
from ..decisions import recovery
from ..state import Fail, Leg, Outcome, Turn, failed, finish
from ..state.result import RunResult, RunStatus
from .loop import drive
from .restart import restart

if TYPE_CHECKING:
    from ...core.idempotency import IdempotencyKey
    from ..state.host import Host


log = logging.getLogger("handoffs.runtime.turn")  # a stable name (docs/observability.md)

RESUMED = "The previous turn was interrupted; resumed."
CAUGHT_UP = ("The previous message was interrupted before it was answered; the next "
             "answer covers it too.")


async def run_turn(runner: Host, session_id: str, text: str, channel: str | None,
                   context: Any, sink: Callable[[Event], None] | None,
                   timeout: float | None = None, feed: Any = None,
                   key: IdempotencyKey | None = None,
                   client: dict[str, Any] | None = None) -> RunResult:
    """Run one user turn on the session under its lock, persisted at both ends; its
    events go to `sink` as they happen, or to `feed` (what `runner.stream` reads).

    `timeout` (else the runner's `turn_timeout`) bounds the turn from this call on.
    `key`: the request's idempotency key; one already recorded on the session makes
    this a retry, answered with the first request's stored outcome and events (a turn
    of it that died is resumed), nothing stored or run again (`core.idempotency`).
    `client`: the client's tools offered this turn (`core.client_tools`)."""
    if not isinstance(text, str) or len(text) > runner.max_message_chars:
        check_text(runner, text)  # (it says what is wrong; a turn's text makes no call)
    limit = timeout if timeout is not None else runner.turn_timeout
    deadline = (None if limit is None
                else (asyncio.get_running_loop().time() + limit, limit / 4))
    t: Turn | None = None
    try:
        async with session_turn(runner.store, session_id,
                                missing=partial(new_session, runner)) as held:
            state = held.state
            if key is not None:  # imported here: a turn without a key never needs them
                from ...core.idempotency import fingerprint, remember, seen
                from . import retried

                print_ = fingerprint("message", text)
                now = runner.executor.now()
                hit = seen(state, key, print_, now)
                if hit is not None and (hit.turn != state.turn
                                        or pending_index(state) is None):
                    result = await retried.outcome(runner, session_id, hit)
                    retried.deliver(result, sink, feed)
                    return result
            if channel is not None:
                state.channel = channel
            if state.pending is not None and not recovery.continuing(state.pending):
                waiting = ", ".join(state.pending.waiting)
                if state.pending.client:
                    raise HandoffsError(
                        f"Session {session_id!r} waits for the client's result of a tool "
                        f"call ({waiting}); send it with runner.submit_tool_result first "
                        "(or reject the call).", code="waiting_for_approval")
                raise HandoffsError(
                    f"Session {session_id!r} waits for a person to approve or reject a "
                    f"tool call ({waiting}); decide with runner.approve / runner.reject "
                    "first.", code="waiting_for_approval")
            name = state.active_agent  # (`_active` only when it must change it)
            if name is None or name not in runner.team:
                name = _active(runner, state)
            died = state.status in recovery.DIED
            pending = pending_index(state) if died else None  # (its message, if any)
            retry = pending is not None and state.messages[pending].text == text
            dead_turn = state.turn
            if not retry:
                state.turn += 1
            if died:  # its events go past the dead turn's; shown once stored
                t = restart(runner, state, context, name, dead_turn)
                name = _active(runner, state)
            else:
                t = Turn(runner, state, context, sink, feed)
            t.client = client
            if retry:  # the same message again after an interrupted turn: answer it, once
                assert pending is not None
                t.user_index = pending
                state.messages.append(Note(RESUMED, name))
            else:
                checked = text
                if pending is not None:
                    checked = f"{state.messages[pending].text}\n\n{text}"
                    state.messages.append(Note(CAUGHT_UP, name))
                t.user_index = len(state.messages)
                state.messages.append(UserMessage(text, name))
            state.status = SessionStatus.RUNNING
            if key is not None:  # stored with the message, or not at all
                remember(state, key, print_, now)
            # Durable before any model call: a crash from here on loses no input.
            if died:
                await _first_commit(t, held, sink, feed)
            else:
                await held.commit()
            return await _answer(t, name, text if retry else checked, held, deadline)
    except HandoffsError as exc:
        if t is not None and t.raw and t.stored < len(t.raw):
            # Stopped unstored (its last commit failed, its lock was lost): the reader
            # gets run_failed with the code instead of the held terminal event.
            state = t.state
            t.failed_live(Fail(exc.code, str(exc), state.active_agent or "",
                               recoverable=False, exception=exc))
        raise


async def resume(runner: Host, session_id: str, context: Any,
                 sink: Callable[[Event], None] | None) -> RunResult | None:
    """Answer the message of an interrupted turn, if there is one (else None)."""
    async def resumed(held: Held) -> RunResult | None:
        return await resume_held(runner, held, context, sink)

    return await session_turn(runner.store, session_id, resumed)


async def resume_held(runner: Host, held: Held, context: Any,
                      sink: Callable[[Event], None] | None) -> RunResult | None:
    """`resume` on a session the caller holds, as loaded (`approval.decide` after a
    continuation that died); None when no turn died."""
    state = held.state
    if state.pending is not None and not recovery.continuing(state.pending):
        return None  # it waits for a decision: nothing died
    pending = pending_index(state)
    if pending is None:
        return None
    name = _active(runner, state)
    t = restart(runner, state, context, name, state.turn)
    name = _active(runner, state)
    t.user_index = pending
    state.messages.append(Note(RESUMED, name))
    state.status = SessionStatus.RUNNING
    await _first_commit(t, held, sink, None)
    limit = runner.turn_timeout
    return await _answer(t, name, state.messages[pending].text, held,
                         None if limit is None
                         else (asyncio.get_running_loop().time() + limit, limit / 4))


async def _first_commit(t: Turn, held: Held, sink: Callable[[Event], None] | None,
                        feed: Any) -> None:
    """Store the start of a turn after one that died (and its events so far), then give
    it its reader (`restart` made it without one)."""
    # A list, not the turn's growing view: a store may keep what it is given.
    await held.commit(t.events[:])
    t.stored = len(t.raw)
    t.attach(sink, feed)


async def _answer(t: Turn, name: str, text: str, held: Held,
                  deadline: tuple[float, float] | None = None,
                  first: Callable[[Leg], Awaitable[Outcome]] | None = None) -> RunResult:
    """Run the main line for the turn's message and persist everything it did (`held`'s
    last commit: its lock is held across the model calls); the terminal event reaches
    the reader only once that is stored.

    `deadline`: the loop time the turn must end by, and the grace its fallback gets.
    `first`: what the agent does first instead of a model call (a turn continued after
    an approval)."""
    state = t.state
    if deadline is not None:
        t.deadline, t.grace = deadline
    observe(t)
    t.emit("run_started", {"agent": name, "text": text})
    info = log.isEnabledFor(logging.INFO)  # asked once a turn
    if info:
        log.info("turn %d of %s started with %s", state.turn, state.id, name,
                 extra=fields(state.id, state.turn, name))
    running = t.runner.running_turns
    running[state.id] = t
    t.owner = asyncio.current_task()
    try:
        res = await drive(t, name, text, first is None, first)
    except asyncio.CancelledError:
        if not t.stopping or t.owner is None:  # a cancel from elsewhere: the turn is
            if t.obs is not None:               # interrupted, as by a crash
                t.obs.abandon("cancelled")
            raise
        t.owner.uncancel()
        res = failed(t, Fail("cancelled", "The turn was stopped before it finished "
                             "(runner.cancel).", state.active_agent or name))
    except Exception as exc:  # a bug, or a tool / instructions / hook that raised
        res = failed(t, Fail(getattr(exc, "code", "internal_error"),
                             f"{type(exc).__name__}: {exc}", state.active_agent or name,
                             exception=exc))
    finally:
        running.pop(state.id, None)
    state.status = _STATUS.get(res.status, SessionStatus.IDLE)
    err = res.error
    if err is not None:
        log.warning("turn %d of %s failed (%s): %s", state.turn, state.id, err.code,
                    err.message, exc_info=err.exception,
                    extra=fields(state.id, state.turn, res.agent))
        if log.isEnabledFor(logging.WARNING):
            show_first_failure(log, log.makeRecord(
                log.name, logging.WARNING, __file__, 0, "turn %d of %s failed (%s): %s",
                (state.turn, state.id, err.code, err.message), None))
    elif info:
        log.info("turn %d of %s ended %s with %s", state.turn, state.id, res.status.value,
                 res.agent, extra=fields(state.id, state.turn, res.agent))
    finish(t, res)  # after the logs: a traced turn's span is current until its end event
    if t.sink is not None and t.feed is None and t.listener is not None:
        # A caller that relays the events as they come (a server: `run(on_event=)`)
        # gets one pass of the loop before the commit encodes and stores the turn: its
        # last live events go out first, not after this and every other turn's commit
        # work that the same pass holds. (Telemetry alone relays nothing: `listener`;
        # `t.sink` is tested first so an untraced `run` turn makes no property call.)
        await asyncio.sleep(0)
    try:
        await held.commit_last(t.lazy_events)
    except HandoffsError as exc:
        log.warning("turn %d of %s ended %s but could not be stored (%s); the session "
                    "reads 'interrupted' and its next turn answers the message",
                    state.turn, state.id, res.status.value, exc.code, exc_info=exc,
                    extra=fields(state.id, state.turn, res.agent))
        raise
    t.stored = len(t.raw)
    if t.sink is not None:
        t.deliver()
    return res


answer = _answer
"""`_answer` for the other modules of the runtime (approval continues a turn with it)."""

_STATUS = {RunStatus.WAITING_FOR_HUMAN: SessionStatus.WAITING_FOR_HUMAN,
           RunStatus.WAITING_FOR_APPROVAL: SessionStatus.WAITING_FOR_APPROVAL}
"""The session status a turn's result leaves (else `idle`)."""


def check_text(runner: Host, text: Any) -> None:
    """A user's (or operator's) message must be text within the runner's size limit."""
    if not isinstance(text, str):
        raise HandoffsError(f"The message must be a string, not {type(text).__name__}.",
                            code="invalid_argument")
    if len(text) > runner.max_message_chars:
        raise HandoffsError(
            f"The message has {len(text):,} characters; the limit is "
            f"{runner.max_message_chars:,} (Runner(max_message_chars=...)). Send a shorter "
            "message, or pass large documents as a handoff payload or a tool's result.",
            code="message_too_large")


def new_session(runner: Host, session_id: str) -> SessionState:
    """A session not stored yet, held by the team's entry agent."""
    return SessionState(session_id, active_agent=runner.team.entry)


def _active(runner: Host, state: SessionState) -> str:
    """The session's active agent; the entry agent if it has none or it left the team."""
    name = state.active_agent
    if name is None or name not in runner.team:
        name = state.active_agent = runner.team.entry
        state.view = ViewSpec()
    return name


def pending_index(state: SessionState) -> int | None:
    """Where the user message of an interrupted turn is, if the last turn never finished."""
    if state.status not in ("running", "interrupted") or not state.messages:
        return None
    i = last_user_index(state.messages)
    if i >= len(state.messages) or not isinstance(state.messages[i], UserMessage):
        return None
    return i
