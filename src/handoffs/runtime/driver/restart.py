"""The turn after one that died (`decisions.recovery`): made with its events numbered
past the dead turn's, `run_interrupted` first, and a response that was continuing after
a person's decision settled into the transcript, before anything of it is shown."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...core.session import SessionState
from ..decisions.recovery import settled
from ..state import TURN_EVENTS, Turn
from .tools import told

if TYPE_CHECKING:
    from ..state.host import Host


def restart(runner: Host, state: SessionState, context: Any, name: str,
            interrupted: int) -> Turn:
    """The turn after one that died (turn number `interrupted`): its events numbered
    past the dead turn's, `run_interrupted` first, a continuing response settled. The
    turn has no reader yet: nothing is shown before its first commit (`Turn.attach`)."""
    state.event_seq += TURN_EVENTS
    t = Turn(runner, state, context, None)
    t.emit("run_interrupted", {"agent": name, "interrupted_turn": interrupted})
    pending = state.pending
    if pending is not None:  # continuing when its turn died: nothing of it runs again
        done = settled(pending)
        state.pending = None
        for r, client in done.answered:
            told(t, r, client)
        state.messages.append(done.message)
        state.messages.extend(done.results)
        state.active_agent = done.agent
    return t
