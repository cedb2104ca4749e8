"""Who may do what: a session's bearer token opens that session; the operator key opens
every session and the operator routes.

A session's token is a random secret given once, when the session is created; only its
SHA-256 is kept, in the session's metadata (`token_sha256`), so it persists on every
store and an export carries it. Tokens and keys are compared in constant time and never
logged. EventSource and WebSocket clients, which cannot set headers, may pass the token
as `?access_token=`.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Any

from starlette.requests import HTTPConnection

from ..core.session import SessionState
from .errors import ApiError

TOKEN_KEY = "token_sha256"
"""Where a session's token hash lives in `SessionState.metadata`."""


def new_token() -> tuple[str, str]:
    """A new session token and the hash to store."""
    token = secrets.token_urlsafe(32)
    return token, digest(token)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def presented(conn: HTTPConnection) -> str | None:
    """The bearer secret of a request: `Authorization: Bearer X`, else `?access_token=`."""
    header = conn.headers.get("authorization")
    if header:
        scheme, _, value = header.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    return conn.query_params.get("access_token") or None


def is_operator(secret: str | None, operator_key: str | None) -> bool:
    """Whether `secret` is the operator key (always False when none is configured)."""
    if secret is None or operator_key is None:
        return False
    return hmac.compare_digest(secret.encode("utf-8", "surrogatepass"),
                               operator_key.encode("utf-8", "surrogatepass"))


def require_operator(conn: HTTPConnection, operator_key: str | None) -> None:
    secret = presented(conn)
    if operator_key is None:
        raise ApiError("forbidden", "Operator routes are off: start the server with an "
                       "operator key (handoffs serve --operator-key, or "
                       "HANDOFFS_OPERATOR_KEY).")
    if secret is None:
        raise ApiError("unauthorized", "This route needs the operator key as "
                       "'Authorization: Bearer KEY'.")
    if not is_operator(secret, operator_key):
        raise ApiError("forbidden", "The key given is not the operator key.")


def opens(state: SessionState, secret: str) -> bool:
    """Whether `secret` is this session's token."""
    kept: Any = state.metadata.get(TOKEN_KEY)
    if not isinstance(kept, str):
        return False
    return hmac.compare_digest(digest(secret), kept)


def check_session(conn: HTTPConnection, state: SessionState | None, session_id: str,
                  operator_key: str | None) -> SessionState:
    """The session, if the request may open it; else the error to answer with.

    A missing session and a wrong token are told apart only for a caller that showed
    some secret, so a session id alone reveals nothing but `unauthorized`.
    """
    secret = presented(conn)
    if secret is None:
        raise ApiError("unauthorized", "This route needs the session's token (given when "
                       "it was created) or the operator key, as 'Authorization: Bearer X'.")
    operator = is_operator(secret, operator_key)
    if state is None:
        raise ApiError("session_not_found", f"There is no session {session_id!r}.")
    if not operator and not opens(state, secret):
        raise ApiError("forbidden", "This token does not open this session.")
    return state
