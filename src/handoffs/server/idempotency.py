"""The `Idempotency-Key` header: a client's retry of a request that changes a session.

Every route that changes a session reads it; a retry with a key already recorded on the
session changes nothing and answers as the first request did (`core.idempotency`). The
OpenAI-compatible endpoint also knows the official SDKs' own retries, which carry no
key: the `x-stainless-retry-count` header they send with every try.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request

from ..core.idempotency import MAX_KEY_CHARS, IdempotencyKey, fingerprint
from .errors import ApiError

HEADER = "idempotency-key"
RETRY_COUNT = "x-stainless-retry-count"
"""Sent by the official OpenAI (and other Stainless-made) SDKs: 0 on a first try, then
the number of the retry."""


def request_key(request: Request) -> IdempotencyKey | None:
    """The request's `Idempotency-Key` (None without one); a bad one is refused."""
    key = request.headers.get(HEADER)
    if key is None:
        return None
    if not key or len(key) > MAX_KEY_CHARS:
        raise ApiError("invalid_argument", "The Idempotency-Key header is a non-empty "
                       f"string of at most {MAX_KEY_CHARS} characters (a UUID, say).")
    return IdempotencyKey(key)


def sdk_retry_key(request: Request, messages: list[dict[str, Any]]) -> IdempotencyKey:
    """The key of an OpenAI client's request without an `Idempotency-Key`: its messages.
    A first try (no retry count, or 0) records it afresh, so the same messages sent
    again later as a new request are a new turn; a retry finds the first try's turn."""
    text = json.dumps(messages, sort_keys=True, ensure_ascii=False, default=str)
    count = request.headers.get(RETRY_COUNT, "0").strip()
    return IdempotencyKey(fingerprint("openai-messages", text),
                          fresh=not (count.isdigit() and int(count) > 0))
