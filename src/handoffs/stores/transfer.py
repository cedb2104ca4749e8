"""Session transfer helpers: the tool a target agent uses to read a referenced session.

`Runner.transfer_session(old_id, agent, context="reference")` starts a new session that
carries only a link to the old one (`metadata["transferred_from"]`). Give the target
agent this tool so its model can read the old conversation when it needs it:

    store = SQLiteStore("sessions.db")
    billing = Agent("billing", tools=[fetch_session_tool(store)])
    runner = Runner(Team([triage, billing]), store=store)

The tool takes no arguments: it reads only the session the current one was transferred
from, so a model cannot use it to open any other conversation.
"""

from __future__ import annotations

from ..core.context import RunContext
from ..core.tools import Tool, tool
from .base import SessionStore

FETCH_TOOL_NAME = "fetch_previous_session"


def fetch_session_tool(store: SessionStore, name: str = FETCH_TOOL_NAME) -> Tool:
    """A tool returning the transcript of the session this one was transferred from."""

    async def fetch_previous_session(ctx: RunContext) -> str:
        """Read the earlier conversation this session was transferred from."""
        from ..runtime.effects.summary import transcript_text

        current = await store.load(ctx.session_id)
        source = current.metadata.get("transferred_from") if current is not None else None
        if not source:
            return "This conversation was not transferred from another session."
        old = await store.load(str(source))
        if old is None:
            return f"The earlier session {source!r} no longer exists."
        text = transcript_text(old.messages)
        return f"Transcript of session {source!r}:\n{text or '(no messages)'}"

    return tool(name=name)(fetch_previous_session)
