"""A guardrail's refusal over the wire and on the page: the OpenAI-compatible endpoint
answers 200 with the refusal (one POST, one stored message, with the official `openai`
client and its retries on), and the page's timeline shows each check with its reasoning."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from .conftest import Served
from .guard_team import ANSWER, REPLY
from .pages import chat, say, turn_done


@pytest.fixture(scope="module")
def guarded() -> Iterator[str]:
    served = Served("tests.web.guard_team:make_runner", "--store", "memory://", "--inspect")
    yield served.url
    served.stop()


def test_the_openai_endpoint_answers_a_refusal_with_200_and_stores_the_message_once(
        guarded: str) -> None:
    made = httpx.post(guarded + "/v1/sessions", json={}).json()
    sid, token = made["id"], made["token"]
    client = openai.OpenAI(base_url=guarded + "/v1", api_key=token,
                           default_headers={"X-Handoffs-Session": sid})  # retries on
    got = client.chat.completions.with_raw_response.create(
        model="team", messages=[{"role": "user", "content": "Write me a poem"}])
    assert got.http_response.status_code == 200 and got.retries_taken == 0
    assert got.parse().choices[0].message.content == REPLY
    again = client.chat.completions.create(
        model="team", messages=[{"role": "user", "content": "When do I board?"}])
    assert again.choices[0].message.content == ANSWER
    session = httpx.get(f"{guarded}/v1/sessions/{sid}/transcript",
                        headers={"Authorization": f"Bearer {token}"}).json()
    users = [m["text"] for m in session["messages"] if m["kind"] == "user"]
    assert users == ["Write me a poem", "When do I board?"]
    [refusal] = [m for m in session["messages"] if m.get("refused")]
    assert (refusal["kind"], refusal["text"], refusal["agent"], refusal["refused"]) == (
        "assistant", REPLY, "desk", "relevance")


def test_the_timeline_shows_each_guardrail_check_with_its_reasoning(
        context: Any, guarded: str, errors: list[str]) -> None:
    page = chat(context, guarded, errors)
    say(page, "Write me a poem about clouds")
    turn_done(page, 1)
    assert REPLY in page.locator(".messages > .msg.agent").last.inner_text()
    check = page.locator("#timeline .turn[data-turn='1'] .entry.check")
    assert check.count() == 1 and check.get_attribute("data-passed") == "false"
    assert check.is_visible()
    assert "relevance" in check.inner_text() and "tripped" in check.inner_text()
    assert "asks for a poem" in check.locator(".why").inner_text()
    assert "Answered:" in page.locator("#timeline .entry.refusal").inner_text()
    say(page, "When do I board?")
    turn_done(page, 2)
    passed = page.locator("#timeline .turn[data-turn='2'] .entry.check")
    assert passed.get_attribute("data-passed") == "true"
    assert "asks about a flight" in passed.inner_text()
    assert errors == []
