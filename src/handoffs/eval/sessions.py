"""Cases from stored sessions: each user message, labelled with the agent that answered it.

The labels say what happened, not what should have: the point is a file a person reads
and corrects (a misrouted turn of a real conversation becomes a case that the team must
route right from now on).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..core.handoff import HandoffRecord
from ..core.messages import AssistantMessage, Message, UserMessage
from ..core.session import SessionState
from ..errors import HandoffsError
from .cases import Case, CaseTurn

if TYPE_CHECKING:
    from ..stores.base import SessionStore


def case_from_session(state: SessionState, case_id: str | None = None) -> Case:
    """A case of `state`'s user messages, each labelled with the agent that answered it,
    as `RunResult.agent` says it: the last to write text or to be handed the conversation
    (a human operator too) before the next user message; else the one that received it.
    The path each turn took is kept in the case's `notes`, for the person who edits it.
    """
    messages = state.messages
    starts = [i for i, m in enumerate(messages) if isinstance(m, UserMessage)]
    if not starts:
        raise HandoffsError(f"Session {state.id!r} has no user message to make a case of.",
                            code="invalid_case")
    turns: list[CaseTurn] = []
    paths: list[str] = []
    for number, start in enumerate(starts, 1):
        end = starts[number] if number < len(starts) else len(messages)
        user = messages[start]
        assert isinstance(user, UserMessage)
        moves = moves_of([r for r in state.handoffs if r.turn == number])
        agent = answered_by(messages[start + 1:end], moves) or user.agent
        turns.append(CaseTurn(user=user.text, agents=(agent,)))
        paths.append(" → ".join([user.agent, *(r.target for r in moves)]))
    notes = (f"From session {state.id}: the labels are what happened; correct them. "
             "Paths taken: " + " | ".join(f"turn {i}: {p}" for i, p in enumerate(paths, 1)))
    tags = ("from_session", "multi_turn") if len(turns) > 1 else ("from_session",)
    return Case(case_id or state.id, tuple(turns), tags, notes)


def moves_of(records: Sequence[HandoffRecord]) -> list[HandoffRecord]:
    """The records that moved the conversation: accepted transfers (not delegations, not
    a person's line)."""
    return [r for r in records if r.accepted and not r.returns and "line" not in r.extra]


def answered_by(span: Sequence[Message], moves: Sequence[HandoffRecord]) -> str | None:
    """Who answered in this stretch of the transcript, as the turn's `RunResult.agent`
    said: the last agent to write text or to be handed the conversation (a person too),
    in transcript order (`moves`: `moves_of` the turn's records). Also `runtime.replay`'s
    rule for a stored turn's answering agent."""
    by_call = {r.call_id: r for r in moves if r.call_id is not None}
    label: str | None = None
    for m in span:
        if not isinstance(m, AssistantMessage):
            continue
        if m.text.strip():
            label = m.agent
        for c in m.tool_calls:
            record = by_call.get(c.id)
            if record is not None:
                label = record.target
    if label is None and moves:  # moves no call asked for (error recovery, a user's pick)
        label = moves[-1].target
    return label


async def cases_from_store(store: SessionStore | str, session_ids: Sequence[str]) -> list[Case]:
    """`case_from_session` for each stored session named (a `SessionStore` or its URL)."""
    from ..stores.opening import open_store

    owned = isinstance(store, str)
    opened = open_store(store)
    try:
        cases = []
        for sid in session_ids:
            state = await opened.load(sid)
            if state is None:
                raise HandoffsError(f"No session {sid!r} in the store.",
                                    code="unknown_session")
            cases.append(case_from_session(state))
        return cases
    finally:
        if owned:
            await opened.close()
