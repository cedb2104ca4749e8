"""What every store checks at its boundary, in one place so that all stores agree.

A session id is a non-empty `str` of at most `MAX_ID_LENGTH` characters, with no NUL and
no lone surrogate (PostgreSQL text holds neither, and a SQLite key must be valid UTF-8).
Anything else (None, 123, bytes) is refused with `invalid_argument` rather than coerced:
`123` and `"123"` must never name the same session on one store and fail on another.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..errors import HandoffsError

if TYPE_CHECKING:
    from .base import SessionSummary

MAX_ID_LENGTH = 256
"""The longest session id a store accepts, in characters."""

STATUSES = ("idle", "running", "waiting_for_human", "waiting_for_approval", "interrupted")
"""The statuses `list_sessions(status=...)` filters on. `interrupted` is `running` with
no turn holding the session's lock: its turn died mid-way."""


def session_id(value: Any) -> str:
    """`value` if it is a valid session id, else `invalid_argument`."""
    if type(value) is str and 0 < len(value) <= MAX_ID_LENGTH and "\x00" not in value:
        if value.isascii():
            return value
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise _bad_id(value) from exc
        return value
    raise _bad_id(value)


def _bad_id(value: Any) -> HandoffsError:
    if not isinstance(value, str):
        why = f"is a {type(value).__name__}, not a str"
    elif not value:
        why = "is empty"
    elif len(value) > MAX_ID_LENGTH:
        why = f"has {len(value)} characters (at most {MAX_ID_LENGTH})"
    elif "\x00" in value:
        why = "contains a NUL character"
    else:
        why = "contains a lone UTF-16 surrogate (it is not valid Unicode text)"
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    return HandoffsError(
        f"Invalid session id {shown}: it {why}. Use a non-empty string of at most "
        f"{MAX_ID_LENGTH} characters without NUL, e.g. str(user_id).",
        code="invalid_argument",
    )


def listing(limit: Any, offset: Any, status: Any) -> None:
    """Refuse bounds or a status filter that `list_sessions` cannot honour."""
    for name, value in (("limit", limit), ("offset", offset)):
        if type(value) is not int or value < 0:
            raise HandoffsError(f"list_sessions: {name} must be an int >= 0, not {value!r}.",
                                code="invalid_argument")
    if status is not None and status not in STATUSES:
        raise HandoffsError(
            f"list_sessions: unknown status {status!r}; use one of "
            f"{', '.join(STATUSES)} (or None for all).", code="invalid_argument")


async def filtered_page(fetch: Callable[[int, int], Awaitable[list[SessionSummary]]],
                        status: str, limit: int, offset: int, page: int = 100
                        ) -> list[SessionSummary]:
    """`limit` summaries in `status` after skipping `offset` of them, read `page` rows at
    a time through `fetch(page, at)` (most recent first): for statuses a row alone does
    not tell (`running` or `interrupted` depends on the session's lock)."""
    out: list[SessionSummary] = []
    skip = offset
    at = 0
    while len(out) < limit:
        found = await fetch(page, at)
        for summary in found:
            if summary.status != status:
                continue
            if skip:
                skip -= 1
                continue
            out.append(summary)
            if len(out) == limit:
                break
        if len(found) < page:
            break
        at += page
    return out
