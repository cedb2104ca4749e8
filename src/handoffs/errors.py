"""The exception hierarchy: every error this library raises is a `HandoffsError`.

A model's bad output is never an exception here: it becomes feedback to the model.
Exceptions are for the programmer: a team that cannot work, an API misused, a run
that failed when the caller asked to be told (`RunResult.raise_for_status`).
"""

from __future__ import annotations


class HandoffsError(Exception):
    """Base of all errors raised by `handoffs`.

    `code` is a stable, machine-readable string (for example `unknown_target` or
    `max_steps`); the message says what went wrong and what to do about it.
    """

    code: str

    def __init__(self, message: str, code: str = "error") -> None:
        super().__init__(message)
        self.code = code


def install_hint(extra: str) -> str:
    """How to install one of handoffs' optional extras, for a `missing_dependency` message:
    the extra's name and the command for either place handoffs may come from (a package
    index, or a checkout of its repository)."""
    return (f"the {extra!r} extra: pip install 'handoffs[{extra}]' (in a checkout of "
            f"handoffs: pip install -e '.[{extra}]')")


def missing_extra(what: str, extra: str) -> HandoffsError:
    """The error for a feature whose optional dependency is not installed: `what` needs
    `extra` (code `missing_dependency`)."""
    return HandoffsError(f"{what}; install {install_hint(extra)}.", code="missing_dependency")


class TeamError(HandoffsError):
    """A team definition that cannot work: raised once, when the `Team` is built."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="invalid_team")


class RunFailed(HandoffsError):
    """Raised by `RunResult.raise_for_status()` for a run whose status is FAILED."""


class ScriptExhausted(HandoffsError):
    """A `ScriptedModel` was asked for more responses than its script holds."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="script_exhausted")


class ModelError(HandoffsError):
    """A model call failed. `code` is one of `rate_limited`, `auth_error`,
    `context_length_exceeded`, `timeout`, `model_error`."""

    def __init__(
        self,
        message: str,
        code: str = "model_error",
        *,
        retryable: bool = False,
        retry_after: float | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(message, code=code)
        self.retryable = retryable
        """True when the same request may succeed later (rate limits, 5xx, timeouts)."""
        self.retry_after = retry_after
        """Seconds the provider asked us to wait (its Retry-After), when it said."""
        self.status = status
        """The HTTP status, when there was one."""


class StoreError(HandoffsError):
    """A session store cannot do what was asked; nothing stored changed.

    `code` is one of `store_unavailable` (the database cannot be reached or opened, or
    does not answer in time), `store_corrupt` (the file or data is not what a store
    wrote), `store_read_only` (the database refuses writes), `store_full` (no space left
    for a write), `store_write_failed` (the disk refused a write: an I/O error, a file
    size limit), `store_busy` (another writer held the database too long),
    `session_lock_lost` (the connection holding the session's lock was lost: the turn
    stopped) or `store_error` (anything else the database reported).
    """
