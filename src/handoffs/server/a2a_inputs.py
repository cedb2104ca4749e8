"""What an A2A message to the served team says, read from all of its parts.

- Text parts are the user's message.
- A data part with `history` and/or `handoff` (what a `RemoteAgent` of another team sends
  when it starts a task: the conversation before the message, and the handoff that
  brought it here) is context, not a message: its history is added to the session's
  transcript before the turn (`seed`), as one note the model reads, so the receiving
  agent knows what was said before ("my name is Ada").
- Any other data part is part of the message: its JSON follows the text, so a message
  with only data still says something.
- A reply to a call waiting for approval decides it: a data part `{"approved": true}` (or
  `false`, with a `reason`), or the text `approve` / `reject`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.messages import Note
from ..core.session import SessionState
from .service import Service

YES = frozenset(("approve", "approved", "yes", "ok"))
NO = frozenset(("reject", "rejected", "no", "deny", "denied"))
"""The words (alone, any case) that answer a call waiting for approval."""


@dataclass(slots=True, frozen=True)
class Said:
    """One A2A message, read."""

    text: str
    """Its text parts, joined by newlines."""
    data: tuple[Any, ...] = ()
    """Its data parts that are part of the message."""
    history: tuple[Mapping[str, Any], ...] = ()
    """The earlier conversation a caller sent (`{role, agent, text}` each)."""
    handoff: Mapping[str, Any] = field(default_factory=dict)
    """The handoff that brought the conversation here, as the caller sent it."""

    @property
    def message(self) -> str:
        """What the turn runs on: the text, then each data part as JSON."""
        parts = [self.text] if self.text else []
        parts += [json.dumps(d, ensure_ascii=False, sort_keys=True) for d in self.data]
        return "\n".join(parts)

    def decision(self) -> tuple[bool, str] | None:
        """(approved, reason) if the message answers a waiting call, else None."""
        for d in self.data:
            if isinstance(d, Mapping) and isinstance(d.get("approved"), bool):
                return d["approved"], str(d.get("reason") or "")
        word = self.text.strip().strip(".!").lower()
        if word in YES:
            return True, ""
        if word in NO:
            return False, "The user rejected it."
        return None


def read(message: Any) -> Said:
    """The parts of an a2a-sdk `Message`, read (see the module's doc)."""
    from a2a.helpers.proto_helpers import get_data_parts, get_message_text

    data: list[Any] = []
    history: list[Mapping[str, Any]] = []
    handoff: Mapping[str, Any] = {}
    for d in get_data_parts(message.parts):
        if isinstance(d, Mapping) and ("history" in d or "handoff" in d):
            history += [h for h in d.get("history") or () if isinstance(h, Mapping)]
            if isinstance(d.get("handoff"), Mapping):
                handoff = d["handoff"]
        else:
            data.append(d)
    return Said(get_message_text(message), tuple(data), tuple(history), handoff)


def context_note(said: Said) -> str:
    """The note that carries a caller's context into the transcript ("" if none)."""
    lines = [f"{h.get('agent') or h.get('role') or 'someone'}: {h.get('text', '')}"
             for h in said.history if h.get("text")]
    handoff = said.handoff
    head = []
    if handoff:
        source = handoff.get("source") or "another agent"
        head.append(f"This conversation comes from {source} of another team"
                    + (f" ({handoff['reason']})" if handoff.get("reason") else "") + ".")
        for key in ("explanation", "note"):
            if handoff.get(key):
                head.append(str(handoff[key]))
        if handoff.get("payload"):
            head.append("Handoff data: " + json.dumps(handoff["payload"], ensure_ascii=False))
    if lines:
        head.append("Earlier in this conversation:")
    return "\n".join(head + lines)


async def seed(svc: Service, session_id: str, said: Said) -> None:
    """Add a caller's context to the session's transcript, before its turn (under the
    session's lock: no turn of it runs meanwhile)."""
    text = context_note(said)
    if not text:
        return

    def add(state: SessionState) -> bool:
        state.messages.append(Note(text, state.active_agent or svc.team.entry,
                                   to_model=True))
        return True

    await svc.edit(session_id, add)
