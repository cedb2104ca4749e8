"""axe-core in the page under test: every state a browser test visits must have no
accessibility violation, of any impact.

axe-core comes from the npm registry (`make axe`: tests/web/package.json and its lock
file, installed in tests/web/node_modules). It is served to the page from the page's own
origin by Playwright, so the page's Content Security Policy (`script-src 'self'`) lets it
run, as it would let the page's own scripts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urljoin

AXE = Path(__file__).parent / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("minor", "moderate", "serious", "critical")
"""The impacts a page state may not have: all of them."""

_PATH = "/__axe-core.min.js"

RUN = """() => axe.run(document, {resultTypes: ["violations"]}).then((r) => r.violations.map(
  (v) => ({id: v.id, impact: v.impact, help: v.help,
           nodes: v.nodes.map((n) => n.target.join(" ") + ": " + (n.failureSummary || ""))})))"""


def violations(page: Any) -> list[dict[str, Any]]:
    """axe-core's violations on the page as it is now (every impact)."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        if not getattr(page, "_axe_routed", False):
            source = AXE.read_text(encoding="utf-8")
            page.route(f"**{_PATH}", lambda route: route.fulfill(
                body=source, content_type="text/javascript"))
            page._axe_routed = True
        page.add_script_tag(url=urljoin(page.url, _PATH))
    found: list[dict[str, Any]] = page.evaluate(RUN)
    return found


def assert_accessible(page: Any, state: str = "") -> None:
    """No violation, of any impact, in the page's current state."""
    bad = [v for v in violations(page) if v["impact"] in BLOCKING]
    assert not bad, f"axe-core {state or page.url}: " + "; ".join(
        f"{v['impact']} {v['id']} ({v['help']}) at {v['nodes'][:3]}" for v in bad)
