"""The inspector on a phone and on a long session (issue 43, item 8): at 390 px the page
never scrolls sideways and tapping a session takes you to it; on a wider screen a bar of
turns jumps to each turn, whose Fork button is then in view. The session list says
"1 message" (item 10) and a user's row carries no agent badge."""

from __future__ import annotations

from typing import Any

from .conftest import OPERATOR_KEY, open_page
from .pages import (
    CHARGED_TWICE,
    SIZES,
    assert_accessible,
    chat,
    in_view,
    operator,
    say,
    seen,
    session_of,
    turn_done,
    wait_until,
)


def signed_in(context: Any, server: str, errors: list[str], sid: str | None = None) -> Any:
    page = open_page(context, server + "/inspect" + (f"#session={sid}" if sid else ""), errors)
    page.fill("#key", OPERATOR_KEY)
    page.press("#key", "Enter")
    page.wait_for_selector("#inspector", state="visible")
    return page


def three_turns(context: Any, server: str, errors: list[str]) -> str:
    user = chat(context, server, errors)
    for n, text in enumerate((CHARGED_TWICE, "The dock from A-1002 keeps disconnecting.",
                              "Thanks, and my invoice?"), start=1):
        say(user, text)
        turn_done(user, n)
    return session_of(user)[0]


def test_the_inspector_fits_a_phone_and_tapping_a_session_goes_to_it(
        browser: Any, context: Any, server: str, errors: list[str]) -> None:
    for _ in range(20):  # a list longer than the phone's screen
        operator(server, "POST", "/v1/sessions", {"channel": "web"})
    sid = three_turns(context, server, errors)
    phone = browser.new_context(**SIZES["phone"])
    try:
        page = signed_in(phone, server, errors)
        row = f"#sessions li[data-session='{sid}'] button"
        page.locator(row).scroll_into_view_if_needed()
        assert not in_view(page, "#session-title")
        page.tap(row)
        page.wait_for_selector("#records tbody tr")
        page.wait_for_selector("#calls .call")
        page.wait_for_timeout(300)
        assert in_view(page, "#session-title"), seen(page, "#session-title")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        table = page.locator("#records .table-box")
        assert table.evaluate("e => e.scrollWidth > e.clientWidth")  # it scrolls, the page not
        assert table.get_attribute("tabindex") == "0"
        assert_accessible(page, "the inspector on a phone")
    finally:
        phone.close()
    assert not errors


def test_a_bar_of_turns_jumps_to_each_turn_and_its_fork_button(
        context: Any, sized: Any, size: str, server: str, errors: list[str]) -> None:
    sid = three_turns(context, server, errors)
    page = signed_in(sized, server, errors, sid)
    page.wait_for_selector("#turn-nav button[data-turn='3']")
    page.wait_for_selector(".turn-calls[data-turn='3'] .call .outcome:not(.muted)")
    for n in (3, 1, 2):
        page.click(f"#turn-nav button[data-turn='{n}']")
        page.wait_for_timeout(200)
        assert in_view(page, f"#calls-turn-{n}"), (n, seen(page, f"#calls-turn-{n}"))
        fork = f".turn-calls[data-turn='{n}'] > .turn-head .fork"
        assert in_view(page, fork), (n, seen(page, fork))
        assert page.locator(fork).inner_text() == f"Fork before turn {n}"
        assert in_view(page, "#turn-nav")  # the bar stays reachable
    assert_accessible(page, f"the inspector's bar of turns ({size})")
    assert not errors


ONE_MESSAGE = {"id": "s_imported_one", "active_agent": "operator", "status": "waiting_for_human",
               "turn": 1, "messages": [{"kind": "user", "text": "hi", "agent": "triage"}],
               "handoffs": [], "shared": {}, "metadata": {}}


def test_counts_read_as_words_and_a_users_row_has_no_agent_badge(
        context: Any, server: str, errors: list[str]) -> None:
    operator(server, "POST", "/v1/sessions/import?replace=true", ONE_MESSAGE)
    user = chat(context, server, errors)
    say(user, CHARGED_TWICE)
    turn_done(user, 1)
    page = signed_in(context, server, errors, session_of(user)[0])
    page.fill("#find", ONE_MESSAGE["id"])
    wait_until(page, "document.querySelectorAll('#sessions li').length === 1")
    assert "1 message ·" in page.locator("#sessions li").inner_text()
    page.fill("#find", "")
    call = page.locator("#calls .call[data-agent=refunds]").first
    call.locator(".view.after .rows > li").first.wait_for()
    assert call.locator(".row.user").count() >= 1
    assert call.locator(".row.user .badge").count() == 0
    assert call.locator(".row.assistant .badge").count() >= 1
    console = open_page(context, server + "/operator", errors)
    console.fill("#key", OPERATOR_KEY)
    console.press("#key", "Enter")
    row = console.locator(f"#queue li[data-session='{ONE_MESSAGE['id']}']")
    row.wait_for()
    assert "1 message" in row.inner_text() and "1 messages" not in row.inner_text()
    assert not errors
