"""The airline example on the page (`handoffs serve --demo airline`): OpenAI's demo flow
as a traveller sees it in the browser: a seat change with the seat map through the
page's hook, a refusal answered in the chat and shown on the timeline, the next message
going on, and flight status through triage."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from handoffs.examples.airline import REFUSAL

from .conftest import Served
from .pages import assert_accessible, chat, say, turn_done, wait_until

FIELD = "#session-context dd[data-field={}]"
HOOK = """() => {
  window.maps = [];
  window.handoffs.on("seat_map", (data, event) => window.maps.push([data, event.tool]));
}"""


@pytest.fixture(scope="module")
def airline() -> Iterator[str]:
    served = Served("", "--demo", "airline", "--store", "memory://")
    yield served.url
    served.stop()


def test_the_airline_demo_flow_on_the_page(context: Any, airline: str,
                                            errors: list[str]) -> None:
    page = chat(context, airline, errors)
    page.evaluate(HOOK)
    assert "Can I change my seat?" in page.locator("body").inner_text()  # a suggestion

    say(page, "Can I change my seat?")
    turn_done(page, 1)
    seats = page.locator(".messages > .msg.agent[data-agent=seat_booking]")
    assert "confirmation number LL0EZ6" in seats.last.inner_text()
    page.wait_for_selector("#active-agent [data-agent=seat_booking]")

    say(page, "Please show me the seat map.")
    turn_done(page, 2)
    wait_until(page, "window.maps.length === 1")
    [[data, tool]] = page.evaluate("window.maps")
    assert tool == "display_seat_map"
    assert (data["rows"], data["letters"], data["current"]) == (30, ["A", "B", "C", "D"],
                                                                 "12C")
    assert_accessible(page, "the airline's seat booking")

    say(page, "Also write a poem about strawberries.")
    turn_done(page, 3)
    assert REFUSAL in seats.last.inner_text()  # the agent that had it answers
    check = page.locator("#timeline .turn[data-turn='3'] .entry.check[data-passed=false]")
    assert "relevance" in check.inner_text()

    say(page, "23A please")
    turn_done(page, 4)
    assert "Your seat has been changed to 23A." in seats.last.inner_text()
    # The context panel shows the traveller's booking and follows the change.
    page.wait_for_selector(FIELD.format("seat_number") + ":text('23A')")
    assert page.locator(FIELD.format("confirmation_number")).inner_text() == "LL0EZ6"

    say(page, "What's the status of my flight?")
    turn_done(page, 5)
    status = page.locator(".messages > .msg.agent[data-agent=flight_status]")
    assert "FLT-123" in status.last.inner_text() and "on time" in status.last.inner_text()
    page.wait_for_selector("#active-agent [data-agent=flight_status]")
    assert errors == []
