"""MkDocs hook: parts of pages generated from the code, so they cannot drift from it.

`<!-- events-table -->` becomes the table of event types and their fields, read from
`handoffs.core.events` (its module docstring's table, checked against `EVENT_TYPES`);
`<!-- rejection-codes -->` becomes the list of every policy rejection code, from
`handoffs.core.policy.REJECTION_CODES`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))


def event_rows() -> list[tuple[str, str]]:
    """(type, fields) for every event type, in `EVENT_TYPES` order."""
    from handoffs.core import events

    rows: dict[str, str] = {}
    last = ""
    for line in (events.__doc__ or "").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.lstrip().startswith("|") or len(cells) != 2:
            last = ""
        elif cells[0] in events.EVENT_TYPES:
            last = cells[0]
            rows[last] = cells[1]
        elif not cells[0] and last:  # a long row goes on in the next, its first cell empty
            rows[last] = f"{rows[last]} {cells[1]}"
    missing = [t for t in events.EVENT_TYPES if t not in rows]
    if missing:
        raise ValueError(f"handoffs.core.events documents no fields for {missing}")
    return [(t, rows[t]) for t in events.EVENT_TYPES]


def events_table() -> str:
    lines = ["| type | fields (besides `type`, `session_id`, `turn`, `at`) |", "| --- | --- |"]
    for kind, fields in event_rows():
        names = ", ".join(_field(f) for f in _split_fields(fields))
        lines.append(f"| `{kind}` | {names} |")
    return "\n".join(lines)


def _field(text: str) -> str:
    name, _, note = text.partition(" ")
    return f"`{name}` {note}".strip()


def _split_fields(fields: str) -> list[str]:
    # "agent, text (a piece of a streamed answer)": keep the parenthesis with its field.
    parts: list[str] = []
    depth = 0
    current = ""
    for ch in fields:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p for p in (p.strip() for p in parts) if p]


def rejection_codes() -> str:
    from handoffs.core.policy import REJECTION_CODES

    return ", ".join(f"`{c}`" for c in REJECTION_CODES)


def on_page_markdown(markdown: str, **_: Any) -> str:
    if "<!-- events-table -->" in markdown:
        markdown = markdown.replace("<!-- events-table -->", events_table())
    if "<!-- rejection-codes -->" in markdown:
        markdown = markdown.replace("<!-- rejection-codes -->", rejection_codes())
    return markdown
