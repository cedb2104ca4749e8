"""The operator console follows the conversation, and its queue says who has waited how
long and why (issue 43, item 1; forks never in the queue: item 6), at each of the three
sizes: what the operator sees, not only what the page holds."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from .conftest import start_test_server
from .pages import (
    assert_accessible,
    chat,
    escalate,
    in_view,
    operator,
    operator_console,
    pick,
    say,
    seen,
    session_of,
    turn_done,
    wait_until,
)

LONG = ("My dock drops the monitor every few minutes, and then the keyboard on the same "
        "dock stops too; unplugging it brings both back for a while. I tried another cable, "
        "another port and the firmware update from last week, and nothing changed at all.")


def escalated_four_turns(context: Any, server: str, errors: list[str]) -> tuple[Any, str]:
    """A customer's session with the operator after four turns (the escalation, then three
    long messages while they wait); the customer's page and the session's id."""
    user = chat(context, server, errors)
    sid = escalate(user)
    for n in (2, 3, 4):
        say(user, f"({n}) {LONG}")
        turn_done(user, n)
    return user, sid


def scroll_up(console: Any) -> None:
    """What an operator does to read back: the pane (or, on a phone, the page) to its top."""
    console.evaluate("""() => { document.querySelector('#messages').scrollTop = 0;
                                window.scrollTo(0, 0); }""")
    console.wait_for_timeout(150)


def test_the_console_opens_at_the_newest_message_and_marks_a_new_one_out_of_view(
        context: Any, sized: Any, size: str, server: str, errors: list[str]) -> None:
    user, sid = escalated_four_turns(context, server, errors)
    console = operator_console(sized, server, errors, sid)
    console.wait_for_selector("#messages .msg.user >> nth=3")
    console.wait_for_timeout(400)  # the approvals and the answer box are in: nothing moves
    newest = "#messages > .msg.user"
    assert in_view(console, newest, -1), seen(console, newest, -1)
    assert not in_view(console, "#new-below")
    assert_accessible(console, f"the console opened at the newest message ({size})")

    scroll_up(console)
    assert not in_view(console, newest, -1)
    say(user, "Hello, are you there?")
    console.locator("#messages .msg.user", has_text="Hello, are you there?").wait_for()
    # Out of view, and the operator is told: the marker is on their screen.
    assert not in_view(console, newest, -1)
    marker = "#new-below"
    console.wait_for_selector(marker, state="visible")
    assert in_view(console, marker), seen(console, marker)
    assert console.locator(marker).inner_text() == "New message ↓"
    assert_accessible(console, f"the console with a new message out of view ({size})")
    console.click(marker)
    wait_until(console, "document.querySelector('#new-below').hidden")
    assert in_view(console, newest, -1), seen(console, newest, -1)
    assert "Hello, are you there?" in console.locator(newest).last.inner_text()
    assert not errors


@pytest.fixture
def own_server() -> Iterator[str]:
    """A server of this test's own: its queue holds this test's sessions only."""
    served = start_test_server("--store", "memory://")
    yield served.url
    served.stop()


def test_the_queue_is_oldest_first_with_how_long_and_why_and_no_forks(
        context: Any, new_context: Any, sized: Any, size: str, own_server: str,
        errors: list[str]) -> None:
    server = own_server
    first = chat(context, server, errors)
    escalated = escalate(first)
    say(first, "Hello, are you there?")
    turn_done(first, 2)
    # A fork before that second turn waits for a person too; it is the operator's copy.
    fork = operator(server, "POST", f"/v1/sessions/{escalated}/fork", {"turn": 2})
    assert fork["status"] == "waiting_for_human"
    second = chat(new_context(), server, errors)
    pick(second, "cashier")
    second.wait_for_selector("#active-agent [data-agent=cashier]")
    say(second, "A voucher for the late delivery, please.")
    turn_done(second, 1)
    approval = session_of(second)[0]

    console = operator_console(sized, server, errors)
    rows = console.locator("#queue > li")
    wait_until(console, "document.querySelectorAll('#queue > li').length === 2")
    assert [rows.nth(i).get_attribute("data-session") for i in range(2)] == \
        [escalated, approval]  # oldest first
    assert console.locator(f"#queue li[data-session='{fork['id']}']").count() == 0
    top = rows.nth(0).inner_text()
    assert re.search(r"waiting \d+ (s|min)", top), top
    assert "escalation" in top and "asks for a person" in top
    assert "Tech support" in top  # who brought the person in
    low = rows.nth(1).inner_text()
    assert "approval" in low and "issue_voucher" in low and re.search(r"waiting \d+", low)
    assert console.title().startswith("(2) ")
    assert in_view(console, "#queue > li >> nth=0"), seen(console, "#queue > li")
    assert_accessible(console, f"the queue ({size})")
    assert not errors
