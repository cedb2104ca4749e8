"""A fork at a recorded model call, continued with an answer of the developer's choosing:
"fork from here with this answer" of the inspector (`runtime.rerun` makes the answers).

The fork holds the session as it stood when that call was made: everything before its
turn (the turn's mark, `stores.marks`), then the turn's messages, handoff records and
events up to the call, with the agent that was called holding the session and its view
and shared memory as the call's `model_request` event recorded them. The chosen answer
is then that agent's message, and the turn ends there, completed: the next message
starts the next turn, as in any session. The fork is linked like any fork
(`metadata["forked_from"]`, with the call's number; the original's `metadata["forks"]`).

Only a call of the main line can be forked at (a delegate's answer goes to its caller,
not to the customer), and the answer is words: an answer that calls tools would leave
calls no one ran in the transcript.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from ..core.idempotency import fingerprint
from ..core.messages import AssistantMessage
from ..core.session import SessionState
from ..errors import HandoffsError
from ..log import fields
from ..stores.checks import MAX_ID_LENGTH
from ..stores.edits import Held, session_turn
from ..stores.marks import TurnMark
from ..stores.rows import dumps
from .recorded import recorded_call
from .state import Turn
from .state.result import RunResult, RunStatus
from .state.turn import finish
from .timetravel import FORK_KEY, copy_prefix, fork_id, link, marked

if TYPE_CHECKING:
    from ..core.idempotency import IdempotencyKey
    from .state.host import Host

log = logging.getLogger("handoffs.runtime.answer_fork")

VIEW_KEYS = ("mode", "start", "pivot", "record_id")
"""The fields of a `model_request` event's `view` that are the session's view."""


async def fork_with_answer(runner: Host, session_id: str, turn: int, call: int, answer: str,
                           new_id: str | None = None, drop: Collection[str] = (),
                           metadata: Mapping[str, Any] | None = None,
                           key: IdempotencyKey | None = None) -> SessionState:
    """A new session holding `session_id` as it was at model call `call` of turn `turn`,
    continued with `answer` as that call's answer (see the module); `drop`, `metadata`
    and `key` as `timetravel.fork`'s. Returns a snapshot of the fork."""
    if not isinstance(answer, str) or not answer.strip():
        raise HandoffsError("The answer a fork continues with is a text a customer can "
                            "read; it is empty.", code="invalid_argument")
    store = runner.store
    print_, replace = None, False
    if key is not None:
        print_ = fingerprint("fork-answer", session_id, str(turn), str(call), answer,
                             key.key)
        if new_id is None:
            new_id = f"{session_id[:MAX_ID_LENGTH - 19]}-fork-{print_[-12:]}"
        made = await store.load(new_id)
        if made is not None and made.metadata.get(FORK_KEY) == print_:
            return made.snapshot()  # a retry: the fork it made the first time
        # A fork the first request copied but never gave its answer: made again.
        replace = made is not None and made.metadata.get(FORK_KEY) == f"{print_}:copying"
    found = await recorded_call(store, session_id, turn, call)
    data = await store.export_session(session_id)
    if data is None:
        raise HandoffsError(f"There is no session {session_id!r}.", code="unknown_session")
    marks = await marked(store).turn_marks(session_id)
    start = next((m for m in marks if m.turn == turn), None)
    if start is None:
        raise HandoffsError(
            f"Session {session_id!r} has no record of where turn {turn} began (stored by a "
            "handoffs older than time travel, or imported); fork at a later turn.",
            code="turn_not_recorded")
    view = found.request.get("view") or {}
    records = data.get("handoffs", ())
    kept = start.records
    while kept < len(records) and float(records[kept].get("at", 0)) <= found.at:
        kept += 1
    header = start.header_dict() or {"id": session_id, "created_at": data.get("created_at"),
                                     "metadata": data.get("metadata", {})}
    header.pop("pending", None)
    header.update(turn=turn, active_agent=found.agent, status="idle", updated_at=time.time(),
                  view={k: view[k] for k in VIEW_KEYS if k in view})
    if not found.redacted and isinstance(found.request.get("shared"), dict):
        header["shared"] = found.request["shared"]
    at = time.time()
    target = new_id if new_id is not None else fork_id(session_id)
    mark = TurnMark(turn + 1, int(view.get("transcript", start.messages)), kept, found.seq,
                    dumps(header))
    origin = {"session": session_id, "turn": turn, "call": call, "at": at}
    links = {"forked_from": origin, **(metadata or {})}
    if print_ is not None:
        links[FORK_KEY] = f"{print_}:copying"
    await copy_prefix(store, data, mark, [m for m in marks if m.turn <= turn], target,
                      links, replace=replace, drop=drop)

    async def answered(held: Held) -> SessionState:
        state = held.state
        t = Turn(runner, state, None, None)
        state.messages.append(AssistantMessage(answer, found.agent))
        t.emit("message", {"agent": found.agent, "text": answer})
        finish(t, RunResult(target, answer, found.agent, RunStatus.COMPLETED, state.turn))
        if print_ is not None:  # whole now: a retry may return it
            state.metadata[FORK_KEY] = print_
        await held.commit(t.lazy_events)
        return state.snapshot()

    fork = await session_turn(store, target, answered)
    assert fork is not None  # copied just above
    await link(store, session_id, "forks", {"session": target, "turn": turn, "call": call,
                                            "at": at})
    log.info("session %s forked at call %d of turn %d as %s, with another answer",
             session_id, call, turn, target, extra=fields(session_id, turn, found.agent))
    return fork
