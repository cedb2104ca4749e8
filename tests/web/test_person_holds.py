"""While a person holds the conversation, the customer's picker says so and asks before
taking it away from them (issue 43, item 4), at each of the three sizes."""

from __future__ import annotations

from typing import Any

from .pages import assert_accessible, chat, confirm, escalate, in_view, operator, seen


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
