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


def test_pass_k_the_baseline_and_symptoms_show_in_the_page(browser: Any,
                                                          tmp_path: Path) -> None:
    from handoffs.testing import ScriptedModel, reply, transfer

    cases = parse_jsonl('{"id": "price", "user": "price of the dock", "agent": "sales"}\n')
    # the team passes 2 plays of 3; the single agent answers every play
    model = ScriptedModel({"front": [transfer("sales"), reply("Hello."), transfer("sales")],
                           "sales": [reply("$89."), reply("$89.")],
                           "single": [reply("$89.")] * 3})
    report = run_eval_sync(build_team(), cases, model=model, repeat=3, concurrency=1,
                           baseline="single")
    path = tmp_path / "report.html"
    path.write_text(report.html(), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(path.as_uri())

    summary = page.locator("table.summary")
    rows = {r.locator("td").first.inner_text(): r.locator("td").all_inner_texts()[1:]
            for r in summary.locator("tr").all() if r.locator("td").count()}
    assert rows["pass^2"] == ["33.3%", "100.0%"]
    assert rows["routing accuracy"] == ["2/3 66.7%", "n/a"]
    assert rows["answer accuracy"] == ["3/3 100.0%", "3/3 100.0%"]
    assert page.locator("#run-0 table.reliability").inner_text().split() == [
        "case", "passed", "pass^1", "pass^2", "pass^3", "price", "2/3", "0.67", "0.33",
        "0.00"]
    assert page.locator("#run-0 table.symptoms").is_visible()
    assert page.locator("#run-1 table.heatmap").count() == 0
    assert "Routing labels do not apply to the single agent" in page.locator(
        "#run-1").inner_text()
    assert "Every case passed all 3 plays." in page.locator("#run-1").inner_text()
    page.close()


def test_the_traffic_replay_page_lists_the_differing_turns(browser: Any,
                                                           tmp_path: Path) -> None:
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from handoffs import Runner
    from handoffs.eval import TrafficReplay, replay_traffic, traffic_html
    from handoffs.stores import MemoryStore

    async def replayed() -> TrafficReplay:
        store = MemoryStore()
        runner = Runner(build_team(), model=DeskModel(), store=store)
        await runner.run("s-1", "What is the price of the dock?")
        await runner.run("s-2", "price of a cable")
        return await replay_traffic(store, build_team(), model=DeskModel(misroute_docks=True))

    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API holds this thread's loop
        found = pool.submit(asyncio.run, replayed()).result()
    path = tmp_path / "replay.html"
    path.write_text(traffic_html(found), encoding="utf-8")
    page = browser.new_page()
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    page.goto(path.as_uri())

    row = page.locator('table.differing tr[data-routing="different agent"]')
    assert row.count() == 1
    assert row.locator("td").all_inner_texts()[:5] == [
        "s-1", "1", "What is the price of the dock?", "front → sales", "front → repairs"]
    cell = page.locator("table.heatmap tr", has_text="sales").locator('td[data-count="1"]')
    assert cell.count() == 2  # sales stayed sales once, went to repairs once
    assert requested == [path.as_uri()]
    page.close()
