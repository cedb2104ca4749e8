"""Idempotency keys: a client's retry of a request recognised, so it is done only once.

A request that changes a session (a user message, a person's decision, a pick) may carry
a key chosen by its client. The key is recorded in the session's header
(`SessionState.metadata["idempotency"]`) by the same commit that stores the request's
first change (the user's message), so on every store a key and what it stands for are
stored together or not at all, and no store needs a table of its own. A second request
with a key already recorded is a retry: it changes nothing and gets the first one's
outcome (read back from the stored events of the turn the key names).

Keys live `KEY_TTL` seconds (24 hours) and at most `MAX_KEYS` of them per session (the
newest kept), so the header stays small: recording one is a bounded copy, and a request
without a key costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import HandoffsError
from .session import SessionState

KEY_TTL = 24 * 3600.0
"""Seconds a key is remembered: a retry later than this is a new request."""
MAX_KEYS = 100
"""Keys a session remembers at most; older ones are forgotten first."""
MAX_KEY_CHARS = 255
"""The longest key accepted (`invalid_argument` beyond)."""
FIELD = "idempotency"
"""Where the keys are kept: `SessionState.metadata[FIELD]`, key -> [turn, first event
number, fingerprint, time, and the outcome of an operation that has no terminal event]."""


@dataclass(slots=True, frozen=True)
class IdempotencyKey:
    """A client's key for one request (what `runner.run(idempotency_key=...)` takes; a
    plain string is the same as `IdempotencyKey(key)`).

    `fresh=True` records the key without looking it up: the request is new even if the
    key was seen (a server deriving keys from request contents, whose client says the
    request is not a retry, such as an OpenAI client's first try)."""

    key: str
    """Chosen by the client, unique per request it means once (a UUID is typical)."""
    fresh: bool = False
    """Record only: never answer this request from an earlier one with the same key."""


@dataclass(slots=True, frozen=True)
class Seen:
    """A key already recorded on the session: the request it stood for."""

    turn: int
    """The session turn the request started (or, for an operation outside a turn, the
    turn the session was at)."""
    seq: int
    """The session's next event number when the request was stored: its events are at
    or after it."""
    fingerprint: str
    outcome: Any = None
    """What an operation without events of its own left to give a retry (a pick's
    record id, an operator reply's agent and status); None for a turn."""


def as_key(key: str | IdempotencyKey | None) -> IdempotencyKey | None:
    """A caller's key, checked: a non-empty string of at most `MAX_KEY_CHARS`."""
    if key is None:
        return None
    k = key if isinstance(key, IdempotencyKey) else IdempotencyKey(key)
    if not isinstance(k.key, str) or not k.key or len(k.key) > MAX_KEY_CHARS:
        raise HandoffsError(
            f"An idempotency key is a non-empty string of at most {MAX_KEY_CHARS} "
            "characters (a UUID, say).", code="invalid_argument")
    return k


def fingerprint(operation: str, *parts: str) -> str:
    """What a request asked, in short: a retry must ask the same."""
    import hashlib  # here: only a keyed request needs it, and the runtime's import not

    h = hashlib.sha256(operation.encode())
    for p in parts:
        h.update(b"\0")
        h.update(p.encode("utf-8", "surrogatepass"))
    return f"{operation}:{h.hexdigest()[:24]}"


def seen(state: SessionState, key: IdempotencyKey, print_: str, now: float) -> Seen | None:
    """The request `key` was recorded for, if it was and is still remembered; a key
    recorded for a different request is refused (`idempotency_key_reused`)."""
    if key.fresh:
        return None
    keys: dict[str, Any] | None = state.metadata.get(FIELD)
    entry = keys.get(key.key) if keys else None
    if entry is None or now - entry[3] > KEY_TTL:
        return None
    if entry[2] != print_:
        raise HandoffsError(
            f"The idempotency key {key.key!r} was used for a different request on this "
            "session; use a new key for a new request (the same key only for a retry of "
            "the same request).", code="idempotency_key_reused")
    return Seen(entry[0], entry[1], entry[2], entry[4] if len(entry) > 4 else None)


def remember(state: SessionState, key: IdempotencyKey, print_: str, now: float,
             outcome: Any = None) -> None:
    """Record `key` for the request the session is starting now (its turn and next event
    number, and a JSON `outcome` when the request has no terminal event to read back);
    commit it with the request's first change. Expired and surplus keys go."""
    old: dict[str, Any] | None = state.metadata.get(FIELD)
    keys: dict[str, Any] = {}
    if old:
        # A new dict, never the stored one changed in place: a store may keep the header
        # it was given until the next commit (the memory store undoes from it).
        items = [(k, v) for k, v in old.items()
                 if k != key.key and now - v[3] <= KEY_TTL]
        keys = dict(items[-(MAX_KEYS - 1):])
    keys[key.key] = [state.turn, state.event_seq, print_, now] + (
        [] if outcome is None else [outcome])
    state.metadata[FIELD] = keys
