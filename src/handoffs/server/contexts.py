"""A conversation named by a protocol's client (an A2A context, an AG-UI thread) is a
session: one that exists opens with its token (or the operator key); a new one is made
with that id, and its token is given back once, in the protocol's own way."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.session import SessionState
from ..stores.checks import session_id as check_id
from ..stores.edits import create_session
from . import auth
from .service import Service


@dataclass(slots=True, frozen=True)
class Opened:
    """What opening a client's conversation came to."""

    token: str | None = None
    """The token of a session made now (give it to the client, once); None otherwise."""
    refused: str | None = None
    """Why the conversation does not open (`unauthorized`, `forbidden`,
    `invalid_argument`); None: it opens."""
    message: str = ""
    """The sentence saying so."""


def bearer(header: str | None) -> str | None:
    """The secret of an `Authorization: Bearer ...` header."""
    scheme, _, value = (header or "").partition(" ")
    return (value.strip() or None) if scheme.lower() == "bearer" else None


async def open_context(svc: Service, sid: str, secret: str | None) -> Opened:
    """Open the session `sid` for a client presenting `secret`, making it when new."""
    try:
        check_id(sid)
    except Exception as exc:
        return Opened(refused="invalid_argument", message=str(exc))
    store = svc.store
    state = await store.load(sid)
    if state is not None:
        if auth.is_operator(secret, svc.settings.operator_key) or (
                secret is not None and auth.opens(state, secret)):
            return Opened()
        if secret is None:
            return Opened(refused="unauthorized", message=(
                f"Conversation {sid!r} is a session that needs its token "
                "(Authorization: Bearer ...), given when it was started."))
        return Opened(refused="forbidden", message="This token does not open this session.")
    token, digest = auth.new_token()
    state = SessionState(sid, active_agent=svc.team.entry, metadata={auth.TOKEN_KEY: digest})
    if not await create_session(store, state):  # made meanwhile: someone else's
        return Opened(refused="forbidden", message=f"Session {sid!r} was just started "
                      "by another client.")
    return Opened(token=token)
