"""What the browser tests do on the pages, in the words of the tests."""

from __future__ import annotations

import json
import time
import urllib.request
from typing import Any

from .axe import assert_accessible
from .conftest import OPERATOR_KEY, open_page

CHARGED_TWICE = "I was charged twice for A-1001"

SIZES: dict[str, dict[str, Any]] = {
    "desktop": {"viewport": {"width": 1440, "height": 900}},
    "laptop": {"viewport": {"width": 1024, "height": 768}},
    "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True,
              "device_scale_factor": 2},
}
"""The three sizes issue 43 names: a desktop, a small laptop, a touch phone."""

SEEN = """(el) => {
  // What a person sees of `el`: its box, whether all of it is inside the viewport and
  // inside every box that clips it (a scrolling pane), and whether something else covers
  // its middle.
  const r = el.getBoundingClientRect();
  let top = 0, left = 0, bottom = innerHeight, right = innerWidth;
  for (let p = el.parentElement; p; p = p.parentElement) {
    const s = getComputedStyle(p);
    if (/(auto|scroll|hidden|clip)/.test(s.overflowY + s.overflowX)) {
      const q = p.getBoundingClientRect();
      top = Math.max(top, q.top); left = Math.max(left, q.left);
      bottom = Math.min(bottom, q.bottom); right = Math.min(right, q.right);
    }
  }
  const s = getComputedStyle(el);
  const shown = r.width > 0 && r.height > 0 && s.visibility !== "hidden" && s.display !== "none";
  const inside = r.top >= top - 1 && r.bottom <= bottom + 1 && r.left >= left - 1
    && r.right <= right + 1;
  const x = Math.min(Math.max(r.left + r.width / 2, 0), innerWidth - 1);
  const y = Math.min(Math.max(r.top + Math.min(r.height / 2, 10), 0), innerHeight - 1);
  const hit = document.elementFromPoint(x, y);
  return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: r.width,
          height: r.height, shown, inside, seen: shown && inside,
          covered: shown && inside && !(hit && (hit === el || el.contains(hit)))};
}"""


def seen(page: Any, selector: str, nth: int = 0) -> dict[str, Any]:
    """What a person sees of the `nth` element `selector` matches (-1: the last): its box
    on the screen, `seen` (shown, and wholly inside the viewport and any pane that clips
    it) and `covered` (something else is drawn over its middle)."""
    loc = page.locator(selector)
    box: dict[str, Any] = (loc.last if nth == -1 else loc.nth(nth)).evaluate(SEEN)
    return box


def in_view(page: Any, selector: str, nth: int = 0) -> bool:
    """Whether a person sees the element whole, uncovered."""
    box = seen(page, selector, nth)
    return bool(box["seen"] and not box["covered"])


def confirm(page: Any, yes: bool = True) -> None:
    """Answer the confirmation the page asks (js/confirm.js), once a person sees it."""
    page.wait_for_selector("dialog[open]")
    assert in_view(page, "dialog[open] button.yes")
    page.click("dialog[open] button." + ("yes" if yes else "no"))
    page.wait_for_selector("dialog", state="detached")


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


def operator(base: str, method: str, path: str, body: Any = None) -> Any:
    """Call the API with the operator key (what the inspector's buttons do, done directly)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method, headers={
        "Authorization": f"Bearer {OPERATOR_KEY}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        raw = r.read()
    return json.loads(raw) if raw else None


__all__ = ["CHARGED_TWICE", "SIZES", "assert_accessible", "chat", "confirm", "escalate",
           "in_view", "operator", "operator_console", "pick", "say", "seen", "session_of",
           "stored_events", "turn_done", "visible", "wait_until"]
