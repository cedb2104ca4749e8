"""A cut answer is marked in its agent's bubble (issue 44): not sent, with the answer that
replaced it in a bubble of its own; or, from an agent that accepts cut answers, delivered
and marked."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .conftest import Served
from .pages import assert_accessible, chat, pick, say, turn_done


@pytest.fixture(scope="module")
def cut_server() -> Iterator[str]:
    served = Served("tests.web.cut_team:make_runner", "--store", "memory://")
    yield served.url
    served.stop()


def test_a_cut_answer_is_marked_in_its_bubble_and_the_new_one_has_its_own(
        context: Any, cut_server: str, errors: list[str]) -> None:
    page = chat(context, cut_server, errors)
    say(page, "When do I get my refund?")
    turn_done(page, 1)
    bubbles = page.locator(".messages .msg.agent[data-agent=writer]")
    assert bubbles.count() == 2
    first, second = bubbles.nth(0), bubbles.nth(1)
    assert first.locator(".tag.cut").text_content() == "cut off, not sent"
    assert "it usually" in first.locator(".text").inner_text()
    assert second.locator(".tag.cut").count() == 0
    assert second.locator(".text").inner_text().strip() == "Your refund of 129 EUR is on its way."
    assert_accessible(page, "a cut answer")
    pick(page, "teller")
    page.wait_for_selector("#active-agent [data-agent=teller]")
    say(page, "A story?")
    turn_done(page, 2)
    told = page.locator(".messages .msg.agent[data-agent=teller]")
    assert told.count() == 1 and told.locator(".tag.cut").text_content() == "cut off"
    assert not errors
