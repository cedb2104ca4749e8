"""Logging: every record goes through `logging.getLogger("handoffs...")`.

Nothing is printed unless the application configures logging (a `NullHandler` sits on the
`handoffs` logger, so Python's last-resort handler stays quiet), with one exception: the
first failed turn of a process that configured no logging is written to standard error
through `logging.lastResort` (as the standard library does for a warning nobody handles),
so a script that prints `result.output` never fails silently. Configuring logging, or
`logging.lastResort = None`, turns that off. Records about a session carry `session_id`,
`turn` and `agent` as `extra` fields, so a JSON formatter picks them up.
"""

from __future__ import annotations

import logging
from typing import Any

logging.getLogger("handoffs").addHandler(logging.NullHandler())


_first_failure_shown = False


def show_first_failure(logger: logging.Logger, record: logging.LogRecord) -> None:
    """Write `record` (a failed turn) to standard error through `logging.lastResort`, the
    first time in this process, when no handler would show it: nothing but `NullHandler`s
    from `logger` up to the root. Once told, or when logging is configured, nothing."""
    global _first_failure_shown
    if _first_failure_shown or logging.lastResort is None:
        return
    current: logging.Logger | None = logger
    while current is not None:
        if any(not isinstance(h, logging.NullHandler) for h in current.handlers):
            return  # the application configured logging: it decides what is shown
        current = current.parent if current.propagate else None
    _first_failure_shown = True
    record.msg = (f"handoffs: {record.getMessage()} (result.error; shown once because "
                  "logging is not configured: logging.basicConfig() shows every failure, "
                  "result.raise_for_status() raises it)")
    record.args = None
    record.exc_info = None  # one line: the traceback stays on result.error.exception
    logging.lastResort.handle(record)


def failures_shown_elsewhere() -> None:
    """For a program that shows failed turns itself (the `handoffs` command): no
    `show_first_failure` line on top."""
    global _first_failure_shown
    _first_failure_shown = True


def fields(session_id: str, turn: int | None, agent: str | None) -> dict[str, Any]:
    """The `extra` of a record about one session's turn (`turn` and `agent` None where
    the code that logs does not know them, as a store waiting for a lock)."""
    return {"session_id": session_id, "turn": turn, "agent": agent}
