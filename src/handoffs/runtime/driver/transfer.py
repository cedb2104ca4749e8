"""Moving a conversation to a new session that another agent holds."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, NoReturn

from ...core.handoff import HandoffReason, HandoffRecord
from ...core.messages import Note
from ...core.session import SessionState
from ...errors import HandoffsError
from ...stores.edits import Held, create_session, session_turn

if TYPE_CHECKING:
    from ..state.host import Host

CONTEXTS = ("summary", "full", "reference")


async def transfer_session(runner: Host, session_id: str, to_agent: str, context: str,
                           new_session_id: str | None) -> SessionState:
    """See `Runner.transfer_session`."""
    if context not in CONTEXTS:
        raise HandoffsError(f"context must be 'summary', 'full' or 'reference', not "
                            f"{context!r}.", code="invalid_argument")
    target = runner.team.get(to_agent)
    if target is None:
        raise HandoffsError(f"There is no agent named {to_agent!r} in this team.",
                            code="unknown_target")
    if not target.enabled:
        raise HandoffsError(f"{to_agent!r} is not available right now.",
                            code="target_disabled")
    store = runner.store

    async def move(held: Held) -> SessionState:
        old = held.state
        if (old.channel is not None and target.channels is not None
                and old.channel not in target.channels):
            raise HandoffsError(f"{to_agent!r} does not serve the {old.channel!r} "
                                "channel.", code="channel_unsupported")
        source = old.active_agent or runner.team.entry
        n = 1 + sum(1 for r in old.handoffs if "transferred_session" in r.extra)
        new_sid = new_session_id or f"{session_id}-t{n}"
        shared = {k: v for k, v in old.shared.items() if k != "handoff_context"}
        new = SessionState(new_sid, active_agent=to_agent, channel=old.channel,
                           shared=json.loads(json.dumps(shared)),
                           context=old.context,
                           metadata={"transferred_from": session_id,
                                     "transfer_context": context})
        if context == "full":
            new.messages.extend(old.messages)
            new.messages.append(Note(f"Transferred from session {session_id!r} "
                                     f"({source}).", to_agent))
        elif context == "summary":
            from ..effects.summary import summarize

            model = runner.model_for(to_agent) or runner.model_for(source)
            summary = await summarize(runner.executor, None, runner.team.summarizer,
                                      model, old.messages, source, to_agent)
            new.messages.append(Note(
                f"Summary of the conversation so far (session {session_id!r}, with "
                f"{source}):\n{summary}", to_agent, to_model=True))
        else:
            new.messages.append(Note(
                f"This conversation continues session {session_id!r} (with {source}); "
                "its transcript is not copied here. Read it with the "
                "fetch_previous_session tool when you need it.", to_agent, to_model=True))
        if not await create_session(store, new):
            raise HandoffsError(f"Session {new_sid!r} already exists; pass another "
                                "new_session_id.", code="session_exists")
        old.handoffs.append(HandoffRecord(
            id=runner.executor.new_id(), source=source, target=to_agent,
            reason=HandoffReason.PROGRAMMATIC,
            explanation=f"Session transferred to {new_sid!r} ({context}).",
            at=runner.executor.now(), turn=old.turn,
            extra={"transferred_session": new_sid, "context": context}))
        old.messages.append(Note(f"Transferred to session {new_sid!r} ({to_agent}).",
                                 source))
        old.metadata["transferred_to"] = new_sid
        await held.commit()
        return new.snapshot()

    return await session_turn(store, session_id, move, _unknown)


def _unknown(session_id: str) -> NoReturn:
    raise HandoffsError(f"There is no session {session_id!r} to transfer.",
                        code="unknown_session")
