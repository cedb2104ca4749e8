"""The HTML report in a real browser (Debian's Chromium): one file that loads nothing from
elsewhere, the matrix drawn as a heat map, and a misrouted conversation that opens down to
what each agent saw."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from handoffs.eval import parse_jsonl, run_eval_sync

from .teams import DeskModel, build_team

CASES = parse_jsonl("""
{"id": "price-dock", "user": "What is the price of the dock?", "agent": "sales"}
{"id": "price-cable", "user": "price of a cable", "agent": "sales"}
{"id": "hello", "user": "Hello <b>there</b>", "agent": "front", "no_handoff": true}
{"id": "broken", "user": "My screen is broken", "agent": "repairs"}
""")


def report_file(tmp_path: Path) -> Path:
    report = run_eval_sync(build_team(), CASES, model=[DeskModel(misroute_docks=True),
                                                       DeskModel()])
    path = tmp_path / "report.html"
    path.write_text(report.html(), encoding="utf-8")
    return path


def test_the_report_shows_a_heat_map_and_opens_a_misrouted_case(browser: Any,
                                                                 tmp_path: Path) -> None:
    path = report_file(tmp_path)
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    page.goto(path.as_uri())

    heat = page.locator("#run-0 table.heatmap")
    assert heat.is_visible()
    assert heat.locator("th.col").all_inner_texts() == ["sales", "front", "repairs"]
    right = heat.locator("tr", has_text="sales").locator("td.cell.diag")
    wrong = heat.locator("tr", has_text="sales").locator('td.cell[data-count="1"]:not(.diag)')
    assert right.inner_text() == "1" and wrong.inner_text() == "1"
    assert right.evaluate("e => getComputedStyle(e).backgroundColor") != \
        wrong.evaluate("e => getComputedStyle(e).backgroundColor")
    assert wrong.get_attribute("title") == "1 turn for sales answered by repairs"
    assert page.locator("table.summary th").all_inner_texts()[1:] == [
        "DeskModel · history own_tools"] * 2

    case = page.locator('#run-0 details.case[data-case="price-dock"]')
    assert page.locator("#run-0 details.case").count() == 1
    assert "answered by repairs, expected sales" in case.locator("> summary").inner_text()
    turn = case.locator(".turn")
    assert not turn.is_visible()
    case.locator("> summary").click()
    assert turn.is_visible()
    assert "path front → repairs" in turn.inner_text()
    turn.locator("details.calls > summary").click()
    first_call = turn.locator(".call").first
    assert first_call.locator(".who").inner_text() == "front"
    assert "transfer_to_repairs" in first_call.inner_text()
    first_call.locator("details.saw > summary").click()
    assert "What is the price of the dock?" in first_call.locator("details.saw").inner_text()
    assert page.locator("#run-1 details.case").count() == 0
    assert "Every turn passed." in page.locator("#run-1").inner_text()
    assert requested == [path.as_uri()]  # nothing from elsewhere
    shots = os.environ.get("HANDOFFS_EVAL_SCREENSHOT")
    if shots:
        page.screenshot(path=shots, full_page=True)
    page.close()


def test_text_from_the_conversation_is_escaped(tmp_path: Path) -> None:
    html = report_file(tmp_path).read_text(encoding="utf-8")

    assert "<b>there</b>" not in html
    assert html.count("<script") == 0 and "http://" not in html and "https://" not in html
