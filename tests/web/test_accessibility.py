"""Accessibility beyond what axe-core checks in every test: text direction per message,
and a screen reader told each whole answer once, never its streamed pieces."""

from __future__ import annotations

from typing import Any

from .pages import CHARGED_TWICE, assert_accessible, chat, say, turn_done

WATCH = """() => { window.announced = []; window.liveLists = [];
  new MutationObserver(() => {
    const t = document.querySelector('#announce').textContent;
    if (t) window.announced.push(t);
  }).observe(document.querySelector('#announce'), {childList: true, characterData: true,
                                                   subtree: true}); }"""


def test_each_message_takes_the_direction_of_its_own_text(
        context: Any, server: str, errors: list[str]) -> None:
    page = chat(context, server, errors)
    say(page, "مرحبا، تم خصم المبلغ مرتين")
    turn_done(page, 1)
    user = page.locator(".msg.user .text")
    assert user.get_attribute("dir") == "auto"
    assert user.evaluate("e => getComputedStyle(e).direction") == "rtl"
    answer = page.locator(".msg.agent .text").last
    assert answer.evaluate("e => getComputedStyle(e).direction") == "ltr"
    assert page.locator("#text").get_attribute("dir") == "auto"
    assert not errors


def test_a_screen_reader_hears_each_answer_once_and_whole(
        context: Any, server: str, errors: list[str]) -> None:
    page = chat(context, server, errors)
    assert page.locator("#messages").get_attribute("aria-live") is None
    assert page.locator("[aria-live] .msg, [aria-live].messages").count() == 0
    page.evaluate(WATCH)
    say(page, CHARGED_TWICE)
    turn_done(page, 1)
    page.wait_for_timeout(200)
    announced = page.evaluate("window.announced")
    answer = page.locator(".messages > .msg.agent[data-agent=refunds] .text").inner_text()
    assert announced and announced[-1].endswith(answer.strip())
    assert announced[-1].startswith("💸 Refunds:")
    # Never a piece of a streamed answer.
    assert all(a.split(": ", 1)[-1] in {answer.strip()} or "Refunds" not in a
               for a in announced)
    assert not errors


def test_the_page_at_a_phone_width_is_accessible(browser: Any, server: str,
                                                  errors: list[str]) -> None:
    ctx = browser.new_context(viewport={"width": 390, "height": 800}, is_mobile=True)
    try:
        page = chat(ctx, server, errors)
        say(page, CHARGED_TWICE)
        turn_done(page, 1)
        assert_accessible(page, "the chat at a phone's width")
    finally:
        ctx.close()
    assert not errors
