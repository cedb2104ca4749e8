"""When a failed model call is tried again, and how long we wait first.

Adapters turn the SDKs' own retries off and use this instead, so that every provider
retries the same failures the same way: exponential backoff with full jitter, the
provider's `Retry-After` honoured, and a `ModelError` with a stable code at the end.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from ..errors import ModelError
from .base import ModelResponse, TextDelta

T = TypeVar("T")


@dataclass(slots=True, frozen=True)
class RetryPolicy:
    """How often and how patiently a failed call is tried again."""

    max_retries: int = 3
    """Retries after the first attempt (0: never retry)."""
    base_delay: float = 0.5
    """Seconds: the backoff ceiling of the first retry; it doubles with each retry."""
    max_delay: float = 30.0
    """Seconds: no backoff wait is longer than this."""
    max_retry_after: float = 60.0
    """Seconds: a provider asking us to wait longer than this fails the call at once,
    rather than holding the user's turn for minutes."""
    retry_read_timeouts: bool = False
    """Whether a call that timed out waiting for its answer is sent again. False
    (default): a read timeout comes after the request was sent, so the model may have run
    it (and billed it); it fails with `timeout` instead. A connect timeout (nothing was
    sent) is always retried."""

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """The wait before retry number `retry` (0-based): the provider's Retry-After when
        it gave one, else a random time up to the exponential ceiling (full jitter)."""
        if retry_after is not None:
            return retry_after
        ceiling = min(self.max_delay, self.base_delay * (2 ** retry))
        return random.uniform(0.0, ceiling)


Classify = Callable[[BaseException], ModelError | None]


async def with_retries(attempt: Callable[[], Awaitable[T]], policy: RetryPolicy,
                       classify: Classify) -> T:
    """Await `attempt()` until it succeeds or fails for good.

    A failure `classify` maps to a retryable `ModelError` is tried again while retries
    remain; the final failure is raised as that `ModelError`. Exceptions `classify` does
    not recognise propagate unchanged.
    """
    retry = 0
    while True:
        try:
            return await attempt()
        except Exception as exc:
            error = classify(exc)
            if error is None:
                raise
            wait = next_wait(error, retry, policy)
            if wait is None:
                raise error from exc
        await asyncio.sleep(wait)
        retry += 1


async def stream_with_retries(
    open_stream: Callable[[], AsyncIterator[TextDelta | ModelResponse]], policy: RetryPolicy,
    classify: Classify,
) -> AsyncIterator[TextDelta | ModelResponse]:
    """Yield from `open_stream()`, opening it again after a retryable failure, but only
    while no text has been yielded: text the caller has shown cannot be taken back, so a
    stream that breaks after its first words fails with its `ModelError`."""
    retry = 0
    while True:
        shown = False
        try:
            async for piece in open_stream():
                if isinstance(piece, TextDelta):
                    shown = True
                yield piece
            return
        except Exception as exc:
            error = classify(exc)
            if error is None:
                raise
            wait = None if shown else next_wait(error, retry, policy)
            if wait is None:
                raise error from exc
        await asyncio.sleep(wait)
        retry += 1


def next_wait(error: ModelError, retry: int, policy: RetryPolicy) -> float | None:
    """Seconds to wait before retrying after `error`, or None to give up now. Records the
    number of attempts in the error's message when it gives up after retrying."""
    after = error.retry_after
    if (not error.retryable or retry >= policy.max_retries
            or (after is not None and after > policy.max_retry_after)):
        if retry:
            error.args = (f"{error} (gave up after {retry + 1} attempts)",)
        return None
    return policy.delay(retry, after)
