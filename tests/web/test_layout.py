"""What a person sees of the conversation once it is long (issue 43, items 2, 7, 9 and
the look of item 10): a failed tool's line keeps its height in a full pane; the states
that once broke axe-core (a full list with nothing focusable after a failed turn or a
refused message, a code block wider than the pane); a 10,000-character paste folded
behind "Show more"; 44 px controls on a touch phone; dark mode."""

from __future__ import annotations

from typing import Any

from .conftest import Proxy, free_port
from .pages import (
    CHARGED_TWICE,
    SIZES,
    assert_accessible,
    chat,
    in_view,
    operator_console,
    pick,
    say,
    seen,
    turn_done,
    wait_until,
)
from .team import FAIL

OVERFLOWS = """() => { const m = document.querySelector('#messages');
  return m.scrollHeight > m.clientHeight + 1 || document.documentElement.scrollHeight
    > innerHeight; }"""


def test_a_failed_tools_line_keeps_its_height_once_the_conversation_fills_the_pane(
        sized: Any, size: str, server: str, errors: list[str]) -> None:
    page = chat(sized, server, errors)
    pick(page, "tracker")
    page.wait_for_selector("#active-agent [data-agent=tracker]")
    for n in range(1, 6):
        say(page, f"Where is my parcel? ({n})")
        turn_done(page, n)
    assert page.evaluate(OVERFLOWS)
    lines = page.locator("#messages > .step.tool.error")
    assert lines.count() == 5
    for i in range(5):
        line = lines.nth(i)
        line.scroll_into_view_if_needed()
        box = seen(page, "#messages > .step.tool.error", i)
        assert box["height"] >= 18, box  # a line of text, not squeezed to a sliver
        assert box["seen"] and not box["covered"], box
        after = line.evaluate("e => e.nextElementSibling.getBoundingClientRect().top")
        assert after >= box["bottom"] - 0.5, (after, box)  # the next item starts below it
        assert "track_parcel failed" in line.inner_text()
    assert_accessible(page, f"a full conversation with failed tools ({size})")
    assert not errors


def test_a_full_conversation_with_nothing_focusable_is_reachable_by_keyboard(
        new_context: Any, server: str, proxy: Proxy, errors: list[str]) -> None:
    page = chat(new_context(viewport={"width": 1024, "height": 768}),
                f"http://127.0.0.1:{proxy.port}", errors)
    n = 0
    while not page.evaluate(OVERFLOWS):
        n += 1
        say(page, f"{FAIL} Where is my order? ({n})")
        turn_done(page, n)
    assert page.locator("#messages .step.failed").count() == n
    assert page.locator("#messages a, #messages button, #messages [tabindex]").count() == 0
    assert_accessible(page, "a full conversation after failed turns")
    # A message the server cannot take, on top of it.
    live = proxy.target
    proxy.target = free_port()
    proxy.cut()
    say(page, "Hello?")
    wait_until(page, "document.querySelector('#send-error').textContent.includes('reached')")
    assert_accessible(page, "a full conversation after failed turns and a send error")
    proxy.target = live
    page.keyboard.press("Shift+Tab")  # from the message box back to the conversation
    assert page.evaluate("document.activeElement.id") == "messages"
    assert not errors


def test_a_code_block_wider_than_the_pane_scrolls_and_is_reachable(
        sized: Any, size: str, server: str, errors: list[str]) -> None:
    page = chat(sized, server, errors)
    pick(page, "notes")
    page.wait_for_selector("#active-agent [data-agent=notes]")
    say(page, "What goes in the dock's config?")
    turn_done(page, 1)
    code = page.locator(".msg.agent[data-agent=notes] pre")
    assert code.evaluate("e => e.scrollWidth > e.clientWidth")  # it scrolls sideways
    assert code.get_attribute("tabindex") == "0"
    assert page.evaluate("document.documentElement.scrollWidth") <= \
        page.evaluate("innerWidth")
    assert_accessible(page, f"a code block with a long line ({size})")
    assert not errors


PASTE = "I was charged twice: " + " ".join(f"line {i} of the statement I pasted"
                                           for i in range(400))


def test_a_long_paste_is_folded_behind_show_more_in_the_bubble_the_handoff_and_the_timeline(
        sized: Any, size: str, server: str, errors: list[str]) -> None:
    assert len(PASTE) >= 10_000
    page = chat(sized, server, errors)
    say(page, PASTE)
    turn_done(page, 1)
    bubble = page.locator("#messages > .msg.user")
    handoff = page.locator("#messages > .step.handoff").first
    entry = page.locator("#timeline .entry.handoff").first
    assert bubble.bounding_box()["height"] < 400, bubble.bounding_box()
    assert handoff.bounding_box()["height"] < 220, handoff.bounding_box()
    assert entry.bounding_box()["height"] < 260, entry.bounding_box()
    more = bubble.locator("button.more")
    assert more.inner_text() == f"Show more ({len(PASTE):,} characters)"
    more.scroll_into_view_if_needed()
    assert in_view(page, "#messages > .msg.user button.more")
    assert_accessible(page, f"a long paste folded ({size})")
    more.click()
    assert more.get_attribute("aria-expanded") == "true"
    assert bubble.locator(".folded-text").inner_text() == PASTE
    assert bubble.bounding_box()["height"] > 600
    more.click()
    assert bubble.bounding_box()["height"] < 400
    assert not errors


def test_every_control_on_a_touch_phone_is_at_least_44_px(
        browser: Any, server: str, errors: list[str]) -> None:
    ctx = browser.new_context(**SIZES["phone"])
    try:
        page = chat(ctx, server, errors)
        assert page.evaluate("matchMedia('(pointer: coarse)').matches")
        small: dict[str, Any] = {}
        for sel in ("#send", "#picker button", "#new-session", "#agent-select", "#text",
                    "#prompts button", "#conversations button.open",
                    "#conversations .delete"):
            if page.locator(sel).count() == 0:
                small[sel] = "missing"
                continue
            b = page.locator(sel).first.bounding_box()
            if b["height"] < 44 or b["width"] < 44:
                small[sel] = (b["width"], b["height"])
        assert not small, small
        assert_accessible(page, "the chat's controls on a phone")
    finally:
        ctx.close()
    assert not errors


LUMINANCE = """(color) => { const [r, g, b] = color.match(/[\\d.]+/g).slice(0, 3).map(
  (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b; }"""


def test_dark_mode_follows_the_system_and_stays_readable(
        browser: Any, server: str, errors: list[str]) -> None:
    ctx = browser.new_context(viewport={"width": 1440, "height": 900}, color_scheme="dark")
    try:
        page = chat(ctx, server, errors)
        say(page, CHARGED_TWICE)
        turn_done(page, 1)
        bg = page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
        ink = page.evaluate("getComputedStyle(document.body).color")
        assert page.evaluate(LUMINANCE, bg) < 0.05 and page.evaluate(LUMINANCE, ink) > 0.6
        panel = page.evaluate("getComputedStyle(document.querySelector('.chat'))"
                              ".backgroundColor")
        assert page.evaluate(LUMINANCE, panel) < 0.05
        assert_accessible(page, "the chat in dark mode")  # contrast included
        console = operator_console(ctx, server, errors)
        assert page.evaluate(LUMINANCE, console.evaluate(
            "getComputedStyle(document.documentElement).backgroundColor")) < 0.05
        assert_accessible(console, "the console in dark mode")
    finally:
        ctx.close()
    assert not errors
