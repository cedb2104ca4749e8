"""Logging: every record goes through `logging.getLogger("handoffs...")`.

Nothing is printed unless the application configures logging (a `NullHandler` sits on the
`handoffs` logger, so Python's last-resort handler stays quiet). Records about a session
carry `session_id`, `turn` and `agent` as `extra` fields, so a JSON formatter picks them up.
"""

from __future__ import annotations

import logging
from typing import Any

logging.getLogger("handoffs").addHandler(logging.NullHandler())


def fields(session_id: str, turn: int | None, agent: str | None) -> dict[str, Any]:
    """The `extra` of a record about one session's turn (`turn` and `agent` None where
    the code that logs does not know them, as a store waiting for a lock)."""
    return {"session_id": session_id, "turn": turn, "agent": agent}
