"""A model call as `Runner(inspect=True)` recorded it, read back from the session's event
log: its `model_request` event (what the model was sent) and its `model_response` event
(what it answered). What `runtime.rerun` edits and calls again, and what
`runtime.answer_fork` forks at."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import HandoffsError
from ..stores.features import EventLog

if TYPE_CHECKING:
    from ..stores.base import SessionStore

PAGE = 1000
"""Events read per call while looking for a recorded call."""


@dataclass(slots=True, frozen=True)
class RecordedCall:
    """One recorded model call of a session."""

    turn: int
    """The user turn it was made in."""
    call: int
    """Its number in the turn (the `call` field of its events)."""
    line: str
    """Its line of work: empty for the main line, else the delegated task's."""
    seq: int
    """The event number of its `model_request` (the events before it came before the call)."""
    at: float
    """When it was made (the `model_request` event's time)."""
    request: dict[str, Any]
    """The `model_request` event as stored (`agent`, `system`, `messages`, `tools`,
    `tool_choice`, `settings`, `view`, `shared`, `redacted`)."""
    response: dict[str, Any] | None
    """The `model_response` event as stored (`text`, `tool_calls`, `usage`, `model`,
    `latency`, or `error`); None when the call never answered (its turn died)."""

    @property
    def agent(self) -> str:
        """The agent whose model was called."""
        return str(self.request["agent"])

    @property
    def redacted(self) -> bool:
        """True when texts were not captured (each replaced by its length): such a
        request cannot be sent again."""
        return bool(self.request.get("redacted"))


async def recorded_call(store: SessionStore, session_id: str, turn: int, call: int,
                        line: str = "") -> RecordedCall:
    """The model call number `call` of turn `turn` on `line` (the main line: "");
    `call_not_recorded` when the event log holds none (the server did not inspect, or the
    numbers are wrong), `unknown_session` when there is no such session."""
    if not isinstance(store, EventLog) or await store.load(session_id) is None:
        raise HandoffsError(f"There is no session {session_id!r}.", code="unknown_session")
    request: dict[str, Any] | None = None
    last = -1
    while True:
        page = await store.events_after(session_id, last, PAGE)
        for e in page:
            if e.get("turn") != turn or e.get("call") != call:
                continue
            if e["type"] == "model_request" and (e.get("line") or "") == line:
                request = e
            elif (e["type"] == "model_response" and request is not None
                  and e.get("agent") == request.get("agent")):
                return _call(request, e, line)
        if len(page) < PAGE:
            break
        last = page[-1]["seq"]
    if request is None:
        raise HandoffsError(
            f"Session {session_id!r} has no recorded model call {call} in turn {turn}"
            f"{f' on line {line!r}' if line else ''}: model calls are recorded only by a "
            "runner that inspects them (Runner(inspect=True), `handoffs serve --inspect`).",
            code="call_not_recorded")
    return _call(request, None, line)


def _call(request: dict[str, Any], response: dict[str, Any] | None, line: str
          ) -> RecordedCall:
    return RecordedCall(int(request["turn"]), int(request["call"]), line, int(request["seq"]),
                        float(request["at"]), request, response)
