"""The page's files (server/static) as the server ships them: every event type is
followed, and nothing a strict Content Security Policy refuses is in them."""

from __future__ import annotations

import re
from pathlib import Path

from handoffs.core.events import EVENT_TYPES

STATIC = Path(__file__).resolve().parents[1] / "src" / "handoffs" / "server" / "static"


def test_the_event_stream_listens_to_every_event_type() -> None:
    source = (STATIC / "js" / "connection.js").read_text(encoding="utf-8")
    listed = re.search(r"const EVENT_TYPES = \[(.*?)\];", source, re.S)
    assert listed is not None
    names = set(re.findall(r'"([a-z_]+)"', listed.group(1)))
    assert set(EVENT_TYPES) <= names, set(EVENT_TYPES) - names


def test_no_inline_script_or_style_in_the_pages() -> None:
    for page in STATIC.glob("*.html"):
        html = page.read_text(encoding="utf-8")
        assert not re.search(r"<script(?![^>]*\bsrc=)", html), page.name
        assert not re.search(r"\sstyle=", html), page.name
        assert not re.search(r"\son[a-z]+=", html), page.name
    for js in (STATIC / "js").glob("*.js"):
        source = js.read_text(encoding="utf-8")
        assert "innerHTML" not in source and "insertAdjacentHTML" not in source, js.name
        assert 'setAttribute("style"' not in source and "eval(" not in source, js.name
