"""One user turn from start to end: DESIGN.md's steps 1, 2 and 4 around the loop.

Lock the session, load it, make the user's message durable, run the main line, and
persist what the turn did, whatever happened in between.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core.events import Event
from ..core.history import last_user_index
from ..core.messages import Note, UserMessage
from ..core.session import SessionState, ViewSpec
from ..errors import HandoffsError
from .loop import drive
from .result import RunResult, RunStatus
from .state import Fail, Turn, failed, finish

if TYPE_CHECKING:
    from .runner import Runner


async def run_turn(runner: Runner, session_id: str, text: str, channel: str | None,
                   context: Any, sink: Callable[[Event], None] | None) -> RunResult:
    """Run one user turn on the session under its lock, persisted at both ends."""
    if not isinstance(text, str):
        raise HandoffsError(f"The user's message must be a string, not {type(text)}.",
                            code="invalid_argument")
    store = runner.store
    team = runner.team
    async with store.lock(session_id):
        state = await load(runner, session_id)
        if channel is not None:
            state.channel = channel
        name = state.active_agent
        if name is None or name not in team:
            name = state.active_agent = team.entry
            state.view = ViewSpec()
        pending = pending_message(state)
        if pending is not None and pending.text == text:
            # The same message again after an interrupted turn: answer it, once.
            since = state.checkpoint()
            t = Turn(runner, state, context, sink)
            state.messages.append(Note("The previous turn was interrupted; resumed.", name))
        else:
            if pending is not None:
                await _answer_pending(runner, state, context)
            state.turn += 1
            since = state.checkpoint()
            t = Turn(runner, state, context, sink)
            t.user_index = len(state.messages)
            state.messages.append(UserMessage(text, name))
            state.status = "running"
            # Durable before any model call: a crash from here on loses no input.
            await store.commit(state, since)
            since = state.checkpoint()
        t.emit("run_started", {"agent": name, "text": text})
        try:
            res = await drive(t, name, text)
        except Exception as exc:  # a bug or a tool with on_error="raise"
            code = getattr(exc, "code", "internal_error")
            res = failed(t, Fail(code, f"{type(exc).__name__}: {exc}",
                                 state.active_agent or name))
        state.status = ("waiting_for_human" if res.status is RunStatus.WAITING_FOR_HUMAN
                        else "idle")
        finish(t, res)
        await store.commit(state, since, t.lazy_events)
        return res


async def _answer_pending(runner: Runner, state: SessionState, context: Any) -> None:
    """Finish a turn a crash interrupted, before taking the next message."""
    pending = pending_message(state)
    assert pending is not None
    since = state.checkpoint()
    t = Turn(runner, state, context, None)
    name = state.active_agent or runner.team.entry
    state.messages.append(Note("The previous turn was interrupted; resumed.", name))
    t.emit("run_started", {"agent": name, "text": pending.text})
    try:
        res = await drive(t, name, pending.text, check_input=False)
    except Exception as exc:
        res = failed(t, Fail(getattr(exc, "code", "internal_error"), str(exc), name))
    state.status = ("waiting_for_human" if res.status is RunStatus.WAITING_FOR_HUMAN
                    else "idle")
    finish(t, res)
    await runner.store.commit(state, since, t.lazy_events)


async def load(runner: Runner, session_id: str) -> SessionState:
    """The stored session, or a new one held by the team's entry agent."""
    state = await runner.store.load(session_id)
    if state is None:
        state = SessionState(session_id, active_agent=runner.team.entry)
    return state


def pending_message(state: SessionState) -> UserMessage | None:
    """The user message of an interrupted turn, if the last turn never finished."""
    if state.status not in ("running", "interrupted") or not state.messages:
        return None
    i = last_user_index(state.messages)
    if i >= len(state.messages):
        return None
    m = state.messages[i]
    return m if isinstance(m, UserMessage) else None
