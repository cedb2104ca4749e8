"""The pictures of the page in the README and docs/web.md, taken of `handoffs serve --demo
--inspect` (what `make web` runs, so they show the demo team and nothing else):
`make web-screenshots` writes them to docs/img/; a plain test run to a temporary folder.
Each picture is of a state a test checks elsewhere (the console following a customer,
edit and rerun side by side, dark mode, a phone)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from .conftest import OPERATOR_KEY, Served, open_page
from .pages import CHARGED_TWICE, SIZES, assert_accessible, chat, in_view, say, turn_done

DEMO_AGENTS = ["triage", "billing", "policy", "refunds", "technical", "operator"]
PICTURES = ("web_chat.png", "web_timeline.png", "web_operator.png", "web_inspect.png",
            "web_operator_following.png", "web_rerun.png", "web_dark.png", "web_phone.png")
AIRLINE = "web_airline.png"
"""`handoffs serve --demo airline`: the context panel and a guardrail's refusal."""


def test_screenshots(browser: Any, demo_server: str, errors: list[str], tmp_path: Path) -> None:
    out = Path(os.environ.get("HANDOFFS_WEB_SCREENSHOTS") or tmp_path)
    ctx = browser.new_context(viewport={"width": 1280, "height": 860})
    op_ctx = browser.new_context(viewport={"width": 1280, "height": 760})
    try:
        page = chat(ctx, demo_server, errors)
        nodes = page.eval_on_selector_all(".graph .node", "ns => ns.map(n => n.dataset.agent)")
        assert sorted(nodes) == sorted(DEMO_AGENTS)  # the demo team, as `make web` serves it
        say(page, CHARGED_TWICE)
        turn_done(page, 1)
        page.screenshot(path=str(out / "web_chat.png"))
        page.locator(".side").screenshot(path=str(out / "web_timeline.png"))
        sid = page.locator("#session-id").inner_text()
        say(page, "The dock from A-1002 keeps disconnecting my monitor.")
        turn_done(page, 2)
        say(page, "Still broken. Can a person look at my account?")
        turn_done(page, 3)
        console = open_page(op_ctx, demo_server + "/operator", errors)
        console.fill("#key", OPERATOR_KEY)
        console.press("#key", "Enter")
        console.click(f"#queue li[data-session='{sid}'] button")
        console.wait_for_selector("#messages .step.waiting")
        console.fill("#text", "Hi, I'm Sam from support. I reset the dock's pairing.")
        console.select_option("#handback", "technical")
        assert_accessible(console, "the console as pictured")
        console.screenshot(path=str(out / "web_operator.png"))
        # The operator reads back; the customer writes: the marker says so.
        console.fill("#text", "")
        console.evaluate("document.querySelector('#messages').scrollTop = 0")
        console.wait_for_timeout(200)
        say(page, "Hello, are you there?")
        console.wait_for_selector("#new-below", state="visible")
        assert in_view(console, "#new-below")
        assert_accessible(console, "the console following, as pictured")
        console.screenshot(path=str(out / "web_operator_following.png"))
        inspect = open_page(op_ctx, demo_server + f"/inspect#session={sid}", errors)
        inspect.fill("#key", OPERATOR_KEY)
        inspect.press("#key", "Enter")
        inspect.set_viewport_size({"width": 1280, "height": 940})
        inspect.wait_for_selector("#calls .call[data-agent=refunds]")
        assert_accessible(inspect, "the inspector as pictured")
        inspect.screenshot(path=str(out / "web_inspect.png"))
        # Edit and rerun triage's first call without its transfer tools: it answers itself.
        call = inspect.locator("#calls .call[data-agent=triage]").first
        call.locator("summary").first.click()
        call.locator("button.edit-rerun").click()
        for box in call.locator("form.rerun input[type=checkbox]").all():
            box.uncheck()
        call.locator("button.rerun-go").click()
        call.locator(".compare .side.again pre.text").wait_for()
        call.locator("form.rerun h4").evaluate("e => e.scrollIntoView({block: 'start'})")
        inspect.evaluate("window.scrollBy(0, -44)")
        assert_accessible(inspect, "edit and rerun, as pictured")
        inspect.screenshot(path=str(out / "web_rerun.png"))
        dark = browser.new_context(viewport={"width": 1280, "height": 860}, color_scheme="dark")
        try:
            night = chat(dark, demo_server, errors)
            say(night, CHARGED_TWICE)
            turn_done(night, 1)
            assert_accessible(night, "the chat in dark mode, as pictured")
            night.screenshot(path=str(out / "web_dark.png"))
        finally:
            dark.close()
        phone = browser.new_context(**SIZES["phone"])
        try:
            small = chat(phone, demo_server, errors)
            say(small, CHARGED_TWICE)
            turn_done(small, 1)
            assert_accessible(small, "the chat on a phone, as pictured")
            small.screenshot(path=str(out / "web_phone.png"))
        finally:
            phone.close()
    finally:
        ctx.close()
        op_ctx.close()
    for name in PICTURES:
        assert re.match(rb"\x89PNG", (out / name).read_bytes()[:4])
    assert not errors


def test_airline_screenshot(browser: Any, errors: list[str], tmp_path: Path) -> None:
    """The airline example as a traveller sees it: the seat change in the context panel,
    a refused question answered by the agent, its guardrail checks on the timeline."""
    out = Path(os.environ.get("HANDOFFS_WEB_SCREENSHOTS") or tmp_path)
    served = Served("", "--demo", "airline", "--store", "memory://")
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = chat(ctx, served.url, errors)
        for n, text in enumerate(("Can I change my seat?", "23A please",
                                  "Also write a poem about strawberries."), start=1):
            say(page, text)
            turn_done(page, n)
        page.wait_for_selector("#session-context dd[data-field=seat_number]:text('23A')")
        check = page.locator("#timeline .turn[data-turn='3'] .entry.check[data-passed=false]")
        check.scroll_into_view_if_needed()
        assert in_view(page, "#timeline .turn[data-turn='3'] .entry.check[data-passed=false]")
        # The refusal is an answer like any other: its bubble has stopped streaming.
        assert page.locator(".messages > .msg.agent.streaming").count() == 0
        page.locator("#session-context").scroll_into_view_if_needed()
        assert_accessible(page, "the airline example, as pictured")
        page.screenshot(path=str(out / AIRLINE))
    finally:
        ctx.close()
        served.stop()
    assert re.match(rb"\x89PNG", (out / AIRLINE).read_bytes()[:4])
    assert not errors
