"""Who calls the served team over A2A: the bearer secret of a JSON-RPC request, read once,
when the a2a-sdk builds the call's context, into a `Caller` that says which conversations'
tasks it owns (a session's token owns that session's; the operator key every one).

The a2a-sdk carries a call's context everywhere (its request handler, its task store, the
executor) and writes it in debug lines; so the `Authorization` header is taken out of the
headers it keeps, and the secret lives only in the `Caller`, whose text form leaves it
out.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass, field

from a2a.server.context import ServerCallContext
from a2a.server.routes.common import DefaultServerCallContextBuilder
from starlette.requests import Request

from . import auth
from .contexts import bearer

CALLER = "handoffs_caller"
"""Where a call's `Caller` is kept in the a2a-sdk's `ServerCallContext.state`."""


@dataclass(slots=True, frozen=True)
class Caller:
    """The credential a call presented, and what it opens."""

    operator: bool = False
    """Whether it is the operator key: it owns every conversation's tasks."""
    secret: str | None = field(default=None, repr=False)
    """The bearer secret (a session's token, if it opens one); None: the call showed
    none."""
    digest: str | None = field(default=None, repr=False)
    """The secret's SHA-256, as a session keeps its token's (`auth.TOKEN_KEY`)."""

    @classmethod
    def of(cls, secret: str | None, operator_key: str | None) -> Caller:
        """The caller presenting `secret` to a server whose operator key is
        `operator_key` (None: the server has none)."""
        if secret is None:
            return cls()
        return cls(auth.is_operator(secret, operator_key), secret, auth.digest(secret))

    def owns(self, owner: str | None) -> bool:
        """Whether this caller may touch what belongs to the session whose token hash is
        `owner` (None: a session with no token, or none: the operator's alone)."""
        if self.operator:
            return True
        return owner is not None and self.digest is not None and \
            hmac.compare_digest(owner, self.digest)


def caller_of(context: ServerCallContext | None) -> Caller:
    """The caller of a call (an anonymous one when its context was not built by
    `CallerContexts`)."""
    found = context.state.get(CALLER) if context is not None else None
    return found if isinstance(found, Caller) else Caller()


class CallerContexts(DefaultServerCallContextBuilder):
    """The a2a-sdk's context of a JSON-RPC call, with its `Caller` in place of its
    `Authorization` header."""

    def __init__(self, operator_key: str | None) -> None:
        """`operator_key`: the server's (None: it has none)."""
        self.operator_key = operator_key

    def build(self, request: Request) -> ServerCallContext:
        """The call's context: the SDK's, its `Caller` added, the secret's header gone."""
        context = super().build(request)
        headers = dict(context.state.get("headers") or {})
        secret = bearer(headers.pop("authorization", None))
        context.state["headers"] = headers
        context.state[CALLER] = Caller.of(secret, self.operator_key)
        return context
