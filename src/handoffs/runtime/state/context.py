"""A turn's typed session context (`Team(context_type=...)`): the model instance its code
changes, and the dumps that tell what changed since the last look (a `context_changed`
event) and what the session stored (what a failed turn goes back to)."""

from __future__ import annotations

from typing import Any

from ...core import typed_context
from ...core.session import SessionState


class TurnContext:
    """The instance a turn's tools, instructions, guardrails and hooks get as `ctx.context`,
    and the dumps its changes are measured from."""

    __slots__ = ("seen", "stored", "value")

    def __init__(self, context_type: Any, state: SessionState, given: Any) -> None:
        stored = state.context
        self.value: Any = typed_context.opened(context_type, stored, given)
        """The context the turn works on (a copy: the stored dump stays as it was)."""
        self.seen: dict[str, Any] = typed_context.dumped(self.value)
        """Its fields at the last look (`changes`)."""
        if stored is None:  # a new context is stored with the turn's first commit
            stored = state.context = self.seen
        self.stored: dict[str, Any] = stored
        """The fields the session stored when the turn began."""

    def changes(self) -> dict[str, Any]:
        """The fields changed since the last look (empty: none)."""
        now = typed_context.dumped(self.value)
        changed = typed_context.changes(self.seen, now)
        if changed:
            self.seen = now
        return changed

    def reverted(self) -> dict[str, Any]:
        """The stored values of the fields the turn changed (what a failed turn shows
        when its changes are dropped)."""
        return typed_context.changes(self.seen, self.stored)
