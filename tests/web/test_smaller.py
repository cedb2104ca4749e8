"""The smaller defects of issue 43 (item 10) a customer meets: a 429 keeps the server's
"retry in N s"; Enter while Send is disabled says why; an empty conversation greets and
offers the team's suggested first messages."""

from __future__ import annotations

import re
from typing import Any

from .conftest import start_test_server
from .pages import assert_accessible, chat, in_view, pick, say, seen, turn_done


def test_a_message_refused_for_its_rate_says_when_to_retry(
        context: Any, errors: list[str]) -> None:
    served = start_test_server("--store", "memory://", "--rate-limit", "2/min")
    try:
        page = chat(context, served.url, errors)  # the session: 1 of 2
        say(page, "hello")  # 2 of 2
        turn_done(page, 1)
        say(page, "are you there?")
        error = page.locator("#send-error")
        error.wait_for()
        said = error.inner_text()
        found = re.search(r"retry in (\d+) s", said)
        assert found and 1 <= int(found.group(1)) <= 60, said
        assert page.input_value("#text") == "are you there?"
        assert in_view(page, "#send-error")
    finally:
        served.stop()
    assert not errors


def test_enter_while_send_is_disabled_says_why(
        sized: Any, size: str, server: str, errors: list[str]) -> None:
    page = chat(sized, server, errors)
    pick(page, "notes")  # a long answer, streamed slowly
    page.wait_for_selector("#active-agent [data-agent=notes]")
    say(page, "What about my orders?")
    page.wait_for_selector("#send:disabled")
    say(page, "And my invoice?")
    hint = page.locator("#send-hint")
    hint.wait_for()
    assert "still answering" in hint.inner_text() and "stays in the box" in hint.inner_text()
    assert in_view(page, "#send-hint"), seen(page, "#send-hint")
    assert page.input_value("#text") == "And my invoice?"
    assert_accessible(page, f"Enter while Send is disabled ({size})")
    turn_done(page, 1)
    assert hint.inner_text() == ""
    assert not errors


def test_an_empty_conversation_greets_and_offers_the_teams_first_messages(
        sized: Any, size: str, server: str, errors: list[str]) -> None:
    page = chat(sized, server, errors)
    team = page.evaluate("fetch('v1/team').then(r => r.json())")
    assert team["suggested_prompts"]
    assert in_view(page, "#welcome .hello"), seen(page, "#welcome .hello")
    assert "Triage answers first" in page.locator("#welcome .hello").inner_text()
    offered = page.locator("#prompts button")
    assert offered.all_inner_texts() == team["suggested_prompts"]
    assert in_view(page, "#prompts button", -1)
    assert_accessible(page, f"an empty conversation ({size})")
    offered.first.click()
    turn_done(page, 1)
    assert page.locator(".msg.user").inner_text().endswith(team["suggested_prompts"][0])
    assert not page.locator("#welcome").is_visible()
    page.reload()  # a conversation with messages never greets again
    page.wait_for_selector("#connection[data-state=live]")
    turn_done(page, 1)
    assert not page.locator("#welcome").is_visible()
    assert not errors
