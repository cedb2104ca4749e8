"""A tool's progress is a line under its agent's work while the tool runs, gone once the
agent answers; its custom event reaches the page's hook (`window.handoffs.on`) and the
DOM event `handoffs:custom`, and again, from the log, after a reload."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import Served
from .pages import assert_accessible, chat, say, turn_done, wait_until
from .seat_team import SEATS

HOOK = """() => {
  window.got = [];
  window.handoffs.on("seat_map", (data, event) => window.got.push(["hook", data, event.tool]));
  window.addEventListener("handoffs:custom",
    (e) => window.got.push(["dom", e.detail.name, e.detail.call_id]));
}"""


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("seats") / "open"


@pytest.fixture(scope="module")
def seat_server(gate: Path) -> Iterator[str]:
    served = Served("tests.web.seat_team:make_runner", "--store", "memory://",
                    env={"SEAT_GATE": str(gate)})
    yield served.url
    served.stop()


def test_progress_shows_while_the_tool_runs_and_the_seat_map_reaches_the_hook(
        context: Any, seat_server: str, gate: Path, errors: list[str]) -> None:
    page = chat(context, seat_server, errors)
    page.evaluate(HOOK)
    say(page, "Show me the seats on PA441")
    line = page.locator(".messages .step.progress[data-agent=seats]")
    line.wait_for(state="visible")
    assert line.inner_text().strip().endswith("Looking up flight PA441…")
    assert not gate.exists()  # the tool is still running: it waits for this gate
    tool_step = page.locator(".messages .step.tool")
    assert tool_step.count() == 1
    assert tool_step.evaluate("(el) => el.nextElementSibling?.classList.contains('progress')")
    assert_accessible(page, "a tool's progress line")
    gate.touch()
    turn_done(page, 1)
    wait_until(page, "window.got.length === 2")
    assert page.evaluate("window.got") == [["hook", SEATS, "seat_map"],
                                           ["dom", "seat_map", "c1"]]
    assert line.count() == 0  # the answer came: the progress line is gone
    assert "Pick a seat on the map." in page.locator(".msg.agent[data-agent=seats]").inner_text()
    # After a reload the log replays: a hook added then still gets the seat map.
    page.reload()
    page.wait_for_selector("#connection[data-state=live]")
    page.wait_for_selector(".msg.agent[data-agent=seats]")
    page.evaluate(HOOK)
    wait_until(page, "window.got.length === 1")
    assert page.evaluate("window.got") == [["hook", SEATS, "seat_map"]]
    assert page.locator(".messages .step.progress").count() == 0
    assert not errors
