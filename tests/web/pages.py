"""What the browser tests do on the pages, in the words of the tests."""

from __future__ import annotations

import json
import time
import urllib.request
from typing import Any

from .axe import assert_accessible
from .conftest import OPERATOR_KEY, open_page

CHARGED_TWICE = "I was charged twice for A-1001"


def chat(context: Any, base: str, errors: list[str]) -> Any:
    page = open_page(context, base + "/", errors)
    page.wait_for_selector("#connection[data-state=live]")
    return page


def say(page: Any, text: str) -> None:
    page.fill("#text", text)
    page.press("#text", "Enter")


def turn_done(page: Any, turn: int) -> None:
    page.wait_for_selector(f".turn[data-turn='{turn}'] .timing")


def wait_until(page: Any, expression: str, timeout: float = 15.0) -> None:
    """Poll a JavaScript expression until it is true. (`page.wait_for_function` evaluates
    its predicate with `eval`, which the page's Content Security Policy refuses.)"""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        assert time.monotonic() < deadline, f"not true within {timeout} s: {expression}"
        page.wait_for_timeout(50)


def pick(page: Any, agent: str) -> None:
    page.select_option("#agent-select", agent)
    page.click("#picker button")


def session_of(page: Any) -> tuple[str, str]:
    """The id and token of the session the chat page holds."""
    saved = page.evaluate("JSON.parse(localStorage.getItem('handoffs.session'))")
    return saved["id"], saved["token"]


def escalate(page: Any) -> str:
    """Bring the user's session to the human operator; its id."""
    pick(page, "technical")
    page.wait_for_selector("#active-agent [data-agent=technical]")
    say(page, "Can a person look at my account?")
    page.wait_for_selector(".step.waiting")
    turn_done(page, 1)
    sid: str = page.locator("#session-id").inner_text()
    return sid


def operator_console(context: Any, server: str, errors: list[str], sid: str | None = None) -> Any:
    """The operator console, logged in (with session `sid` opened from the queue)."""
    console = open_page(context, server + "/operator", errors)
    console.fill("#key", OPERATOR_KEY)
    console.press("#key", "Enter")
    console.wait_for_selector("#console:not([hidden])")
    if sid is not None:
        console.click(f"#queue li[data-session='{sid}'] button")
        console.wait_for_selector("#connection[data-state=live]")
    return console


def stored_events(base: str, sid: str, secret: str, turns: int = 1) -> list[dict[str, Any]]:
    """The session's events as a client holding `secret` reads them from the start, until
    `turns` turns have ended."""
    req = urllib.request.Request(f"{base}/v1/sessions/{sid}/events",
                                 headers={"Authorization": f"Bearer {secret}"})
    out: list[dict[str, Any]] = []
    ended = 0
    with urllib.request.urlopen(req, timeout=10) as r:
        for raw in r:
            line = raw.decode().rstrip("\n")
            if line.startswith("data: "):
                out.append(json.loads(line[6:]))
                ended += out[-1]["type"] in ("run_completed", "run_failed")
                if ended >= turns:
                    return out
    return out


def visible(page: Any, selector: str) -> bool:
    """Whether the element is there and shown (not only present in the DOM)."""
    loc = page.locator(selector)
    return loc.count() > 0 and loc.first.is_visible()


__all__ = ["CHARGED_TWICE", "assert_accessible", "chat", "escalate", "operator_console",
           "pick", "say", "session_of", "stored_events", "turn_done", "visible", "wait_until"]
