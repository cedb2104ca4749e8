"""While a person holds the conversation, the customer's picker says so and asks before
taking it away from them (issue 43, item 4), at each of the three sizes."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from .conftest import start_test_server
from .pages import (
    assert_accessible,
    chat,
    confirm,
    escalate,
    in_view,
    operator,
    seen,
    session_of,
)


def test_the_picker_says_a_person_holds_it_and_asks_before_taking_it_away(
        sized: Any, size: str, server: str, errors: list[str]) -> None:
    user = chat(sized, server, errors)
    sid = escalate(user)
    held = user.locator("#picker .held")
    held.wait_for()
    assert "a person" in held.inner_text() and "Operator (human)" in held.inner_text()
    user.locator("#picker").scroll_into_view_if_needed()
    assert in_view(user, "#picker .held"), seen(user, "#picker .held")
    user.select_option("#agent-select", "billing")
    user.click("#picker button")
    user.wait_for_selector("dialog[open]")
    dialog = user.locator("dialog[open]").inner_text()
    assert "Take the conversation from the person?" in dialog and "Billing" in dialog
    assert_accessible(user, f"the picker asking before taking the conversation ({size})")
    confirm(user, yes=False)
    user.wait_for_timeout(300)
    # Kept with the person: still theirs, still in the operator's queue.
    assert user.locator("#active-agent [data-agent=operator]").count() == 1
    assert sid in [s["id"] for s in operator(server, "GET", "/v1/queue")["sessions"]]
    user.click("#picker button")
    confirm(user, yes=True)
    user.wait_for_selector("#active-agent [data-agent=billing]")
    assert user.locator("#picker .held").inner_text() == ""
    assert sid not in [s["id"] for s in operator(server, "GET", "/v1/queue")["sessions"]]
    assert not errors


@pytest.fixture(scope="module")
def keeping_server() -> Iterator[str]:
    """The test team with `HandoffPolicy(person_keeps_conversation=True)`."""
    served = start_test_server("--store", "memory://",
                               env={"HANDOFFS_WEB_PERSON_KEEPS": "1"})
    yield served.url
    served.stop()


def test_a_team_that_keeps_the_person_disables_the_picker_until_they_hand_back(
        sized: Any, size: str, keeping_server: str, errors: list[str]) -> None:
    user = chat(sized, keeping_server, errors)
    sid = escalate(user)
    held = user.locator("#picker .held")
    held.wait_for()
    user.locator("#picker").scroll_into_view_if_needed()
    assert "hand it back" in held.inner_text(), held.inner_text()
    assert in_view(user, "#picker .held"), seen(user, "#picker .held")
    assert user.locator("#agent-select").is_disabled()
    assert user.locator("#picker button").is_disabled()
    assert_accessible(user, f"the picker while the person keeps the conversation ({size})")
    # The API refuses the pick as well (the page is not the only way in).
    _, token = session_of(user)
    req = urllib.request.Request(
        f"{keeping_server}/v1/sessions/{sid}/agent", method="POST",
        data=json.dumps({"agent": "billing"}).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(req, timeout=10)
    body = json.loads(refused.value.read())
    assert (refused.value.code, body["error"]["code"]) == (409, "held_by_person"), body
    assert sid in [s["id"] for s in operator(keeping_server, "GET", "/v1/queue")["sessions"]]
    # The person hands it back: the picker works again.
    operator(keeping_server, "POST", f"/v1/sessions/{sid}/human",
             {"text": "All sorted.", "handoff_to": "technical"})
    user.wait_for_selector("#agent-select:not([disabled])")
    assert user.locator("#picker .held").inner_text() == ""
    assert not errors
