"""The pictures of the page in the README and docs/web.md, taken of `handoffs serve --demo
--inspect` (what `make web` runs, so they show the demo team and nothing else):
`make web-screenshots` writes them to docs/img/; a plain test run to a temporary folder."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from .conftest import OPERATOR_KEY, open_page
from .pages import CHARGED_TWICE, assert_accessible, chat, say, turn_done

DEMO_AGENTS = ["triage", "billing", "policy", "refunds", "technical", "operator"]
PICTURES = ("web_chat.png", "web_timeline.png", "web_operator.png", "web_inspect.png")


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
        inspect = open_page(op_ctx, demo_server + f"/inspect#session={sid}", errors)
        inspect.fill("#key", OPERATOR_KEY)
        inspect.press("#key", "Enter")
        inspect.set_viewport_size({"width": 1280, "height": 940})
        inspect.wait_for_selector("#calls .call[data-agent=refunds]")
        assert_accessible(inspect, "the inspector as pictured")
        inspect.screenshot(path=str(out / "web_inspect.png"))
    finally:
        ctx.close()
        op_ctx.close()
    for name in PICTURES:
        assert re.match(rb"\x89PNG", (out / name).read_bytes()[:4])
    assert not errors
