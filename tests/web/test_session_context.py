"""The session's typed context on the page (issue 41): the chat page shows the fields
the team made public and updates them as `context_changed` events arrive; the operator
console shows all of them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .conftest import Served
from .pages import assert_accessible, chat, operator_console, say, session_of, turn_done

FIELD = "#session-context dd[data-field={}]"


@pytest.fixture(scope="module")
def booking() -> Iterator[str]:
    served = Served("tests.web.booking_team:make_runner", "--store", "memory://")
    yield served.url
    served.stop()


def test_the_chat_page_shows_the_public_context_and_follows_its_changes(
        context: Any, booking: str, errors: list[str]) -> None:
    page = chat(context, booking, errors)
    page.wait_for_selector("#context-box:not([hidden])")
    assert page.locator(FIELD.format("flight_number")).inner_text() == "FLT-204"
    assert page.locator(FIELD.format("seat_number")).inner_text() == "–"
    say(page, "Please give me seat 14C")
    page.wait_for_selector(FIELD.format("seat_number") + ":text('14C')")
    turn_done(page, 1)
    say(page, "my account ACC-77")
    turn_done(page, 2)
    box = page.locator("#context-box").inner_text()
    assert "ACC-77" not in box and "account" not in box  # the operator's only
    assert_accessible(page, "the chat page with the session's context")
    sid, _ = session_of(page)

    page.reload()  # read back from the stored session
    page.wait_for_selector(FIELD.format("seat_number") + ":text('14C')")

    say(page, "a person, please")
    page.wait_for_selector(".step.waiting")
    console = operator_console(context, booking, errors, sid)
    console.wait_for_selector("#context-box:not([hidden])")
    assert console.locator(FIELD.format("account_number")).inner_text() == "ACC-77"
    assert console.locator(FIELD.format("seat_number")).inner_text() == "14C"
