"""Two of our servers talking A2A, seen on the page: the front desk's page (one `handoffs
serve`) hands the customer to a team served with `handoffs serve --a2a` (another
process); the remote agent speaks on the page like any other, and keeps the customer."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from .conftest import OPERATOR_KEY, Served
from .pages import assert_accessible, chat, say, session_of, turn_done


def test_a_handoff_across_two_servers_shows_the_remote_agent_speaking(
        context: Any, errors: list[str]) -> None:
    support = Served("", "--demo", "--store", "memory://", "--a2a")
    desk = Served("tests.web.frontdesk:make_runner", "--store", "memory://",
                  env={"HANDOFFS_REMOTE_URL": support.url})
    try:
        page = chat(context, desk.url, errors)
        say(page, "I was charged twice")
        answer = page.locator(".messages > .msg.agent[data-agent=support]")
        answer.first.wait_for()
        assert "order" in answer.first.inner_text()
        page.wait_for_selector("#active-agent [data-agent=support]")
        turn_done(page, 1)
        assert_accessible(page, "a remote agent's answer")

        say(page, "thanks, that is all")
        turn_done(page, 2)
        assert answer.count() == 2  # the remote agent kept the customer

        # Over there it is one conversation, whose id is the desk's session.
        sid, _ = session_of(page)
        request = urllib.request.Request(
            f"{support.url}/v1/sessions/{sid}/transcript",
            headers={"Authorization": f"Bearer {OPERATOR_KEY}"})
        with urllib.request.urlopen(request, timeout=10) as r:
            seen = json.load(r)
        said = [m["text"] for m in seen["messages"] if m["kind"] == "user"]
        assert said == ["I was charged twice", "thanks, that is all"]
        assert not errors
    finally:
        desk.stop()
        support.stop()
